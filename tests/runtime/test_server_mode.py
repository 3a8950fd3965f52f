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
from openhands_vscode_runtime.hub import _HUBS

KEY = 'server-test-key'


@pytest.fixture(scope='module')
def server() -> Iterator[dict]:
    store = tempfile.mkdtemp(prefix='oh-server-')
    saved = {k: os.environ.get(k) for k in
             ('SERVE_FRONTEND', 'RUNTIME', 'FILE_STORE', 'FILE_STORE_PATH', 'SESSION_API_KEY')}
    os.environ.update(
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
    hubs = [h for h in _HUBS.values() if h.sio is shared.sio]
    assert len(hubs) == 1
    assert hubs[0].loop is server['loop'] is shared.conversation_manager._loop


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
