"""A relaying impostor between the real executor and the real embedded hub (issue 32).

The relay (relay_impostor.py) listens where the executor dials and passes the handshake through to
the real hub, so both proofs succeed; protocol 2 then let it send the executor its own actions,
which ran as the user. Protocol 3 seals every later message with the session's keys: a relay may
forward (the real server's actions run), and whatever it injects, changes, replays or holds back
ends the session as `EAUTH`, with a message that says what happened; its `touch MARKER` never
runs. Run against the native headless binary (crates/oh-headless) and the Node CLI (the napi addon
the extension loads, in a Node process).
"""

from __future__ import annotations

import time
import uuid
from pathlib import Path

import pytest
from relay_impostor import RelayImpostor

from openhands_vscode_runtime.embedded import embedded_server
from openhands_vscode_runtime.executor_process import ExecutorProcess

REPO = Path(__file__).resolve().parents[2]
NATIVE = REPO / 'target/debug/openhands-vscode-executor'
NODE_CLI = REPO / 'npm/executor/bin/openhands-vscode-executor.js'
EXECUTORS = {'headless': lambda: [str(NATIVE)], 'addon': lambda: ['node', str(NODE_CLI)]}
# What the executor reports for each way a relay meddles.
REPORTED = {
    'inject': 'an unauthenticated oh_event (no sealed envelope)',
    'inject_sealed': 'bad MAC on oh_event',
    'tamper': 'bad MAC on oh_event',
    'replay': 'replayed oh_event',
    'drop': 'out of order oh_event',
    'inject_reply': 'the server ended this session: an unauthenticated oh_event',
}


def run_action(command: str) -> dict:
    return {'action': 'run', 'timeout': 30.0, 'args': {
        'command': command, 'is_input': False, 'thought': '', 'blocking': False,
        'is_static': False, 'cwd': None, 'hidden': False, 'confirmation_state': 'confirmed',
        'security_risk': -1}}


class Setup:
    def __init__(self, tmp_path: Path, executor: str, mode: str) -> None:
        command = EXECUTORS[executor]()
        assert Path(command[-1]).is_file(), f'{command[-1]} is missing: build it (tests/runtime/run.sh does)'
        self.ws = tmp_path / 'ws'
        self.ws.mkdir()
        self.marker = tmp_path / 'MARKER'
        server = embedded_server()
        key = uuid.uuid4().hex + uuid.uuid4().hex
        self.ch = server.hub.open_channel(f'relay-{uuid.uuid4().hex[:8]}', session_api_key=key,
                                          session_settings={}, reconnect_grace_seconds=1)
        self.relay = RelayImpostor(server.url, mode, str(self.marker)).start()
        self.proc = ExecutorProcess(command, url=self.relay.url,
                                    conversation_id=self.ch.conversation_id, session_api_key=key,
                                    workspace=str(self.ws), no_change_timeout=None)

    def log(self) -> str:
        return Path(self.proc.log_path).read_text(errors='replace')

    def wait_exit(self, timeout: float = 20) -> int:
        deadline = time.monotonic() + timeout
        while (rc := self.proc.proc.poll()) is None:
            assert time.monotonic() < deadline, f'the executor is still running:\n{self.log()}'
            time.sleep(0.05)
        return rc

    def close(self) -> None:
        self.proc.stop()
        self.proc.remove_log()
        self.ch.close()
        self.relay.stop()


@pytest.fixture(params=sorted(EXECUTORS))
def executor(request) -> str:
    return request.param


def test_a_relay_that_only_forwards_changes_nothing(tmp_path, executor):
    s = Setup(tmp_path, executor, 'forward')
    try:
        s.ch.registration_future().result(30)
        for i in range(3):
            _rid, fut = s.ch.submit(run_action(f'echo real-{i} && touch {s.ws}/ran-{i}'))
            obs = fut.result(30)
            assert obs.content.strip() == f'real-{i}', obs
            assert (s.ws / f'ran-{i}').exists()
        assert s.proc.proc.poll() is None, s.log()
        assert ('to executor', 'oh_event') in s.relay.seen  # it really was in the path
    finally:
        s.close()
    assert not s.marker.exists()


@pytest.mark.parametrize('mode', sorted(REPORTED))
def test_what_a_relay_injects_or_changes_never_runs_and_is_eauth(tmp_path, executor, mode):
    s = Setup(tmp_path, executor, mode)
    try:
        s.ch.registration_future().result(30)
        futures = []
        if mode != 'inject' and mode != 'inject_sealed':
            # The real server's actions give the relay something to change, replay or hold back.
            futures.append(s.ch.submit(run_action(f'echo first && touch {s.ws}/first'))[1])
            futures.append(s.ch.submit(run_action(f'echo second && touch {s.ws}/second'))[1])
        rc = s.wait_exit()
        log = s.log()
        assert s.relay.injected, f'the relay did not act ({mode})'
        assert rc == 2, f'exit status {rc}:\n{log}'
        assert 'EAUTH' in log and REPORTED[mode] in log, log
        assert 'was tampered with' in log or mode == 'inject_reply', log
        for fut in futures:
            content = fut.result(30).content
            assert 'the relay says it ran' not in content, content
        if mode == 'drop':
            assert not (s.ws / 'second').exists(), 'the action after the dropped one ran'
    finally:
        s.close()
    time.sleep(0.3)
    assert not s.marker.exists(), f'the relay\'s action ran ({mode})'
