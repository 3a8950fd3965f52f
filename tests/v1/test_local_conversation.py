"""End to end: an OpenHands V1 `LocalConversation` (the real SDK agent loop) whose `terminal` and
`file_editor` calls run in the headless executor through `openhands_vscode_runtime.v1`.

The LLM is the one stand-in: the scripted OpenAI-compatible server of
`openhands_vscode_runtime.scripted_llm` on 127.0.0.1.
"""

from __future__ import annotations

import os
import time
from pathlib import Path


os.environ.setdefault('LITELLM_LOCAL_MODEL_COST_MAP', 'True')

from openhands_vscode_runtime.scripted_llm import ScriptedLLM  # noqa: E402

SECRET = 'sekrit-7d3f9a1c'


def script(ws: str) -> list[dict]:
    return [
        {'tool': 'terminal', 'args': {'command': 'echo hello-v1 > out.txt && cat out.txt', 'security_risk': 'LOW',
                                      'summary': 'write a file'}},
        {'expect_in_last_observation': 'hello-v1', 'tool': 'file_editor',
         'args': {'command': 'create', 'path': f'{ws}/app.py', 'file_text': 'print("one")\n', 'security_risk': 'LOW',
                  'summary': 'create'}},
        {'expect_in_last_observation': 'File created successfully', 'tool': 'file_editor',
         'args': {'command': 'str_replace', 'path': f'{ws}/app.py', 'old_str': '"one"', 'new_str': '"two"',
                  'security_risk': 'LOW', 'summary': 'edit'}},
        {'expect_in_last_observation': 'has been edited', 'tool': 'terminal',
         'args': {'command': 'python3 app.py', 'security_risk': 'LOW', 'summary': 'run'}},
        {'expect_in_last_observation': 'two', 'tool': 'terminal',
         'args': {'command': 'echo "token=$API_TOKEN"', 'security_risk': 'LOW', 'summary': 'secret'}},
        {'expect_in_last_observation': 'token=<secret-hidden>', 'tool': 'terminal',
         'args': {'command': 'sleep 30', 'timeout': 1, 'security_risk': 'LOW', 'summary': 'timeout'}},
        {'expect_in_last_observation': 'timed out after 1.0 seconds', 'tool': 'terminal',
         'args': {'command': 'C-c', 'is_input': True, 'security_risk': 'LOW', 'summary': 'interrupt'}},
        {'expect_in_last_observation': 'CTRL+C was sent', 'tool': 'file_editor',
         'args': {'command': 'view', 'path': f'{ws}/app.py', 'security_risk': 'LOW', 'summary': 'view'}},
        {'expect_in_last_observation': '1\tprint("two")', 'tool': 'finish', 'args': {'message': 'done'}},
    ]


def test_local_conversation_runs_its_tools_in_the_executor(tmp_path: Path) -> None:
    from pydantic import SecretStr

    from openhands.sdk import LLM, Agent, Conversation, Tool
    from openhands.sdk.event import ObservationEvent
    from openhands_vscode_runtime.v1 import register
    from openhands_vscode_runtime.v1.connection import _CONNECTIONS
    from openhands_vscode_runtime.v1.tools import VsCodeFileEditorExecutor, VsCodeTerminalExecutor

    register()
    ws = str(tmp_path / 'ws')
    os.makedirs(ws)
    llm_server = ScriptedLLM(script(ws))
    base_url = llm_server.start()
    try:
        llm = LLM(model='openai/scripted', base_url=base_url, api_key=SecretStr('x'), usage_id='agent',
                  num_retries=0)
        agent = Agent(llm=llm, tools=[Tool(name='terminal'), Tool(name='file_editor')])
        conv = Conversation(agent=agent, workspace=ws, visualizer=None)
        conv.update_secrets({'API_TOKEN': SECRET})
        conv.send_message('do the scripted task')
        t0 = time.monotonic()
        conv.run()
        elapsed = time.monotonic() - t0
        assert llm_server.mismatches == [], llm_server.mismatches
        tools = conv.agent.tools_map
        assert isinstance(tools['terminal'].executor, VsCodeTerminalExecutor)
        assert isinstance(tools['file_editor'].executor, VsCodeFileEditorExecutor)
        observations = [e for e in conv.state.events if isinstance(e, ObservationEvent)]
        assert [o.tool_name for o in observations] == [
            'terminal', 'file_editor', 'file_editor', 'terminal', 'terminal', 'terminal', 'terminal', 'file_editor',
            'finish']
        texts = [''.join(getattr(c, 'text', '') for c in o.observation.to_llm_content) for o in observations]
        assert SECRET not in ''.join(texts)
        assert Path(ws, 'out.txt').read_text() == 'hello-v1\n'
        assert Path(ws, 'app.py').read_text() == 'print("two")\n'
        # Every terminal/file_editor call went through the executor connected for this conversation.
        conn = _CONNECTIONS[str(conv.id)]
        assert conn.process is not None and conn.process.proc.poll() is None
        # 8 tool calls + 1 secret export before the command that mentions $API_TOKEN.
        assert conn.channel.replies_received == 9
        print(f'\nV1 LocalConversation with the executor: {elapsed:.2f} s for {len(observations)} steps')
        conv.close()
    finally:
        llm_server.stop()
