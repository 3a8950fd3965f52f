#!/usr/bin/env bash
# Builds a shippable native executor for linux-x64: napi-rs' cross toolchain (a glibc 2.17
# sysroot, from npm) + the `vendored-openssl` feature (OpenSSL linked statically), from the
# COMMITTED state of the repository (git archive HEAD), in a cache folder:
#   $HOME/.cache/openhands-vscode-runtime/addon-cross/out/openhands-vscode-executor.linux-x64-gnu.node
# Prints that path on the last line. First build ~15-25 min on 2 busy cores; later builds reuse
# the cached target dir (only the project's crates recompile).
#
# Workarounds for the registry this project builds from: @napi-rs/cli 3.10 asks for
# @napi-rs/cross-toolchain-x64-target-x86_64 at the version of its own @napi-rs/cross-toolchain
# (1.0.5), which does not exist; we pin @napi-rs/cross-toolchain to 1.0.0 and remove the CLI's
# nested copy. Node 24 (from tests/vscode/setup.sh) runs the CLI (its engines need >= 22.20).
set -euo pipefail
REPO="$(cd "$(dirname "$0")/../.." && pwd)"
DIR="${OH_ADDON_CROSS_DIR:-$HOME/.cache/openhands-vscode-runtime/addon-cross}"
NODE24="${VSCODE_HOST_CACHE:-$HOME/.cache/openhands-vscode-runtime/vscode-host}/node24/bin"
[ -x "$NODE24/node" ] || bash "$REPO/tests/vscode/setup.sh" >&2
export PATH="$NODE24:$PATH"
mkdir -p "$DIR"
# One build per cache at a time (make test's background build and tests/vscode/run.sh may both
# ask); whoever waited finds the other's build and keeps it when it is of the same sources.
exec 9>"$DIR.lock"
flock 9
cd "$DIR"
if [ -f out/SOURCE ] && [ -f out/openhands-vscode-executor.linux-x64-gnu.node ] \
  && [ "$(cat out/SOURCE)" = "$("$REPO/scripts/addon-key.sh")" ]; then
  echo "build-portable-addon: cached build of the same sources ($DIR/out)" >&2
  echo "$DIR/out/openhands-vscode-executor.linux-x64-gnu.node"; exit 0
fi
if [ ! -d node_modules/@napi-rs/cross-toolchain-x64-target-x86_64 ]; then
  cat > package.json <<'JSON'
{ "private": true, "name": "addon-cross",
  "dependencies": { "@napi-rs/cli": "^3.10.0", "@napi-rs/cross-toolchain": "1.0.0",
    "@napi-rs/cross-toolchain-x64-target-x86_64": "1.0.0", "@napi-rs/lzma-linux-x64-gnu": "*" },
  "overrides": { "@napi-rs/cross-toolchain": "$@napi-rs/cross-toolchain" } }
JSON
  npm install --no-audit --no-fund >&2
fi
rm -rf node_modules/@napi-rs/cli/node_modules/@napi-rs/cross-toolchain
rm -rf src && mkdir src
# The key is taken with the archive, not after the build: HEAD may move while it compiles.
COMMIT="$(cd "$REPO" && git rev-parse HEAD)"
KEY="$("$REPO/scripts/addon-key.sh" "$COMMIT")"
(cd "$REPO" && git archive "$COMMIT") | tar -x -C src
echo "building the addon of commit $(cd "$REPO" && git rev-parse --short HEAD)" >&2
mkdir -p out
CARGO_TARGET_DIR="$DIR/target" nice -n 10 npx napi build --platform --release --use-napi-cross \
  --features vendored-openssl --target x86_64-unknown-linux-gnu \
  --manifest-path "$DIR/src/crates/oh-node/Cargo.toml" --package-json-path "$DIR/src/npm/executor/package.json" \
  --output-dir "$DIR/out" --no-js --dts index.d.ts >&2
# What the binary was built from: the committed crates/ and Cargo.lock trees (run.sh compares).
echo "$KEY" > out/SOURCE
echo "$DIR/out/openhands-vscode-executor.linux-x64-gnu.node"
