"""Fault tests: VsCodeRuntime (embedded mode) and the REAL headless executor, connected through a
loopback proxy that can cut or stall the connection (proxy.py).

Run in their own pytest process (tests/faults/run.sh): the embedded Socket.IO server is
process-wide and these tests give it a short Engine.IO heartbeat, so that a silent stall is
noticed within PING_INTERVAL + PING_TIMEOUT seconds.
"""

from __future__ import annotations

import os
import random
import shutil
import tempfile
from collections.abc import Iterator

import pytest

PING_INTERVAL = 1.0
PING_TIMEOUT = 1.0
os.environ['OH_VSCODE_MODE'] = 'embedded'
os.environ['OH_VSCODE_PING_INTERVAL'] = str(PING_INTERVAL)
os.environ['OH_VSCODE_PING_TIMEOUT'] = str(PING_TIMEOUT)
os.environ.setdefault('LANG', 'C.UTF-8')
os.environ.pop('OH_VSCODE_SERVER_URL', None)

from openhands.core.config import OpenHandsConfig  # noqa: E402
from openhands.events import EventStream  # noqa: E402
from openhands.llm.llm_registry import LLMRegistry  # noqa: E402
from openhands.storage import get_file_store  # noqa: E402
from openhands.utils.async_utils import call_async_from_sync  # noqa: E402

from openhands_vscode_runtime import VsCodeRuntime  # noqa: E402
from openhands_vscode_runtime.embedded import embedded_server  # noqa: E402
from proxy import FaultProxy  # noqa: E402


@pytest.fixture
def temp_dir(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    path = tempfile.mkdtemp(prefix='faults_', dir=str(tmp_path_factory.getbasetemp()))
    yield path
    shutil.rmtree(path, ignore_errors=True)


@pytest.fixture
def proxy(monkeypatch) -> Iterator[FaultProxy]:
    server = embedded_server(ping_interval=PING_INTERVAL, ping_timeout=PING_TIMEOUT)
    assert server.ping_interval == PING_INTERVAL and server.ping_timeout == PING_TIMEOUT
    p = FaultProxy(server.host, server.port)
    # The spawned executor connects to the proxy instead of the server.
    monkeypatch.setenv('OH_VSCODE_SERVER_URL', p.url)
    yield p
    p.close()


def load_runtime(temp_dir: str, sid: str | None = None) -> VsCodeRuntime:
    config = OpenHandsConfig()
    config.run_as_openhands = False
    workspace = os.path.join(temp_dir, 'workspace')
    os.makedirs(workspace, exist_ok=True)
    config.workspace_base = workspace
    config.file_store = 'local'
    config.file_store_path = os.path.join(temp_dir, 'file_store')
    sid = sid or f'faults_{random.randint(100000, 999999)}'
    stream = EventStream(sid, get_file_store(config.file_store, config.file_store_path))
    runtime = VsCodeRuntime(
        config=config,
        event_stream=stream,
        llm_registry=LLMRegistry(config=OpenHandsConfig()),
        sid=sid,
    )
    call_async_from_sync(runtime.connect)
    return runtime


def pytest_terminal_summary(terminalreporter):
    import test_exactly_once

    rows = test_exactly_once.FIGURES
    if not rows:
        return
    tr = terminalreporter
    tr.write_line('')
    tr.write_line('| fault | actions executed twice | observations lost | duplicate observations '
                  'in the stream | duplicate replies ignored by the hub | time |')
    tr.write_line('|---|---|---|---|---|---|')
    for r in rows:
        tr.write_line(
            f"| {r['fault']} | {r['executed_twice']} | {r['observations_lost']} | "
            f"{r['duplicates_to_stream']} | {r['duplicate_replies_ignored']} | {r['time']} |"
        )
