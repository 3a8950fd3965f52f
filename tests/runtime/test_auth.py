"""Authentication, always (issue 10, item 1), embedded mode: no executor registers, and no action is
delegated, without the runtime's secret; a web page cannot register even with it. Protocol 2
(issue 22): the key never crosses the wire, the hub refuses a wrong executor proof, and an
executor that proved a standing key waits (bounded) for a runtime that is not open yet.

Real parts: the runtime and its hub on the embedded python-socketio server, the REAL headless
executor as the legitimate and as the intruding executor, and a raw WebSocket client (the
`websockets` library) that sends an `Origin` header as a browser does. Server mode is covered in
test_server_mode.py with the same helpers.
"""

from __future__ import annotations

import asyncio
import json
import os
import secrets
import threading
import time
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
from openhands_vscode_runtime import hub as hub_module
from openhands_vscode_runtime import protocol as P
from openhands_vscode_runtime.hub import NAMESPACE

UNPROVEN = 'could not prove it holds the session key: not the OpenHands you configured?'


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
    query = urlencode({'EIO': '4', 'transport': 'websocket', 'conversation_id': conversation_id})
    ws_url = url.replace('http://', 'ws://') + f'/socket.io/?{query}'

    async def go() -> str:
        async with websockets.connect(ws_url, origin=origin) as ws:
            opening = await asyncio.wait_for(ws.recv(), 5)
            assert opening.startswith('0{'), opening
            auth = {'protocol': P.PROTOCOL_VERSION, 'executor_id': str(uuid.uuid4()), 'workspace': '/tmp',
                    'client': 'web-page/0', 'client_nonce': secrets.token_hex(32)}
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
                f'{url}?{urlencode({"conversation_id": conversation_id})}',
                namespaces=[NAMESPACE], transports=['polling'],
                auth={'protocol': P.PROTOCOL_VERSION, 'executor_id': 'x', 'workspace': '/tmp', 'client': 't/0',
                      'client_nonce': secrets.token_hex(32)},
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
    # The executor with another key cannot tell this hub from an impostor: it leaves it.
    assert UNPROVEN in out, out
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
        assert rc == 2 and UNPROVEN in out, out
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


def handshake(url: str, conversation_id: str, *, key: str, prove_with: str,
              timeout: float = 10) -> dict:
    """A python-socketio client doing protocol 3 by hand: checks the hub's proof with `key`, then
    answers with a proof made with `prove_with`. Returns what the hub sent (sealed messages
    opened)."""
    seen: dict = {'events': []}

    async def go() -> dict:
        client = socketio.AsyncClient(reconnection=False)
        nonce = P.new_nonce()
        done = asyncio.Event()
        auth = {'protocol': P.PROTOCOL_VERSION, 'executor_id': str(uuid.uuid4()),
                'workspace': '/tmp', 'client': 'by-hand/0', 'client_nonce': nonce}
        binding: list[P.SessionBinding] = []

        @client.on('oh_executor_challenge', namespace=NAMESPACE)
        async def challenge(data):
            seen['events'].append(('challenge', data))
            sn = data['server_nonce']
            seen['server_proved'] = P.server_proved(key, conversation_id, nonce, data)
            signed = P.signed_auth_text(auth)
            binding.append(P.SessionBinding(prove_with, conversation_id, nonce, sn, 'executor'))
            await client.emit('oh_executor_auth', {
                'proof': P.executor_proof(prove_with, conversation_id, sn, nonce, signed),
                'auth': signed}, namespace=NAMESPACE)

        for name in ('oh_executor_welcome', 'oh_executor_refused', 'oh_executor_waiting'):
            def handler(data, name=name):
                if binding and isinstance(data, dict) and 'body' in data:
                    data = binding[0].open(name, data)
                seen['events'].append((name, data))
                if name != 'oh_executor_waiting':
                    done.set()
            client.on(name, handler, namespace=NAMESPACE)

        client.on('connect_error', lambda data: seen.setdefault('connect_error', data),
                  namespace=NAMESPACE)
        try:
            await client.connect(
                f'{url}?{urlencode({"conversation_id": conversation_id})}',
                namespaces=[NAMESPACE], transports=['websocket'], wait_timeout=5,
                auth=auth)
        except socketio.exceptions.ConnectionError:
            await client.disconnect()
            return seen
        try:
            await asyncio.wait_for(done.wait(), timeout)
        except TimeoutError:
            seen['timed_out'] = True  # still waiting (the caller decides whether that is right)
        finally:
            await client.disconnect()
        return seen

    return asyncio.run(go())


