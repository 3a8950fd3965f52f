"""One conversation, one executor: two V1 `LocalConversation`s in the same folder (real SDK, our
tools through `register()`, calls through the SDK's own `execute_tool`, the headless executor)
share nothing: the working directory, an exported variable, a secret, a background job and the
editor's undo history of one are invisible to the other; closing a conversation stops its
executor and leaves the other's running.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

SECRET = 'only-a-7f3e21'


def gone(pid: int) -> bool:
    try:
        with open(f'/proc/{pid}/stat') as f:
            return f.read().rsplit(')', 1)[1].split()[0] in ('Z', 'X')
    except FileNotFoundError:
        return True


def wait_gone(pid: int, seconds: float = 15) -> bool:
    end = time.monotonic() + seconds
    while not gone(pid) and time.monotonic() < end:
        time.sleep(0.1)
    return gone(pid)


def test_two_conversations_in_one_folder_share_nothing(tmp_path: Path) -> None:
    from pydantic import SecretStr

    from openhands.sdk import LLM, Agent, Conversation, Tool
    from openhands.tools.file_editor.definition import FileEditorAction
    from openhands.tools.terminal.definition import TerminalAction
    from openhands_vscode_runtime.v1 import register
    from openhands_vscode_runtime.v1.connection import _CONNECTIONS

    register()
    ws = tmp_path / 'ws'
    (ws / 'sub').mkdir(parents=True)
    notes = ws / 'notes.txt'
    notes.write_text('one\n')
    # Never called: the tools are driven directly.
    llm = LLM(model='openai/unused', base_url='http://127.0.0.1:9', api_key=SecretStr('x'), usage_id='agent')

    def conversation() -> object:
        agent = Agent(llm=llm, tools=[Tool(name='terminal'), Tool(name='file_editor')])
        return Conversation(agent=agent, workspace=str(ws), visualizer=None)

    def sh(conv: object, command: str) -> str:
        obs = conv.execute_tool('terminal', TerminalAction(command=command))  # type: ignore[attr-defined]
        assert not obs.is_error, obs.text
        return obs.text.strip()

    def edit(conv: object, **args: object) -> object:
        return conv.execute_tool('file_editor', FileEditorAction(path=str(notes), **args))  # type: ignore[attr-defined]

    a = conversation()
    b = conversation()
    closed = []
    try:
        a.update_secrets({'A_TOKEN': SECRET})  # type: ignore[attr-defined]
        # A's state: a cwd, a variable, the secret in its session, a job, an edit to undo.
        sh(a, 'cd sub')
        sh(a, 'export ONLY_A=a-value')
        sh(a, 'sleep 300 &')
        assert sh(a, 'echo "[${A_TOKEN:+exported}]"') == '[exported]'
        assert not edit(a, command='str_replace', old_str='one', new_str='two').is_error
        assert sh(a, 'pwd') == str(ws / 'sub')
        assert sh(a, 'echo "$ONLY_A"') == 'a-value'
        assert 'sleep 300' in sh(a, 'jobs')
        a_pid = int(sh(a, 'echo $PPID'))

        # B sees none of it.
        b_pid = int(sh(b, 'echo $PPID'))
        assert b_pid != a_pid, 'the two conversations run in one executor'
        assert sh(b, 'pwd') == str(ws)
        assert sh(b, 'echo "[${ONLY_A:-unset}]"') == '[unset]'
        assert sh(b, 'echo "[${A_TOKEN:-unset}]"') == '[unset]'
        assert SECRET not in sh(b, 'env')
        assert sh(b, 'jobs') == ''
        undo_b = edit(b, command='undo_edit')
        assert undo_b.is_error and 'No edit history found' in undo_b.text, undo_b.text
        assert notes.read_text() == 'two\n'
        # ...and A's history is still A's.
        assert not edit(a, command='undo_edit').is_error
        assert notes.read_text() == 'one\n'

        conn_a = _CONNECTIONS[str(a.id)]  # type: ignore[attr-defined]
        assert conn_a.process is not None and conn_a.process.pid == a_pid
        a.close()  # type: ignore[attr-defined]
        closed.append(a)
        assert wait_gone(a_pid), f'the executor {a_pid} of the closed conversation still runs'
        assert str(a.id) not in _CONNECTIONS  # type: ignore[attr-defined]
        assert sh(b, 'echo alive') == 'alive'
        b.close()  # type: ignore[attr-defined]
        closed.append(b)
        assert wait_gone(b_pid), f'the executor {b_pid} of the closed conversation still runs'
    finally:
        for conv in (a, b):
            if conv not in closed:
                conv.close()  # type: ignore[attr-defined]
        os.environ.pop('ONLY_A', None)
