#!/usr/bin/env bash
# Packs the npm packages in the napi-rs layout with `npm pack`:
#   openhands-vscode-executor-<v>.tgz                 (loader, types, bin/; optionalDependencies
#                                                       on the platform packages built here)
#   openhands-vscode-executor-<platform>-<v>.tgz      (the addon of one platform: linux-x64-gnu,
#                                                       and each other one given)
#
#   scripts/pack-npm.sh OUT_DIR ADDON_FOR_linux-x64-gnu.node [OTHER.<platform>.node ...]
# The other addons are named as napi-rs names them (openhands-vscode-executor.<platform>.node, as
# scripts/build-cross.sh leaves them); their package.json is npm/executor/npm/<platform>/.
# Works on copies (the repository's package.json keeps its development form).
set -euo pipefail
REPO="$(cd "$(dirname "$0")/.." && pwd)"
OUT="$(mkdir -p "$1" && cd "$1" && pwd)"
NAME=openhands-vscode-executor
shift
TMP="$(mktemp -d)"; trap 'rm -rf "$TMP"' EXIT
platforms=()
pack_platform() {  # PLATFORM ADDON
  [ -f "$REPO/npm/executor/npm/$1/package.json" ] || { echo "pack-npm: no npm/executor/npm/$1/package.json" >&2; exit 1; }
  cp -a "$REPO/npm/executor/npm/$1" "$TMP/$1"
  cp "$2" "$TMP/$1/$NAME.$1.node"
  cp "$REPO/extension/LICENSE" "$TMP/$1/LICENSE"
  (cd "$TMP/$1" && npm pack --silent --pack-destination "$OUT" >/dev/null)
  platforms+=("$1")
}
pack_platform linux-x64-gnu "$1"
shift
for addon in "$@"; do
  platform="$(basename "$addon" .node)"; platform="${platform#$NAME.}"
  pack_platform "$platform" "$addon"
done
mkdir "$TMP/main"
cp -a "$REPO/npm/executor/"{package.json,index.js,index.d.ts,README.md,bin} "$TMP/main/"
cp "$REPO/extension/LICENSE" "$TMP/main/LICENSE"
# What `napi prepublish` does for the packages built here, minus publishing.
node -e '
  const fs = require("fs"); const p = process.argv[1] + "/package.json";
  const pkg = JSON.parse(fs.readFileSync(p, "utf8"));
  pkg.optionalDependencies = Object.fromEntries(process.argv.slice(2).map((pl) => [pkg.name + "-" + pl, pkg.version]));
  delete pkg.devDependencies; delete pkg.overrides;
  delete pkg.scripts;
  fs.writeFileSync(p, JSON.stringify(pkg, null, 2) + "\n");
' "$TMP/main" "${platforms[@]}"
(cd "$TMP/main" && npm pack --silent --pack-destination "$OUT" >/dev/null)
ls "$OUT"/$NAME-*.tgz
