"""The V1 tools' executor key cannot be read through /proc by the agent (docs/security.md, "/proc").

A V1 `LocalConversation` (the real SDK agent loop) whose terminal runs in the headless executor the
V1 tools spawn: the agent's bash walks from itself to pid 1 and reads each process's environ and
cmdline; the conversation's channel key is in none of them (it reached the executor on a pipe).
The LLM is the one stand-in (`scripted_llm`). The same walk as tests/runtime/test_proc_environ.py.
"""

from __future__ import annotations

import base64
import os
from pathlib import Path

os.environ.setdefault('LITELLM_LOCAL_MODEL_COST_MAP', 'True')

from openhands_vscode_runtime.scripted_llm import ScriptedLLM  # noqa: E402

WALK = (
    'p=$$; while [ -n "$p" ] && [ "$p" -gt 1 ]; do '
    'printf "%s %s %s\\n" "$p" "$(base64 -w0 < /proc/$p/environ 2>/dev/null || echo -)" '
    '"$(base64 -w0 < /proc/$p/cmdline 2>/dev/null || echo -)"; '
    "p=$(awk '/^PPid:/{print $2}' /proc/$p/status); done > walk.txt; wc -l < walk.txt"
)


def test_the_agent_finds_the_v1_executor_key_in_no_ancestors_proc_environ_or_cmdline(tmp_path: Path) -> None:
    from pydantic import SecretStr

    from openhands.sdk import LLM, Agent, Conversation, Tool
    from openhands_vscode_runtime.v1 import register
    from openhands_vscode_runtime.v1.connection import _CONNECTIONS

    register()
    ws = tmp_path / 'ws'
    ws.mkdir()
    llm_server = ScriptedLLM([
        {'tool': 'terminal', 'args': {'command': WALK, 'security_risk': 'LOW', 'summary': 'walk /proc'}},
        {'tool': 'finish', 'args': {'message': 'done'}},
    ])
    base_url = llm_server.start()
    try:
        llm = LLM(model='openai/scripted', base_url=base_url, api_key=SecretStr('x'), usage_id='agent', num_retries=0)
        conv = Conversation(agent=Agent(llm=llm, tools=[Tool(name='terminal')]), workspace=str(ws), visualizer=None)
        conv.send_message('walk')
        conv.run()
        assert llm_server.mismatches == [], llm_server.mismatches
        conn = _CONNECTIONS[str(conv.id)]
        key = conn.session_api_key
        executor_pid = conn.process.pid
        conv.close()
    finally:
        llm_server.stop()
    assert key
    walk = []
    for line in (ws / 'walk.txt').read_text().split('\n'):
        if line.strip():
            pid, environ, cmdline = line.split(' ')
            walk.append((int(pid), *(None if b == '-' else base64.b64decode(b) for b in (environ, cmdline))))
    pids = [pid for pid, _, _ in walk]
    # The walk did read the executor (the bash's parent) and this process (the V1 tools, its spawner).
    assert pids[1] == executor_pid and os.getpid() in pids, pids
    assert walk[1][1], "the walk did not read the executor's environ"
    for pid, environ, cmdline in walk:
        for what, data in (('environ', environ), ('cmdline', cmdline)):
            assert data is None or key.encode() not in data, f'the V1 executor key is in /proc/{pid}/{what}'
