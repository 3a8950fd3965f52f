"""End to end: a conversation on the real OpenHands V1 agent-server, started with
`--import-modules openhands_vscode_runtime.v1.register`, whose `terminal` and `file_editor` calls
run in the headless executor. The LLM is the scripted stand-in (`scripted_llm`) on 127.0.0.1.
"""

from __future__ import annotations

from pathlib import Path

from agent_server import agent_server
from openhands_vscode_runtime.scripted_llm import ScriptedLLM


def test_agent_server_conversation_runs_its_tools_in_the_executor(tmp_path: Path) -> None:
    ws = tmp_path / 'ws'
    ws.mkdir()
    steps = [
        # The shell's parent process names who runs it: our executor, not V1's own terminal.
        {'tool': 'terminal', 'args': {'command': 'ps -o comm= -p $PPID', 'summary': 'who'}},
        {'expect_in_last_observation': 'openhands-vscod', 'tool': 'file_editor',
         'args': {'command': 'create', 'path': f'{ws}/notes.txt', 'file_text': 'alpha\n', 'summary': 'create'}},
        {'expect_in_last_observation': 'File created successfully', 'tool': 'terminal',
         'args': {'command': 'cat notes.txt && echo served', 'summary': 'read'}},
        # The agent-server's own key must not reach the agent's shell (V1 strips it too).
        {'expect_in_last_observation': 'served', 'tool': 'terminal',
         'args': {'command': 'echo "key=[${SESSION_API_KEY:-none}] agent=$AI_AGENT"', 'summary': 'env'}},
        {'expect_in_last_observation': 'key=[none] agent=openhands', 'tool': 'finish', 'args': {'message': 'done'}},
    ]
    with ScriptedLLM(steps) as llm, agent_server(tmp_path) as server:
        status = server.run_conversation(llm, ws)
        assert llm.mismatches == [], llm.mismatches
        assert status == 'finished'
        assert (ws / 'notes.txt').read_text() == 'alpha\n'
