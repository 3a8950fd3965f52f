#!/usr/bin/env bash
# Integration tests of the openhands-tab extension in a REAL VS Code extension host (code-server):
# the OpenHands tab against the REAL OpenHands server (VsCodeRuntime in server mode, CodeActAgent,
# the scripted stand-in LLM), and, for conditions that server cannot produce on demand (actions
# delegated one by one, a keyed backend, an untrusted workspace), the stand-in backend
# fake_backend.py speaking docs/protocol.md. Idempotent setup + run; last line:
#   vscode: N passed, M failed
# Options: --update-docs-screenshot  copy the tab mid-conversation (real server) to docs/screenshot-openhands-tab.png
#          --dev-addon               test npm/executor's development build (fast; the portability check fails)
#          --only=S1,S2              run only these host sessions (standin untrusted trust ide conversation
#                                    two-windows confirm v1 v1tab v1tab-attach v1-managed v1-parallel v1-canvas v1-remote multiroot ide-agent ide-bench); the packaging checks always run
# OH_IDE_BENCH=N adds latency benches of N IDE tool calls: through the MCP endpoint (session ide) and
# through VsCodeRuntime and the executor channel (session ide-bench), each beside a plain read.
#          --only-v1                 only the V1 session (step 10), after the VSIX (development)
# The addon tested and shipped: $OPENHANDS_EXECUTOR_ADDON if set; else the portable build of the
# committed crates/ + Cargo.lock (extension/scripts/build-portable-addon.sh; made here when the cache
# has none for them); with --dev-addon, npm/executor's own build.
set -uo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
REPO="$(cd "$HERE/../.." && pwd)"
CACHE="${VSCODE_HOST_CACHE:-$HOME/.cache/openhands-vscode-runtime/vscode-host}"
PY="${OH_VENV:-$HOME/.cache/openhands-vscode-runtime/venv}/bin/python"
ARTIFACTS="$REPO/tests/artifacts/vscode"
UPDATE_DOCS=0
DEV_ADDON=0
ONLY=
ONLY_V1=0
for a in "$@"; do
  case "$a" in
    --update-docs-screenshot) UPDATE_DOCS=1 ;;
    --dev-addon) DEV_ADDON=1 ;;
    --only=*) ONLY=",${a#--only=}," ;;
    --only-v1) ONLY_V1=1 ;;
  esac
done
T0=$(date +%s)
# Whether a host session runs (all of them unless --only names some).
want() { [ -z "$ONLY" ] || [[ "$ONLY" == *",$1,"* ]]; }
PASS=0; FAIL=0
# Each host session's exit code (host.mjs: the extension host's, 2 on a harness error or timeout).
declare -A HOST_RC=()
pass() { PASS=$((PASS + 1)); echo "PASS $1"; }
fail() { FAIL=$((FAIL + 1)); echo "FAIL $1"; }
# A picture documents; it asserts nothing, so it is listed, never counted (the suites assert what it
# shows through the DOM and the extension's API).
artifact() { if [ -f "$1" ]; then echo "ARTIFACT $2: $1"; else echo "ARTIFACT $2: not taken"; fi; }
# A field of the JSON line a started helper printed first (oh_server.py: url, session_api_key,
# llm_base_url; scripted_llm: base_url); empty when it printed none.
first_line_field() { "$PY" -c 'import json,sys; print(json.loads(open(sys.argv[1]).readline())[sys.argv[2]])' "$1" "$2" 2>/dev/null; }
# A host session's test lines on the console (EXTRA: a regex of more lines to show), and its whole
# log appended to host.log.
show_host_log() {
  local extra=${2:+|$2}
  grep -E "@@oh-test|\[host$extra" "$1" | sed -E "s/^.*(@@oh-test$extra)/\1/" | cut -c1-400
  cat "$1" >> "$ARTIFACTS/host.log"
}
finish() {
  echo "real-host suite took $(( $(date +%s) - T0 )) s (artifacts: $ARTIFACTS)"
  echo "vscode: $PASS passed, $FAIL failed"
  [ "$FAIL" -eq 0 ]
  exit $?
}
mkdir -p "$ARTIFACTS"

# 1. the host: Node 24, code-server, chromium, playwright-core
if ! bash "$HERE/setup.sh" > "$ARTIFACTS/setup.log" 2>&1; then
  tail -20 "$ARTIFACTS/setup.log"; fail "setup of the VS Code host (see $ARTIFACTS/setup.log)"; finish
fi