def test_a_wrong_executor_proof_is_refused(temp_dir):
    """A client that cannot prove the key (here: it checks the hub's proof with the right key,
    then answers with a proof made with another) is refused and never registers."""
    rt, _ = load_runtime(temp_dir)
    try:
        ch = rt._channel
        before = ch.executor_sid
        seen = handshake(rt.server_url, rt.sid, key=rt.session_api_key, prove_with='guess')
        assert seen['server_proved'], seen
        names = [n for n, _ in seen['events']]
        assert names == ['challenge', 'oh_executor_refused'], seen
        assert 'invalid session_api_key' in seen['events'][1][1]['message'], seen
        assert ch.executor_sid == before and ch.registrations == 1
        # The right proof is welcomed (and replaces the executor): the test above can fail.
        seen = handshake(rt.server_url, rt.sid, key=rt.session_api_key,
                         prove_with=rt.session_api_key)
        assert [n for n, _ in seen['events']][-1] == 'oh_executor_welcome', seen
    finally:
        rt.close()


def test_the_key_is_not_in_the_spawned_executors_argv(temp_dir):
    rt, _ = load_runtime(temp_dir)
    try:
        proc = rt.executor_process
        assert proc is not None
        cmdline = Path(f'/proc/{proc.pid}/cmdline').read_bytes()
        assert rt.session_api_key.encode() not in cmdline, cmdline
        assert b'--url' in cmdline  # it is the executor's command line
    finally:
        rt.close()


@pytest.fixture
def standing_key():
    """The embedded hub with a standing key, as server mode sets one (the executor token)."""
    from openhands_vscode_runtime.embedded import embedded_server

    hub = embedded_server().hub
    key = secrets.token_urlsafe(24)
    hub.set_standing_keys([key])
    yield hub, key
    hub.set_standing_keys([])
    hub.waiting_room_seconds = hub_module.WAITING_ROOM_SECONDS


def test_an_executor_that_arrives_first_is_welcomed_when_the_runtime_opens(standing_key, tmp_path):
    hub, key = standing_key
    from openhands_vscode_runtime.embedded import embedded_server

    url = embedded_server().url
    conversation_id = f'early_{uuid.uuid4().hex[:6]}'
    ws = tmp_path / 'ws'
    ws.mkdir()
    real = ExecutorProcess(find_executor(), url=url, conversation_id=conversation_id,
                           session_api_key=key, workspace=str(ws), no_change_timeout=None)
    try:
        deadline = time.monotonic() + 20
        while 'waits' not in (log := Path(real.log_path).read_text(errors='replace')) and \
                'waiting up to' not in log:
            assert real.proc.poll() is None, log
            assert time.monotonic() < deadline, log
            time.sleep(0.05)
        ch = hub.open_channel(conversation_id, session_api_key=key, session_settings={})
        try:
            auth = ch.registration_future().result(20)
            assert auth['workspace'] == str(ws.resolve())
            assert real.proc.poll() is None
        finally:
            ch.close()
    finally:
        real.stop()
        real.remove_log()


