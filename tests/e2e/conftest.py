"""Fixtures of the e2e suite: one real OpenHands server (with VsCodeRuntime) for the session, a
scripted stand-in LLM per test (stored as the server's LLM settings through its settings API, the
way the tab's first-use form does), and a headless executor per conversation."""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from client import EXECUTOR_JS, RestClient
from oh_server import OpenHandsServer, llm_settings

from openhands_vscode_runtime.scripted_llm import ScriptedLLM

# The runtime waits this long for an executor; short enough for the "no executor" test.
CONNECT_TIMEOUT = 20
# The soft (no-change) timeout of commands, in the server's sandbox settings.
NO_CHANGE_TIMEOUT = 5
KEY = 'e2e-session-key'


@pytest.fixture(scope='session')
def server() -> Iterator[OpenHandsServer]:
    if not EXECUTOR_JS.is_file():
        pytest.fail(f'{EXECUTOR_JS} is missing: build the executor first (make addon)')
    base = Path(tempfile.mkdtemp(prefix='oh-e2e-'))
    workspace = base / 'server-workspace'
    workspace.mkdir()
    with OpenHandsServer(
        workspace,
        no_settings=True,
        session_api_key=KEY,
        connect_timeout=CONNECT_TIMEOUT,
        no_change_timeout=NO_CHANGE_TIMEOUT,
    ) as srv:
        yield srv
    if os.environ.get('OH_E2E_KEEP_LOGS'):
        print(f'server log: {srv.log_path}')
    else:
        os.unlink(srv.log_path)
    shutil.rmtree(base, ignore_errors=True)


@pytest.fixture
def rest(server: OpenHandsServer) -> RestClient:
    return RestClient(server.url, server.session_api_key)


@pytest.fixture
def scripted(rest: RestClient):
    """scripted(steps) -> a running ScriptedLLM, stored as the server's LLM settings."""
    started: list[ScriptedLLM] = []

    def make(steps: list[dict]) -> ScriptedLLM:
        llm = ScriptedLLM(steps)
        llm.start()
        started.append(llm)
        rest.store_settings(llm_settings(llm.base_url))
        return llm

    yield make
    for llm in started:
        llm.stop()


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    ws = tmp_path / 'workspace'
    ws.mkdir()
    return ws.resolve()
