"""End to end, as a user runs it: `register()`, then a V1 `Conversation` whose agent has `terminal`
and `file_editor`; the scripted stand-in LLM asks for a heredoc followed by a command, two
`reset`s and a `str_replace`. The observations the conversation records are V1's in full: every
statement's output, the `[RESET]` observations, and the whole file before and after the edit.
"""

from __future__ import annotations

import os
from pathlib import Path

os.environ.setdefault('LITELLM_LOCAL_MODEL_COST_MAP', 'True')

from openhands_vscode_runtime.scripted_llm import ScriptedLLM  # noqa: E402

RESET_TEXT = (
    'Terminal session has been reset. All previous environment variables and session state have '
    'been cleared.'
)
# A line bashlex cannot parse (quoted delimiter and a redirect): sent whole, it must still wait
# for the statement after the heredoc.
HEREDOC = "cat <<'EOF' > greet.sh\necho hello-from-script\nEOF\nbash greet.sh"


def script(ws: str) -> list[dict]:
    return [
        {'tool': 'terminal', 'args': {'command': HEREDOC, 'summary': 'heredoc then run'}},
        {'expect_in_last_observation': 'hello-from-script', 'tool': 'terminal',
         'args': {'command': 'echo after-reset', 'reset': True, 'summary': 'reset and run'}},
        {'expect_in_last_observation': 'after-reset', 'tool': 'terminal',
         'args': {'command': '', 'reset': True, 'summary': 'reset'}},
        {'expect_in_last_observation': 'has been reset', 'tool': 'file_editor',
         'args': {'command': 'create', 'path': f'{ws}/app.py', 'file_text': 'a = 1\nb = 2\n', 'summary': 'create'}},
        {'expect_in_last_observation': 'File created successfully', 'tool': 'file_editor',
         'args': {'command': 'str_replace', 'path': f'{ws}/app.py', 'old_str': 'b = 2', 'new_str': 'b = 3',
                  'summary': 'edit'}},
        {'expect_in_last_observation': 'has been edited', 'tool': 'finish', 'args': {'message': 'done'}},
    ]


def test_observations_are_v1s_in_full(tmp_path: Path) -> None:
    from pydantic import SecretStr

    from openhands.sdk import LLM, Agent, Conversation, Tool
    from openhands.sdk.event import ObservationEvent
    from openhands_vscode_runtime.v1 import register
    from openhands_vscode_runtime.v1.tools import VsCodeFileEditorExecutor, VsCodeTerminalExecutor

    register()
    ws = str(tmp_path / 'ws')
    os.makedirs(ws)
    with ScriptedLLM(script(ws)) as llm_server:
        llm = LLM(model='openai/scripted', base_url=llm_server.base_url, api_key=SecretStr('x'), usage_id='agent',
                  num_retries=0)
        agent = Agent(llm=llm, tools=[Tool(name='terminal'), Tool(name='file_editor')])
        conv = Conversation(agent=agent, workspace=ws, visualizer=None)
        try:
            conv.send_message('do the scripted task')
            conv.run()
            assert llm_server.mismatches == [], llm_server.mismatches
            tools = conv.agent.tools_map
            assert isinstance(tools['terminal'].executor, VsCodeTerminalExecutor)
            assert isinstance(tools['file_editor'].executor, VsCodeFileEditorExecutor)
            obs = [e.observation for e in conv.state.events if isinstance(e, ObservationEvent)]
            assert [type(o).__name__ for o in obs] == [
                'TerminalObservation', 'TerminalObservation', 'TerminalObservation', 'FileEditorObservation',
                'FileEditorObservation', 'FinishObservation']
            heredoc, reset_run, reset, create, edit = obs[:5]
            # Every statement ran and its output is there, after the echoed line.
            assert not heredoc.is_error and heredoc.exit_code == 0, heredoc
            assert heredoc.text.endswith('bash greet.sh\nhello-from-script'), heredoc.text
            assert '__OHB' not in heredoc.text
            # reset with a command: V1's `[RESET] command` observation, the command's output after
            # the notice, run in a fresh shell in the workspace.
            assert not reset_run.is_error and reset_run.exit_code == 0, reset_run
            assert reset_run.command == '[RESET] echo after-reset'
            assert reset_run.text.startswith(f'{RESET_TEXT}\n\n') and reset_run.text.endswith('after-reset')
            assert reset_run.metadata.working_dir == ws
            assert (reset.command, reset.text, reset.exit_code, reset.is_error) == ('[RESET]', RESET_TEXT, 0, False)
            # The edit carries the whole file before and after, as V1's editor does.
            assert (create.old_content, create.new_content, create.prev_exist) == (None, 'a = 1\nb = 2\n', False)
            assert not edit.is_error and edit.command == 'str_replace'
            assert (edit.old_content, edit.new_content) == ('a = 1\nb = 2\n', 'a = 1\nb = 3\n')
            assert Path(ws, 'app.py').read_text() == 'a = 1\nb = 3\n'
        finally:
            conv.close()
