# Sourced by run.sh: session `v1-remote` (suite/v1-remote.js). The tab on a V1 agent-server reached
# as another machine: the REAL agent-server with our V1 tools, its REST API behind a TLS proxy
# (tls_proxy.py: the agent-server serves plain http only) and its tools' hub with TLS
# (OH_VSCODE_TLS_CERT/KEY, OH_VSCODE_SERVER_URL), both on this machine's first non-loopback IPv4
# address (not another machine: a second address of this one, which the extension's loopback rules
# take for one), with certificates of a CA made here (tests/v1/pki.py). The user settings start
# with ANOTHER CA's file; the suite sets the right one as a user would.
run_v1_remote_session() {
  local name=v1-remote art="$ARTIFACTS/v1-remote"
  mkdir -p "$art"; rm -f "$ARTIFACTS/host-$name.log"
  v1_venv_ready "$name" "$art" || return
  local addr; addr="$(ip -4 -o addr show scope global 2>/dev/null | awk '{print $4}' | cut -d/ -f1 | head -1)"
  if [ -z "$addr" ]; then
    echo "@@oh-test FAIL v1-remote needs a non-loopback IPv4 address on this machine (none found)" > "$ARTIFACTS/host-$name.log"; HOST_RC[$name]=1; return
  fi
  local ws="$SESSION/$name-workspace" pki="$SESSION/$name-pki" key="v1r-$RANDOM$RANDOM" port hub pids= up=1 llm proxy=
  mkdir -p "$ws/.vscode" "$SESSION/$name-home"; echo '{}' > "$ws/.vscode/settings.json"
  rm -f "$ws/remote-shell-parent.txt"
  "$PY1" -c "import sys; from pathlib import Path; sys.path.insert(0, '$REPO/tests/v1'); from pki import make_pki; make_pki(Path('$pki'), ['$addr'])" \
    || { echo "@@oh-test FAIL make the test PKI" > "$ARTIFACTS/host-$name.log"; HOST_RC[$name]=1; return; }
  sed "s#@WORKSPACE@#$ws#g" "$HERE/fixtures/v1-remote-llm-script.json" > "$SESSION/$name-llm-script.json"
  start_scripted_llm "$art" --script "$SESSION/$name-llm-script.json"; pids="$STARTED_PID"
  port="$(free_port)"; hub="$("$PY1" -c "import socket; s=socket.socket(); s.bind(('$addr',0)); print(s.getsockname()[1])")"
  OH_VSCODE_HOST="$addr" OH_VSCODE_PORT="$hub" OH_VSCODE_TLS_CERT="$pki/server.pem" OH_VSCODE_TLS_KEY="$pki/server.key" \
    OH_VSCODE_SERVER_URL="https://$addr:$hub" start_agent_server "$name" "$art" "$port" "$key" || up=0
  pids="$pids $STARTED_PID"
  setsid "$PY1" "$HERE/tls_proxy.py" "$addr" "$port" "$pki/server.pem" "$pki/server.key" > "$art/tls-proxy.out" 2> "$art/tls-proxy.log" &
  pids="$pids $!"
  for _ in $(seq 1 100); do proxy="$(head -1 "$art/tls-proxy.out" 2>/dev/null)"; [ -n "$proxy" ] && break; sleep 0.1; done
  llm="$(scripted_llm_url "$art")"
  if [ "$up" = 1 ] && [ -n "$llm" ] && [ -n "$proxy" ]; then
    local remote="https://$addr:$proxy"
    local env_json="{\"OH_TEST_REMOTE_URL\":\"$remote\",\"OH_TEST_AGENT_SERVER\":\"http://127.0.0.1:$port\",\"OH_TEST_AGENT_KEY\":\"$key\",\"OH_TEST_CA_FILE\":\"$pki/ca.pem\",\"OH_TEST_LLM_BASE_URL\":\"$llm\",\"OH_TEST_ARTIFACTS\":\"$art\"}"
    local settings="{\"openhands.v1.url\":\"$remote\",\"openhands.v1.caFile\":\"$pki/other-ca.pem\",\"openhands.v1.discoveryDir\":\"$SESSION/$name-discovery\"}"
    "$NODE24" "$HERE/host.mjs" --workspace "$ws" --dev "$HERE/harness-ext" --tests "$HERE/suite/v1-remote.js" \
      --env "$env_json" --settings "$settings" --extensions-dir "$EXT" --artifacts "$art" --click-dialog Allow --timeout 420 \
      > "$ARTIFACTS/host-$name.log" 2>&1
    HOST_RC[$name]=$?
    grep -E '@@oh-test|\[host|oh-test v1-remote' "$ARTIFACTS/host-$name.log" | sed -E 's/^.*(@@oh-test|oh-test)/\1/' | cut -c1-300
  else
    tail -20 "$art/agent-server.log" "$art/scripted-llm.log" "$art/tls-proxy.log" 2>/dev/null
    echo "@@oh-test FAIL start the agent-server, its TLS proxy and the scripted LLM (see $art)" > "$ARTIFACTS/host-$name.log"; HOST_RC[$name]=1
  fi
  for p in $pids; do kill -KILL -- -"$p" 2>/dev/null; done
  wait $pids 2>/dev/null
}
