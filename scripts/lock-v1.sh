#!/usr/bin/env bash
# Writes openhands-runtime-py/v1-lock.txt: every package of the `[v1]` environment (this package's
# core dependencies and its `[v1]` extra, at the newest supported V1 release, V1_NEWEST of
# scripts/venv-lib.sh) at one exact version, for every platform and Python >= 3.12 (uv's universal
# resolution: a package only some platforms need carries its marker).
# Two installs read it as constraints: the V1 test venv (scripts/setup-python-v1.sh, the newest
# release) and the environment the extension creates (extension/src/v1/pythonEnv.ts; the VSIX
# carries the file in dist/python/), so what users get is what the suites ran, and the installer has
# nothing to resolve. scripts/check-v1-lock.py checks that it still covers pyproject.toml.
#   scripts/lock-v1.sh            # needs the package index (uv from PyPI, into a cache venv)
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
source "$repo/scripts/venv-lib.sh"
uv=$(uv_path)
in=$(mktemp); trap 'rm -f "$in"' EXIT
python3 - "$repo/openhands-runtime-py/pyproject.toml" "$V1_NEWEST" > "$in" <<'PY'
import re, sys, tomllib
project = tomllib.load(open(sys.argv[1], 'rb'))['project']
for req in project['dependencies']:
    print(req)
for req in project['optional-dependencies']['v1']:
    name = re.match(r'[A-Za-z0-9_.-]+', req).group(0)
    print(f'{name}=={sys.argv[2]}')  # the release the suites run
PY
out="$repo/openhands-runtime-py/v1-lock.txt"
{
  echo "# The [v1] environment at openhands-sdk $V1_NEWEST: written by scripts/lock-v1.sh (uv $UV_VERSION,"
  echo "# --universal, Python 3.12); read as constraints by scripts/setup-python-v1.sh and the extension."
  "$uv" pip compile --quiet --universal --python-version 3.12 --no-header --no-annotate "$in"
} > "$out"
echo "lock-v1: $(grep -vc '^#' "$out") packages in $out" >&2
