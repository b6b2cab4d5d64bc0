#!/usr/bin/env bash
set -euo pipefail
pip install -e ".[yaml,test]"
