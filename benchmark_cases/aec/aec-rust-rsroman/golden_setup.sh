# Golden setup of rsroman (sourced from the repository root as root, bash -eo pipefail).
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends cargo
# cargo 1.65 reads crates.io's index from GitHub unless told to use the sparse index, which is
# unstable before 1.68: the channel override allows it. Exported, so `cargo test` sees it too.
export __CARGO_TEST_CHANNEL_OVERRIDE_DO_NOT_USE_THIS=nightly CARGO_UNSTABLE_SPARSE_REGISTRY=true
cargo build
