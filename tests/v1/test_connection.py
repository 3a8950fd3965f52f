"""`acquire` when no executor comes: the tools a conversation creates together wait for one
start, not one each, and all of them get its error.

Real parts: the embedded Socket.IO server and the discovery file of attach mode
(`OH_VSCODE_SPAWN_EXECUTOR=0`); nothing connects, which is the condition under test.
"""

from __future__ import annotations

import json
import logging
import threading
import time
from pathlib import Path

import pytest

from openhands_vscode_runtime.v1.connection import (
    ExecutorConnection,
    ExecutorUnavailable,
    acquire,
    close_all,
)


def test_tools_created_together_share_one_start_and_its_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setenv('OH_VSCODE_SPAWN_EXECUTOR', '0')
    monkeypatch.setenv('OH_VSCODE_CONNECT_TIMEOUT', '3')
    discovery = tmp_path / 'discovery'
    monkeypatch.setenv('OH_VSCODE_V1_DISCOVERY_DIR', str(discovery))
    ws = tmp_path / 'ws'
    ws.mkdir()
    caplog.set_level(logging.INFO, logger='openhands_vscode_runtime.v1')
    outcomes: list[str] = []
    both_ready = threading.Barrier(2)

    def create_tool() -> None:
        # As V1 resolves a conversation's `terminal` and `file_editor`: in parallel threads.
        both_ready.wait()
        try:
            acquire('conversation-1', str(ws))
            outcomes.append('connected')
        except ExecutorUnavailable as e:
            outcomes.append(str(e))

    threads = [threading.Thread(target=create_tool) for _ in range(2)]
    try:
        for t in threads:
            t.start()
        for t in threads:
            t.join(60)
        assert not any(t.is_alive() for t in threads), 'a tool creation still waits'
        assert len(outcomes) == 2, outcomes
        for outcome in outcomes:
            assert 'no executor registered within 3 s' in outcome, outcome
        starts = [r for r in caplog.records if 'waiting for an executor' in r.getMessage()]
        assert len(starts) == 1, [r.getMessage() for r in starts]
        # The failed start took its discovery file with it.
        assert list(discovery.iterdir()) == []
    finally:
        close_all()


def test_spawned_executor_that_crashes_fails_the_start_at_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The exit policy V0 and V1 share (connection.ExecutorLink): a spawned executor that exits
    with a non-zero code before it registers fails the wait at once, not at the connect timeout."""
    monkeypatch.setenv('OH_VSCODE_SPAWN_EXECUTOR', '1')
    monkeypatch.setenv('OH_VSCODE_CONNECT_TIMEOUT', '120')
    # A command line: the executor's own arguments follow `sh -c 'exit 3'` as $0, $1, ...
    monkeypatch.setenv('OH_VSCODE_EXECUTOR', "sh -c 'exit 3'")
    ws = tmp_path / 'ws'
    ws.mkdir()
    # The spawn imports the SDK (its sanitised terminal environment); not what is timed here.
    import openhands.sdk.utils  # noqa: F401
    t0 = time.monotonic()
    with pytest.raises(ExecutorUnavailable) as failure:
        acquire('conversation-crash', str(ws))
    elapsed = time.monotonic() - t0
    assert 'the headless executor process exited with code 3' in str(failure.value)
    assert elapsed < 15, f'the start failed after {elapsed:.1f} s'


def test_attach_mode_reads_the_shared_settings(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The V1 tools read V0's settings (settings.RuntimeSettings): OH_VSCODE_SERVER_URL is where an
    executor must connect, as for VsCodeRuntime, and `off` means no spawn there too. A discovery
    file left for the same conversation is replaced."""
    monkeypatch.setenv('OH_VSCODE_SPAWN_EXECUTOR', 'off')
    monkeypatch.setenv('OH_VSCODE_CONNECT_TIMEOUT', '1')
    monkeypatch.setenv('OH_VSCODE_SERVER_URL', 'http://127.0.0.1:9/')
    discovery = tmp_path / 'discovery'
    monkeypatch.setenv('OH_VSCODE_V1_DISCOVERY_DIR', str(discovery))
    ws = tmp_path / 'ws'
    ws.mkdir()
    # Left by a killed process that served this conversation before (it is resumed now).
    discovery.mkdir(mode=0o700)
    stale = discovery / 'v1-conversation-settings.json'
    stale.write_text('{"url": "http://stale"}')
    seen: list[dict] = []
    conn = ExecutorConnection('conversation-settings', str(ws))
    try:
        assert conn.process is None, 'OH_VSCODE_SPAWN_EXECUTOR=off spawned an executor'
        assert Path(conn.discovery_file) == stale
        assert stale.stat().st_mode & 0o777 == 0o600
        seen.append(json.loads(stale.read_text()))
    finally:
        conn.close()
    assert seen[0]['url'] == 'http://127.0.0.1:9'
    assert seen[0]['conversation_id'] == 'v1-conversation-settings'
