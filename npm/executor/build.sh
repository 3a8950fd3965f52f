#!/usr/bin/env bash
# Build the addon into this folder (openhands-vscode-executor.<triple>.node) and regenerate
# index.js / index.d.ts. `build.sh` = debug (tests), `build.sh release`, `build.sh release-vendored`
# (static OpenSSL, no libssl.so.3 at run time; slow). Idempotent: cargo is incremental.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
if [ -x "$root/scripts/setup-node.sh" ]; then
  "$root/scripts/setup-node.sh" "$here"
elif [ ! -d "$here/node_modules/@napi-rs/cli" ]; then
  (cd "$here" && npm ci --no-audit --no-fund)
fi
cd "$here"
args=(--platform --manifest-path ../../crates/oh-node/Cargo.toml --package-json-path package.json
      --output-dir . --js index.js --dts index.d.ts)
case "${1:-debug}" in
  debug) ;;
  release) args+=(--release) ;;
  release-vendored) args+=(--release --features vendored-openssl) ;;
  *) echo "usage: build.sh [debug|release|release-vendored]" >&2; exit 64 ;;
esac
exec npx --no-install napi build "${args[@]}"
