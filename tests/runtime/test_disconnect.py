"""Executor loss: pending and new actions fail with a clear error, nothing hangs (protocol doc,
'Disconnects')."""

from __future__ import annotations

import concurrent.futures
import os
import signal
import time

from conftest import load_runtime

from openhands.events.action import CmdRunAction
from openhands.events.observation import CmdOutputObservation, ErrorObservation

from openhands_vscode_runtime.executor_process import ExecutorProcess, find_executor


def test_killed_executor_fails_pending_and_new_actions(runtime):
    assert runtime.run_action(CmdRunAction('echo up')).content.strip() == 'up'
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        action = CmdRunAction('touch started; sleep 60')
        action.set_hard_timeout(60)
        pending = pool.submit(runtime.run_action, action)
        started = os.path.join(runtime.config.workspace_base, 'started')
        deadline = time.monotonic() + 30
        while not os.path.exists(started):  # the kill must land while the command runs
            assert time.monotonic() < deadline, 'the command did not start within 30 s'
            time.sleep(0.01)
        start = time.monotonic()
        os.kill(runtime.executor_process.pid, signal.SIGKILL)
        obs = pending.result(timeout=20)
        assert time.monotonic() - start < 10
    assert isinstance(obs, ErrorObservation), obs
    assert obs.content.startswith(
        f'Runtime disconnected: no VS Code executor is connected for conversation {runtime.sid}'
    )
    assert 'exited with code' in obs.content
    start = time.monotonic()
    obs = runtime.run_action(CmdRunAction('echo after'))
    assert isinstance(obs, ErrorObservation)
    assert obs.content.startswith('Runtime disconnected:')
    assert time.monotonic() - start < 1


def _kill_without_exit_notice(runtime):
    """Kill the executor as if it were not ours: the runtime only sees the socket go away, so the
    reconnect grace period applies (as for a VS Code window that closes)."""
    proc = runtime.executor_process
    proc._closing = True
    os.kill(proc.pid, signal.SIGKILL)
    proc.proc.wait(5)


def test_grace_period_then_reconnect_and_resend(temp_dir, monkeypatch):
    monkeypatch.setenv('OH_VSCODE_RECONNECT_GRACE_SECONDS', '30')
    rt, _ = load_runtime(temp_dir)
    second = None
    try:
        assert rt.run_action(CmdRunAction('echo one')).content == 'one'
        _kill_without_exit_notice(rt)
        time.sleep(0.3)
        with concurrent.futures.ThreadPoolExecutor(1) as pool:
            pending = pool.submit(rt.run_action, CmdRunAction('echo resent'))
            time.sleep(0.5)
            assert not pending.done()
            second = ExecutorProcess(
                find_executor(),
                url=rt.server_url,
                conversation_id=rt.sid,
                session_api_key=rt.session_api_key,
                workspace=rt.config.workspace_mount_path_in_sandbox,
                no_change_timeout=None,
            )
            obs = pending.result(timeout=30)
        assert isinstance(obs, CmdOutputObservation), obs
        assert obs.content == 'resent'
        assert rt._channel.registrations == 2
    finally:
        rt.close()
        if second is not None:
            second.stop()


def test_grace_period_expiry(temp_dir, monkeypatch):
    monkeypatch.setenv('OH_VSCODE_RECONNECT_GRACE_SECONDS', '1')
    rt, _ = load_runtime(temp_dir)
    try:
        _kill_without_exit_notice(rt)
        start = time.monotonic()
        obs = rt.run_action(CmdRunAction('echo never'))
        elapsed = time.monotonic() - start
        assert isinstance(obs, ErrorObservation), obs
        assert 'did not reconnect within 1 s' in obs.content
        assert elapsed < 5
        # after the grace period, new actions fail at once
        start = time.monotonic()
        obs = rt.run_action(CmdRunAction('echo never again'))
        assert isinstance(obs, ErrorObservation)
        assert time.monotonic() - start < 0.5
    finally:
        rt.close()


def test_closing_a_runtime_that_waits_for_its_executor_ends_the_wait(temp_dir, monkeypatch):
    """OpenHands closes the runtime of a conversation stopped or deleted while it starts: a
    connect() still waiting for an executor must end then, not at its connect timeout."""
    from openhands.core.exceptions import AgentRuntimeUnavailableError
    from openhands.utils.async_utils import call_async_from_sync

    from openhands_vscode_runtime.embedded import embedded_server

    monkeypatch.setenv('OH_VSCODE_SPAWN_EXECUTOR', '0')  # nothing will register
    monkeypatch.setenv('OH_VSCODE_CONNECT_TIMEOUT', '90')
    rt, _ = load_runtime(temp_dir, connect=False)
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        connecting = pool.submit(call_async_from_sync, rt.connect)
        deadline = time.monotonic() + 30
        while embedded_server().hub.channel(rt.sid) is None:  # the runtime waits for its executor
            assert time.monotonic() < deadline, 'the runtime never opened its channel'
            assert not connecting.done(), connecting.exception()
            time.sleep(0.01)
        rt.close()
        # Without the fix this wait runs into its own 45 s limit (the runtime's is 90 s).
        error = connecting.exception(timeout=45)
    assert isinstance(error, AgentRuntimeUnavailableError), repr(error)
    assert 'closed while it waited for its executor' in str(error), error
