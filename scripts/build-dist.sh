#!/usr/bin/env bash
# `make dist`: every shippable artifact of the committed sources into dist/:
#   openhands_vscode_runtime-<v>-py3-none-manylinux_2_17_x86_64.whl  (+ the sdist .tar.gz)
#   openhands-vscode-executor-<v>.tgz, openhands-vscode-executor-linux-x64-gnu-<v>.tgz
#   openhands-tab-<v>-linux-x64.vsix
# and for each other target of OH_DIST_TARGETS (default: all of CROSS_TARGETS below; "" for
# linux-x64 only), built by scripts/build-cross.sh: a platform wheel (scripts/retag-wheel.py),
# the napi-rs platform npm package and the VSIX of that VS Code target: manylinux_2_17_aarch64 /
# linux-arm64, musllinux_1_2_x86_64 / alpine-x64, macosx_11_0_arm64 / darwin-arm64,
# macosx_10_15_x86_64 / darwin-x64 (17 files in all). Warm caches: about 40 s; each cold cross
# target: 3.5-8 min on 2 cores (tests/cross/README.md).
# The portable builds (wheel: scripts/build-wheel.sh; addon: extension/scripts/build-portable-addon.sh)
# are cached by source tree hash. OH_ADDON_CROSS_DIR selects another addon cache (a branch that
# changes crates/ must not rebuild the shared one); a new one is seeded from the shared one.
# OH_DIST_ADDON names a portable addon to use as is (e.g. one built from an equal crates/oh-node).
set -euo pipefail
REPO="$(cd "$(dirname "$0")/.." && pwd)"
OUT="${1:-$REPO/dist}"
mkdir -p "$OUT" && OUT="$(cd "$OUT" && pwd)"
rm -f "$OUT"/*.whl "$OUT"/*.tar.gz "$OUT"/*.tgz "$OUT"/*.vsix "$OUT/BUILT_FROM"
STAMP="$("$REPO/scripts/dist-stamp.sh")"  # taken before the build: HEAD may move while it runs
CROSS_TARGETS="aarch64-unknown-linux-gnu x86_64-unknown-linux-musl aarch64-apple-darwin x86_64-apple-darwin"
TARGETS="${OH_DIST_TARGETS-$CROSS_TARGETS}"
if [ -n "$(git -C "$REPO" status --porcelain -- crates Cargo.lock openhands-runtime-py npm extension)" ]; then
  echo "build-dist: WARNING: uncommitted changes are not in the artifacts (they build from HEAD)" >&2
fi
"$REPO/scripts/check-versions.sh" >&2

SHARED_ADDON="$HOME/.cache/openhands-vscode-runtime/addon-cross"
ADDON_DIR="${OH_ADDON_CROSS_DIR:-$SHARED_ADDON}"
key="$("$REPO/scripts/addon-key.sh")"
ADDON="${OH_DIST_ADDON:-$ADDON_DIR/out/openhands-vscode-executor.linux-x64-gnu.node}"
if [ -n "${OH_DIST_ADDON:-}" ]; then
  echo "build-dist: using the addon $OH_DIST_ADDON (OH_DIST_ADDON)" >&2
elif [ ! -f "$ADDON" ] || [ "$(cat "$ADDON_DIR/out/SOURCE" 2>/dev/null)" != "$key" ]; then
  if [ "$ADDON_DIR" != "$SHARED_ADDON" ] && [ ! -d "$ADDON_DIR/target" ] && [ -d "$SHARED_ADDON/target" ]; then
    mkdir -p "$ADDON_DIR" && cp -a "$SHARED_ADDON/target" "$SHARED_ADDON/node_modules" "$SHARED_ADDON/package.json" "$ADDON_DIR/"
  fi
  t0=$(date +%s)
  ADDON="$(OH_ADDON_CROSS_DIR="$ADDON_DIR" "$REPO/extension/scripts/build-portable-addon.sh" | tail -1)"
  echo "build-dist: the portable linux-x64 addon took $(( $(date +%s) - t0 )) s" >&2
fi
# The wheel after the addon: its first build seeds its target dir from the addon's (build-wheel.sh).
t0=$(date +%s)
WHEEL="$("$REPO/scripts/build-wheel.sh" "$OUT" | tail -1)"
echo "build-dist: the linux-x64 wheel took $(( $(date +%s) - t0 )) s" >&2

# The other targets: wheel tag and VS Code target of each (the glibc floor of linux-arm64 is the
# 2.17 zig links against: tests/cross/run.sh checks it; the musl executor is static,
# zig's musl 1.2; the macOS minimums are build-cross.sh's MACOSX_DEPLOYMENT_TARGET).
declare -A WHEEL_TAG=([aarch64-unknown-linux-gnu]=manylinux_2_17_aarch64 [x86_64-unknown-linux-musl]=musllinux_1_2_x86_64
  [aarch64-apple-darwin]=macosx_11_0_arm64 [x86_64-apple-darwin]=macosx_10_15_x86_64)
declare -A VSCODE_TARGET=([aarch64-unknown-linux-gnu]=linux-arm64 [x86_64-unknown-linux-musl]=alpine-x64
  [aarch64-apple-darwin]=darwin-arm64 [x86_64-apple-darwin]=darwin-x64)
EXTRA_ADDONS=() EXTRA_VSIX=()
for t in $TARGETS; do
  [ -n "${WHEEL_TAG[$t]:-}" ] || { echo "build-dist: no packaging for target $t" >&2; exit 2; }
  t0=$(date +%s)
  cross="$("$REPO/scripts/build-cross.sh" "$t" | tail -1)"
  # What each platform costs in a run (make test's report quotes these lines).
  echo "build-dist: $t took $(( $(date +%s) - t0 )) s" >&2
  platform="$(cat "$cross/PLATFORM")"
  python3 "$REPO/scripts/retag-wheel.py" "$WHEEL" "$cross/openhands-vscode-executor" "${WHEEL_TAG[$t]}" "$OUT" >&2
  EXTRA_ADDONS+=("$cross/openhands-vscode-executor.$platform.node")
  EXTRA_VSIX+=("${VSCODE_TARGET[$t]}=$cross/openhands-vscode-executor.$platform.node")
done

"$REPO/scripts/pack-npm.sh" "$OUT" "$ADDON" "${EXTRA_ADDONS[@]}" >&2
VSIX="$(OPENHANDS_EXECUTOR_ADDON="$ADDON" "$REPO/extension/scripts/package.sh" | tail -1)"
mv "$VSIX" "$OUT/"
"$REPO/tests/vscode/check-vsix.sh" "$OUT/$(basename "$VSIX")" >&2
for v in "${EXTRA_VSIX[@]}"; do
  VSIX="$("$REPO/extension/scripts/package.sh" --target "${v%%=*}" --addon "${v#*=}" | tail -1)"
  mv "$VSIX" "$OUT/"
done
[ -z "$STAMP" ] || echo "$STAMP" > "$OUT/BUILT_FROM"
echo "build-dist: artifacts in $OUT:" >&2
ls -l "$OUT" >&2
