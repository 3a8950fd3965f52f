# Sourced by run.sh (not run on its own): the V1 host sessions (v1, v1tab, v1tab-attach,
# v1-managed, multiroot), each a function run.sh calls, and what they share. They use run.sh's
# globals (HERE, REPO, SESSION, ARTIFACTS, EXT, NODE24, HOST_RC, pass/fail).

# What the V1 sessions share: the V1 venv, the scripted LLM, an agent-server started by hand.
VENV1="${OH_VENV_V1:-$HOME/.cache/openhands-vscode-runtime/venv-v1}"
PY1="$VENV1/bin/python"
# The V1 venv (scripts/setup-python-v1.sh, idempotent); on failure session $1 gets its FAIL line.
v1_venv_ready() {
  local name=$1 art=$2
  OH_VENV_V1="$VENV1" bash "$REPO/scripts/setup-python-v1.sh" > "$art/setup-v1.log" 2>&1 && return 0
  tail -5 "$art/setup-v1.log"
  echo "@@oh-test FAIL set up the V1 venv (see $art/setup-v1.log)" > "$ARTIFACTS/host-$name.log"; HOST_RC[$name]=1
  return 1
}
# The scripted LLM with the arguments after $1 (artifacts folder); its process group in STARTED_PID
# (`setsid` directly, no subshell: $! is then the group the caller kills).
start_scripted_llm() {
  local art=$1; shift
  setsid "$PY1" -m openhands_vscode_runtime.scripted_llm "$@" > "$art/scripted-llm.out" 2> "$art/scripted-llm.log" &
  STARTED_PID=$!
}
# Its base URL once it printed it (up to 60 s), else empty.
scripted_llm_url() {
  local url=
  for _ in $(seq 1 300); do url="$(first_line_field "$1/scripted-llm.out" base_url)"; [ -n "$url" ] && break; sleep 0.2; done
  echo "$url"
}
free_port() { "$PY1" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
# The REAL V1 agent-server with our V1 tools, started by hand for session $1 (artifacts $2) on port
# $3 with key $4 (only in its environment), waiting for executors (OH_VSCODE_SPAWN_EXECUTOR=0) and
# with a clean HOME for the agent's shell (a host .bashrc can be slow). Its process group in
# STARTED_PID; returns once /health answers (up to 300 s), 1 if it never does.
start_agent_server() {
  local name=$1 art=$2 port=$3 key=$4
  HOME="$SESSION/$name-home" SESSION_API_KEY="$key" OH_VSCODE_SPAWN_EXECUTOR=0 \
    OH_VSCODE_V1_DISCOVERY_DIR="$SESSION/$name-discovery" OH_CONVERSATIONS_PATH="$SESSION/$name-conversations" \
    LITELLM_LOCAL_MODEL_COST_MAP=True OPENHANDS_SUPPRESS_BANNER=1 \
    setsid "$PY1" -m openhands.agent_server --host 127.0.0.1 --port "$port" \
      --import-modules openhands_vscode_runtime.v1.register > "$art/agent-server.log" 2>&1 &
  STARTED_PID=$!
  for _ in $(seq 1 600); do
    curl -fsS "http://127.0.0.1:$port/health" > /dev/null 2>&1 && return 0
    sleep 0.5
  done
  return 1
}

# 10. OpenHands V1 (suite/v1.js): a conversation on the REAL V1 agent-server (openhands-agent-server
# 1.58.0, `--import-modules openhands_vscode_runtime.v1.register`, OH_VSCODE_SPAWN_EXECUTOR=0) with
# the scripted stand-in LLM; this window's executor attaches to its channel through the discovery
# file the V1 tools write. It needs the V1 venv (scripts/setup-python-v1.sh, idempotent).
run_v1_session() {
  local art="$ARTIFACTS/v1"
  mkdir -p "$art"; rm -f "$ARTIFACTS/host-v1.log"
  v1_venv_ready v1 "$art" || return
  local ws="$SESSION/v1-workspace" key="v1k-$RANDOM$RANDOM" port up=1 llm
  mkdir -p "$ws/.vscode" "$SESSION/v1-home"
  echo '{}' > "$ws/.vscode/settings.json"
  sed "s#@WORKSPACE@#$ws#g" "$HERE/fixtures/v1-llm-script.json" > "$SESSION/v1-llm-script.json"
  # Process groups in V1_PIDS, which cleanup kills too.
  start_scripted_llm "$art" --script "$SESSION/v1-llm-script.json"; V1_PIDS="$STARTED_PID"
  port="$(free_port)"
  start_agent_server v1 "$art" "$port" "$key" || up=0
  V1_PIDS="$V1_PIDS $STARTED_PID"
  llm="$(scripted_llm_url "$art")"
  if [ "$up" != 1 ] || [ -z "$llm" ]; then
    tail -20 "$art/agent-server.log" "$art/scripted-llm.log"
    echo "@@oh-test FAIL start the V1 agent-server and the scripted LLM (see $art)" > "$ARTIFACTS/host-v1.log"; HOST_RC[v1]=1; return
  fi
  local env_json="{\"OH_TEST_AGENT_SERVER\":\"http://127.0.0.1:$port\",\"OH_TEST_AGENT_KEY\":\"$key\",\"OH_TEST_LLM_BASE_URL\":\"$llm\",\"OH_TEST_V1_DISCOVERY\":\"$SESSION/v1-discovery\",\"OH_TEST_ARTIFACTS\":\"$art\"}"
  "$NODE24" "$HERE/host.mjs" --workspace "$ws" --dev "$HERE/harness-ext" --tests "$HERE/suite/v1.js" \
    --env "$env_json" --extensions-dir "$EXT" --artifacts "$art" --click-dialog Allow --timeout 420 \
    > "$ARTIFACTS/host-v1.log" 2>&1
  HOST_RC[v1]=$?
  grep -E '@@oh-test|\[host' "$ARTIFACTS/host-v1.log" | sed -E 's/^.*(@@oh-test)/\1/' | cut -c1-300
  # SIGKILL: an agent-server whose tool call waits for an executor does not finish a SIGTERM shutdown.
  for p in $V1_PIDS; do kill -KILL -- -"$p" 2>/dev/null; done
  wait $V1_PIDS 2>/dev/null  # reaped here, so bash reports no "Killed" jobs
  V1_PIDS=
}
# 10b. The OpenHands tab on V1 (suite/v1tab.js), twice: session `v1tab` in managed mode (no V0
# server, `openhands.v1.python` = the V1 venv: the extension starts the REAL agent-server itself,
# with our V1 tools) and session `v1tab-attach` in attach mode (`openhands.v1.url`: an agent-server
# started here by hand, OH_VSCODE_SPAWN_EXECUTOR=0, its key typed into "Set Session API Key").
# The scripted LLM (fixtures/v1tab-llm-script.json) refuses any key but `scripted-llm-key`: tasks
# typed into the tab, the executor following each conversation by itself, confirmation, pause and
# continue.
run_v1tab_session() {
  local mode=$1 name=v1tab; [ "$mode" = attach ] && name=v1tab-attach
  local art="$ARTIFACTS/$name"
  mkdir -p "$art"; rm -f "$ARTIFACTS/host-$name.log"
  v1_venv_ready "$name" "$art" || return
  local ws="$SESSION/$name-workspace" key="v1t-$RANDOM$RANDOM" port pids= up=1
  mkdir -p "$ws/.vscode" "$SESSION/$name-home"
  echo '{}' > "$ws/.vscode/settings.json"
  for m in A B C D; do echo "draft notes of $m" > "$ws/notes-$m.txt"; done
  echo "marks:" > "$ws/marks.txt"
  sed "s#@WORKSPACE@#$ws#g" "$HERE/fixtures/v1tab-llm-script.json" > "$SESSION/$name-llm-script.json"
  start_scripted_llm "$art" --script "$SESSION/$name-llm-script.json" --require-api-key scripted-llm-key; pids="$STARTED_PID"
  if [ "$mode" = attach ]; then
    port="$(free_port)"
    start_agent_server "$name" "$art" "$port" "$key" || up=0
    pids="$pids $STARTED_PID"
  fi
  local llm; llm="$(scripted_llm_url "$art")"
  if [ "$up" = 1 ] && [ -n "$llm" ]; then
    local env_json settings
    if [ "$mode" = attach ]; then
      env_json="{\"OH_TEST_V1TAB_MODE\":\"attach\",\"OH_TEST_AGENT_SERVER\":\"http://127.0.0.1:$port\",\"OH_TEST_AGENT_KEY\":\"$key\",\"OH_TEST_LLM_BASE_URL\":\"$llm\",\"OH_TEST_V1_DISCOVERY\":\"$SESSION/$name-discovery\",\"OH_TEST_ARTIFACTS\":\"$art\"}"
      settings="{\"openhands.v1.url\":\"http://127.0.0.1:$port\",\"openhands.v1.discoveryDir\":\"$SESSION/$name-discovery\"}"
    else
      # The agent-server the extension starts (and the agent's shell) get a clean HOME, as above.
      env_json="{\"OH_TEST_V1TAB_MODE\":\"managed\",\"OH_TEST_LLM_BASE_URL\":\"$llm\",\"OH_TEST_ARTIFACTS\":\"$art\",\"HOME\":\"$SESSION/$name-home\"}"
      settings="{\"openhands.v1.python\":\"$PY1\"}"
    fi
    OH_CHECKPOINT_DIR="$SESSION/$name-checkpoints" "$NODE24" "$HERE/host.mjs" --workspace "$ws" --dev "$HERE/harness-ext" --tests "$HERE/suite/v1tab.js" \
      --env "$env_json" --settings "$settings" --extensions-dir "$EXT" --artifacts "$art" \
      --click-dialog Allow --click-dialog Delete --timeout 600 > "$ARTIFACTS/host-$name.log" 2>&1
    HOST_RC[$name]=$?
    grep -E '@@oh-test|\[host' "$ARTIFACTS/host-$name.log" | sed -E 's/^.*(@@oh-test)/\1/' | cut -c1-300
  else
    tail -20 "$art/agent-server.log" "$art/scripted-llm.log" 2>/dev/null
    echo "@@oh-test FAIL start the V1 agent-server and the scripted LLM (see $art)" > "$ARTIFACTS/host-$name.log"; HOST_RC[$name]=1
  fi
  for p in $pids; do kill -KILL -- -"$p" 2>/dev/null; done
  wait $pids 2>/dev/null
}
# 10c. OpenHands V1, managed mode (suite/v1-managed.js): no V0 server configured, the extension
# starts the REAL agent-server itself: from `openhands.v1.python` (the V1 venv), after a SIGKILL
# through the crash notification's Restart, then from the environment "OpenHands: Set Up V1
# Environment" creates (venv, uv fetched by its pip, then the VSIX's wheel at the versions of its lock;
# the warm pip and uv caches through PIP_CACHE_DIR and UV_CACHE_DIR, no uv on PATH, a Python 3.12
# first on PATH as a user would have one). After the window closed,
# no agent-server it started may be left.
run_v1_managed_session() {
  local art="$ARTIFACTS/v1-managed"
  mkdir -p "$art"; rm -f "$ARTIFACTS/host-v1-managed.log" "$art/agent-server-pids.txt"
  v1_venv_ready v1-managed "$art" || return
  local ws="$SESSION/v1-managed" py312
  py312="$("$REPO/scripts/find-python312.sh")"
  mkdir -p "$ws/.vscode" "$SESSION/v1-managed-home"; echo '{}' > "$ws/.vscode/settings.json"
  # The agent-server's (and the agent's) HOME is clean (a host .bashrc can be slow); the pip cache is the warm one.
  local env_json="{\"OH_TEST_ARTIFACTS\":\"$art\",\"OH_TEST_V1_PYTHON\":\"$PY1\",\"PATH\":\"$(dirname "$py312"):$PATH\",\"PIP_CACHE_DIR\":\"${PIP_CACHE_DIR:-$HOME/.cache/pip}\",\"UV_CACHE_DIR\":\"${UV_CACHE_DIR:-$HOME/.cache/uv}\",\"HOME\":\"$SESSION/v1-managed-home\"}"
  "$NODE24" "$HERE/host.mjs" --workspace "$ws" --dev "$HERE/harness-ext" --tests "$HERE/suite/v1-managed.js" \
    --env "$env_json" --settings "{\"openhands.v1.python\":\"$PY1\"}" --extensions-dir "$EXT" --artifacts "$art" --timeout 1200 \
    > "$ARTIFACTS/host-v1-managed.log" 2>&1
  HOST_RC[v1-managed]=$?
  grep -E '@@oh-test|\[host|oh-test v1-managed' "$ARTIFACTS/host-v1-managed.log" | sed -E 's/^.*(@@oh-test|oh-test)/\1/' | cut -c1-300
  # The servers end with the window (stdin EOF: v1/exit_with_parent.py; give its SIGTERM grace and SIGKILL 15 s).
  local left="" pid
  for pid in $(cat "$art/agent-server-pids.txt" 2>/dev/null); do
    for _ in $(seq 1 30); do [ -d "/proc/$pid" ] && ! grep -q '^State:.*Z' "/proc/$pid/status" 2>/dev/null || break; sleep 0.5; done
    if [ -d "/proc/$pid" ] && ! grep -q '^State:.*Z' "/proc/$pid/status" 2>/dev/null; then left="$left $pid"; kill -KILL -- -"$pid" 2>/dev/null; fi
  done
  if [ ! -s "$art/agent-server-pids.txt" ]; then
    fail "the managed agent-server ended with the window (no agent-server was started)"
  elif [ -n "$left" ]; then
    fail "the managed agent-server ended with the window: still running:$left"
  else
    pass "the managed agent-server ended with the window ($(wc -l < "$art/agent-server-pids.txt") started, none left)"
  fi
}
# 10d. A multi-root window (suite/multiroot.js): a .code-workspace with the folders `front` and
# `back`, the tab on V1 in managed mode (the extension starts the real agent-server with our V1
# tools), the scripted LLM of fixtures/multiroot-llm-script.json (its paths filled in here).
run_multiroot_session() {
  local art="$ARTIFACTS/multiroot"
  mkdir -p "$art"; rm -f "$ARTIFACTS/host-multiroot.log"
  v1_venv_ready multiroot "$art" || return
  local dir="$SESSION/multiroot" llm llm_pid
  mkdir -p "$dir/front" "$dir/back" "$dir/home"
  echo 'draft app' > "$dir/front/app.txt"
  echo 'draft = True' > "$dir/back/util.py"
  echo 'data' > "$dir/back/data.txt"
  echo '{"folders": [{"path": "front"}, {"path": "back"}]}' > "$dir/two-folders.code-workspace"
  sed -e "s#@FRONT@#$dir/front#g" -e "s#@BACK@#$dir/back#g" "$HERE/fixtures/multiroot-llm-script.json" > "$dir/llm-script.json"
  start_scripted_llm "$art" --script "$dir/llm-script.json" --require-api-key scripted-llm-key; llm_pid=$STARTED_PID
  llm="$(scripted_llm_url "$art")"
  if [ -n "$llm" ]; then
    # The agent-server the extension starts (and the agent's shell) get a clean HOME.
    OH_CHECKPOINT_DIR="$dir/checkpoints" "$NODE24" "$HERE/host.mjs" --workspace "$dir/two-folders.code-workspace" --dev "$HERE/harness-ext" \
      --tests "$HERE/suite/multiroot.js" --env "{\"OH_TEST_LLM_BASE_URL\":\"$llm\",\"OH_TEST_ARTIFACTS\":\"$art\",\"HOME\":\"$dir/home\"}" \
      --settings "{\"openhands.v1.python\":\"$PY1\"}" --extensions-dir "$EXT" --artifacts "$art" --click-dialog Allow --timeout 600 \
      > "$ARTIFACTS/host-multiroot.log" 2>&1
    HOST_RC[multiroot]=$?
    grep -E '@@oh-test|\[host|oh-test multiroot' "$ARTIFACTS/host-multiroot.log" | sed -E 's/^.*(@@oh-test|oh-test)/\1/' | cut -c1-300
  else
    tail -20 "$art/scripted-llm.log"
    echo "@@oh-test FAIL start the scripted LLM (see $art)" > "$ARTIFACTS/host-multiroot.log"; HOST_RC[multiroot]=1
  fi
  kill -KILL -- -"$llm_pid" 2>/dev/null; wait "$llm_pid" 2>/dev/null
}
