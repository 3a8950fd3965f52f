#!/usr/bin/env bash
# The V1 environment's creation as "OpenHands: Set Up V1 Environment" makes it (the extension's own
# createEnv, extension/src/v1/pythonEnv.ts, bundled here with esbuild), from the pure-Python wheel
# and the lock the VSIX carries, in one run, each from EMPTY pip and uv caches and without uv on
# PATH (a warm OS, a cold package cache: what a new user meets):
#   pip            python -m venv + pip, no lock (what the extension did before the lock)
#   pip + lock     the same with the lock as constraints
#   uv-bootstrap   python -m venv, pip fetches uv, uv installs with the lock (the default now)
# Prints each one's seconds and its ratio to the first. Needs the package index (PyPI).
#   bench/v1_setup.sh [ROUNDS]     # default 1
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
rounds=${1:-1}
work=$(mktemp -d /tmp/oh-bench-setup.XXXXXX); trap 'rm -rf "$work"' EXIT
python3 "$repo/extension/scripts/build-pure-wheel.py" "$work/python" >/dev/null
cp "$repo/openhands-runtime-py/v1-lock.txt" "$work/python/"
(cd "$repo/extension" && node -e '
require("esbuild").buildSync({ entryPoints: ["src/v1/pythonEnv.ts"], bundle: true, platform: "node", format: "cjs", outfile: process.argv[1], logLevel: "error" });
' "$work/pythonEnv.cjs")
py=$("$repo/scripts/find-python312.sh")
cat > "$work/run.cjs" <<'JS'
const env = require(process.argv[2]);
const [, , , dir, basePython, installer, lock] = process.argv;
const fs = require('fs');
const wheel = fs.readdirSync(`${dir}/python`).find((f) => f.endsWith('.whl'));
const plan = { venvDir: `${dir}/venv-${installer}${lock ? '-lock' : ''}`, basePython, installer, wheel: `${dir}/python/${wheel}`, constraints: lock || undefined };
const t0 = Date.now();
env.createEnv(plan, { onOutput: (t) => fs.appendFileSync(`${dir}/log.txt`, t) }).then(
  () => { console.log(((Date.now() - t0) / 1000).toFixed(1)); },
  (e) => { console.error(e.message); process.exit(1); });
JS
# No uv on PATH: only the directories of Python and Node.
path="$(dirname "$py"):$(dirname "$(command -v node)"):/usr/bin:/bin"
measure() {  # measure INSTALLER [LOCK]: seconds of one creation from empty caches
  rm -rf "$work/cache" && mkdir -p "$work/cache"
  env PATH="$path" PIP_CACHE_DIR="$work/cache/pip" UV_CACHE_DIR="$work/cache/uv" PIP_FIND_LINKS= \
    node "$work/run.cjs" "$work/pythonEnv.cjs" "$work" "$py" "$@"
  rm -rf "$work"/venv-*
}
declare -A sum=()
for r in $(seq 1 "$rounds"); do
  for mode in "pip" "pip+lock" "uv-bootstrap+lock"; do
    case $mode in
      pip) s=$(measure pip) ;;
      pip+lock) s=$(measure pip "$work/python/v1-lock.txt") ;;
      uv-bootstrap+lock) s=$(measure uv-bootstrap "$work/python/v1-lock.txt") ;;
    esac
    echo "round $r: $mode ${s} s" >&2
    sum[$mode]=$(python3 -c "print(${sum[$mode]:-0} + $s)")
  done
done
base=${sum[pip]}
echo "V1 environment from empty caches, $rounds round(s), $(nproc) cores, load $(cut -d' ' -f1 /proc/loadavg):"
for mode in "pip" "pip+lock" "uv-bootstrap+lock"; do
  python3 -c "m='$mode'; t=${sum[$mode]}/$rounds; print(f'  {m:20} {t:7.1f} s   {t / ($base/$rounds):5.2f}x of pip')"
done