def test_the_waiting_room_is_bounded_in_time_and_size(standing_key, monkeypatch):
    hub, key = standing_key
    from openhands_vscode_runtime.embedded import embedded_server

    url = embedded_server().url
    conversation_id = f'late_{uuid.uuid4().hex[:6]}'
    hub.waiting_room_seconds = 1
    seen = handshake(url, conversation_id, key=key, prove_with=key)
    names = [n for n, _ in seen['events']]
    assert names == ['challenge', 'oh_executor_waiting', 'oh_executor_refused'], seen
    assert (f'no VsCodeRuntime for conversation {conversation_id}: none opened within 1 s'
            in seen['events'][2][1]['message']), seen
    # Full: with room for one, a second executor for the same conversation is refused at once.
    monkeypatch.setattr(hub_module, 'WAITING_ROOM_PER_CONVERSATION', 1)
    hub.waiting_room_seconds = 30
    first = threading.Thread(target=handshake, args=(url, conversation_id),
                             kwargs={'key': key, 'prove_with': key, 'timeout': 5}, daemon=True)
    first.start()
    deadline = time.monotonic() + 10
    while not hub._waiting.get(conversation_id):
        assert time.monotonic() < deadline, 'the first executor never waited'
        time.sleep(0.02)
    seen = handshake(url, conversation_id, key=key, prove_with=key)
    assert 'the waiting room for executors that arrive before their runtime is full' in str(
        seen.get('connect_error')), seen
    first.join(15)
    # Without standing keys (embedded mode) there is no waiting room.
    hub.set_standing_keys([])
    seen = handshake(url, conversation_id, key=key, prove_with=key)
    assert f"no VsCodeRuntime for conversation {conversation_id}" in str(
        seen.get('connect_error')), seen


# ---- the executor token file (credentials.py): the refusals and the creation race ----------


def test_the_token_file_is_refused_as_a_symlink_foreign_loose_or_short(tmp_path, monkeypatch):
    from openhands_vscode_runtime.credentials import CredentialError, load_or_create_executor_token

    state = tmp_path / 'state'
    token, path = load_or_create_executor_token(state / 'executor-token')
    assert len(token) >= 32 and (path.stat().st_mode & 0o777) == 0o600
    assert load_or_create_executor_token(path)[0] == token  # reused
    # A symlink planted at the path (to a file that is itself fine) is not followed.
    elsewhere = tmp_path / 'elsewhere'
    elsewhere.write_text(token + '\n')
    elsewhere.chmod(0o600)
    link = state / 'linked-token'
    link.symlink_to(elsewhere)
    with pytest.raises(OSError):
        load_or_create_executor_token(link)
    # Owned by another user: as seen by a process of another uid.
    monkeypatch.setattr(os, 'getuid', lambda: path.stat().st_uid + 1)
    with pytest.raises(CredentialError, match='belongs to another user'):
        load_or_create_executor_token(path)
    monkeypatch.undo()
    path.chmod(0o640)
    with pytest.raises(CredentialError, match=r'can be read by other users \(mode 0640\)'):
        load_or_create_executor_token(path)
    path.chmod(0o600)
    path.write_text('short\n')
    with pytest.raises(CredentialError, match='empty or too short'):
        load_or_create_executor_token(path)


def _create_token(path: str) -> str:
    from openhands_vscode_runtime.credentials import load_or_create_executor_token

    return load_or_create_executor_token(Path(path))[0]


def test_concurrent_creators_of_the_token_file_agree_on_one_token(tmp_path):
    """The creation race: every process that finds no file creates a token; the hard link lets
    exactly one win and the others read the winner's."""
    import multiprocessing

    path = str(tmp_path / 'race' / 'executor-token')
    with multiprocessing.get_context('spawn').Pool(6) as pool:
        tokens = pool.map(_create_token, [path] * 12)
    assert len(set(tokens)) == 1, tokens
    assert Path(path).read_text().strip() == tokens[0]
    assert [p.name for p in Path(path).parent.iterdir()] == ['executor-token']  # no temp left
