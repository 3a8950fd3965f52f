"""`interrupt()` of a running terminal call, ours against V1's own `TerminalExecutor`.

What a conversation's `interrupt()` does to a running tool call (openhands-sdk 1.58.0): it cancels
the call's task and calls the tool executor's `interrupt()` from another thread; V1's terminal
then sends C-c and the blocked call returns its observation. Both executors get the same
command on a fresh workspace, are interrupted once the command runs, and must return the same
observation (exit code, error flag, text) with the command's process gone.

The reference here is V1's **tmux** backend (its default), not the subprocess backend of the
differential suite: the subprocess backend's `interrupt()` signals bash's own process group, not
the foreground job's, so the command keeps running and the call returns only at its timeout
(exit code -1, the command still running afterwards: checked by hand with 1.58.0, listed in
docs/v1.md). The tmux backend types C-c into the pane, as a terminal does, and so does ours.
"""

from __future__ import annotations

import subprocess
import threading
import time
from pathlib import Path
from typing import Any

from openhands.tools.terminal.definition import TerminalAction
from openhands.tools.terminal.impl import TerminalExecutor

from openhands_vscode_runtime.v1.connection import acquire
from openhands_vscode_runtime.v1.tools import VsCodeTerminalExecutor


def running(pattern: str) -> bool:
    return subprocess.run(['pgrep', '-f', pattern], capture_output=True).returncode == 0


def interrupt_running_call(executor: Any, seconds: str) -> dict[str, Any]:
    """Start `sleep <seconds>` with a 120 s hard timeout, interrupt it once it runs, return the
    observation's fields."""
    pattern = f'sleep {seconds}'
    result: dict[str, Any] = {}

    def call() -> None:
        result['obs'] = executor(TerminalAction(command=f'{pattern} && echo after', timeout=120))

    worker = threading.Thread(target=call, daemon=True)
    worker.start()
    deadline = time.monotonic() + 60
    while not running(pattern):
        assert time.monotonic() < deadline, 'the command did not start'
        time.sleep(0.1)
    executor.interrupt()
    # Generous, but well under the command's 120 s timeout: only the interrupt can end it first.
    worker.join(90)
    assert not worker.is_alive(), 'the interrupted call did not return'
    end = time.monotonic() + 30
    while running(pattern) and time.monotonic() < end:
        time.sleep(0.1)
    assert not running(pattern), 'the interrupted command still runs'
    obs = result['obs']
    return {'exit_code': obs.exit_code, 'is_error': obs.is_error, 'text': obs.text}


def test_interrupt_matches_v1(tmp_path: Path) -> None:
    ref_ws, our_ws = tmp_path / 'ref', tmp_path / 'ours'
    ref_ws.mkdir()
    our_ws.mkdir()
    reference = TerminalExecutor(str(ref_ws), terminal_type='tmux', no_change_timeout_seconds=30)
    try:
        reference(TerminalAction(command='true'))
        ref = interrupt_running_call(reference, '271.5')
    finally:
        reference.close()
    conn = acquire('interrupt-direct', str(our_ws))
    ours_executor = VsCodeTerminalExecutor(conn)
    try:
        ours_executor(TerminalAction(command='true'))
        ours = interrupt_running_call(ours_executor, '271.6')
        # Interrupting with nothing running types nothing: the next command is unaffected. The
        # interrupt's answer is awaited first: it is handled beside the command queue, so one
        # still unhandled when the next command starts could reach that command instead (a V1
        # conversation sends no command then: interrupt() pauses it).
        _rid, idle = conn.channel.submit({'action': 'v1_interrupt', 'args': {}})
        idle_reply = idle.result(timeout=30)
        assert idle_reply.extras.get('interrupted') is False, idle_reply.data
        after = ours_executor(TerminalAction(command='echo next'))
        assert after.exit_code == 0 and after.text.strip() == 'next', after.text
    finally:
        ours_executor.close()  # the last holder: closes the connection
    print(f'\nV1: {ref!r}\nours: {ours!r}')
    assert ours['exit_code'] == ref['exit_code'] == 130, (ref, ours)
    assert ours['is_error'] == ref['is_error'], (ref, ours)
    assert ours['text'] == ref['text'], (ref, ours)


def test_conversation_interrupt_stops_the_running_command(tmp_path: Path) -> None:
    """The real SDK loop: `arun()` runs a long terminal call in the executor, `interrupt()` from
    another thread stops it (the command's process is gone), the conversation pauses, and the
    executor answered both the call and the interrupt (nothing left pending)."""
    import asyncio
    import os

    from pydantic import SecretStr

    from openhands.sdk import LLM, Agent, Conversation, Tool
    from openhands.sdk.conversation.state import ConversationExecutionStatus
    from openhands_vscode_runtime.scripted_llm import ScriptedLLM
    from openhands_vscode_runtime.v1 import register
    from openhands_vscode_runtime.v1.connection import _CONNECTIONS

    register()
    ws = str(tmp_path / 'ws')
    os.makedirs(ws)
    pattern = 'sleep 271.7'
    steps = [{'tool': 'terminal', 'args': {'command': f'{pattern} && echo after', 'timeout': 120,
                                           'security_risk': 'LOW', 'summary': 'long'}},
             {'tool': 'finish', 'args': {'message': 'not reached'}}]
    with ScriptedLLM(steps) as llm_server:
        llm = LLM(model='openai/scripted', base_url=llm_server.base_url, api_key=SecretStr('x'),
                  usage_id='agent', num_retries=0)
        conv = Conversation(agent=Agent(llm=llm, tools=[Tool(name='terminal')]), workspace=ws, visualizer=None)
        conv.send_message('run the long command')
        done = threading.Event()
        errors: list[BaseException] = []

        def run() -> None:
            try:
                asyncio.run(conv.arun())
            except BaseException as e:  # noqa: BLE001 - reported below
                errors.append(e)
            finally:
                done.set()

        threading.Thread(target=run, daemon=True).start()
        deadline = time.monotonic() + 120
        while not running(pattern):
            assert time.monotonic() < deadline and not done.is_set(), f'the command did not start {errors}'
            time.sleep(0.1)
        conv.interrupt()
        # Generous, but under the command's 120 s timeout.
        assert done.wait(90), 'arun() did not return after interrupt()'
        end = time.monotonic() + 30
        while running(pattern) and time.monotonic() < end:
            time.sleep(0.1)
        assert not running(pattern), 'the interrupted command still runs'
        assert conv.state.execution_status == ConversationExecutionStatus.PAUSED, conv.state.execution_status
        conn = _CONNECTIONS[str(conv.id)]
        end = time.monotonic() + 30
        while conn.channel.pending_count() and time.monotonic() < end:
            time.sleep(0.1)
        assert conn.channel.pending_count() == 0, 'an action is still pending in the executor'
        assert conn.channel.replies_received == 2, conn.channel.replies_received  # the call + the interrupt
        conv.close()
