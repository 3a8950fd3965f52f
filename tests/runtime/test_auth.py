"""Authentication, always (issue 10, item 1), embedded mode: no executor registers, and no action is
delegated, without the runtime's secret; a web page cannot register even with it.

Real parts: the runtime and its hub on the embedded python-socketio server, the REAL headless
executor as the legitimate and as the intruding executor, and a raw WebSocket client (the
`websockets` library) that sends an `Origin` header as a browser does. Server mode is covered in
test_server_mode.py with the same helpers.
"""

from __future__ import annotations

import asyncio
import json
import os
import threading
import uuid
from pathlib import Path
from urllib.parse import urlencode

import pytest
import socketio
import websockets
from conftest import load_runtime

from openhands.events.action import CmdRunAction
from openhands.events.observation import CmdOutputObservation

from openhands_vscode_runtime.executor_process import ExecutorProcess, find_executor
from openhands_vscode_runtime.hub import NAMESPACE


def intruder(url: str, conversation_id: str, key: str | None, workspace: Path) -> tuple[int, str]:
    """Run the real headless executor as an intruder; returns its exit code and output."""
    workspace.mkdir(parents=True, exist_ok=True)
    os.environ.pop('OH_SESSION_API_KEY', None)
    proc = ExecutorProcess(
        find_executor(), url=url, conversation_id=conversation_id, session_api_key=key,
        workspace=str(workspace), no_change_timeout=None,
    )
    try:
        rc = proc.proc.wait(30)
    finally:
        proc.stop()
    out = Path(proc.log_path).read_text(errors='replace')
    proc.remove_log()
    return rc, out


def browser_register(url: str, conversation_id: str, key: str, origin: str) -> str:
    """A WebSocket opened the way a web page opens one (with Origin), trying to register with the
    right key. Returns the server's answer to the namespace CONNECT."""
    query = urlencode({'EIO': '4', 'transport': 'websocket', 'conversation_id': conversation_id,
                       'session_api_key': key})
    ws_url = url.replace('http://', 'ws://') + f'/socket.io/?{query}'

    async def go() -> str:
        async with websockets.connect(ws_url, origin=origin) as ws:
            opening = await asyncio.wait_for(ws.recv(), 5)
            assert opening.startswith('0{'), opening
            auth = {'protocol': 1, 'executor_id': str(uuid.uuid4()), 'workspace': '/tmp',
                    'client': 'web-page/0'}
            await ws.send(f'40{NAMESPACE},{json.dumps(auth)}')
            while True:
                packet = await asyncio.wait_for(ws.recv(), 5)
                if packet == '2':  # Engine.IO ping
                    await ws.send('3')
                    continue
                return packet

    return asyncio.run(go())


def polling_register(url: str, conversation_id: str, key: str) -> str:
    async def go() -> str:
        client = socketio.AsyncClient(reconnection=False)
        errors = []
        client.on('connect_error', lambda data: errors.append(data), namespace=NAMESPACE)
        try:
            await client.connect(
                f'{url}?{urlencode({"conversation_id": conversation_id, "session_api_key": key})}',
                namespaces=[NAMESPACE], transports=['polling'],
                auth={'protocol': 1, 'executor_id': 'x', 'workspace': '/tmp', 'client': 't/0'},
                wait_timeout=5,
            )
        except socketio.exceptions.ConnectionError:
            pass
        finally:
            await client.disconnect()
        return str(errors)

    return asyncio.run(go())


def assert_marker_only_in(rt, legit: Path, others: list[Path]) -> None:
    """The next action runs in the legitimate executor's workspace, nowhere else."""
    obs = rt.run_action(CmdRunAction('echo ran > marker && pwd'))
    assert isinstance(obs, CmdOutputObservation) and obs.exit_code == 0, obs
    assert (legit / 'marker').read_text() == 'ran\n'
    for other in others:
        assert not (other / 'marker').exists(), f'an intruder executed an action in {other}'


