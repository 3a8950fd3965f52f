"""openhands_vscode_runtime.v1.exit_with_parent: the managed agent-server (extension/src/v1) ends,
with its process group, when the extension host holding its stdin goes away."""

import os
import signal
import subprocess
import sys
import time

import pytest

PROGRAM = """
import subprocess, sys, time
import openhands_vscode_runtime.v1.exit_with_parent
child = subprocess.Popen(['sleep', '600'])
print(child.pid, flush=True)
time.sleep(600)
"""


def _alive(pid: int) -> bool:
    try:
        with open(f'/proc/{pid}/stat') as f:
            return f.read().split(') ')[1][0] != 'Z'
    except FileNotFoundError:
        return False


def _start(env_value: str | None):
    env = dict(os.environ)
    env.pop('OH_VSCODE_EXIT_ON_STDIN_EOF', None)
    if env_value is not None:
        env['OH_VSCODE_EXIT_ON_STDIN_EOF'] = env_value
    p = subprocess.Popen([sys.executable, '-c', PROGRAM], stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env, start_new_session=True)
    grandchild = int(p.stdout.readline())
    return p, grandchild


@pytest.mark.timeout(60)
def test_stdin_eof_ends_the_process_group():
    p, grandchild = _start('1')
    try:
        time.sleep(0.5)
        assert p.poll() is None and _alive(grandchild)
        p.stdin.close()  # what the extension host's end does when it dies
        p.wait(timeout=20)
        deadline = time.time() + 20
        while _alive(grandchild) and time.time() < deadline:
            time.sleep(0.1)
        assert not _alive(grandchild)
    finally:
        os.killpg(p.pid, signal.SIGKILL) if p.poll() is None else None


@pytest.mark.timeout(60)
def test_without_the_variable_nothing_is_watched():
    p, grandchild = _start(None)
    try:
        p.stdin.close()
        time.sleep(2)
        assert p.poll() is None and _alive(grandchild)
    finally:
        os.killpg(p.pid, signal.SIGKILL)
