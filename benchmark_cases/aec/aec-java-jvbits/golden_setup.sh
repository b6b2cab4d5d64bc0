# Golden setup of jvbits (sourced from the repository root as root, bash -eo pipefail).
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends default-jdk-headless junit5 make
make build
