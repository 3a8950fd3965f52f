#!/usr/bin/env bash
# Prints what a native build of the executor is made from: the git trees of crates/, Cargo.lock
# and the workspace Cargo.toml at COMMIT (default HEAD). The portable-build caches store it in
# out/SOURCE; a cached build is current when the two are equal.
set -euo pipefail
REPO="$(cd "$(dirname "$0")/.." && pwd)"
c="${1:-HEAD}"
echo "$(git -C "$REPO" rev-parse "$c:crates") $(git -C "$REPO" rev-parse "$c:Cargo.lock") $(git -C "$REPO" rev-parse "$c:Cargo.toml")"
