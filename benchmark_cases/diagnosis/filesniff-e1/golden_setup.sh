#!/usr/bin/env bash
set -euo pipefail
apt-get update
apt-get install -y libmagic1
pip install -e ".[test]"
