"""Exactly once through real faults (issue 10, item 2): the real runtime and hub (embedded mode),
the REAL headless executor, and a loopback proxy between them that cuts or stalls the connection
in the middle of `sleep 2; echo x >> f`.

Each test records its counts in FIGURES; conftest prints them as the table of
docs/reliability.md at the end of the run.
"""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path

from conftest import PING_INTERVAL, PING_TIMEOUT, load_runtime

from openhands.events import EventSource
from openhands.events.action import CmdRunAction
from openhands.events.observation import CmdOutputObservation, ErrorObservation, Observation

from openhands_vscode_runtime.executor_process import ExecutorProcess, find_executor

FIGURES: list[dict] = []
COMMAND = 'touch started; sleep 2; echo x >> f'


def wait_until(pred, timeout: float, what: str) -> float:
    """Poll `pred` until true; returns the time it took. Fails after `timeout`."""
    start = time.monotonic()
    while not pred():
        if time.monotonic() - start > timeout:
            raise AssertionError(f'timed out after {timeout} s waiting for {what}')
        time.sleep(0.01)
    return time.monotonic() - start


def observations_of(rt, action) -> list[Observation]:
    return [
        e for e in rt.event_stream.search_events()
        if isinstance(e, Observation) and e.cause == action.id
    ]


def lines(path: Path) -> int:
    return len(path.read_text().splitlines()) if path.exists() else 0


def start_in_stream(rt) -> tuple[CmdRunAction, Path]:
    """Hand COMMAND to the runtime through its event stream (as the agent does) and wait until
    the executor's shell has started it."""
    ws = Path(rt.config.workspace_mount_path_in_sandbox)
    action = CmdRunAction(COMMAND)
    action.set_hard_timeout(60)
    rt.event_stream.add_event(action, EventSource.AGENT)
    wait_until(lambda: (ws / 'started').exists(), 30, 'the command to start')
    return action, ws


def settle(rt, ws: Path) -> str:
    """One more command: it queues behind anything still running or re-sent in the executor's
    single shell, so once it answers, every earlier effect has happened."""
    obs = rt.run_action(CmdRunAction('cat f 2>/dev/null | wc -l'))
    assert isinstance(obs, CmdOutputObservation), obs
    return obs.content.strip()


def test_cut_mid_command_runs_once(temp_dir, proxy, monkeypatch):
    monkeypatch.setenv('OH_VSCODE_RECONNECT_GRACE_SECONDS', '30')
    rt = load_runtime(temp_dir)
    try:
        ch = rt._channel
        action, ws = start_in_stream(rt)
        t0 = time.monotonic()
        assert proxy.cut() == 1
        wait_until(lambda: observations_of(rt, action), 30, 'the observation')
        t_obs = time.monotonic() - t0
        assert ch.registrations == 2, 'the executor did not reconnect through the proxy'
        assert settle(rt, ws) == '1'
        obs = observations_of(rt, action)
        assert len(obs) == 1, obs
        assert isinstance(obs[0], CmdOutputObservation) and obs[0].exit_code == 0, obs[0]
        assert (ws / 'f').read_text() == 'x\n'
        FIGURES.append({
            'fault': 'connection cut (FIN both sides) during `sleep 2; echo x >> f`',
            'executed_twice': lines(ws / 'f') - 1,
            'observations_lost': 0 if len(obs) == 1 else 1,
            'duplicates_to_stream': len(obs) - 1,
            'duplicate_replies_ignored': ch.duplicate_replies,
            'time': f'observation {t_obs:.2f} s after the cut',
        })
    finally:
        rt.close()


def test_silent_stall_is_detected_then_runs_once(temp_dir, proxy, monkeypatch):
    monkeypatch.setenv('OH_VSCODE_RECONNECT_GRACE_SECONDS', '30')
    rt = load_runtime(temp_dir)
    bound = PING_INTERVAL + PING_TIMEOUT
    try:
        ch = rt._channel
        action, ws = start_in_stream(rt)
        t0 = time.monotonic()
        assert proxy.stall() == 1
        # The server side: no pong within the heartbeat -> the executor's socket is dropped.
        t_server = wait_until(lambda: not ch.executor_connected, bound + 5, 'the server to notice')
        # The executor side: no ping within the heartbeat -> a new connection through the proxy.
        wait_until(lambda: ch.registrations == 2, bound + 10, 'the executor to return')
        t_client = time.monotonic() - t0
        wait_until(lambda: observations_of(rt, action), 30, 'the observation')
        t_obs = time.monotonic() - t0
        assert settle(rt, ws) == '1'
        obs = observations_of(rt, action)
        assert len(obs) == 1, obs
        assert isinstance(obs[0], CmdOutputObservation) and obs[0].exit_code == 0, obs[0]
        assert (ws / 'f').read_text() == 'x\n'
        # The stated bound (docs/reliability.md): ping_interval + ping_timeout, plus the
        # executor's first reconnect backoff (0.5 s) and scheduling slack.
        assert t_server <= bound + 1.5, t_server
        assert t_client <= bound + 0.5 + 1.5, t_client
        FIGURES.append({
            'fault': f'silent stall (no FIN/RST) during the command; heartbeat {PING_INTERVAL:g}+'
                     f'{PING_TIMEOUT:g} s',
            'executed_twice': lines(ws / 'f') - 1,
            'observations_lost': 0 if len(obs) == 1 else 1,
            'duplicates_to_stream': len(obs) - 1,
            'duplicate_replies_ignored': ch.duplicate_replies,
            'time': f'server drops it {t_server:.2f} s, executor back {t_client:.2f} s, '
                    f'observation {t_obs:.2f} s after the stall',
        })
    finally:
        rt.close()


