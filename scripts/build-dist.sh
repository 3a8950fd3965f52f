#!/usr/bin/env bash
# `make dist`: every shippable artifact of the committed sources into dist/:
#   openhands_vscode_runtime-<v>-py3-none-manylinux_2_17_x86_64.whl  (+ the sdist .tar.gz)
#   openhands-vscode-executor-<v>.tgz, openhands-vscode-executor-linux-x64-gnu-<v>.tgz
#   openhands-tab-<v>-linux-x64.vsix
# The portable builds (wheel: scripts/build-wheel.sh; addon: extension/scripts/build-portable-addon.sh)
# are cached by source tree hash. OH_ADDON_CROSS_DIR selects another addon cache (a branch that
# changes crates/ must not rebuild the shared one); a new one is seeded from the shared one.
# OH_DIST_ADDON names a portable addon to use as is (e.g. one built from an equal crates/oh-node).
set -euo pipefail
REPO="$(cd "$(dirname "$0")/.." && pwd)"
OUT="${1:-$REPO/dist}"
mkdir -p "$OUT" && OUT="$(cd "$OUT" && pwd)"
rm -f "$OUT"/*.whl "$OUT"/*.tar.gz "$OUT"/*.tgz "$OUT"/*.vsix
if [ -n "$(git -C "$REPO" status --porcelain -- crates Cargo.lock openhands-runtime-py npm extension)" ]; then
  echo "build-dist: WARNING: uncommitted changes are not in the artifacts (they build from HEAD)" >&2
fi
"$REPO/scripts/check-versions.sh" >&2

WHEEL="$("$REPO/scripts/build-wheel.sh" "$OUT" | tail -1)"

SHARED_ADDON="$HOME/.cache/openhands-vscode-runtime/addon-cross"
ADDON_DIR="${OH_ADDON_CROSS_DIR:-$SHARED_ADDON}"
key="$(git -C "$REPO" rev-parse HEAD:crates) $(git -C "$REPO" rev-parse HEAD:Cargo.lock)"
ADDON="${OH_DIST_ADDON:-$ADDON_DIR/out/openhands-vscode-executor.linux-x64-gnu.node}"
if [ -n "${OH_DIST_ADDON:-}" ]; then
  echo "build-dist: using the addon $OH_DIST_ADDON (OH_DIST_ADDON)" >&2
elif [ ! -f "$ADDON" ] || [ "$(cat "$ADDON_DIR/out/SOURCE" 2>/dev/null)" != "$key" ]; then
  if [ "$ADDON_DIR" != "$SHARED_ADDON" ] && [ ! -d "$ADDON_DIR/target" ] && [ -d "$SHARED_ADDON/target" ]; then
    mkdir -p "$ADDON_DIR" && cp -a "$SHARED_ADDON/target" "$SHARED_ADDON/node_modules" "$SHARED_ADDON/package.json" "$ADDON_DIR/"
  fi
  ADDON="$(OH_ADDON_CROSS_DIR="$ADDON_DIR" "$REPO/extension/scripts/build-portable-addon.sh" | tail -1)"
fi

"$REPO/scripts/pack-npm.sh" "$OUT" "$ADDON" >&2
VSIX="$(OPENHANDS_EXECUTOR_ADDON="$ADDON" "$REPO/extension/scripts/package.sh" | tail -1)"
mv "$VSIX" "$OUT/"
"$REPO/tests/vscode/check-vsix.sh" "$OUT/$(basename "$VSIX")" >&2
echo "build-dist: artifacts in $OUT:" >&2
ls -l "$OUT" >&2
