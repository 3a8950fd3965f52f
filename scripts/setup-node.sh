#!/usr/bin/env bash
# `npm ci` in a package folder when its lockfile changed since the last install (stamp in node_modules).
set -euo pipefail
dir=$1
cd "$dir"
lock=package-lock.json
[ -f "$lock" ] || lock=package.json
hash=$(sha256sum "$lock" | cut -c1-16)
stamp=node_modules/.stamp-$hash
[ -f "$stamp" ] && exit 0
echo "setup-node: installing npm dependencies in $dir" >&2
if [ -f package-lock.json ]; then npm ci --no-audit --no-fund; else npm install --no-audit --no-fund; fi
rm -f node_modules/.stamp-*
touch "$stamp"
