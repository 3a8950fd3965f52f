"""End to end: a conversation on the real OpenHands V1 agent-server, started with
`--import-modules openhands_vscode_runtime.v1.register`, whose `terminal` and `file_editor` calls
run in the headless executor. The LLM is the scripted stand-in (`scripted_llm`) on 127.0.0.1.
"""

from __future__ import annotations

import json
import os
import secrets
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

from openhands_vscode_runtime.scripted_llm import ScriptedLLM


def free_port() -> int:
    with socket.socket() as s:
        s.bind(('127.0.0.1', 0))
        return s.getsockname()[1]


def call(method: str, url: str, key: str, body: dict | None = None) -> dict:
    data = json.dumps(body).encode() if body is not None else None
    req = urllib.request.Request(url, data=data, method=method,
                                 headers={'X-Session-API-Key': key, 'Content-Type': 'application/json'})
    with urllib.request.urlopen(req, timeout=30) as resp:
        return json.loads(resp.read() or b'{}')


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
    key = secrets.token_urlsafe(16)
    port = free_port()
    env = dict(os.environ, SESSION_API_KEY=key, OPENHANDS_SUPPRESS_BANNER='1',
               OH_CONVERSATIONS_PATH=str(tmp_path / 'conversations'))
    with ScriptedLLM(steps) as llm:
        server = subprocess.Popen(
            [sys.executable, '-m', 'openhands.agent_server', '--host', '127.0.0.1', '--port', str(port),
             '--import-modules', 'openhands_vscode_runtime.v1.register'],
            env=env, cwd=tmp_path, stdout=open(tmp_path / 'server.log', 'wb'), stderr=subprocess.STDOUT,
            start_new_session=True)
        try:
            base = f'http://127.0.0.1:{port}'
            deadline = time.monotonic() + 90
            while True:
                try:
                    urllib.request.urlopen(f'{base}/health', timeout=2)
                    break
                except Exception:
                    assert server.poll() is None, (tmp_path / 'server.log').read_text()[-3000:]
                    assert time.monotonic() < deadline, 'agent-server did not come up'
                    time.sleep(0.5)
            agent = {'kind': 'Agent',
                     'llm': {'model': 'openai/scripted', 'base_url': llm.base_url, 'api_key': 'x',
                             'usage_id': 'agent', 'num_retries': 0},
                     'tools': [{'name': 'terminal'}, {'name': 'file_editor'}]}
            info = call('POST', f'{base}/api/conversations', key, {
                'agent': agent, 'workspace': {'working_dir': str(ws)},
                'initial_message': {'role': 'user', 'content': [{'type': 'text', 'text': 'go'}], 'run': True},
            })
            cid = info['id']
            deadline = time.monotonic() + 120
            while True:
                status = call('GET', f'{base}/api/conversations/{cid}', key).get('execution_status')
                if status in ('finished', 'error', 'stuck'):
                    break
                assert time.monotonic() < deadline, f'conversation still {status}'
                time.sleep(0.5)
            assert llm.mismatches == [], llm.mismatches
            assert status == 'finished'
            assert (ws / 'notes.txt').read_text() == 'alpha\n'
        finally:
            server.terminate()
            try:
                server.wait(15)
            except subprocess.TimeoutExpired:
                server.kill()
