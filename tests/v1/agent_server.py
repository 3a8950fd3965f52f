"""A real OpenHands V1 agent-server for the end-to-end tests: started on a free port with our V1
tools (`--import-modules openhands_vscode_runtime.v1.register`), and a conversation on it driven
to its end by the scripted stand-in LLM (`scripted_llm`)."""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterator


def free_port() -> int:
    with socket.socket() as s:
        s.bind(('127.0.0.1', 0))
        return s.getsockname()[1]


def call(method: str, url: str, key: str, body: dict | None = None, timeout: float = 30) -> Any:
    data = json.dumps(body).encode() if body is not None else None
    req = urllib.request.Request(url, data=data, method=method,
                                 headers={'X-Session-API-Key': key, 'Content-Type': 'application/json'})
    with urllib.request.urlopen(req, timeout=timeout) as resp:
        return json.loads(resp.read() or b'{}')


@dataclass
class AgentServer:
    base: str
    key: str
    process: subprocess.Popen
    log: Path
    # The id of the conversation `run_conversation` started last.
    last_conversation_id: str | None = None

    def start_conversation(self, llm: Any, workspace: Path, conversation_id: str | None = None) -> str:
        """POST a conversation (terminal + file_editor, the scripted LLM) in `workspace`; its id.
        The request returns once V1 has created the conversation's tools."""
        agent = {'kind': 'Agent',
                 'llm': {'model': 'openai/scripted', 'base_url': llm.base_url, 'api_key': 'x',
                         'usage_id': 'agent', 'num_retries': 0},
                 'tools': [{'name': 'terminal'}, {'name': 'file_editor'}]}
        body = {
            'agent': agent, 'workspace': {'working_dir': str(workspace)},
            'initial_message': {'role': 'user', 'content': [{'type': 'text', 'text': 'go'}], 'run': True},
        }
        if conversation_id is not None:
            body['conversation_id'] = conversation_id
        return call('POST', f'{self.base}/api/conversations', self.key, body)['id']

    def start_for_executor(self, llm: Any, workspace: Path, discovery: Path,
                           timeout: float = 60) -> tuple[threading.Thread, dict, dict]:
        """For a server whose executors connect by hand (`OH_VSCODE_SPAWN_EXECUTOR=0`): POST a
        conversation from a thread (the request returns only once an executor serves its tools)
        and wait for its channel's discovery file in `discovery`. Returns the thread, the dict it
        puts the conversation's id in (`cid`) when the POST returns, and the file's contents."""
        started: dict = {}
        post = threading.Thread(target=lambda: started.update(cid=self.start_conversation(llm, workspace)), daemon=True)
        post.start()
        deadline = time.monotonic() + timeout
        while not (files := list(discovery.glob('*.json')) if discovery.is_dir() else []):
            assert time.monotonic() < deadline, f'no discovery file in {discovery} after {timeout} s'
            time.sleep(0.05)
        return post, started, json.loads(files[0].read_text())

    def status(self, conversation_id: str) -> str | None:
        """The conversation's `execution_status`."""
        return call('GET', f'{self.base}/api/conversations/{conversation_id}', self.key).get('execution_status')

    def run_conversation(self, llm: Any, workspace: Path, timeout: float = 120) -> str:
        """Start a conversation (`start_conversation`) and wait until it ends; returns its final
        execution status."""
        cid = self.last_conversation_id = self.start_conversation(llm, workspace)
        deadline = time.monotonic() + timeout
        while True:
            status = self.status(cid)
            if status in ('finished', 'error', 'stuck'):
                return status
            assert time.monotonic() < deadline, f'conversation still {status}'
            time.sleep(0.5)


@contextlib.contextmanager
def agent_server(tmp_path: Path, import_modules: bool = True, env: dict[str, str] | None = None) -> Iterator[AgentServer]:
    """The agent-server in its own session (so a test can kill its whole group), up and healthy.
    On exit it is asked to stop (SIGTERM), and killed with its group if it has not within 15 s:
    a server whose tool call still waits for an executor does not finish a SIGTERM shutdown.
    `import_modules=False` starts it without our tools (V1's own, for bench/v1_agent_server.py);
    `env`: variables added to its environment (e.g. the hub's TLS files)."""
    key = secrets.token_urlsafe(16)
    port = free_port()
    log = tmp_path / 'server.log'
    env = dict(os.environ, SESSION_API_KEY=key, OPENHANDS_SUPPRESS_BANNER='1',
               OH_CONVERSATIONS_PATH=str(tmp_path / 'conversations'), **(env or {}))
    process = subprocess.Popen(
        [sys.executable, '-m', 'openhands.agent_server', '--host', '127.0.0.1', '--port', str(port),
         *(['--import-modules', 'openhands_vscode_runtime.v1.register'] if import_modules else [])],
        env=env, cwd=tmp_path, stdout=open(log, 'wb'), stderr=subprocess.STDOUT, start_new_session=True)
    try:
        base = f'http://127.0.0.1:{port}'
        deadline = time.monotonic() + 90
        while True:
            try:
                urllib.request.urlopen(f'{base}/health', timeout=2)
                break
            except Exception:
                assert process.poll() is None, log.read_text()[-3000:]
                assert time.monotonic() < deadline, 'agent-server did not come up'
                time.sleep(0.5)
        yield AgentServer(base, key, process, log)
    finally:
        if process.poll() is None:
            process.terminate()
            try:
                process.wait(15)
            except subprocess.TimeoutExpired:
                os.killpg(process.pid, signal.SIGKILL)
                process.wait(15)
