#!/usr/bin/env bash
set -euo pipefail
python3.11 -m venv .venv
. .venv/bin/activate
pip install -e ".[test]"
