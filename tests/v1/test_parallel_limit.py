"""The limit on conversations holding an executor at once (`OH_VSCODE_V1_MAX_CONVERSATIONS`, which
the VS Code window gives the agent-server it runs from `openhands.v1.maxParallelConversations`).

Real parts: the embedded Socket.IO server, the discovery files of attach mode
(`OH_VSCODE_SPAWN_EXECUTOR=0`) and our V1 tools' executors; no executor connects, which is the
condition under test (a conversation holding its slot while it waits for one).
"""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest

from openhands_vscode_runtime.v1.connection import (
    ExecutorLimitReached,
    ExecutorUnavailable,
    acquire,
    cancel_start,
    close_all,
)


def test_a_conversation_over_the_limit_gets_an_error_observation_until_a_slot_frees(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from openhands.tools.terminal.definition import TerminalAction

    from openhands_vscode_runtime.v1.tools import VsCodeTerminalExecutor, _Pending

    monkeypatch.setenv('OH_VSCODE_SPAWN_EXECUTOR', '0')
    monkeypatch.setenv('OH_VSCODE_CONNECT_TIMEOUT', '2')
    monkeypatch.setenv('OH_VSCODE_V1_DISCOVERY_DIR', str(tmp_path / 'discovery'))
    monkeypatch.setenv('OH_VSCODE_V1_MAX_CONVERSATIONS', '1')
    ws = tmp_path / 'ws'
    ws.mkdir()
    first_outcome: list[str] = []

    def first() -> None:
        try:
            acquire('conversation-a', str(ws))
            first_outcome.append('connected')
        except ExecutorUnavailable as e:
            first_outcome.append(str(e))

    waiting = threading.Thread(target=first)
    try:
        waiting.start()
        deadline = time.monotonic() + 10
        while not list((tmp_path / 'discovery').glob('v1-*.json')) and time.monotonic() < deadline:
            time.sleep(0.02)
        # Conversation A holds the one slot (waiting for its executor): B is refused at once.
        t0 = time.monotonic()
        with pytest.raises(ExecutorLimitReached) as refused:
            acquire('conversation-b', str(ws))
        assert time.monotonic() - t0 < 1
        assert 'maxParallelConversations = 1' in str(refused.value)
        assert len(list((tmp_path / 'discovery').glob('v1-*.json'))) == 1, 'B must not wait for an executor'

        # B's terminal, created over the limit: its action is answered with the reason.
        terminal = VsCodeTerminalExecutor(None, pending=_Pending('conversation-b', str(ws), None))
        obs = terminal(TerminalAction(command='echo hi'))
        assert obs.is_error and 'already runs 1 conversation(s) at once' in obs.text, obs.text

        # A slot frees (A closed): B's next action takes an executor (here none comes: it waits
        # its connect timeout and says so, no longer the limit).
        cancel_start('conversation-a', 'closed by the test')
        waiting.join(10)
        obs = terminal(TerminalAction(command='echo hi'))
        assert obs.is_error and 'no executor registered within 2 s' in obs.text, obs.text
    finally:
        close_all()
        waiting.join(10)


def test_no_limit_without_the_setting(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from openhands_vscode_runtime.v1.connection import max_conversations

    for value, expected in (('', None), ('0', None), ('x', None), ('3', 3)):
        monkeypatch.setenv('OH_VSCODE_V1_MAX_CONVERSATIONS', value)
        assert max_conversations() == expected
    monkeypatch.delenv('OH_VSCODE_V1_MAX_CONVERSATIONS')
    assert max_conversations() is None
