"""An embedded runtime's executor does not outlive the runtime's process, however it ends.

The runtime runs in a child process (built like the other tests build it, `load_runtime`), which
is SIGKILLed: no `close()`, no atexit. The executor runs in its own session, so no signal reaches
it; it stops because the runtime passes `--exit-on-stdin-eof` and holds its stdin pipe, which the
kernel closes when the runtime's process dies.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

from conftest import real_executor_only

HERE = Path(__file__).resolve().parent


def process_gone(pid: int) -> bool:
    """True when `pid` has exited (a zombie counts: nobody may reap it in a container)."""
    try:
        with open(f'/proc/{pid}/stat') as f:
            state = f.read().rsplit(')', 1)[1].split()[0]
    except FileNotFoundError:
        return True
    return state in ('Z', 'X')


def wait_gone(pid: int, deadline_s: float) -> bool:
    end = time.monotonic() + deadline_s
    while time.monotonic() < end:
        if process_gone(pid):
            return True
        time.sleep(0.2)
    return process_gone(pid)


@real_executor_only  # the log line below is the real CLIs'
def test_executor_stops_when_the_runtime_process_is_killed(temp_dir: str) -> None:
    child_code = textwrap.dedent(f"""
        import sys, time
        sys.path.insert(0, {str(HERE)!r})
        from conftest import load_runtime
        runtime, _ = load_runtime({temp_dir!r})
        process = runtime.executor_process
        print('EXECUTOR', process.pid, process.log_path, flush=True)
        time.sleep(600)
    """)
    child = subprocess.Popen([sys.executable, '-c', child_code], stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True, start_new_session=True)
    executor_pid = None
    log_path = None
    try:
        for line in child.stdout:
            if line.startswith('EXECUTOR '):
                _, pid, log_path = line.split()
                executor_pid = int(pid)
                break
        assert executor_pid is not None, child.stderr.read()[-3000:] if child.poll() is not None else 'no pid'
        assert not process_gone(executor_pid), 'the executor runs while the runtime does'
        # The executor is in its own session: a SIGKILL of the runtime's group does not touch it.
        assert os.getsid(executor_pid) != os.getsid(child.pid)
        os.killpg(child.pid, signal.SIGKILL)
        child.wait(30)
        # Generous: the executor notices at once, then stops its shell (a loaded machine is slow).
        assert wait_gone(executor_pid, 60), f'executor {executor_pid} outlived its killed runtime'
        # It stopped because its stdin ended (not, say, after failing to reconnect).
        assert 'end of stdin (--exit-on-stdin-eof): stopping' in Path(log_path).read_text()
    finally:
        if child.poll() is None:
            os.killpg(child.pid, signal.SIGKILL)
        if executor_pid is not None and not process_gone(executor_pid):
            os.killpg(executor_pid, signal.SIGKILL)
        if log_path is not None:
            Path(log_path).unlink(missing_ok=True)
