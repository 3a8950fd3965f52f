"""The OpenHands app (openhands-ai 1.11.0, its V1 app server) with our process sandbox
(`openhands_vscode_runtime.v1.app_sandbox`): a conversation created through the app's REST API, as
its GUI does, runs its `terminal` and `file_editor` calls in the headless executor. Run by
`tests/app/run.sh` in the app's venv; the agent-server the app starts runs in the V1 venv
(`V1_PYTHON`). The LLM is the scripted stand-in (`scripted_llm`) on 127.0.0.1.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

import httpx
import psutil

from openhands.app_server.sandbox.process_sandbox_service import ProcessInfo
from openhands.app_server.sandbox.sandbox_models import SandboxStatus
from openhands.agent_server.utils import utc_now
from openhands_vscode_runtime.scripted_llm import ScriptedLLM
from openhands_vscode_runtime.v1.agent_server import with_loopback_default
from openhands_vscode_runtime.v1.app_sandbox import VsCodeProcessSandboxService

V1_PYTHON = os.environ['V1_PYTHON']
INJECTOR = 'openhands_vscode_runtime.v1.app_sandbox.VsCodeProcessSandboxServiceInjector'


def free_port() -> int:
    with socket.socket() as s:
        s.bind(('127.0.0.1', 0))
        return s.getsockname()[1]


def call(method: str, url: str, body: Any = None, timeout: float = 60) -> Any:
    data = json.dumps(body).encode() if body is not None else None
    req = urllib.request.Request(url, data=data, method=method, headers={'Content-Type': 'application/json'})
    with urllib.request.urlopen(req, timeout=timeout) as resp:
        return json.loads(resp.read() or b'{}')


def sandbox_service() -> VsCodeProcessSandboxService:
    return VsCodeProcessSandboxService(
        user_id=None, sandbox_spec_service=None, base_working_dir='/tmp/openhands-sandboxes-unused',  # type: ignore[arg-type]
        base_port=0, python_executable=V1_PYTHON, agent_server_module='unused', health_check_path='/alive',
        httpx_client=httpx.AsyncClient())


def status_of(pid: int) -> SandboxStatus:
    info = ProcessInfo(pid=pid, port=1, user_id=None, working_dir='/', session_api_key='k',
                       created_at=utc_now(), sandbox_spec_id='spec')
    return sandbox_service()._get_process_status(info)


def test_a_sleeping_agent_server_is_running_a_stopped_one_paused_a_gone_one_missing() -> None:
    # The app's own process sandbox calls a live process RUNNING only while it is on a CPU; an idle
    # agent-server sleeps, so the app never saw one as started.
    proc = subprocess.Popen(['sleep', '60'])
    try:
        deadline = time.monotonic() + 10
        while psutil.Process(proc.pid).status() != psutil.STATUS_SLEEPING:
            assert time.monotonic() < deadline, 'sleep never went to sleep'
            time.sleep(0.05)
        assert status_of(proc.pid) == SandboxStatus.RUNNING
        proc.send_signal(signal.SIGSTOP)
        deadline = time.monotonic() + 10
        while psutil.Process(proc.pid).status() != psutil.STATUS_STOPPED:
            assert time.monotonic() < deadline, 'sleep never stopped'
            time.sleep(0.05)
        assert status_of(proc.pid) == SandboxStatus.PAUSED
    finally:
        proc.kill()
        proc.wait()
    assert status_of(proc.pid) == SandboxStatus.MISSING


def test_the_agent_server_wrapper_binds_loopback_unless_told_otherwise() -> None:
    assert with_loopback_default(['--port', '8000']) == ['--host', '127.0.0.1', '--port', '8000']
    assert with_loopback_default(['--host', '0.0.0.0', '--port', '1']) == ['--host', '0.0.0.0', '--port', '1']
    assert with_loopback_default(['--host=::1']) == ['--host=::1']


def agent_servers_of(pid: int) -> list[psutil.Process]:
    return [p for p in psutil.Process(pid).children(recursive=True)
            if 'openhands_vscode_runtime.v1.agent_server' in ' '.join(p.cmdline())]


def test_a_conversation_the_app_starts_runs_its_tools_in_the_executor(tmp_path: Path) -> None:
    steps = [
        # The shell's parent process names who runs it: our executor, not V1's own terminal; its
        # working directory is the conversation's workspace, which the next step writes into.
        {'tool': 'terminal', 'args': {'command': 'ps -o comm= -p $PPID; pwd', 'summary': 'who'}},
        {'match_last_observation': r'openhands-vscod\n(/\S+)', 'tool': 'file_editor',
         'args': {'command': 'create', 'path': '{{1}}/notes.txt', 'file_text': 'alpha\n', 'summary': 'create'}},
        {'expect_in_last_observation': 'File created successfully', 'tool': 'terminal',
         'args': {'command': 'cat notes.txt && echo served', 'summary': 'read'}},
        # The agent-server's key (the app's sandbox key) must not reach the agent's shell.
        {'expect_in_last_observation': 'served', 'tool': 'terminal',
         'args': {'command': 'echo "key=[${SESSION_API_KEY:-none}]"', 'summary': 'env'}},
        {'expect_in_last_observation': 'key=[none]', 'tool': 'finish', 'args': {'message': 'done'}},
    ]
    port = free_port()
    base = f'http://127.0.0.1:{port}'
    sandboxes = tmp_path / 'sandboxes'
    log = tmp_path / 'app.log'
    env = dict(os.environ, RUNTIME='process', OH_SANDBOX_KIND=INJECTOR, OH_SANDBOX_PYTHON_EXECUTABLE=V1_PYTHON,
               OH_SANDBOX_BASE_PORT=str(free_port()), OH_SANDBOX_BASE_WORKING_DIR=str(sandboxes),
               OH_PERSISTENCE_DIR=str(tmp_path / 'persistence'))
    with ScriptedLLM(steps) as llm:
        app = subprocess.Popen(
            [sys.executable, '-m', 'uvicorn', 'openhands.app_server.app:app', '--host', '127.0.0.1', '--port', str(port)],
            env=env, cwd=tmp_path, stdout=open(log, 'wb'), stderr=subprocess.STDOUT, start_new_session=True)
        try:
            t0 = time.monotonic()
            while True:
                try:
                    urllib.request.urlopen(f'{base}/alive', timeout=2)
                    break
                except Exception:
                    assert app.poll() is None, log.read_text()[-3000:]
                    assert time.monotonic() - t0 < 180, 'the app server did not come up'
                    time.sleep(0.5)
            app_up = time.monotonic() - t0
            # The LLM as the GUI's settings form stores it.
            call('POST', f'{base}/api/v1/settings', {'agent_settings_diff': {'llm': {
                'model': 'openai/scripted', 'base_url': llm.base_url, 'api_key': 'x', 'num_retries': 0}}})
            t1 = time.monotonic()
            task = call('POST', f'{base}/api/v1/app-conversations', {
                'initial_message': {'role': 'user', 'content': [{'type': 'text', 'text': 'go'}], 'run': True}})
            while True:
                found = call('GET', f'{base}/api/v1/app-conversations/start-tasks?ids={task["id"]}')[0]
                assert found['status'] != 'ERROR', (found['detail'], log.read_text()[-3000:])
                if found['status'] == 'READY':
                    break
                assert time.monotonic() - t1 < 300, f'conversation start still {found["status"]}'
                time.sleep(1)
            started = time.monotonic() - t1
            cid = found['app_conversation_id']
            while True:
                conv = call('GET', f'{base}/api/v1/app-conversations?ids={cid}')[0]
                if conv['execution_status'] in ('finished', 'error', 'stuck'):
                    break
                assert time.monotonic() - t1 < 300, f'conversation still {conv["execution_status"]}'
                time.sleep(1)
            finished = time.monotonic() - t1
            assert llm.mismatches == [], llm.mismatches
            assert conv['execution_status'] == 'finished'
            assert conv['sandbox_status'] == 'RUNNING'
            # The file the agent's file_editor created is in the workspace its shell reported.
            workspaces = list(sandboxes.glob('*/notes.txt'))
            assert [p.read_text() for p in workspaces] == ['alpha\n']
            # The app reaches the agent-server on loopback, and that process listens there only
            # (the agent-server alone would bind every interface: the app gives it a session key).
            # Its other socket is our embedded Socket.IO server, for the executors.
            agent_url = urlparse(conv['conversation_url'])
            assert agent_url.hostname == '127.0.0.1'
            servers = agent_servers_of(app.pid)
            assert len(servers) == 1
            listening = {tuple(c.laddr) for c in servers[0].net_connections('tcp') if c.status == psutil.CONN_LISTEN}
            assert ('127.0.0.1', agent_url.port) in listening, listening
            assert {ip for ip, _ in listening} == {'127.0.0.1'}, listening
            print(f'\napp server up in {app_up:.1f} s; conversation started (agent-server up) in {started:.1f} s, '
                  f'finished {finished:.1f} s after the POST')
        finally:
            if app.poll() is None:
                app.terminate()
                try:
                    app.wait(20)
                except subprocess.TimeoutExpired:
                    pass
            # The agent-servers the app started are its children in its session: none outlives the test.
            try:
                os.killpg(app.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            app.wait(20)