def test_own_executor_killed_fails_at_once_and_next_executor_serves(temp_dir, proxy, monkeypatch):
    grace = 10.0
    monkeypatch.setenv('OH_VSCODE_RECONNECT_GRACE_SECONDS', str(grace))
    rt = load_runtime(temp_dir)
    second = None
    try:
        action, ws = start_in_stream(rt)
        t0 = time.monotonic()
        os.kill(rt.executor_process.pid, signal.SIGKILL)
        wait_until(lambda: observations_of(rt, action), grace + 5, 'the observation in the stream')
        t_err = time.monotonic() - t0
        obs = observations_of(rt, action)[0]
        assert isinstance(obs, ErrorObservation), obs
        assert obs.content.startswith('Runtime disconnected:'), obs.content
        assert 'exited with code' in obs.content
        assert t_err < grace
        second = ExecutorProcess(
            find_executor(), url=proxy.url, conversation_id=rt.sid,
            session_api_key=rt.session_api_key, workspace=str(ws), no_change_timeout=None,
        )
        wait_until(lambda: rt._channel.registrations == 2, 30, 'the next executor to register')
        # The killed action is not re-sent to the next executor: the queue shows no second run.
        assert settle(rt, ws) == '0'
        # Counted once everything settled: exactly one observation of the killed action reached
        # the stream (the error), none lost, none late from the next executor.
        in_stream = observations_of(rt, action)
        assert len(in_stream) == 1, in_stream
        FIGURES.append({
            'fault': 'the runtime\'s own executor process killed (SIGKILL) mid-command',
            'executed_twice': 0 if lines(ws / 'f') <= 1 else 1,
            'observations_lost': 0 if in_stream else 1,
            'duplicates_to_stream': max(len(in_stream) - 1, 0),
            'duplicate_replies_ignored': rt._channel.duplicate_replies,
            'time': f'clear error {t_err:.2f} s after the kill (grace {grace:g} s)',
        })
    finally:
        rt.close()
        if second is not None:
            second.stop()


def test_foreign_executor_killed_fails_within_grace_and_next_executor_serves(
    temp_dir, proxy, monkeypatch
):
    """As for a VS Code window that dies: the runtime only sees the socket go away."""
    grace = 10.0
    monkeypatch.setenv('OH_VSCODE_RECONNECT_GRACE_SECONDS', str(grace))
    rt = load_runtime(temp_dir)
    second = None
    try:
        proc = rt.executor_process
        proc._closing = True  # no exit notice: the runtime learns it from the socket only
        action, ws = start_in_stream(rt)
        t0 = time.monotonic()
        os.killpg(proc.pid, signal.SIGKILL)
        proc.proc.wait(5)
        wait_until(lambda: not rt._channel.executor_connected, 10, 'the socket to close')
        # The next executor (another executor_id) registers within the grace period.
        second = ExecutorProcess(
            find_executor(), url=proxy.url, conversation_id=rt.sid,
            session_api_key=rt.session_api_key, workspace=str(ws), no_change_timeout=None,
        )
        wait_until(lambda: observations_of(rt, action), grace + 5, 'the observation in the stream')
        t_err = time.monotonic() - t0
        obs = observations_of(rt, action)[0]
        assert isinstance(obs, ErrorObservation), obs
        assert obs.content.startswith('Runtime disconnected: the VS Code executor running this '
                                      'action'), obs.content
        assert 'is not sent again' in obs.content
        assert t_err < grace
        assert settle(rt, ws) == '0'
        nxt = rt.run_action(CmdRunAction('echo served by the next executor'))
        assert isinstance(nxt, CmdOutputObservation) and nxt.content == 'served by the next executor'
        in_stream = observations_of(rt, action)
        assert len(in_stream) == 1, in_stream
        FIGURES.append({
            'fault': 'a foreign executor killed mid-command (only its socket closes), another '
                     'one registers',
            'executed_twice': 0 if lines(ws / 'f') <= 1 else 1,
            'observations_lost': 0 if in_stream else 1,
            'duplicates_to_stream': max(len(in_stream) - 1, 0),
            'duplicate_replies_ignored': rt._channel.duplicate_replies,
            'time': f'clear error {t_err:.2f} s after the kill (when the next executor '
                    f'registers; grace {grace:g} s)',
        })
    finally:
        rt.close()
        if second is not None:
            second.stop()
