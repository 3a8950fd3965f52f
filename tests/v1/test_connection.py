"""`acquire` when no executor comes: the tools a conversation creates together wait for one
start, not one each, and all of them get its error.

Real parts: the embedded Socket.IO server and the discovery file of attach mode
(`OH_VSCODE_SPAWN_EXECUTOR=0`); nothing connects, which is the condition under test.
"""

from __future__ import annotations

import logging
import threading
from pathlib import Path

import pytest

from openhands_vscode_runtime.v1.connection import ExecutorUnavailable, acquire, close_all


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
