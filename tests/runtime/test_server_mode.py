"""Server mode: the runtime inside the real OpenHands server app (openhands.server.listen:app under
uvicorn, lifespan on). The runtime registers `/oh-executor` on the server's own `sio` and loop; a
conversation's actions go through the event stream, the runtime, the server's Socket.IO and the
executor, and their observations come back into the stream."""

from __future__ import annotations

import asyncio
import os
import socket
import tempfile
import threading
import time
from collections.abc import Iterator

import pytest
from conftest import new_sid

from openhands.events import EventSource, EventStream
from openhands.events.action import CmdRunAction, FileReadAction, FileWriteAction
from openhands.events.observation import (
    CmdOutputObservation,
    FileReadObservation,
    FileWriteObservation,
)
from openhands.llm.llm_registry import LLMRegistry

from openhands_vscode_runtime import VsCodeRuntime
from openhands_vscode_runtime.executor_process import ExecutorProcess, find_executor
from openhands_vscode_runtime.hub import ExecutorNamespace, hub_for

KEY = 'server-test-key'


@pytest.fixture(scope='module')
def server() -> Iterator[dict]:
    store = tempfile.mkdtemp(prefix='oh-server-')
    saved = {k: os.environ.get(k) for k in
             ('SERVE_FRONTEND', 'RUNTIME', 'FILE_STORE', 'FILE_STORE_PATH', 'SESSION_API_KEY',
              'OH_VSCODE_EXECUTOR_TOKEN_FILE')}
    os.environ.update(
        # never the user's own token file
        OH_VSCODE_EXECUTOR_TOKEN_FILE=os.path.join(store, 'state', 'executor-token'),
        SERVE_FRONTEND='false',
        RUNTIME='openhands_vscode_runtime.VsCodeRuntime',
        FILE_STORE='local',
        FILE_STORE_PATH=store,
        SESSION_API_KEY=KEY,
        OPENHANDS_SUPPRESS_BANNER='1',
    )
    import uvicorn

    import openhands.server.shared as shared
    from openhands.server.listen import app

    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.bind(('127.0.0.1', 0))
    sock.listen(64)
    port = sock.getsockname()[1]
    srv = uvicorn.Server(
        uvicorn.Config(app, log_level='warning', lifespan='on', ws='websockets-sansio')
    )
    loop = asyncio.new_event_loop()

    def serve():
        asyncio.set_event_loop(loop)
        loop.run_until_complete(srv.serve(sockets=[sock]))

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    for _ in range(600):
        if srv.started:
            break
        time.sleep(0.05)
    assert srv.started
    try:
        yield {'url': f'http://127.0.0.1:{port}', 'loop': loop, 'shared': shared}
    finally:
        srv.should_exit = True
        thread.join(10)
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def test_setup_registers_on_the_servers_sio_and_loop(server):
    shared = server['shared']
    # The server object holds the hub, as its /oh-executor namespace handler.
    handler = shared.sio.namespace_handlers['/oh-executor']
    assert isinstance(handler, ExecutorNamespace)
    assert hub_for(shared.sio) is handler.hub
    assert handler.hub.loop is server['loop'] is shared.conversation_manager._loop


