"""A conversation with our tools leaves nothing in the temp folder: V1's `FileEditorTool.create`
builds V1's own editor, whose undo history is a fresh `oh_editor_history_*` folder; our tool swaps
that executor out before it runs anything, and the folder must not stay behind (one per
conversation, for as long as the machine runs)."""

from __future__ import annotations

import tempfile
from pathlib import Path

import pytest


def test_a_conversation_leaves_no_editor_history_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from pydantic import SecretStr

    from openhands.sdk import LLM, Agent, Conversation, Tool
    from openhands.tools.file_editor.definition import FileEditorAction
    from openhands.tools.terminal.definition import TerminalAction
    from openhands_vscode_runtime.v1 import register

    private_tmp = tmp_path / 'tmp'
    private_tmp.mkdir()
    # mkdtemp() without a dir asks gettempdir(), which returns this once set: only this test's
    # folders land here, whatever else runs on the machine.
    monkeypatch.setattr(tempfile, 'tempdir', str(private_tmp))
    register()
    ws = tmp_path / 'ws'
    ws.mkdir()
    llm = LLM(model='openai/unused', base_url='http://127.0.0.1:9', api_key=SecretStr('x'), usage_id='agent')
    agent = Agent(llm=llm, tools=[Tool(name='terminal'), Tool(name='file_editor')])
    conv = Conversation(agent=agent, workspace=str(ws), visualizer=None)
    try:
        assert conv.execute_tool('terminal', TerminalAction(command='echo ready')).text.strip().endswith('ready')
        obs = conv.execute_tool('file_editor', FileEditorAction(command='create', path=str(ws / 'a.txt'), file_text='x\n'))
        assert not obs.is_error, obs.text
    finally:
        conv.close()
    left = sorted(p.name for p in private_tmp.glob('oh_editor_history_*'))
    assert left == [], f'editor history folders left behind: {left}'
