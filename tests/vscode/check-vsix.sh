#!/usr/bin/env bash
# Checks that a VSIX ships the native executor and that the binary runs on older Linux systems:
# no dependency on libssl.so.3 / libcrypto.so.3 and no GLIBC symbol version newer than 2.28; that
# its identifier is openhands-vscode-runtime.openhands-tab (not enyst/OpenHands-Tab's
# openhands.openhands-tab); and that it carries the pure-Python wheel with the `[v1]` extra that
# "OpenHands: Set Up V1 Environment" installs.
#   tests/vscode/check-vsix.sh path/to/openhands-tab-*-linux-x64.vsix
# Exit 0 when it passes; prints the reasons otherwise.
set -euo pipefail
VSIX="$1"
MAX_GLIBC="${MAX_GLIBC:-2.28}"
TMP="$(mktemp -d)"; trap 'rm -rf "$TMP"' EXIT
python3 -c 'import sys,zipfile; zipfile.ZipFile(sys.argv[1]).extractall(sys.argv[2])' "$VSIX" "$TMP"
mapfile -t NODES < <(find "$TMP" -name '*.node')
if [ "${#NODES[@]}" -eq 0 ]; then echo "check-vsix: FAIL: no .node file in $VSIX"; exit 1; fi
rc=0
id="$(python3 -c 'import json,sys; p=json.load(open(sys.argv[1])); print(p["publisher"]+"."+p["name"])' "$TMP/extension/package.json")"
if [ "$id" != openhands-vscode-runtime.openhands-tab ]; then echo "check-vsix: FAIL: identifier $id"; rc=1; fi
mapfile -t WHEELS < <(find "$TMP/extension/dist/python" -name 'openhands_vscode_runtime-*-py3-none-any.whl' 2>/dev/null)
if [ "${#WHEELS[@]}" -ne 1 ]; then
  echo "check-vsix: FAIL: expected one openhands_vscode_runtime-*-py3-none-any.whl in dist/python, found ${#WHEELS[@]}"; rc=1
elif ! python3 -c 'import sys,zipfile; z=zipfile.ZipFile(sys.argv[1]); m=[n for n in z.namelist() if n.endswith(".dist-info/METADATA")]; t=z.read(m[0]).decode(); sys.exit(0 if "Provides-Extra: v1" in t and "openhands_vscode_runtime/v1/register.py" in z.namelist() else 1)' "${WHEELS[0]}"; then
  echo "check-vsix: FAIL: ${WHEELS[0]#$TMP/} lacks the [v1] extra or the V1 tools"; rc=1
else
  echo "check-vsix: identifier $id; ${WHEELS[0]#$TMP/}"
fi
for f in "${NODES[@]}"; do
  rel="${f#$TMP/}"
  needed="$(objdump -p "$f" | awk '/NEEDED/ {print $2}' | tr '\n' ' ')"
  if grep -Eq 'libssl\.so|libcrypto\.so' <<<"$needed"; then
    echo "check-vsix: FAIL: $rel needs OpenSSL shared libraries ($needed)"; rc=1
  fi
  newest="$(objdump -T "$f" | grep -o 'GLIBC_[0-9][0-9.]*' | sed 's/GLIBC_//' | sort -uV | tail -1)"
  too_new=""
  for v in $(objdump -T "$f" | grep -o 'GLIBC_[0-9][0-9.]*' | sed 's/GLIBC_//' | sort -uV); do
    if [ "$(printf '%s\n%s\n' "$v" "$MAX_GLIBC" | sort -V | tail -1)" != "$MAX_GLIBC" ]; then too_new+="$v "; fi
  done
  if [ -n "$too_new" ]; then
    echo "check-vsix: FAIL: $rel uses GLIBC symbol versions newer than $MAX_GLIBC: $too_new"
    objdump -T "$f" | grep -E "GLIBC_($(echo $too_new | sed 's/ /|/g' | sed 's/\./\\./g'))[^0-9.]" | awk '{print "    " $NF " " $(NF-1)}' | head -20
    rc=1
  fi
  echo "check-vsix: $rel: NEEDED $needed; newest GLIBC symbol version $newest"
done
[ $rc -eq 0 ] && echo "check-vsix: PASS"
exit $rc
