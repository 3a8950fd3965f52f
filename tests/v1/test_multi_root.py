"""A multi-root workspace in V1: the executor announces every folder (`auth.roots`, here the
headless executor's `--root`), and the `terminal` tool's description, which the LLM reads with
every request, names them all and where the shell starts (docs/multi-root.md). With one folder the
description is V1's own. The real SDK agent loop, the real headless executor; the LLM is the
scripted stand-in."""

from __future__ import annotations

import os
import shlex
from pathlib import Path

import pytest

os.environ.setdefault('LITELLM_LOCAL_MODEL_COST_MAP', 'True')

from openhands_vscode_runtime.scripted_llm import ScriptedLLM  # noqa: E402


def run_conversation(first: Path, llm_server: ScriptedLLM):
    from pydantic import SecretStr

    from openhands.sdk import LLM, Agent, Conversation, Tool
    from openhands_vscode_runtime.v1 import register

    register()
    base_url = llm_server.start()
    llm = LLM(model='openai/scripted', base_url=base_url, api_key=SecretStr('x'), usage_id='agent', num_retries=0)
    agent = Agent(llm=llm, tools=[Tool(name='terminal'), Tool(name='file_editor')])
    conv = Conversation(agent=agent, workspace=str(first), visualizer=None)
    conv.send_message('where does the shell start?')
    conv.run()
    return conv


def terminal_description(request: dict) -> str:
    tools = {t['function']['name']: t['function'] for t in request['tools']}
    return tools['terminal']['description']


@pytest.fixture
def folders(tmp_path: Path) -> tuple[Path, Path]:
    api, web = tmp_path / 'api', tmp_path / 'web'
    api.mkdir()
    web.mkdir()
    return api, web


def script(first: Path) -> list[dict]:
    return [
        {'tool': 'terminal', 'args': {'command': 'pwd', 'security_risk': 'LOW', 'summary': 'where'}},
        {'expect_in_last_observation': str(first), 'tool': 'finish', 'args': {'message': 'done'}},
    ]


def test_the_terminal_tool_names_every_folder(folders: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch) -> None:
    api, web = folders
    # The headless executor with a second folder, as VS Code's executor gets a multi-root window's.
    monkeypatch.setenv('OH_VSCODE_EXECUTOR', f'{shlex.quote(os.environ["OH_VSCODE_EXECUTOR"])} --root {shlex.quote(str(web))}')
    llm_server = ScriptedLLM(script(api))
    try:
        conv = run_conversation(api, llm_server)
        assert llm_server.mismatches == [], llm_server.mismatches
        expected = (
            f"The workspace open in the user's VS Code has 2 folders: {api} and {web}. The shell starts "
            f'in the first one, {api}; use absolute paths (or cd) for the others. Files in any of these '
            'folders are part of the task.'
        )
        # Every request the LLM got carried it, the first one included (before any command ran).
        assert llm_server.requests, 'the LLM got no request'
        for request in llm_server.requests:
            assert terminal_description(request).endswith(f'\n\n{expected}'), terminal_description(request)[-600:]
        conv.close()
    finally:
        llm_server.stop()


def test_one_folder_keeps_v1s_own_description(folders: tuple[Path, Path]) -> None:
    from openhands.tools.terminal.definition import UNIX_TOOL_DESCRIPTION

    api, _ = folders
    llm_server = ScriptedLLM(script(api))
    try:
        conv = run_conversation(api, llm_server)
        assert llm_server.mismatches == [], llm_server.mismatches
        assert [terminal_description(r) for r in llm_server.requests] == [UNIX_TOOL_DESCRIPTION] * len(llm_server.requests)
        conv.close()
    finally:
        llm_server.stop()