# 2. the VSIX (with the native executor when it is built)
cd "$REPO/extension"
# npm ci when the lockfile changed (new dependencies, e.g. the MCP SDK bundled into the extension)
bash "$REPO/scripts/setup-node.sh" "$REPO/extension" > "$ARTIFACTS/npm-ci.log" 2>&1
CROSS="$HOME/.cache/openhands-vscode-runtime/addon-cross/out"
portable_current() { [ -f "$CROSS/openhands-vscode-executor.linux-x64-gnu.node" ] && [ "$(cat "$CROSS/SOURCE" 2>/dev/null)" = "$("$REPO/scripts/addon-key.sh")" ]; }
if [ -z "${OPENHANDS_EXECUTOR_ADDON:-}" ] && [ "$DEV_ADDON" = 0 ]; then
  if ! portable_current; then
    # The shippable addon of the committed crates (≈5 min with a warm cache, ≈25 min cold).
    echo "building the portable addon of the committed crates (log: $ARTIFACTS/portable-addon.log)"
    bash scripts/build-portable-addon.sh > "$ARTIFACTS/portable-addon.log" 2>&1 || echo "portable addon build failed (see $ARTIFACTS/portable-addon.log)"
  fi
  if portable_current; then
    export OPENHANDS_EXECUTOR_ADDON="$CROSS/openhands-vscode-executor.linux-x64-gnu.node"
  fi
fi
echo "addon: ${OPENHANDS_EXECUTOR_ADDON:-npm/executor build}"
if VSIX="$(bash scripts/package.sh 2> "$ARTIFACTS/package.log" | tail -1)" && [ -f "$VSIX" ]; then
  pass "package a linux-x64 VSIX with the native executor"
  if bash "$HERE/check-vsix.sh" "$VSIX" > "$ARTIFACTS/check-vsix.log" 2>&1; then
    pass "shipped .node needs no libssl.so.3 and no GLIBC > 2.28 ($(tail -2 "$ARTIFACTS/check-vsix.log" | head -1 | sed 's/.*newest/newest/'))"
  else
    cat "$ARTIFACTS/check-vsix.log"; fail "shipped .node portability (objdump -T)"
  fi
else
  tail -5 "$ARTIFACTS/package.log"
  fail "package a linux-x64 VSIX with the native executor"
  fail "shipped .node portability (no VSIX with a .node)"
  # Go on with a VSIX without the binary so the UI part is still exercised (its tests will fail honestly).
  VSIX="$(bash scripts/package.sh --allow-no-addon 2>> "$ARTIFACTS/package.log" | tail -1)"
  [ -f "$VSIX" ] || finish
fi

# 3. stand-in backends (attach mode: the conversation exists up front) + workspace + extensions dir
SESSION="$(mktemp -d /tmp/oh-vscode-run.XXXXXX)"
WS="$SESSION/workspace"; EXT="$SESSION/ext"
mkdir -p "$WS/.vscode" "$EXT"
BACKEND_LOG="$ARTIFACTS/backend.log"
KEYED_LOG="$ARTIFACTS/backend-keyed.log"
KEY="k-$RANDOM$RANDOM"
CONV="stand-in-$RANDOM$RANDOM"
setsid "$PY" "$HERE/fake_backend.py" --port 0 --conversation "$CONV" > "$BACKEND_LOG" 2>&1 &
BACKEND_PID=$!
setsid "$PY" "$HERE/fake_backend.py" --port 0 --session-api-key "$KEY" --conversation "$CONV" > "$KEYED_LOG" 2>&1 &
KEYED_PID=$!
LLM_PID=; SERVER_PID=; TRUST_PID=; V1_PIDS=
cleanup() {
  for p in "$BACKEND_PID" "$KEYED_PID" $TRUST_PID $LLM_PID $SERVER_PID; do kill -- -"$p" 2>/dev/null; done
  for p in $V1_PIDS; do kill -KILL -- -"$p" 2>/dev/null; done
  rm -rf "$SESSION"
}
trap cleanup EXIT
# Up to 60 s: on a loaded machine importing python-socketio and aiohttp alone took over 10 s.
for _ in $(seq 1 600); do grep -q '^READY' "$BACKEND_LOG" && grep -q '^READY' "$KEYED_LOG" && break; sleep 0.1; done
PORT="$(awk '/^READY/ {print $2; exit}' "$BACKEND_LOG")"
KEYED_PORT="$(awk '/^READY/ {print $2; exit}' "$KEYED_LOG")"
if [ -z "$PORT" ] || [ -z "$KEYED_PORT" ]; then cat "$BACKEND_LOG" "$KEYED_LOG"; fail "start the protocol backends"; finish; fi
cat > "$WS/.vscode/settings.json" <<JSON
{ "openhands.conversation.mode": "attach", "openhands.conversation.id": "$CONV" }
JSON

