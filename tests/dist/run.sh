#!/usr/bin/env bash
# Tests the shippable artifacts, outside the repository:
#  0. pip installs the wheel alone into a fresh venv, and the executor it carries starts;
#  1. the wheel with its `[v0]` extra, installed into a fresh venv with openhands-ai==1.6.0
#     (pinned), runs the demo's agent session in embedded mode with the native executor it carries
#     (no PYTHONPATH, a clean environment, cwd and HOME outside the repository);
#  1b. the wheel with its `[v1]` extra, installed into another empty venv (nothing else), runs the
#     OpenHands V1 agent-server with our tools (`--import-modules openhands_vscode_runtime.v1.register`)
#     and tests/v1's scripted agent-server conversation against it;
#  2. the npm tarballs, installed into an empty directory, give a headless CLI that runs the same
#     session against the runtime of that venv;
#  3. versions agree (scripts/check-versions.sh); the VSIX passed check-vsix.sh in build-dist.sh;
#  4. each target's wheel, npm platform package and VSIX carry that target's binaries, and the
#     static musl executor of its wheel runs here (tests/dist/check-targets.py).
# The two environments of 1 and 1b are installed with uv (the version the tab's set-up
# bootstraps): the same packages as pip resolves (compared on 28 Nov 2026: 347 of 347 for
# [v0], and [v1] but for one unpinned patch release), in about 6 s each against pip's 145 s and
# 86 s, which this suite spent at the end of every `make test`. pip's own install of the wheel is
# step 0.
#
#   tests/dist/run.sh [DIST_DIR]     # default: dist/, built with scripts/build-dist.sh unless it
#                                    # holds this commit's artifacts already (scripts/dist-stamp.sh)
set -euo pipefail
REPO="$(cd "$(dirname "$0")/../.." && pwd)"
DIST="${1:-}"
if [ -z "$DIST" ]; then
  DIST="$REPO/dist"
  stamp="$("$REPO/scripts/dist-stamp.sh")"
  if [ -n "$stamp" ] && [ "$(cat "$DIST/BUILT_FROM" 2>/dev/null)" = "$stamp" ]; then
    echo "dist: dist/ holds the artifacts of this checkout ($stamp): tested as they are, not built again"
  else
    "$REPO/scripts/build-dist.sh" "$DIST"
  fi
fi
DIST="$(cd "$DIST" && pwd)"
# The linux-x64 wheel (dist/ holds one per platform).
WHEEL="$(ls "$DIST"/openhands_vscode_runtime-*-manylinux*_x86_64.whl | tail -1)"
TMP="$(mktemp -d /tmp/oh-dist-test.XXXXXX)"; trap 'rm -rf "$TMP"' EXIT
fail() { echo "dist: FAIL: $*"; exit 1; }

"$REPO/scripts/check-versions.sh"

echo "dist: every target's wheel, npm platform package and VSIX carry that target's binaries"
python3 "$REPO/tests/dist/check-targets.py" "$DIST" "$TMP" || fail "an artifact carries another target's binary (or is missing)"

echo "dist: wheel contents"
python3 - "$WHEEL" <<'EOF'
import sys, zipfile
names = zipfile.ZipFile(sys.argv[1]).namelist()
need = ['openhands_vscode_runtime/py.typed', 'openhands_vscode_runtime/v0/runtime.py']
bins = [n for n in names if n.endswith('.data/scripts/openhands-vscode-executor')]
missing = [n for n in need if n not in names]
if missing or len(bins) != 1:
    sys.exit(f'dist: FAIL: wheel lacks {missing or "the executor binary"}: {names}')
print(f'dist: {len(names)} files, executor {bins[0]}')
EOF

PY312="$("$REPO/scripts/find-python312.sh")"
VERSION="$(python3 -c 'import tomllib;print(tomllib.load(open("'"$REPO"'/Cargo.toml","rb"))["workspace"]["package"]["version"])')"
echo "dist: pip installs the wheel alone"
"$PY312" -m venv "$TMP/venv-pip"
"$TMP/venv-pip/bin/python" -m pip install -q --no-deps "$WHEEL"
[ -x "$TMP/venv-pip/bin/openhands-vscode-executor" ] || fail "pip's install of the wheel has no bin/openhands-vscode-executor"
"$TMP/venv-pip/bin/openhands-vscode-executor" --version | grep -qx "$VERSION" \
  || fail "the executor of pip's install does not start or disagrees with the workspace version"

echo "dist: fresh venv with the wheel and openhands-ai==1.6.0"
source "$REPO/scripts/venv-lib.sh"
UV="$(uv_path)"
export UV_LINK_MODE=copy  # the cache under $HOME, the venvs under /tmp: no hard links across them
"$PY312" -m venv "$TMP/venv"
# Constraints only pin versions; they come from the repository like the reference does.
"$UV" pip install -q --python "$TMP/venv/bin/python" -c "$REPO/tests/reference/constraints.txt" 'openhands-ai==1.6.0' "$WHEEL[v0]"
EXE="$TMP/venv/bin/openhands-vscode-executor"
[ -x "$EXE" ] || fail "the wheel did not install bin/openhands-vscode-executor"
"$EXE" --version | grep -qx "$VERSION" || fail "executor --version disagrees with the workspace version"

