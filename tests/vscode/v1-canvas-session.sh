# Sourced by run.sh: session `v1-canvas` (suite/v1-canvas.js). The tab on V1 in managed mode (the
# extension starts the REAL agent-server with our V1 tools), the scripted LLM of
# fixtures/v1-canvas-llm-script.json; Agent Canvas 1.20.0's own page in headless Chromium
# (canvas_page.mjs, from Canvas's npm tarball unpacked into this run's throw-away folder) starts two
# conversations on the window's agent-server while the tab's runs; then an openhands-sdk script
# (sdk_conversation.py) starts one.
run_v1_canvas_session() {
  local art="$ARTIFACTS/v1-canvas"
  mkdir -p "$art"; rm -f "$ARTIFACTS/host-v1-canvas.log"
  v1_venv_ready v1-canvas "$art" || return
  local canvas="$SESSION/agent-canvas"
  mkdir -p "$canvas"
  if ! tar xzf "$CANVAS_TARBALL" -C "$canvas" 2> "$art/canvas-unpack.log"; then
    echo "@@oh-test FAIL unpack Agent Canvas's tarball $CANVAS_TARBALL (see $art)" > "$ARTIFACTS/host-v1-canvas.log"; HOST_RC[v1-canvas]=1; return
  fi
  local ws="$SESSION/v1-canvas" llm llm_pid
  mkdir -p "$ws/.vscode" "$SESSION/v1-canvas-home"; echo '{}' > "$ws/.vscode/settings.json"
  # A git repository: Canvas's conversations (worktree: true) get a worktree of it.
  rm -rf "$ws/.git" "$SESSION/v1-canvas-worktrees"
  git -C "$ws" init -q && git -C "$ws" add -A && git -C "$ws" -c user.name=t -c user.email=t@t commit -qm start
  sed "s#@WORKSPACE@#$ws#g" "$HERE/fixtures/v1-canvas-llm-script.json" > "$SESSION/v1-canvas-llm-script.json"
  start_scripted_llm "$art" --script "$SESSION/v1-canvas-llm-script.json" --require-api-key scripted-llm-key; llm_pid=$STARTED_PID
  llm="$(scripted_llm_url "$art")"
  if [ -n "$llm" ]; then
    OH_CHECKPOINT_DIR="$SESSION/v1-canvas-checkpoints" "$NODE24" "$HERE/host.mjs" --workspace "$ws" --dev "$HERE/harness-ext" \
      --tests "$HERE/suite/v1-canvas.js" --env "{\"OH_TEST_LLM_BASE_URL\":\"$llm\",\"OH_TEST_ARTIFACTS\":\"$art\",\"HOME\":\"$SESSION/v1-canvas-home\",\"OH_CONVERSATION_WORKTREE_ROOT\":\"$SESSION/v1-canvas-worktrees\",\"OH_TEST_NODE24\":\"$NODE24\",\"OH_TEST_CANVAS_PACKAGE\":\"$canvas/package\",\"OH_TEST_V1_PYTHON\":\"$PY1\",\"OH_TEST_PW_DIR\":\"$CACHE/pw\"}" \
      --settings "{\"openhands.v1.python\":\"$PY1\"}" --extensions-dir "$EXT" --artifacts "$art" --click-dialog Allow --timeout 600 \
      > "$ARTIFACTS/host-v1-canvas.log" 2>&1
    HOST_RC[v1-canvas]=$?
    grep -E '@@oh-test|\[host|oh-test v1-canvas' "$ARTIFACTS/host-v1-canvas.log" | sed -E 's/^.*(@@oh-test|oh-test)/\1/' | cut -c1-300
  else
    tail -20 "$art/scripted-llm.log"
    echo "@@oh-test FAIL start the scripted LLM (see $art)" > "$ARTIFACTS/host-v1-canvas.log"; HOST_RC[v1-canvas]=1
  fi
  kill -KILL -- -"$llm_pid" 2>/dev/null; wait "$llm_pid" 2>/dev/null
}