NODE24="$CACHE/node24/bin/node"
CANVAS_TARBALL="$CACHE/agent-canvas/openhands-agent-canvas-1.20.0.tgz"  # setup.sh, step 5
CS="$CACHE/code-server/node_modules/code-server/out/node/entry.js"
if ! XDG_CONFIG_HOME="$SESSION/xdg" XDG_DATA_HOME="$SESSION/xdg" XDG_CACHE_HOME="$SESSION/xdg" \
   "$NODE24" "$CS" --extensions-dir "$EXT" --user-data-dir "$SESSION/user" --install-extension "$VSIX" > "$ARTIFACTS/install.log" 2>&1; then
  cat "$ARTIFACTS/install.log"; fail "install the VSIX into code-server"; finish
fi

# The V1 sessions (run_v1_session, run_v1tab_session, run_v1_managed_session,
# run_multiroot_session) and the judge of every session (judge_session, EXPECTED).
source "$HERE/v1-sessions.sh"
# Two V1 conversations at once in one window (run_v1_parallel_session).
source "$HERE/v1-parallel-session.sh"
# Agent Canvas's client and an SDK script on the window's agent-server (run_v1_canvas_session).
source "$HERE/v1-canvas-session.sh"
# The tab on an agent-server reached over TLS as another machine (run_v1_remote_session).
source "$HERE/v1-remote-session.sh"
source "$HERE/judge.sh"
if [ "$ONLY_V1" = 1 ]; then
  run_v1_session
  judge_session v1
  finish
fi
if [ "$ONLY" = ",v1-managed," ]; then
  # development: this session alone, right after the VSIX
  run_v1_managed_session
  judge_session v1-managed
  finish
fi

# 4. the suite inside the extension host
rm -f "$ARTIFACTS/openhands-tab.png" "$ARTIFACTS/terminal.txt" "$ARTIFACTS"/host*.log
if want standin; then
ENV_JSON="{\"OH_TEST_REPO\":\"$REPO\",\"OH_TEST_EXTENSIONS_DIR\":\"$EXT\",\"OH_TEST_BACKEND\":\"http://127.0.0.1:$PORT\",\"OH_TEST_KEYED_BACKEND\":\"http://127.0.0.1:$KEYED_PORT\",\"OH_TEST_KEY\":\"$KEY\",\"OH_TEST_ARTIFACTS\":\"$ARTIFACTS\"}"
"$NODE24" "$HERE/host.mjs" --workspace "$WS" --dev "$HERE/harness-ext" --tests "$HERE/suite/index.js" \
  --env "$ENV_JSON" --settings "{\"openhands.server.url\":\"http://127.0.0.1:$PORT\"}" --extensions-dir "$EXT" --artifacts "$ARTIFACTS" --click-dialog Allow --timeout 240 \
  2>&1 | tee "$ARTIFACTS/host-standin.log" | grep -E '@@oh-test|\[host|oh-test' | sed -E 's/^.*(@@oh-test|oh-test)/\1/'
HOST_RC[standin]=${PIPESTATUS[0]}
cp "$ARTIFACTS/host-standin.log" "$ARTIFACTS/host.log"
fi
: >> "$ARTIFACTS/host.log"
# 5. the same VSIX in a workspace that is not trusted (restricted mode)
if want untrusted; then
WS2="$SESSION/untrusted"; mkdir -p "$WS2/.vscode"
cp "$WS/.vscode/settings.json" "$WS2/.vscode/settings.json" 2>/dev/null
"$NODE24" "$HERE/host.mjs" --workspace "$WS2" --dev "$HERE/harness-ext" --tests "$HERE/suite/untrusted.js" \
  --env "$ENV_JSON" --settings "{\"openhands.server.url\":\"http://127.0.0.1:$PORT\"}" --extensions-dir "$EXT" --artifacts "$ARTIFACTS/untrusted" --untrusted 1 --timeout 120 \
  > "$ARTIFACTS/host-untrusted.log" 2>&1
