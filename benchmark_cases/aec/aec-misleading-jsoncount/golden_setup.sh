# Golden setup of jsoncount (sourced from the repository root as root, bash -eo pipefail).
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends cmake libjansson-dev
cmake -S . -B build
cmake --build build
