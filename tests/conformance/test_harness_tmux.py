"""The harness's measure against the reference's tmux server exiting between cases (DEVIATIONS.md,
"A tmux session that never ends")."""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import harness_setup  # noqa: E402


def _tmux(env: dict[str, str], *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(['tmux', *args], env=env, capture_output=True, text=True, timeout=30)


def test_the_run_s_private_tmux_server_holds_its_keeper_session():
    env = harness_setup.pinned_env()
    assert env['TMUX_TMPDIR'].startswith(harness_setup.base_dir()), env['TMUX_TMPDIR']
    probe = _tmux(env, 'has-session', '-t', 'ohconf-keeper')
    assert probe.returncode == 0, probe.stderr


def test_the_keeper_outlives_the_last_case_session():
    # A server of its own: the run's server has the cases' sessions besides the keeper.
    with tempfile.TemporaryDirectory(prefix='ohconf-keeper-test-') as tmux_dir:
        env = {**harness_setup.pinned_env(), 'TMUX_TMPDIR': tmux_dir}
        harness_setup._start_tmux_keeper(env)
        try:
            assert _tmux(env, 'new-session', '-d', '-s', 'case', 'sleep 30').returncode == 0
            assert _tmux(env, 'kill-session', '-t', 'case').returncode == 0
            # Without the keeper the server exits here and this new-session would start another
            # (or, racing with its exit, fail with "server exited unexpectedly").
            sessions = _tmux(env, 'list-sessions', '-F', '#{session_name}')
            assert sessions.returncode == 0 and sessions.stdout.split() == ['ohconf-keeper'], sessions
        finally:
            _tmux(env, 'kill-server')
