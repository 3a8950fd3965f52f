#!/usr/bin/env bash
# Print the path of a Python >= 3.12, < 3.14 interpreter (openhands-ai 1.6.0 needs it).
# Order: $OH_PYTHON, pyenv's versions, then python3.12/python3.13 on PATH.
set -euo pipefail
ok() { "$1" -c 'import sys; sys.exit(0 if (3, 12) <= sys.version_info[:2] < (3, 14) else 1)' 2>/dev/null; }
if [ -n "${OH_PYTHON:-}" ]; then
  ok "$OH_PYTHON" && { echo "$OH_PYTHON"; exit 0; }
  echo "OH_PYTHON=$OH_PYTHON is not a Python 3.12/3.13 interpreter" >&2; exit 1
fi
candidates=()
if command -v pyenv >/dev/null 2>&1; then
  root=$(pyenv root)
  for d in "$root"/versions/3.12* "$root"/versions/3.13*; do
    for exe in "$d/bin/python3.12" "$d/bin/python3.13" "$d/bin/python3"; do
      [ -x "$exe" ] && candidates+=("$exe")
    done
  done
fi
for name in python3.12 python3.13; do
  p=$(command -v "$name" 2>/dev/null || true)
  [ -n "$p" ] && candidates+=("$p")
done
for c in "${candidates[@]}"; do
  if ok "$c"; then echo "$c"; exit 0; fi
done
echo "No Python 3.12 or 3.13 found (looked in pyenv versions and on PATH). Install one, or set OH_PYTHON=/path/to/python3.12." >&2
exit 1
