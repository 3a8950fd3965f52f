#!/usr/bin/env bash
# Builds the VSIX of openhands-tab (openhands-vscode-runtime.openhands-tab) for one VS Code target
# (default linux-x64) with the native executor inside, and the pure-Python wheel of
# openhands-vscode-runtime for the V1 environment.
#
#   extension/scripts/package.sh [--target VSCODE_TARGET] [--addon PATH/TO/openhands-vscode-executor.<triple>.node] [--allow-no-addon]
#
# VSCODE_TARGET: linux-x64 (default), linux-arm64, alpine-x64, darwin-arm64, darwin-x64; the addon
# is shipped as dist/native/openhands-vscode-executor.<napi triple>.node, the name
# extension/src/bootstrap.ts looks for on that platform. Targets other than linux-x64 need --addon
# (scripts/build-cross.sh builds them; scripts/build-dist.sh passes them).
#
# The addon comes from --addon, $OPENHANDS_EXECUTOR_ADDON, the portable build of the committed
# crates made by scripts/build-portable-addon.sh (glibc 2.17 floor, static OpenSSL: shippable), or
# npm/executor/ (a development build: links libssl.so.3 and needs a recent glibc).
# Output: extension/openhands-tab-<version>-linux-x64.vsix (path printed on the last line).
set -euo pipefail
HERE="$(cd "$(dirname "$0")/.." && pwd)"
REPO="$(cd "$HERE/.." && pwd)"
ADDON="${OPENHANDS_EXECUTOR_ADDON:-}"
ALLOW_NO_ADDON=0
TARGET=linux-x64
while [ $# -gt 0 ]; do
  case "$1" in
    --target) TARGET="$2"; shift 2 ;;
    --addon) ADDON="$2"; shift 2 ;;
    --allow-no-addon) ALLOW_NO_ADDON=1; shift ;;  # test builds only: a VSIX that cannot execute
    *) echo "unknown argument $1" >&2; exit 2 ;;
  esac
done
case "$TARGET" in
  linux-x64) TRIPLE=linux-x64-gnu ;;
  linux-arm64) TRIPLE=linux-arm64-gnu ;;
  alpine-x64) TRIPLE=linux-x64-musl ;;
  darwin-arm64) TRIPLE=darwin-arm64 ;;
  darwin-x64) TRIPLE=darwin-x64 ;;
  *) echo "package.sh: unknown VS Code target $TARGET" >&2; exit 2 ;;
esac
# One packaging at a time: it builds in extension/ (make test's background `make dist` and
# tests/vscode/run.sh may both package).
exec 9>"$HERE/.package.lock"
flock 9
NAME=openhands-vscode-executor
CROSS="$HOME/.cache/openhands-vscode-runtime/addon-cross/out"
if [ "$TARGET" != linux-x64 ] && [ -z "$ADDON" ] && [ "$ALLOW_NO_ADDON" = 0 ]; then
  echo "package.sh: --target $TARGET needs --addon (scripts/build-cross.sh builds it)" >&2; exit 1
fi
if [ -z "$ADDON" ] && [ -f "$CROSS/$NAME.$TRIPLE.node" ] && \
   [ "$(cat "$CROSS/SOURCE" 2>/dev/null)" = "$("$REPO/scripts/addon-key.sh")" ]; then
  ADDON="$CROSS/$NAME.$TRIPLE.node"  # the portable build (build-portable-addon.sh) of the committed crates
fi
if [ -z "$ADDON" ] && [ -f "$REPO/npm/executor/$NAME.$TRIPLE.node" ]; then
  ADDON="$REPO/npm/executor/$NAME.$TRIPLE.node"
fi
if { [ -z "$ADDON" ] || [ ! -f "$ADDON" ]; } && [ "$ALLOW_NO_ADDON" = 1 ]; then
  echo "package.sh: WARNING: no native executor found; building a VSIX WITHOUT it (--allow-no-addon)" >&2
  ADDON=
elif [ -z "$ADDON" ] || [ ! -f "$ADDON" ]; then
  echo "package.sh: no native executor found for $TRIPLE (looked for --addon, \$OPENHANDS_EXECUTOR_ADDON, npm/executor/$NAME.$TRIPLE.node)." >&2
  echo "Build it first: (cd npm/executor && npm run build) — see npm/executor/README.md." >&2
  exit 1
fi
echo "package.sh: native executor ${ADDON:-(none)}" >&2
cd "$HERE"
[ -d node_modules/esbuild ] || npm ci --no-audit --no-fund >/dev/null
rm -rf dist
node esbuild.mjs >/dev/null
# The pure-Python wheel of openhands-vscode-runtime that "OpenHands: Set Up V1 Environment"
# installs with its [v1] extra (the executor binary of the release wheel is not needed here).
python3 scripts/build-pure-wheel.py dist/python >/dev/null
# With the lock of every package's version (scripts/lock-v1.sh), read as constraints.
cp "$REPO/openhands-runtime-py/v1-lock.txt" dist/python/
if [ -n "$ADDON" ]; then
  mkdir -p dist/native
  cp "$ADDON" "dist/native/$NAME.$TRIPLE.node"
fi
VERSION="$(node -p 'require("./package.json").version')"
OUT="$HERE/openhands-tab-$VERSION-$TARGET.vsix"
rm -f "$OUT"
npx --no-install vsce package --target "$TARGET" --no-dependencies --allow-missing-repository \
  --skip-license -o "$OUT" >&2
echo "$OUT"