def test_refusals_before_the_real_executor_registers(temp_dir, tmp_path, monkeypatch):
    """A runtime waits for its executor (nothing spawned): intruders try first."""
    monkeypatch.setenv('OH_VSCODE_SPAWN_EXECUTOR', '0')
    monkeypatch.setenv('OH_VSCODE_CONNECT_TIMEOUT', '60')
    holder: dict = {}
    sid = f'rt_auth_{uuid.uuid4().hex[:6]}'

    def connect():
        try:
            holder['rt'], _ = load_runtime(temp_dir, sid=sid)
        except BaseException as e:  # reported below
            holder['error'] = e

    thread = threading.Thread(target=connect, daemon=True)
    thread.start()
    from openhands_vscode_runtime.embedded import embedded_server

    hub = embedded_server().hub
    import time

    deadline = time.monotonic() + 30
    while hub.channel(sid) is None:
        assert time.monotonic() < deadline, 'the runtime never opened its channel'
        time.sleep(0.01)
    ch = hub.channel(sid)
    key = ch.accepted_keys[0]
    url = embedded_server().url
    intruders = tmp_path / 'intruders'

    rc, out = intruder(url, sid, None, intruders / 'nokey')
    assert rc == 2, out
    assert 'oh-executor: missing session_api_key' in out, out
    rc, out = intruder(url, sid, 'wrong-' + key, intruders / 'wrong')
    assert rc == 2, out
    assert 'oh-executor: invalid session_api_key' in out, out
    answer = browser_register(url, sid, key, origin='http://evil.example')
    assert answer.startswith(f'44{NAMESPACE},'), answer
    assert 'cross-origin connection refused (Origin http://evil.example)' in answer
    answer = browser_register(url, sid, key, origin=url)  # same origin: still a web page
    assert 'cross-origin connection refused' in answer, answer
    assert 'websocket transport' in polling_register(url, sid, key)
    assert ch.registrations == 0 and not ch.executor_connected

    legit = Path(temp_dir) / 'workspace'
    real = ExecutorProcess(find_executor(), url=url, conversation_id=sid, session_api_key=key,
                           workspace=str(legit), no_change_timeout=None)
    try:
        thread.join(60)
        assert 'error' not in holder, holder.get('error')
        rt = holder['rt']
        try:
            assert ch.registrations == 1
            assert_marker_only_in(rt, legit, [intruders / 'nokey', intruders / 'wrong'])
        finally:
            rt.close()
    finally:
        real.stop()


def test_unauthenticated_replacement_is_refused(temp_dir, tmp_path):
    rt, _ = load_runtime(temp_dir)
    try:
        ch = rt._channel
        before = ch.executor_sid
        intruders = tmp_path / 'intruders'
        rc, out = intruder(rt.server_url, rt.sid, None, intruders / 'nokey')
        assert rc == 2 and 'missing session_api_key' in out, out
        rc, out = intruder(rt.server_url, rt.sid, 'not-the-key', intruders / 'wrong')
        assert rc == 2 and 'invalid session_api_key' in out, out
        answer = browser_register(rt.server_url, rt.sid, rt.session_api_key, 'http://localhost:3001')
        assert 'cross-origin connection refused' in answer, answer
        assert ch.executor_sid == before and ch.registrations == 1
        assert_marker_only_in(rt, Path(rt.config.workspace_mount_path_in_sandbox),
                              [intruders / 'nokey', intruders / 'wrong'])
    finally:
        rt.close()


def test_allowed_origin_may_register(temp_dir, monkeypatch):
    """The allowlist is the only way in for a page (empty by default). Like every setting, it is
    read when the runtime is created."""
    monkeypatch.setenv('OH_VSCODE_ALLOWED_ORIGINS', 'http://trusted.example, http://other')
    rt, _ = load_runtime(temp_dir)
    try:
        answer = browser_register(rt.server_url, rt.sid, rt.session_api_key,
                                  'http://trusted.example')
        assert answer.startswith(f'40{NAMESPACE},'), answer
    finally:
        rt.close()


def test_a_channel_without_a_key_cannot_be_opened():
    from openhands_vscode_runtime.embedded import embedded_server

    hub = embedded_server().hub
    for empty in (None, '', (), ('',)):
        with pytest.raises(ValueError, match='at least one executor key'):
            hub.open_channel('conv-nokey', session_api_key=empty, session_settings={})