def test_conversation_actions_end_to_end(server, monkeypatch, tmp_path):
    monkeypatch.setenv('OH_VSCODE_MODE', 'server')
    monkeypatch.setenv('OH_VSCODE_SPAWN_EXECUTOR', '1')
    monkeypatch.setenv('OH_VSCODE_SERVER_URL', server['url'])
    shared = server['shared']
    config = shared.config.model_copy(deep=True)
    workspace = tmp_path / 'ws'
    workspace.mkdir()
    config.workspace_base = str(workspace)
    sid = new_sid()
    stream = EventStream(sid, shared.file_store)
    rt = VsCodeRuntime(
        config=config,
        event_stream=stream,
        llm_registry=LLMRegistry(config),
        sid=sid,
        headless_mode=False,
    )
    try:
        # the agent session awaits connect() on the server loop
        asyncio.run_coroutine_threadsafe(rt.connect(), server['loop']).result(60)
        assert rt.mode == 'server'
        assert rt.session_api_key == KEY
        assert rt.config.workspace_mount_path_in_sandbox == str(workspace.resolve())

        actions = [
            CmdRunAction('cd sub 2>/dev/null || mkdir sub && cd sub && echo in-$(basename $PWD)'),
            FileWriteAction(path='note.txt', content='from the agent'),
            FileReadAction(path='note.txt'),
            CmdRunAction('pwd'),
        ]
        observations = []
        for action in actions:
            stream.add_event(action, EventSource.AGENT)
            deadline = time.monotonic() + 30
            while time.monotonic() < deadline:
                found = [e for e in stream.search_events() if e.cause == action.id]
                if found:
                    break
                time.sleep(0.02)
            assert len(found) == 1, f'no observation for {action}'
            assert found[0].source == EventSource.AGENT
            observations.append(found[0])
        cd, write, read, pwd = observations
        assert isinstance(cd, CmdOutputObservation) and cd.content == 'in-sub'
        assert isinstance(write, FileWriteObservation)
        assert isinstance(read, FileReadObservation)
        assert read.content == 'from the agent\n'
        assert (workspace / 'sub' / 'note.txt').read_text() == 'from the agent\n'
        assert pwd.content == str(workspace.resolve() / 'sub')
    finally:
        rt.close()


def test_server_mode_waits_for_vscode_and_fails_clearly(server, monkeypatch):
    monkeypatch.setenv('OH_VSCODE_MODE', 'server')
    monkeypatch.setenv('OH_VSCODE_CONNECT_TIMEOUT', '0.5')
    shared = server['shared']
    sid = new_sid()
    rt = VsCodeRuntime(
        config=shared.config.model_copy(deep=True),
        event_stream=EventStream(sid, shared.file_store),
        llm_registry=LLMRegistry(shared.config),
        sid=sid,
    )
    from openhands.core.exceptions import AgentRuntimeUnavailableError

    with pytest.raises(AgentRuntimeUnavailableError, match='no executor registered within 0.5 s'):
        asyncio.run_coroutine_threadsafe(rt.connect(), server['loop']).result(30)
    rt.close()


# ---- authentication, always (issue 10, item 1): server mode ------------------------------------

def _server_runtime(server, sid=None, workspace=None):
    shared = server['shared']
    config = shared.config.model_copy(deep=True)
    if workspace is not None:
        config.workspace_base = str(workspace)
    sid = sid or new_sid()
    return VsCodeRuntime(
        config=config,
        event_stream=EventStream(sid, shared.file_store),
        llm_registry=LLMRegistry(config),
        sid=sid,
    )


def _connect(server, rt, timeout=60):
    asyncio.run_coroutine_threadsafe(rt.connect(), server['loop']).result(timeout)


@pytest.fixture
def token_file(monkeypatch, tmp_path):
    path = tmp_path / 'state' / 'openhands-vscode-runtime' / 'executor-token'
    monkeypatch.setenv('OH_VSCODE_EXECUTOR_TOKEN_FILE', str(path))
    return path


def connect_refusal_without_a_key(url: str, conversation_id: str) -> dict:
    """The connect error a client without a key (no nonce) gets: `{message, data: {code, …}}`."""
    import socketio

    from openhands_vscode_runtime import protocol as P

    async def go() -> dict:
        client = socketio.AsyncClient(reconnection=False)
        seen: dict = {}
        client.on('connect_error', seen.update, namespace=P.NAMESPACE)
        with pytest.raises(socketio.exceptions.ConnectionError):
            await client.connect(f'{url}?conversation_id={conversation_id}',
                                 namespaces=[P.NAMESPACE], transports=['websocket'], wait_timeout=5,
                                 auth={'protocol': P.PROTOCOL_VERSION, 'executor_id': 'x',
                                       'workspace': '/tmp', 'client': 't/0'})
        await client.disconnect()
        return seen

    return asyncio.run(go())


