# Golden setup of tsduration (sourced from the repository root as root, bash -eo pipefail).
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
# npm's typescript and @types/node are out of reach: Debian's tsc (node-typescript 4.8) and the
# declarations Debian's nodejs ships, which tsc finds only under node_modules/@types.
apt-get install -y -qq --no-install-recommends nodejs node-typescript
mkdir -p node_modules/@types
ln -sfn /usr/share/nodejs/@types/node node_modules/@types/node
tsc -p .