HOST_RC[untrusted]=$?
show_host_log "$ARTIFACTS/host-untrusted.log"
fi
# 5b. trust proofs (suite/trust.js): consent shown once, "Don't Allow" -> blocked and no request at
# its own backend, unsaved changes kept, file actions through workspace.fs. The suite clicks the
# consent buttons itself (no --click-dialog).
if want trust; then
TRUST_LOG="$ARTIFACTS/backend-trust.log"
TRUST_CONV="trust-$RANDOM$RANDOM"
setsid "$PY" "$HERE/fake_backend.py" --port 0 --conversation "$TRUST_CONV" > "$TRUST_LOG" 2>&1 &
TRUST_PID=$!
for _ in $(seq 1 100); do grep -q '^READY' "$TRUST_LOG" && break; sleep 0.1; done
TRUST_PORT="$(awk '/^READY/ {print $2; exit}' "$TRUST_LOG")"
WS_TRUST="$SESSION/trust"; mkdir -p "$WS_TRUST/.vscode" "$ARTIFACTS/trust"
# A repository's own .vscode/settings.json names another server (the decoy: a listening socket
# that records every connection); the server URL is a user setting only, so nothing may reach it.
DECOY_LOG="$ARTIFACTS/trust/decoy.log"; rm -f "$DECOY_LOG"
setsid "$PY" "$HERE/decoy_listener.py" "$DECOY_LOG" > "$ARTIFACTS/trust/decoy.out" 2>&1 &
DECOY_PID=$!; TRUST_PID="$TRUST_PID $DECOY_PID"
for _ in $(seq 1 100); do grep -q '^READY' "$ARTIFACTS/trust/decoy.out" && break; sleep 0.1; done
DECOY_PORT="$(awk '/^READY/ {print $2; exit}' "$ARTIFACTS/trust/decoy.out")"
cat > "$WS_TRUST/.vscode/settings.json" <<JSON
{ "openhands.server.url": "http://127.0.0.1:$DECOY_PORT", "openhands.conversation.mode": "attach", "openhands.conversation.id": "$TRUST_CONV" }
JSON
"$NODE24" "$HERE/host.mjs" --workspace "$WS_TRUST" --dev "$HERE/harness-ext" --tests "$HERE/suite/trust.js" \
  --env "{\"OH_TEST_BACKEND\":\"http://127.0.0.1:$TRUST_PORT\",\"OH_TEST_ARTIFACTS\":\"$ARTIFACTS/trust\",\"OH_TEST_DECOY_LOG\":\"$DECOY_LOG\",\"OH_TEST_DECOY_URL\":\"http://127.0.0.1:$DECOY_PORT\"}" \
  --settings "{\"files.autoSave\":\"off\",\"openhands.server.url\":\"http://127.0.0.1:$TRUST_PORT\"}" --extensions-dir "$EXT" --artifacts "$ARTIFACTS/trust" --timeout 240 \
  > "$ARTIFACTS/host-trust.log" 2>&1
HOST_RC[trust]=$?
show_host_log "$ARTIFACTS/host-trust.log" 'oh-test fs'
for p in $TRUST_PID; do kill -- -"$p" 2>/dev/null; done
fi
# 6. the IDE tools through their MCP endpoint, in a TypeScript workspace (suite/ide.js). The suite
# answers and counts the consent prompts itself (no --click-dialog).
if want ide; then
WS3="$SESSION/ide-workspace"; cp -r "$HERE/fixtures/ide-workspace" "$WS3"
mkdir -p "$ARTIFACTS/ide"
IDE_ENV="{\"OH_TEST_ARTIFACTS\":\"$ARTIFACTS/ide\",\"OPENHANDS_VSCODE_MCP_DIR\":\"$SESSION/mcp-discovery\"${OH_IDE_BENCH:+,\"OH_IDE_BENCH\":\"$OH_IDE_BENCH\"}}"
"$NODE24" "$HERE/host.mjs" --workspace "$WS3" --dev "$HERE/harness-ext" --tests "$HERE/suite/ide.js" \
  --env "$IDE_ENV" --settings '{"files.autoSave":"off"}' --extensions-dir "$EXT" --artifacts "$ARTIFACTS/ide" --timeout 300 \
  > "$ARTIFACTS/host-ide.log" 2>&1
HOST_RC[ide]=$?
show_host_log "$ARTIFACTS/host-ide.log" 'oh-test bench'
fi