def test_without_session_api_key_executors_need_the_token_file(server, monkeypatch, tmp_path,
                                                               token_file):
    from test_auth import assert_marker_only_in, browser_register, intruder

    monkeypatch.delenv('SESSION_API_KEY')
    monkeypatch.setenv('OH_VSCODE_MODE', 'server')
    monkeypatch.setenv('OH_VSCODE_SPAWN_EXECUTOR', '1')
    monkeypatch.setenv('OH_VSCODE_SERVER_URL', server['url'])
    legit = tmp_path / 'ws'
    legit.mkdir()
    rt = _server_runtime(server, workspace=legit)
    try:
        _connect(server, rt)
        token = token_file.read_text().strip()
        assert len(token) >= 32 and rt.session_api_key == token
        assert token_file.stat().st_mode & 0o777 == 0o600
        assert token_file.parent.stat().st_mode & 0o777 == 0o700
        ch = rt._channel
        assert ch.accepted_keys == (token,)
        intruders = tmp_path / 'intruders'
        rc, out = intruder(server['url'], rt.sid, None, intruders / 'nokey')
        assert rc == 2 and 'oh-executor: missing session_api_key' in out, out
        # The refusal names the token file; the executor reports its code in its own words (before
        # the server's proof anyone on the port could have written the server's), which point to
        # the docs that say where the token is.
        assert 'docs/security.md' in out, out
        refusal = connect_refusal_without_a_key(server['url'], rt.sid)
        assert refusal['data']['code'] == 'no_key', refusal
        assert str(token_file) in refusal['data']['message'], refusal
        rc, out = intruder(server['url'], rt.sid, 'guess', intruders / 'wrong')
        assert rc == 2 and 'could not prove it holds the session key' in out, out
        answer = browser_register(server['url'], rt.sid, token, origin='http://evil.example')
        assert 'cross-origin connection refused' in answer, answer
        assert ch.registrations == 1
        assert_marker_only_in(rt, legit.resolve(), [intruders / 'nokey', intruders / 'wrong'])
    finally:
        rt.close()
    # created once: a second runtime (and a restarted server) keeps the same token
    rt2 = _server_runtime(server, workspace=legit)
    try:
        _connect(server, rt2)
        assert rt2.session_api_key == token == token_file.read_text().strip()
    finally:
        rt2.close()


def test_with_session_api_key_both_keys_are_accepted(server, monkeypatch, tmp_path, token_file):
    monkeypatch.setenv('OH_VSCODE_MODE', 'server')
    monkeypatch.setenv('OH_VSCODE_SPAWN_EXECUTOR', '1')
    monkeypatch.setenv('OH_VSCODE_SERVER_URL', server['url'])
    rt = _server_runtime(server, workspace=tmp_path)
    other = None
    try:
        _connect(server, rt)
        assert rt.session_api_key == KEY
        token = token_file.read_text().strip()
        assert set(rt._channel.accepted_keys) == {KEY, token}
        # VS Code on this machine, which found the token file, registers too (and replaces).
        ws2 = tmp_path / 'second'
        ws2.mkdir()
        other = ExecutorProcess(find_executor(), url=server['url'], conversation_id=rt.sid,
                                session_api_key=token, workspace=str(ws2), no_change_timeout=None)
        deadline = time.monotonic() + 30
        while rt._channel.registrations < 2:
            assert time.monotonic() < deadline, other.log_tail()
            time.sleep(0.02)
        obs = rt.run_action(CmdRunAction('pwd'))
        assert obs.content == str(ws2.resolve())
    finally:
        rt.close()
        if other is not None:
            other.stop()


def test_token_file_readable_by_others_is_refused(server, monkeypatch, token_file):
    from openhands.core.exceptions import AgentRuntimeUnavailableError

    monkeypatch.delenv('SESSION_API_KEY')
    monkeypatch.setenv('OH_VSCODE_MODE', 'server')
    token_file.parent.mkdir(parents=True)
    token_file.write_text('x' * 43 + '\n')
    token_file.chmod(0o644)
    rt = _server_runtime(server)
    with pytest.raises(AgentRuntimeUnavailableError, match='can be read by other users'):
        _connect(server, rt)
    rt.close()


