"""The real agent-server (`--import-modules openhands_vscode_runtime.v1.register`): a deleted
conversation's executor stops, and a wait for an executor that never comes ends at once when the
conversation is deleted or the server gets SIGTERM (not at the connect timeout, 120 s here).
"""

from __future__ import annotations

import signal
import threading
import time
import uuid
from pathlib import Path

import pytest

from agent_server import agent_server, call
from openhands_vscode_runtime.scripted_llm import ScriptedLLM
from test_isolation import wait_gone

CONNECT_TIMEOUT = 120
# Seconds: generous on a loaded 2-core machine (the agent-server's own handling of the failed
# request took up to 12 s at load average 12), far below CONNECT_TIMEOUT.
PROMPT = 30


def test_deleted_conversation_stops_its_executor(tmp_path: Path) -> None:
    ws = tmp_path / 'ws'
    ws.mkdir()
    steps = [
        {'tool': 'terminal', 'args': {'command': 'echo $PPID > executor.pid && echo noted', 'summary': 'pid'}},
        {'expect_in_last_observation': 'noted', 'tool': 'finish', 'args': {'message': 'done'}},
    ]
    with ScriptedLLM(steps) as llm, agent_server(tmp_path) as server:
        assert server.run_conversation(llm, ws) == 'finished'
        assert llm.mismatches == [], llm.mismatches
        pid = int((ws / 'executor.pid').read_text())
        assert not wait_gone(pid, 0), 'the executor stopped before the conversation was deleted'
        call('DELETE', f'{server.base}/api/conversations/{server.last_conversation_id}', server.key)
        assert wait_gone(pid), f'executor {pid} outlived its deleted conversation'


def waiting_conversation(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """Attach mode with nothing attaching: the POST waits for an executor."""
    monkeypatch.setenv('OH_VSCODE_SPAWN_EXECUTOR', '0')
    monkeypatch.setenv('OH_VSCODE_CONNECT_TIMEOUT', str(CONNECT_TIMEOUT))
    discovery = tmp_path / 'discovery'
    monkeypatch.setenv('OH_VSCODE_V1_DISCOVERY_DIR', str(discovery))
    ws = tmp_path / 'ws'
    ws.mkdir()
    return ws, discovery


def post_in_background(server, llm, ws: Path, cid: str) -> tuple[threading.Thread, list]:
    outcome: list = []

    def post() -> None:
        try:
            outcome.append(('answered', server.start_conversation(llm, ws, cid), time.monotonic()))
        except Exception as e:  # an HTTP error or a dropped connection: the request ended
            outcome.append(('failed', repr(e), time.monotonic()))

    thread = threading.Thread(target=post, daemon=True)
    thread.start()
    return thread, outcome


def wait_for_discovery_file(discovery: Path, server) -> Path:
    end = time.monotonic() + 90
    while time.monotonic() < end:
        files = list(discovery.glob('*.json')) if discovery.exists() else []
        if files:
            return files[0]
        assert server.process.poll() is None, server.log.read_text()[-3000:]
        time.sleep(0.2)
    raise AssertionError('the tools never started waiting for an executor')


def test_delete_while_waiting_for_an_executor_ends_the_wait(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ws, discovery = waiting_conversation(tmp_path, monkeypatch)
    cid = str(uuid.uuid4())
    with ScriptedLLM([{'tool': 'finish', 'args': {'message': 'done'}}]) as llm, agent_server(tmp_path) as server:
        thread, outcome = post_in_background(server, llm, ws, cid)
        file = wait_for_discovery_file(discovery, server)
        t0 = time.monotonic()
        call('DELETE', f'{server.base}/api/conversations/{cid}', server.key, timeout=PROMPT)
        deleted = time.monotonic() - t0
        # The wait's end removes the discovery file (the connection closes).
        while file.exists() and time.monotonic() - t0 < PROMPT:
            time.sleep(0.05)
        wait_ended = time.monotonic() - t0
        thread.join(PROMPT)
        elapsed = time.monotonic() - t0
        assert not thread.is_alive(), f'the conversation still waits for an executor {elapsed:.1f} s after DELETE'
        assert outcome and outcome[0][0] == 'failed', outcome
        assert not file.exists(), 'the discovery file outlived the cancelled wait'
        # The file is named after the V1 conversation, for a person to find the right one.
        assert file.name == f'v1-{uuid.UUID(cid).hex}.json', file.name
        print(f'\nDELETE answered after {deleted:.2f} s, the wait for an executor ended after '
              f'{wait_ended:.2f} s, the waiting POST failed after {outcome[0][2] - t0:.2f} s')


def test_sigterm_while_waiting_for_an_executor_exits_promptly(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ws, discovery = waiting_conversation(tmp_path, monkeypatch)
    with ScriptedLLM([{'tool': 'finish', 'args': {'message': 'done'}}]) as llm, agent_server(tmp_path) as server:
        post_in_background(server, llm, ws, str(uuid.uuid4()))
        file = wait_for_discovery_file(discovery, server)
        t0 = time.monotonic()
        server.process.send_signal(signal.SIGTERM)
        while file.exists() and time.monotonic() - t0 < PROMPT:
            time.sleep(0.05)
        wait_ended = time.monotonic() - t0
        try:
            server.process.wait(PROMPT)
        except Exception:
            raise AssertionError(
                f'the agent-server did not exit within {PROMPT} s of SIGTERM while a conversation '
                f'waited for an executor (connect timeout {CONNECT_TIMEOUT} s)'
            ) from None
        elapsed = time.monotonic() - t0
        assert not file.exists(), 'the discovery file outlived the shutdown'
        print(f'\nSIGTERM: the wait for an executor ended after {wait_ended:.2f} s, the agent-server '
              f'exited after {elapsed:.2f} s')
