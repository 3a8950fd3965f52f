# Sourced by run.sh: session `v1-parallel` (suite/v1-parallel.js). The tab on V1 in managed mode
# (the extension starts the REAL agent-server with our V1 tools), the scripted LLM of
# fixtures/v1-parallel-llm-script.json; one conversation typed into the tab and one created by the
# suite over REST run at once, each in its own executor of the window's pool.
run_v1_parallel_session() {
  local art="$ARTIFACTS/v1-parallel"
  mkdir -p "$art"; rm -f "$ARTIFACTS/host-v1-parallel.log"
  v1_venv_ready v1-parallel "$art" || return
  local ws="$SESSION/v1-parallel" llm llm_pid
  mkdir -p "$ws/.vscode" "$SESSION/v1-parallel-home"; echo '{}' > "$ws/.vscode/settings.json"
  # A git repository: a conversation created with `worktree: true` gets a worktree of it.
  rm -rf "$ws/.git" "$SESSION/v1-parallel-worktrees"
  git -C "$ws" init -q && git -C "$ws" add -A && git -C "$ws" -c user.name=t -c user.email=t@t commit -qm start
  sed "s#@WORKSPACE@#$ws#g" "$HERE/fixtures/v1-parallel-llm-script.json" > "$SESSION/v1-parallel-llm-script.json"
  start_scripted_llm "$art" --script "$SESSION/v1-parallel-llm-script.json" --require-api-key scripted-llm-key; llm_pid=$STARTED_PID
  llm="$(scripted_llm_url "$art")"
  if [ -n "$llm" ]; then
    # The agent-server the extension starts (and the agents' shells) get a clean HOME.
    OH_CHECKPOINT_DIR="$SESSION/v1-parallel-checkpoints" "$NODE24" "$HERE/host.mjs" --workspace "$ws" --dev "$HERE/harness-ext" \
      --tests "$HERE/suite/v1-parallel.js" --env "{\"OH_TEST_LLM_BASE_URL\":\"$llm\",\"OH_TEST_ARTIFACTS\":\"$art\",\"HOME\":\"$SESSION/v1-parallel-home\",\"OH_CONVERSATION_WORKTREE_ROOT\":\"$SESSION/v1-parallel-worktrees\"}" \
      --settings "{\"openhands.v1.python\":\"$PY1\",\"openhands.v1.maxParallelConversations\":2}" --extensions-dir "$EXT" --artifacts "$art" --click-dialog Allow --timeout 600 \
      > "$ARTIFACTS/host-v1-parallel.log" 2>&1
    HOST_RC[v1-parallel]=$?
    grep -E '@@oh-test|\[host|oh-test v1-parallel' "$ARTIFACTS/host-v1-parallel.log" | sed -E 's/^.*(@@oh-test|oh-test)/\1/' | cut -c1-300
  else
    tail -20 "$art/scripted-llm.log"
    echo "@@oh-test FAIL start the scripted LLM (see $art)" > "$ARTIFACTS/host-v1-parallel.log"; HOST_RC[v1-parallel]=1
  fi
  kill -KILL -- -"$llm_pid" 2>/dev/null; wait "$llm_pid" 2>/dev/null
}