def test_unauthenticated_server_reachable_from_the_network_refuses(server, monkeypatch,
                                                                   token_file):
    from openhands.core.exceptions import AgentRuntimeUnavailableError

    monkeypatch.delenv('SESSION_API_KEY')
    monkeypatch.setenv('OH_VSCODE_MODE', 'server')
    monkeypatch.setenv('OH_VSCODE_CONNECT_TIMEOUT', '0.5')
    # This process now also listens on every interface, as `python -m openhands.server` does.
    exposed = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    exposed.bind(('0.0.0.0', 0))
    exposed.listen(1)
    try:
        rt = _server_runtime(server)
        with pytest.raises(AgentRuntimeUnavailableError) as info:
            _connect(server, rt)
        rt.close()
        message = str(info.value)
        assert 'refuses to start' in message
        assert f'0.0.0.0:{exposed.getsockname()[1]}' in message
        assert 'SESSION_API_KEY' in message
        assert not token_file.exists()
        # The explicit opt-in starts (it then waits for an executor, none comes here).
        monkeypatch.setenv('OH_VSCODE_ALLOW_UNAUTHENTICATED_NETWORK', '1')
        rt = _server_runtime(server)
        with pytest.raises(AgentRuntimeUnavailableError, match='no executor registered'):
            _connect(server, rt)
        rt.close()
    finally:
        exposed.close()


# ---- exactly once (issue 10, item 2): the backend restarts mid-command -------------------------

def test_backend_restart_mid_command_runs_nothing_old_in_the_new_session(server, monkeypatch,
                                                                         tmp_path):
    """Runtime A (runtime_session S1) delegates a long command and queues another; the backend
    restarts (A closes, B opens for the same conversation: S2, its ids start at 1 again); the
    executor, still running A's command, re-registers with B. Nothing queued by A runs after B
    registered, A's reply never reaches B, and B's own actions run once."""
    import concurrent.futures

    monkeypatch.setenv('OH_VSCODE_MODE', 'server')
    monkeypatch.setenv('OH_VSCODE_SPAWN_EXECUTOR', '0')
    monkeypatch.setenv('OH_VSCODE_CONNECT_TIMEOUT', '30')
    ws = tmp_path / 'ws'
    ws.mkdir()
    sid = new_sid()
    a = _server_runtime(server, sid=sid, workspace=ws)
    connecting = asyncio.run_coroutine_threadsafe(a.connect(), server['loop'])
    executor = ExecutorProcess(find_executor(), url=server['url'], conversation_id=sid,
                               session_api_key=KEY, workspace=str(ws), no_change_timeout=None)
    b = None
    try:
        connecting.result(30)
        session_a = a._channel.runtime_session
        with concurrent.futures.ThreadPoolExecutor(2) as pool:
            running = pool.submit(a.run_action, CmdRunAction('touch started; sleep 3; echo a >> f'))
            deadline = time.monotonic() + 20
            while not (ws / 'started').exists():
                assert time.monotonic() < deadline
                time.sleep(0.01)
            admitted = executor.log_tail(100000).count('action admitted')
            queued = pool.submit(a.run_action, CmdRunAction('echo queued-by-A >> g'))
            # the executor has admitted it (one more "action admitted" line: the log names the
            # kind and id of an action, never its command text, which may hold a secret)
            while executor.log_tail(100000).count('action admitted') <= admitted:
                assert time.monotonic() < deadline, executor.log_tail()
                time.sleep(0.01)
            a.close()  # the backend goes away
            assert running.result(5).content.startswith('Runtime closed')
            assert queued.result(5).content.startswith('Runtime closed')
        b = _server_runtime(server, sid=sid, workspace=ws)
        _connect(server, b)
        assert b._channel.runtime_session != session_a
        # precondition: A's command was still running when B registered
        assert not (ws / 'f').exists(), 'A\'s command ended before B registered: inconclusive'
        obs = b.run_action(CmdRunAction('echo from-B; cat g 2>/dev/null; echo end'))
        assert isinstance(obs, CmdOutputObservation), obs
        assert obs.content == 'from-B\nend', obs.content  # B's own reply, and g never written
        assert not (ws / 'g').exists()
        assert (ws / 'f').read_text() == 'a\n'  # started under A: ran to its end, once
        assert b._channel.duplicate_replies == 0  # A's reply never reached B
        assert b.run_action(CmdRunAction('echo again')).content == 'again'
    finally:
        if b is not None:
            b.close()
        a.close()
        executor.stop()