# 7. the OpenHands tab against the REAL OpenHands server (openhands.server.listen:app, VsCodeRuntime
# in server mode, CodeActAgent) with the scripted stand-in LLM; the server starts without LLM
# settings, as on first use. Nothing in the settings but the server URL (a user setting).
WS_CONV="$SESSION/conversation"; mkdir -p "$WS_CONV/.vscode"
CONV_ART="$ARTIFACTS/conversation"; mkdir -p "$CONV_ART"; rm -f "$CONV_ART"/*.png
export LITELLM_LOCAL_MODEL_COST_MAP=True
if want conversation; then
sed "s#@WORKSPACE@#$WS_CONV#g" "$HERE/fixtures/conversation-llm-script.json" > "$SESSION/llm-script.json"
setsid "$PY" -m openhands_vscode_runtime.scripted_llm --script "$SESSION/llm-script.json" > "$CONV_ART/scripted-llm.out" 2> "$CONV_ART/scripted-llm.log" &
LLM_PID=$!
setsid "$PY" "$REPO/tests/e2e/oh_server.py" --workspace "$WS_CONV" --no-settings > "$CONV_ART/oh-server.out" 2> "$CONV_ART/oh-server.log" &
SERVER1_PID=$!
SERVER_PID="$SERVER_PID $SERVER1_PID"
fi
# The two-window test's server (step 8) starts now too: importing OpenHands takes a while.
TWO_ART="$ARTIFACTS/two-windows"; mkdir -p "$TWO_ART/a" "$TWO_ART/b" "$SESSION/two-shared"
if want two-windows; then
setsid "$PY" "$REPO/tests/e2e/oh_server.py" --workspace "$SESSION" --llm-script "$HERE/fixtures/two-windows-llm-script.json" \
  > "$TWO_ART/oh-server.out" 2> "$TWO_ART/oh-server.log" &
SERVER2_PID=$!
SERVER_PID="$SERVER_PID $SERVER2_PID"
fi
# The confirmation-mode test's server (step 9), started now for the same reason.
CONFIRM_ART="$ARTIFACTS/confirm"; mkdir -p "$CONFIRM_ART"; rm -f "$CONFIRM_ART"/*.png
WS_CONFIRM="$SESSION/confirm"; mkdir -p "$WS_CONFIRM/.vscode"
if want confirm; then
sed "s#@WORKSPACE@#$WS_CONFIRM#g" "$HERE/fixtures/confirm-llm-script.json" > "$SESSION/confirm-llm-script.json"
setsid "$PY" "$REPO/tests/e2e/oh_server.py" --workspace "$WS_CONFIRM" --llm-script "$SESSION/confirm-llm-script.json" \
  > "$CONFIRM_ART/oh-server.out" 2> "$CONFIRM_ART/oh-server.log" &
SERVER3_PID=$!
SERVER_PID="$SERVER_PID $SERVER3_PID"
fi
# The IDE-tools-through-the-agent test's server (step 10): the TypeScript workspace of step 6.
AGENT_ART="$ARTIFACTS/ide-agent"; mkdir -p "$AGENT_ART"
WS_AGENT="$SESSION/ide-agent"
if want ide-agent; then
cp -r "$HERE/fixtures/ide-workspace" "$WS_AGENT"; mkdir -p "$WS_AGENT/.vscode"
setsid "$PY" "$REPO/tests/e2e/oh_server.py" --workspace "$WS_AGENT" --llm-script "$HERE/fixtures/ide-agent-llm-script.json" \
  > "$AGENT_ART/oh-server.out" 2> "$AGENT_ART/oh-server.log" &
SERVER4_PID=$!
SERVER_PID="$SERVER_PID $SERVER4_PID"
fi
# Waits until a process printed its ready line, or exited, or 300 s (a loaded machine is slow).
wait_ready() {
  for _ in $(seq 1 1500); do
    [ -s "$1" ] && return 0
    kill -0 "$2" 2>/dev/null || return 1
    sleep 0.2
  done
  return 1
}
# The real-server sessions keep the checkpoints VsCodeRuntime takes before each user message in
# the session folder (one store per window), not in the user's state folder.
if want conversation; then
wait_ready "$CONV_ART/scripted-llm.out" "$LLM_PID"; wait_ready "$CONV_ART/oh-server.out" "$SERVER1_PID"
LLM_BASE_URL="$("$PY" -c 'import json,sys; print(json.loads(open(sys.argv[1]).readline())["base_url"])' "$CONV_ART/scripted-llm.out" 2>/dev/null)"
SERVER_URL="$(first_line_field "$CONV_ART/oh-server.out" url)"
SERVER_KEY="$(first_line_field "$CONV_ART/oh-server.out" session_api_key)"
if [ -z "$LLM_BASE_URL" ] || [ -z "$SERVER_URL" ]; then
  tail -20 "$CONV_ART/scripted-llm.log" "$CONV_ART/oh-server.log"
  fail "start the real OpenHands server and the scripted LLM (see $CONV_ART)"
else
  echo '{}' > "$WS_CONV/.vscode/settings.json"
  CONV_ENV="{\"OH_TEST_SERVER\":\"$SERVER_URL\",\"OH_TEST_SERVER_KEY\":\"$SERVER_KEY\",\"OH_TEST_LLM_BASE_URL\":\"$LLM_BASE_URL\",\"OH_TEST_ARTIFACTS\":\"$CONV_ART\"}"
  OH_CHECKPOINT_DIR="$SESSION/checkpoints/$(basename "$WS_CONV")" "$NODE24" "$HERE/host.mjs" --workspace "$WS_CONV" --dev "$HERE/harness-ext" --tests "$HERE/suite/conversation.js" \
    --env "$CONV_ENV" --settings "{\"files.autoSave\":\"off\",\"openhands.server.url\":\"$SERVER_URL\"}" --extensions-dir "$EXT" --artifacts "$CONV_ART" --click-dialog Allow --timeout 360 \
    > "$ARTIFACTS/host-conversation.log" 2>&1
  HOST_RC[conversation]=$?
  show_host_log "$ARTIFACTS/host-conversation.log"
  artifact "$CONV_ART/openhands-tab-conversation.png" "the tab in the middle of a real conversation"
  if [ "$UPDATE_DOCS" = 1 ]; then
    # Asked for: a missing picture fails the run rather than leave the docs' copy stale.
    if [ -f "$CONV_ART/openhands-tab-conversation.png" ]; then
      cp "$CONV_ART/openhands-tab-conversation.png" "$REPO/docs/screenshot-openhands-tab.png"
    else
      fail "--update-docs-screenshot: no screenshot of the tab to copy"
    fi
  fi
fi

fi

# 8. two windows, two conversations on one real server: each executor gets only its own actions.
if want two-windows; then
wait_ready "$TWO_ART/oh-server.out" "$SERVER2_PID"
SERVER2_URL="$(first_line_field "$TWO_ART/oh-server.out" url)"
SERVER2_KEY="$(first_line_field "$TWO_ART/oh-server.out" session_api_key)"
if [ -z "$SERVER2_URL" ]; then
  tail -20 "$TWO_ART/oh-server.log"; fail "start the real OpenHands server for the two-window test (see $TWO_ART)"
else
  HOST_PIDS=()
  for role in a b; do
    W="$SESSION/two-$role"; mkdir -p "$W/.vscode"; echo "window-$role" > "$W/marker.txt"
    echo '{}' > "$W/.vscode/settings.json"
    TWO_ENV="{\"OH_TEST_ROLE\":\"$role\",\"OH_TEST_SHARED\":\"$SESSION/two-shared\",\"OH_TEST_SERVER_KEY\":\"$SERVER2_KEY\",\"OH_TEST_ARTIFACTS\":\"$TWO_ART/$role\"}"
    OH_CHECKPOINT_DIR="$SESSION/checkpoints/$(basename "$W")" "$NODE24" "$HERE/host.mjs" --workspace "$W" --dev "$HERE/harness-ext" --tests "$HERE/suite/two-windows.js" \
      --env "$TWO_ENV" --settings "{\"openhands.server.url\":\"$SERVER2_URL\"}" --extensions-dir "$EXT" --artifacts "$TWO_ART/$role" --click-dialog Allow --timeout 300 \
      > "$ARTIFACTS/host-two-$role.log" 2>&1 &
    HOST_PIDS+=($!)
  done
  # only the two host sessions (the backends run until cleanup); each one's exit code
  wait "${HOST_PIDS[0]}"; HOST_RC[two-a]=$?
  wait "${HOST_PIDS[1]}"; HOST_RC[two-b]=$?
  for role in a b; do
    show_host_log "$ARTIFACTS/host-two-$role.log"
  done
fi

fi

# 9. OpenHands' confirmation mode in the tab (suite/ide-confirm.js), real server + scripted LLM.
if want confirm; then
wait_ready "$CONFIRM_ART/oh-server.out" "$SERVER3_PID"
CONFIRM_URL="$(first_line_field "$CONFIRM_ART/oh-server.out" url)"
CONFIRM_KEY="$(first_line_field "$CONFIRM_ART/oh-server.out" session_api_key)"
CONFIRM_LLM="$(first_line_field "$CONFIRM_ART/oh-server.out" llm_base_url)"
if [ -z "$CONFIRM_URL" ]; then
  tail -20 "$CONFIRM_ART/oh-server.log"; fail "start the real OpenHands server for the confirmation-mode test (see $CONFIRM_ART)"
else
  echo '{}' > "$WS_CONFIRM/.vscode/settings.json"
  CONFIRM_ENV="{\"OH_TEST_SERVER\":\"$CONFIRM_URL\",\"OH_TEST_SERVER_KEY\":\"$CONFIRM_KEY\",\"OH_TEST_LLM_BASE_URL\":\"$CONFIRM_LLM\",\"OH_TEST_ARTIFACTS\":\"$CONFIRM_ART\"}"
  OH_CHECKPOINT_DIR="$SESSION/checkpoints/$(basename "$WS_CONFIRM")" "$NODE24" "$HERE/host.mjs" --workspace "$WS_CONFIRM" --dev "$HERE/harness-ext" --tests "$HERE/suite/ide-confirm.js" \
    --env "$CONFIRM_ENV" --settings "{\"openhands.server.url\":\"$CONFIRM_URL\"}" --extensions-dir "$EXT" --artifacts "$CONFIRM_ART" --click-dialog Allow --timeout 360 \
    > "$ARTIFACTS/host-confirm.log" 2>&1
  HOST_RC[confirm]=$?
  show_host_log "$ARTIFACTS/host-confirm.log"
fi

fi

# 11. the IDE tools through an OpenHands agent step (suite/ide-agent.js): real server + scripted LLM
# calling diagnostics, hover and save_document (declined, then allowed: the suite clicks).
if want ide-agent; then
wait_ready "$AGENT_ART/oh-server.out" "$SERVER4_PID"
AGENT_URL="$(first_line_field "$AGENT_ART/oh-server.out" url)"
AGENT_KEY="$(first_line_field "$AGENT_ART/oh-server.out" session_api_key)"
AGENT_LLM="$(first_line_field "$AGENT_ART/oh-server.out" llm_base_url)"
if [ -z "$AGENT_URL" ]; then
  tail -20 "$AGENT_ART/oh-server.log"; fail "start the real OpenHands server for the IDE-tools agent test (see $AGENT_ART)"
else
  echo '{}' > "$WS_AGENT/.vscode/settings.json"
  AGENT_ENV="{\"OH_TEST_SERVER\":\"$AGENT_URL\",\"OH_TEST_SERVER_KEY\":\"$AGENT_KEY\",\"OH_TEST_LLM_BASE_URL\":\"$AGENT_LLM\",\"OH_TEST_ARTIFACTS\":\"$AGENT_ART\"}"
  OH_CHECKPOINT_DIR="$SESSION/checkpoints/$(basename "$WS_AGENT")" "$NODE24" "$HERE/host.mjs" --workspace "$WS_AGENT" --dev "$HERE/harness-ext" --tests "$HERE/suite/ide-agent.js" \
    --env "$AGENT_ENV" --settings "{\"files.autoSave\":\"off\",\"openhands.server.url\":\"$AGENT_URL\"}" --extensions-dir "$EXT" --artifacts "$AGENT_ART" --timeout 420 \
    > "$ARTIFACTS/host-ide-agent.log" 2>&1
  HOST_RC[ide-agent]=$?
  show_host_log "$ARTIFACTS/host-ide-agent.log"
fi
fi

# 12. with OH_IDE_BENCH=N only: IDE tool latency through the runtime path in the real host
# (bench_ide_tools.py --wait-executor; this window's executor joins its embedded runtime).
if [ -n "${OH_IDE_BENCH:-}" ] && want ide-bench; then
BENCH_ART="$ARTIFACTS/ide-bench"; mkdir -p "$BENCH_ART"; rm -f "$BENCH_ART/runtime-bench.json" "$BENCH_ART/headless-bench.json"
# The headless anchor first, in the same run: the same bench, the same addon binary, without VS Code
# (the stand-in host, files on the executor's own LocalFs); ide-bench.js prints the ratios.
WS_HEADLESS="$SESSION/ide-bench-headless"; cp -r "$HERE/fixtures/ide-workspace" "$WS_HEADLESS"
printf 'alpha\nsecond line\n' > "$WS_HEADLESS/edit-open.txt"; printf 'alpha\nsecond line\n' > "$WS_HEADLESS/edit-closed.txt"
NAPI_RS_NATIVE_LIBRARY_PATH="${OPENHANDS_EXECUTOR_ADDON:-}" "$PY" "$REPO/openhands-runtime-py/bench/bench_ide_tools.py" --workspace "$WS_HEADLESS" \
  --n "$OH_IDE_BENCH" --read "$WS_HEADLESS/src/main.ts" --read-closed "$WS_HEADLESS/src/shapes.ts" --edits "${OH_IDE_BENCH_EDITS:-30}" \
  --edit-open "$WS_HEADLESS/edit-open.txt" --edit-closed "$WS_HEADLESS/edit-closed.txt" --gap-ms "${OH_IDE_BENCH_GAP_MS:-0}" \
  --out "$BENCH_ART/headless-bench.json" > "$BENCH_ART/headless.out" 2> "$BENCH_ART/headless.log" \
  || { tail -20 "$BENCH_ART/headless.log"; fail "the headless anchor of the IDE bench (see $BENCH_ART)"; }
WS_BENCH="$SESSION/ide-bench"; cp -r "$HERE/fixtures/ide-workspace" "$WS_BENCH"; mkdir -p "$WS_BENCH/.vscode"
# Two small files the bench edits: ide-bench.js opens the first in an editor, the second stays closed.
printf 'alpha\nsecond line\n' > "$WS_BENCH/edit-open.txt"; printf 'alpha\nsecond line\n' > "$WS_BENCH/edit-closed.txt"
setsid "$PY" "$REPO/openhands-runtime-py/bench/bench_ide_tools.py" --wait-executor --workspace "$WS_BENCH" --n "$OH_IDE_BENCH" \
  --tool hover --args '{"path": "src/main.ts", "line": 3, "column": 7}' --read "$WS_BENCH/src/main.ts" --read-closed "$WS_BENCH/src/shapes.ts" \
  --edits "${OH_IDE_BENCH_EDITS:-30}" --edit-open "$WS_BENCH/edit-open.txt" --edit-closed "$WS_BENCH/edit-closed.txt" --gap-ms "${OH_IDE_BENCH_GAP_MS:-0}" \
  --out "$BENCH_ART/runtime-bench.json" > "$BENCH_ART/bench.out" 2> "$BENCH_ART/bench.log" &
BENCH_PID=$!
SERVER_PID="$SERVER_PID $BENCH_PID"
if wait_ready "$BENCH_ART/bench.out" "$BENCH_PID"; then
  B_URL="$("$PY" -c 'import json,sys; print(json.loads(open(sys.argv[1]).readline())["url"])' "$BENCH_ART/bench.out")"
  B_CONV="$("$PY" -c 'import json,sys; print(json.loads(open(sys.argv[1]).readline())["conversation_id"])' "$BENCH_ART/bench.out")"
  B_KEY="$("$PY" -c 'import json,sys; print(json.loads(open(sys.argv[1]).readline())["session_api_key"])' "$BENCH_ART/bench.out")"
  echo "{ \"openhands.conversation.mode\": \"attach\", \"openhands.conversation.id\": \"$B_CONV\" }" > "$WS_BENCH/.vscode/settings.json"
  B_ENV="{\"OH_TEST_KEY\":\"$B_KEY\",\"OH_TEST_BENCH_RESULT\":\"$BENCH_ART/runtime-bench.json\",\"OH_TEST_BENCH_HEADLESS\":\"$BENCH_ART/headless-bench.json\",\"OH_TEST_ARTIFACTS\":\"$BENCH_ART\"}"
  "$NODE24" "$HERE/host.mjs" --workspace "$WS_BENCH" --dev "$HERE/harness-ext" --tests "$HERE/suite/ide-bench.js" \
    --env "$B_ENV" --settings "{\"files.autoSave\":\"off\",\"openhands.server.url\":\"$B_URL\"}" --extensions-dir "$EXT" --artifacts "$BENCH_ART" --timeout 660 \
    > "$ARTIFACTS/host-ide-bench.log" 2>&1
  HOST_RC[ide-bench]=$?
  show_host_log "$ARTIFACTS/host-ide-bench.log" 'oh-test bench'
else
  tail -20 "$BENCH_ART/bench.log"; fail "start the IDE tools runtime bench (see $BENCH_ART)"
fi
fi

# 10. OpenHands V1 (run_v1_session above).
if want v1; then
run_v1_session
cat "$ARTIFACTS/host-v1.log" >> "$ARTIFACTS/host.log"
fi
if want v1-managed; then
run_v1_managed_session
cat "$ARTIFACTS/host-v1-managed.log" >> "$ARTIFACTS/host.log"
fi

# 10b. The OpenHands tab on V1 (run_v1tab_session above).
if want v1tab; then
run_v1tab_session managed
cat "$ARTIFACTS/host-v1tab.log" >> "$ARTIFACTS/host.log"
fi
if want v1tab-attach; then
run_v1tab_session attach
cat "$ARTIFACTS/host-v1tab-attach.log" >> "$ARTIFACTS/host.log"
fi
# 10d. A multi-root window (run_multiroot_session above).
if want multiroot; then
run_multiroot_session
cat "$ARTIFACTS/host-multiroot.log" >> "$ARTIFACTS/host.log"
fi

# 10e. Two V1 conversations at once in one window (run_v1_parallel_session).
if want v1-parallel; then
run_v1_parallel_session
cat "$ARTIFACTS/host-v1-parallel.log" >> "$ARTIFACTS/host.log"
fi
# 10f. Agent Canvas's client and an SDK script as clients of the window (run_v1_canvas_session).
if want v1-canvas; then
run_v1_canvas_session
cat "$ARTIFACTS/host-v1-canvas.log" >> "$ARTIFACTS/host.log"
fi

# 10g. The tab on a remote agent-server over TLS (run_v1_remote_session).
if want v1-remote; then
run_v1_remote_session
cat "$ARTIFACTS/host-v1-remote.log" >> "$ARTIFACTS/host.log"
fi

# Every session that was to run is judged, from its own log and exit code (judge_session).
for s in standin untrusted trust ide conversation two-a two-b confirm ide-agent ide-bench v1 v1tab v1tab-attach v1-managed v1-parallel v1-canvas v1-remote multiroot; do
  case "$s" in two-*) want two-windows || continue ;; ide-bench) [ -n "${OH_IDE_BENCH:-}" ] && want ide-bench || continue ;; *) want "$s" || continue ;; esac
  judge_session "$s"
done
if want standin; then
  artifact "$ARTIFACTS/openhands-tab.png" "the workbench with the OpenHands view"
fi
finish
