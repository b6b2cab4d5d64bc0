# Golden setup of pyunits (sourced from the repository root as root, bash -eo pipefail).
python3 -m venv .venv
source .venv/bin/activate
pip install -q -e ".[test]"
