#!/usr/bin/env bash
# Benchmark (not a test) of the shipped artifacts, in one run: the native executor of the wheel
# beside the Node CLI of the npm tarballs (both release builds), and the artifact sizes.
#   tests/dist/bench.sh [DIST_DIR]    (default dist/, built by `make dist`)
set -euo pipefail
REPO="$(cd "$(dirname "$0")/../.." && pwd)"
DIST="$(cd "${1:-$REPO/dist}" && pwd)"
TMP="$(mktemp -d /tmp/oh-dist-bench.XXXXXX)"; trap 'rm -rf "$TMP"' EXIT
python3 -c 'import sys,zipfile; zipfile.ZipFile(sys.argv[1]).extractall(sys.argv[2])' "$(ls "$DIST"/openhands_vscode_runtime-*-manylinux*_x86_64.whl | tail -1)" "$TMP/wheel"
NATIVE="$(find "$TMP/wheel" -path '*.data/scripts/openhands-vscode-executor')"
chmod +x "$NATIVE"
mkdir -p "$TMP/npm" && (cd "$TMP/npm" && echo '{"private":true}' > package.json && \
  npm install --no-audit --no-fund --offline "$DIST"/openhands-vscode-executor-linux-x64-gnu-*.tgz "$DIST"/openhands-vscode-executor-[0-9]*.tgz >/dev/null)
NODE_CLI="$TMP/npm/node_modules/openhands-vscode-executor/bin/openhands-vscode-executor.js"
echo "## executors (native: the wheel's binary; node: the npm package's CLI + release addon)"
(cd "$REPO/npm/executor" && node bench/cli-bench.js "$NATIVE" "$NODE_CLI")
echo
echo "## artifact sizes"
for f in "$DIST"/*; do printf '%-70s %8.1f MiB\n' "$(basename "$f")" "$(echo "$(stat -c %s "$f") / 1048576" | bc -l)"; done
printf '%-70s %8.1f MiB\n' "native executor binary (in the wheel)" "$(echo "$(stat -c %s "$NATIVE") / 1048576" | bc -l)"
