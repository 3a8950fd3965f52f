"""An agent-server that is SIGKILLed takes the executor its V1 tools spawned with it.

No shutdown runs (no `close_all()`, no atexit). The executor is in its own session, so no signal
reaches it; it stops because the tools pass `--exit-on-stdin-eof` and hold its stdin pipe, which
the kernel closes when the agent-server's process dies.
"""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path

from agent_server import agent_server
from openhands_vscode_runtime.scripted_llm import ScriptedLLM


def process_gone(pid: int) -> bool:
    """True when `pid` has exited (a zombie counts: nobody may reap it in a container)."""
    try:
        with open(f'/proc/{pid}/stat') as f:
            state = f.read().rsplit(')', 1)[1].split()[0]
    except FileNotFoundError:
        return True
    return state in ('Z', 'X')


def test_killed_agent_server_leaves_no_executor(tmp_path: Path) -> None:
    ws = tmp_path / 'ws'
    ws.mkdir()
    steps = [
        # The shell's parent is the executor: its pid, for the test to watch.
        {'tool': 'terminal', 'args': {'command': 'echo $PPID > executor.pid && echo noted', 'summary': 'pid'}},
        {'expect_in_last_observation': 'noted', 'tool': 'finish', 'args': {'message': 'done'}},
    ]
    executor_pid = None
    with ScriptedLLM(steps) as llm, agent_server(tmp_path) as srv:
        server = srv.process
        try:
            status = srv.run_conversation(llm, ws)
            assert llm.mismatches == [], llm.mismatches
            assert status == 'finished'
            executor_pid = int((ws / 'executor.pid').read_text())
            assert not process_gone(executor_pid)
            assert os.getsid(executor_pid) != os.getsid(server.pid), 'the executor has its own session'
            log_path = os.readlink(f'/proc/{executor_pid}/fd/2')
            os.killpg(server.pid, signal.SIGKILL)
            server.wait(30)
            # Generous and polled: the executor notices at once, then stops its shell.
            end = time.monotonic() + 60
            while not process_gone(executor_pid) and time.monotonic() < end:
                time.sleep(0.2)
            assert process_gone(executor_pid), f'executor {executor_pid} outlived the killed agent-server'
            assert 'end of stdin (--exit-on-stdin-eof): stopping' in Path(log_path).read_text()
            Path(log_path).unlink(missing_ok=True)
        finally:
            if server.poll() is None:
                os.killpg(server.pid, signal.SIGKILL)
            if executor_pid is not None and not process_gone(executor_pid):
                os.killpg(executor_pid, signal.SIGKILL)
