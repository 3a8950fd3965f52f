"""The V1 tools wait for a reply under V0's rule (`Channel.call`): the action's own time limit (or
`OH_VSCODE_V1_REPLY_TIMEOUT` for an action without one) plus the reply margin, then the action is
cancelled and the call ends with an error the agent can read.

Real parts: the spawned headless executor, the embedded server, V1's `TerminalAction`. The
executor stays connected and does not answer because the command never lets it: a terminal
command without `timeout` whose output never stops changing, which V1 itself waits for without
end (its no-change timeout never fires). Before the rule, such a call waited forever.
"""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Any

import pytest
from openhands.tools.terminal.definition import TerminalAction

import openhands_vscode_runtime.channel as channel_module
from openhands_vscode_runtime.v1.connection import acquire, release
from openhands_vscode_runtime.v1.tools import VsCodeTerminalExecutor

STREAMING = 'while :; do echo tick; sleep 0.2; done'


def test_a_call_the_executor_does_not_answer_ends_after_its_bound(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv('OH_VSCODE_SPAWN_EXECUTOR', '1')
    monkeypatch.setenv('OH_VSCODE_V1_REPLY_TIMEOUT', '2')
    monkeypatch.setattr(channel_module, 'REPLY_MARGIN_SECONDS', 3.0)
    ws = tmp_path / 'ws'
    ws.mkdir()
    conn = acquire('reply-bound', str(ws))
    terminal = VsCodeTerminalExecutor(conn)
    result: dict[str, Any] = {}

    def call() -> None:
        t0 = time.monotonic()
        result['obs'] = terminal(TerminalAction(command=STREAMING))
        result['elapsed'] = time.monotonic() - t0

    worker = threading.Thread(target=call, daemon=True)
    try:
        terminal(TerminalAction(command='true'))  # the shell is up: its start is not timed
        worker.start()
        # Far above the bound (2 s + 3 s): only an unbounded wait gets here.
        worker.join(60)
        assert not worker.is_alive(), 'the call still waits for a reply that cannot come'
        obs = result['obs']
        assert obs.is_error, obs
        assert obs.text.startswith(
            'Runtime timed out: the VS Code executor did not answer action '
        ), obs.text
        assert obs.text.endswith('(v1_terminal) within 5 s.'), obs.text
        assert 5 <= result['elapsed'] < 30, result['elapsed']
        # C-c ends the loop (its late reply is dropped). A command with a timeout of its own is
        # bounded by it, not by the default: it runs past the default's 5 s, ends at its timeout
        # in the executor (V1's hard timeout) and its observation comes back.
        terminal.interrupt()
        t0 = time.monotonic()
        timed = terminal(TerminalAction(command='sleep 30', timeout=8))
        assert not timed.is_error, timed
        assert 'The command timed out after 8' in timed.metadata.suffix, timed.metadata
        assert time.monotonic() - t0 >= 8
    finally:
        # The streaming loop still runs in the executor's shell: C-c, then stop the executor.
        terminal.interrupt()
        release(conn)