# A clean environment: no PYTHONPATH, no OH_VSCODE_EXECUTOR, HOME and cwd outside the repository.
mkdir -p "$TMP/home" "$TMP/work" "$TMP/ws1" "$TMP/ws2"
clean_env=(env -i "HOME=$TMP/home" "USER=${USER:-root}" "PATH=$TMP/venv/bin:/usr/bin:/bin"
           "LITELLM_LOCAL_MODEL_COST_MAP=True" "LANG=C.UTF-8")
cd "$TMP/work"
"${clean_env[@]}" python -c '
import sys, openhands_vscode_runtime.executor_process as ep
cmd = ep.find_executor()
assert cmd and cmd[0].startswith(sys.prefix), f"embedded mode would run {cmd}, not the installed binary"
assert ep.__file__.startswith(sys.prefix + "/"), f"imported from {ep.__file__}, not from the wheel installed in {sys.prefix}"
print("dist: embedded mode runs", cmd[0])
' || fail "the installed package does not find its own executor"
echo "dist: demo session (embedded mode, native executor from the wheel)"
"${clean_env[@]}" python -m openhands_vscode_runtime.demo --workspace "$TMP/ws1" > "$TMP/demo1.log" 2>&1 \
  || { cat "$TMP/demo1.log"; fail "the demo session failed with the wheel's executor"; }
# The demo's last line says whether the agent finished with every scripted step matched; its
# work must be on disk too.
grep -qE '^agent state: finished; .* demo OK$' "$TMP/demo1.log" || { cat "$TMP/demo1.log"; fail "demo did not finish OK"; }
[ "$(cd "$TMP/ws1" && python3 hello.py)" = "Hello, VS Code!" ] || { cat "$TMP/demo1.log"; fail "the demo's hello.py is not in its workspace"; }
echo "dist: demo OK (native)"

echo "dist: an empty venv with only the wheel's [v1] extra (OpenHands V1)"
"$PY312" -m venv "$TMP/venv-v1"
"$UV" pip install -q --python "$TMP/venv-v1/bin/python" "$WHEEL[v1]"
"$TMP/venv-v1/bin/python" -m pip show -q openhands-ai >/dev/null 2>&1 && fail "the [v1] extra pulled in openhands-ai (V0)"
mkdir -p "$TMP/v1"
# tests/v1's agent-server test, run by the venv's python without pytest; the package, the executor
# and the agent-server come from the venv (sys.path gets only tests/v1, for the test's own files).
"${clean_env[@]}" "PATH=$TMP/venv-v1/bin:/usr/bin:/bin" OPENHANDS_SUPPRESS_BANNER=1 \
  python - "$REPO/tests/v1" "$TMP/v1" > "$TMP/v1.log" 2>&1 <<'EOF' || { cat "$TMP/v1.log"; fail "the V1 agent-server conversation failed with the [v1] install"; }
import sys
from pathlib import Path
sys.path.insert(0, sys.argv[1])
import openhands_vscode_runtime, openhands_vscode_runtime.executor_process as ep
assert openhands_vscode_runtime.__file__.startswith(sys.prefix), openhands_vscode_runtime.__file__
cmd = ep.find_executor()
assert cmd and cmd[0].startswith(sys.prefix), f'the V1 tools would run {cmd}, not the installed binary'
from test_agent_server import test_agent_server_conversation_runs_its_tools_in_the_executor as check
check(Path(sys.argv[2]))
print('dist: V1 agent-server conversation OK')
EOF
grep -q '^dist: V1 agent-server conversation OK$' "$TMP/v1.log" || { cat "$TMP/v1.log"; fail "no V1 result"; }
echo "dist: V1 OK (agent-server with the [v1] extra, native executor)"

echo "dist: npm tarballs into an empty directory"
mkdir -p "$TMP/npm"
(cd "$TMP/npm" && echo '{"private":true}' > package.json && \
  npm install --no-audit --no-fund --offline "$DIST"/openhands-vscode-executor-linux-x64-gnu-*.tgz "$DIST"/openhands-vscode-executor-[0-9]*.tgz >/dev/null)
CLI="$TMP/npm/node_modules/.bin/openhands-vscode-executor"
[ -x "$CLI" ] || fail "npm install gave no openhands-vscode-executor bin"
"$CLI" --version >/dev/null || fail "the installed npm CLI does not start"
echo "dist: demo session (embedded mode, the npm package's Node CLI)"
"${clean_env[@]}" "PATH=$TMP/venv/bin:$(dirname "$(command -v node)"):/usr/bin:/bin" "OH_VSCODE_EXECUTOR=$CLI" \
  python -m openhands_vscode_runtime.demo --workspace "$TMP/ws2" > "$TMP/demo2.log" 2>&1 \
  || { cat "$TMP/demo2.log"; fail "the demo session failed with the npm CLI"; }
grep -qE '^agent state: finished; .* demo OK$' "$TMP/demo2.log" || { cat "$TMP/demo2.log"; fail "demo did not finish OK (npm CLI)"; }
[ "$(cd "$TMP/ws2" && python3 hello.py)" = "Hello, VS Code!" ] || { cat "$TMP/demo2.log"; fail "the demo's hello.py is not in its workspace (npm CLI)"; }
echo "dist: demo OK (npm CLI)"
echo "dist: PASS"
