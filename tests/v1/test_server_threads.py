"""A conversation started while another one is inside a long tool call starts at once, even when
requests to the busy conversation wait for its state lock (openhands_vscode_runtime/v1/server_threads.py).

Real parts: the agent-server with our tools (`--import-modules openhands_vscode_runtime.v1.register`),
a headless executor per conversation, the scripted stand-in LLM. Conversation alpha's one command
waits until conversation beta's first command has run (at most 60 s, printing a line every 5 s
so that the terminal's no-change timeout does not end the step); while it waits, the user
sends alpha as many messages as Python's default thread pool has threads (`min(32, cores + 4)`).
The agent-server hands each to that pool, where it waits for alpha's state lock until alpha's
step ends. Without the wider pool, beta's start finds no free thread, alpha gives up after 60 s
and only then does beta run (the failure the real VS Code host showed once in `v1-parallel`).
"""

from __future__ import annotations

import os
import threading
import time
import uuid
from pathlib import Path

from agent_server import agent_server, call

from openhands_vscode_runtime.scripted_llm import ScriptedLLM
from openhands_vscode_runtime.v1.server_threads import default_executor_size

WAIT_TENTHS = 600  # alpha's bound: 60 s


def script(marks: Path) -> list[dict]:
    wait = (
        f'touch {marks}/{{{{1}}}}.started; n=0; '
        f'until [ -e {marks}/beta.started ] || [ $n -ge {WAIT_TENTHS} ]; do sleep 0.1; n=$((n+1)); '
        # a line every 5 s: the terminal's no-change timeout (30 s) must not end the step early
        f'[ $((n % 50)) -ne 0 ] || echo waiting; done; '
        f'if [ -e {marks}/beta.started ]; then echo saw > {marks}/{{{{1}}}}.result; else echo gave-up > {marks}/{{{{1}}}}.result; fi'
    )
    return [
        {'match_last_observation': r'task (\w+)', 'tool': 'terminal', 'args': {'command': wait, 'summary': 'wait for beta'}},
        {'tool': 'finish', 'args': {'message': 'done'}},
    ]


def test_a_second_conversation_starts_while_requests_wait_for_the_first_ones_lock(tmp_path: Path) -> None:
    marks = tmp_path / 'marks'
    marks.mkdir()
    ws = tmp_path / 'ws'
    ws.mkdir()
    python_default_pool = min(32, (os.cpu_count() or 1) + 4)
    assert default_executor_size() > python_default_pool + 8, 'the widened pool must leave room beyond the parked requests'
    with ScriptedLLM(script(marks)) as llm, agent_server(tmp_path) as server:
        agent = {'kind': 'Agent',
                 'llm': {'model': 'openai/scripted', 'base_url': llm.base_url, 'api_key': 'x', 'usage_id': 'agent', 'num_retries': 0},
                 'tools': [{'name': 'terminal'}, {'name': 'file_editor'}]}

        def start(task: str) -> str:
            cid = str(uuid.uuid4())
            call('POST', f'{server.base}/api/conversations', server.key, {
                'conversation_id': cid, 'agent': agent, 'workspace': {'working_dir': str(ws)},
                'initial_message': {'role': 'user', 'content': [{'type': 'text', 'text': f'task {task}'}], 'run': True},
            }, timeout=180)
            return cid

        alpha = start('alpha')
        deadline = time.monotonic() + 60
        while not (marks / 'alpha.started').exists():
            assert time.monotonic() < deadline, 'alpha never ran its command'
            time.sleep(0.05)

        # Messages to the busy conversation: each waits in the server's thread pool for alpha's lock.
        parked = []
        for i in range(python_default_pool):
            body = {'role': 'user', 'content': [{'type': 'text', 'text': f'note {i}'}], 'run': False}
            t = threading.Thread(target=call, args=('POST', f'{server.base}/api/conversations/{alpha}/events', server.key, body, 180), daemon=True)
            t.start()
            parked.append(t)
        time.sleep(1.0)  # let them reach the pool; the assertion below does not depend on it

        t0 = time.monotonic()
        beta = start('beta')
        while not (marks / 'beta.started').exists():
            assert time.monotonic() - t0 < 90, 'beta never ran its command'
            time.sleep(0.05)
        beta_started_after = time.monotonic() - t0

        deadline = time.monotonic() + 120
        while not all(server.status(c) == 'finished' for c in (alpha, beta)):
            assert time.monotonic() < deadline, f'alpha {server.status(alpha)}, beta {server.status(beta)}'
            time.sleep(0.5)
        for t in parked:
            t.join(30)
        result = (marks / 'alpha.result').read_text().strip()
        assert result == 'saw', (
            f'beta ran its first command {beta_started_after:.1f} s after it was created, after alpha gave up '
            'waiting: the second conversation waited for the first one\'s step'
        )
