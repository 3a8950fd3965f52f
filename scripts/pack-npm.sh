#!/usr/bin/env bash
# Packs the npm packages in the napi-rs layout with `npm pack`:
#   openhands-vscode-executor-<v>.tgz                 (loader, types, bin/; optionalDependencies
#                                                       on the platform packages built here)
#   openhands-vscode-executor-linux-x64-gnu-<v>.tgz   (the addon)
#
#   scripts/pack-npm.sh OUT_DIR ADDON_FOR_linux-x64-gnu.node
# Works on copies (the repository's package.json keeps its development form).
set -euo pipefail
REPO="$(cd "$(dirname "$0")/.." && pwd)"
OUT="$(mkdir -p "$1" && cd "$1" && pwd)"
ADDON="$2"
NAME=openhands-vscode-executor
TMP="$(mktemp -d)"; trap 'rm -rf "$TMP"' EXIT
cp -a "$REPO/npm/executor/npm/linux-x64-gnu" "$TMP/platform"
cp "$ADDON" "$TMP/platform/$NAME.linux-x64-gnu.node"
mkdir "$TMP/main"
cp -a "$REPO/npm/executor/"{package.json,index.js,index.d.ts,README.md,bin} "$TMP/main/"
cp "$REPO/extension/LICENSE" "$TMP/main/LICENSE"; cp "$REPO/extension/LICENSE" "$TMP/platform/LICENSE"
# What `napi prepublish` does for the packages built here, minus publishing.
node -e '
  const fs = require("fs"); const p = process.argv[1] + "/package.json";
  const pkg = JSON.parse(fs.readFileSync(p, "utf8"));
  pkg.optionalDependencies = { [pkg.name + "-linux-x64-gnu"]: pkg.version };
  delete pkg.devDependencies; delete pkg.overrides;
  delete pkg.scripts;
  fs.writeFileSync(p, JSON.stringify(pkg, null, 2) + "\n");
' "$TMP/main"
(cd "$TMP/platform" && npm pack --silent --pack-destination "$OUT" >/dev/null)
(cd "$TMP/main" && npm pack --silent --pack-destination "$OUT" >/dev/null)
ls "$OUT"/$NAME-*.tgz
