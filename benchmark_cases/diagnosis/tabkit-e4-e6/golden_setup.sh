#!/usr/bin/env bash
set -euo pipefail
pip install -r requirements/test.txt
pip install -e .
