"""An agent-server that is SIGKILLed takes the executor its V1 tools spawned with it.

No shutdown runs (no `close_all()`, no atexit). The executor is in its own session, so no signal
reaches it; it stops because the tools pass `--exit-on-stdin-eof` and hold its stdin pipe, which
the kernel closes when the agent-server's process dies.
"""

from __future__ import annotations

import os
import secrets
import signal
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

from openhands_vscode_runtime.scripted_llm import ScriptedLLM
from test_agent_server import call, free_port


def process_gone(pid: int) -> bool:
    """True when `pid` has exited (a zombie counts: nobody may reap it in a container)."""
    try:
        with open(f'/proc/{pid}/stat') as f:
            state = f.read().rsplit(')', 1)[1].split()[0]
    except FileNotFoundError:
        return True
    return state in ('Z', 'X')


def test_killed_agent_server_leaves_no_executor(tmp_path: Path) -> None:
    ws = tmp_path / 'ws'
    ws.mkdir()
    steps = [
        # The shell's parent is the executor: its pid, for the test to watch.
        {'tool': 'terminal', 'args': {'command': 'echo $PPID > executor.pid && echo noted', 'summary': 'pid'}},
        {'expect_in_last_observation': 'noted', 'tool': 'finish', 'args': {'message': 'done'}},
    ]
    key = secrets.token_urlsafe(16)
    port = free_port()
    env = dict(os.environ, SESSION_API_KEY=key, OPENHANDS_SUPPRESS_BANNER='1',
               OH_CONVERSATIONS_PATH=str(tmp_path / 'conversations'))
    executor_pid = None
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
            cid = call('POST', f'{base}/api/conversations', key, {
                'agent': agent, 'workspace': {'working_dir': str(ws)},
                'initial_message': {'role': 'user', 'content': [{'type': 'text', 'text': 'go'}], 'run': True},
            })['id']
            deadline = time.monotonic() + 120
            while True:
                status = call('GET', f'{base}/api/conversations/{cid}', key).get('execution_status')
                if status in ('finished', 'error', 'stuck'):
                    break
                assert time.monotonic() < deadline, f'conversation still {status}'
                time.sleep(0.5)
            assert llm.mismatches == [], llm.mismatches
            assert status == 'finished'
            executor_pid = int((ws / 'executor.pid').read_text())
            assert not process_gone(executor_pid)
            assert os.getsid(executor_pid) != os.getsid(server.pid), 'the executor has its own session'
            log_path = os.readlink(f'/proc/{executor_pid}/fd/2')
            os.killpg(server.pid, signal.SIGKILL)
            server.wait(30)
            # Generous and polled: the executor notices at once, then stops its shell.
            end = time.monotonic() + 60
            while not process_gone(executor_pid) and time.monotonic() < end:
                time.sleep(0.2)
            assert process_gone(executor_pid), f'executor {executor_pid} outlived the killed agent-server'
            assert 'end of stdin (--exit-on-stdin-eof): stopping' in Path(log_path).read_text()
            Path(log_path).unlink(missing_ok=True)
        finally:
            if server.poll() is None:
                os.killpg(server.pid, signal.SIGKILL)
            if executor_pid is not None and not process_gone(executor_pid):
                os.killpg(executor_pid, signal.SIGKILL)
