#!/usr/bin/env bash
# What dist/ is built from, as one line: the commit and the targets (OH_DIST_TARGETS, or every one);
# nothing when the checkout has uncommitted changes to what the artifacts are made of. build-dist.sh
# writes it to dist/BUILT_FROM once every artifact is there; tests/dist/run.sh reuses dist/ when the
# line is the same (the background `make dist` of `make test` built it a few minutes before: each
# artifact is built once per run), and builds again otherwise.
set -euo pipefail
REPO="$(cd "$(dirname "$0")/.." && pwd)"
[ -z "$(git -C "$REPO" status --porcelain -- crates Cargo.lock Cargo.toml openhands-runtime-py npm extension scripts)" ] || exit 0
echo "commit $(git -C "$REPO" rev-parse HEAD) targets ${OH_DIST_TARGETS-all}"
