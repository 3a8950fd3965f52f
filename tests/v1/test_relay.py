"""The V1 tools' path with a relaying impostor between the executor and the conversation's hub
(issue 32; the relay: tests/runtime/relay_impostor.py, the V0 cases: tests/runtime/test_relay.py).

A V1 conversation's connection in attach mode (`OH_VSCODE_SPAWN_EXECUTOR=0`) writes its discovery
file; the real headless executor (OH_VSCODE_EXECUTOR, built by run.sh) dials the relay, which
passes the handshake through to the connection's real hub. Forwarding only, the terminal tool's
commands run; an action the relay injects never runs, and the executor ends with `EAUTH`.
"""

from __future__ import annotations

import json
import sys
import threading
import time
from pathlib import Path

import pytest
from openhands.tools.terminal.definition import TerminalAction

from openhands_vscode_runtime.executor_process import ExecutorProcess, find_executor
from openhands_vscode_runtime.v1.connection import acquire, release
from openhands_vscode_runtime.v1.tools import VsCodeTerminalExecutor

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / 'runtime'))
from relay_impostor import RelayImpostor  # noqa: E402


def attach_through_relay(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, mode: str, name: str):
    """The conversation's connection (acquired in a thread: it waits for an executor), the relay,
    and the executor dialling the relay. Returns (holder, relay, executor process, marker)."""
    monkeypatch.setenv('OH_VSCODE_SPAWN_EXECUTOR', '0')
    monkeypatch.setenv('OH_VSCODE_CONNECT_TIMEOUT', '60')
    discovery = tmp_path / 'discovery'
    monkeypatch.setenv('OH_VSCODE_V1_DISCOVERY_DIR', str(discovery))
    ws = tmp_path / 'ws'
    ws.mkdir()
    marker = tmp_path / 'MARKER'
    holder: dict = {}

    def get() -> None:
        try:
            holder['conn'] = acquire(name, str(ws))
        except Exception as e:  # the test reads it
            holder['error'] = e

    thread = threading.Thread(target=get, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not (files := list(discovery.glob('*.json')) if discovery.is_dir() else []):
        assert time.monotonic() < deadline, 'no discovery file'
        time.sleep(0.05)
    info = json.loads(files[0].read_text())
    relay = RelayImpostor(info['url'], mode, str(marker)).start()
    command = find_executor()
    assert command is not None
    proc = ExecutorProcess(command, url=relay.url, conversation_id=info['conversation_id'],
                           session_api_key=info['session_api_key'], workspace=str(ws),
                           no_change_timeout=None)
    holder['thread'], holder['ws'] = thread, ws
    return holder, relay, proc, marker


def test_v1_terminal_through_a_forwarding_relay(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    holder, relay, proc, marker = attach_through_relay(tmp_path, monkeypatch, 'forward', 'relay-fwd')
    try:
        holder['thread'].join(60)
        assert 'conn' in holder, holder
        terminal = VsCodeTerminalExecutor(holder['conn'])
        obs = terminal(TerminalAction(command=f'echo real && touch {holder["ws"]}/ran'))
        assert 'real' in obs.text and not obs.is_error, obs.text
        assert (holder['ws'] / 'ran').exists()
        assert ('to executor', 'oh_event') in relay.seen
    finally:
        if 'conn' in holder:
            release(holder['conn'])
        proc.stop()
        proc.remove_log()
        relay.stop()
    assert not marker.exists()


def test_v1_an_action_a_relay_injects_never_runs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    holder, relay, proc, marker = attach_through_relay(tmp_path, monkeypatch, 'inject', 'relay-inj')
    try:
        deadline = time.monotonic() + 30
        while proc.proc.poll() is None:
            assert time.monotonic() < deadline, Path(proc.log_path).read_text()
            time.sleep(0.05)
        log = Path(proc.log_path).read_text(errors='replace')
        assert relay.injected
        assert proc.proc.returncode == 2, log
        assert 'EAUTH' in log and 'an unauthenticated oh_event' in log, log
    finally:
        holder['thread'].join(5)
        if 'conn' in holder:
            release(holder['conn'])
        proc.stop()
        proc.remove_log()
        relay.stop()
    time.sleep(0.3)
    assert not marker.exists(), "the relay's action ran"
