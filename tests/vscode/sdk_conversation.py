"""A conversation an SDK script creates on this window's agent-server (session v1-canvas).

openhands-sdk's own client: `Conversation` with a `RemoteWorkspace` is a RemoteConversation, which
creates the conversation over the agent-server's REST API and follows its events over the
WebSocket. Usage: python sdk_conversation.py BACKEND_URL API_KEY WORKSPACE LLM_BASE_URL TASK
Prints {"created": id} once created, then {"finished": id, "status": ...} when run() returns.

The script imports this package's V1 tools: the conversation's system prompt event names their
classes (`VsCodeTerminalTool`, `VsCodeFileEditorTool`), and RemoteConversation reads every event
back into the SDK's models, which know only the tool classes imported in its process (without
them, `run()` fails with "Unexpected kind 'VsCodeTerminalTool' for ToolDefinition").
"""

import json
import sys

from openhands.sdk import LLM, Agent, Conversation, Tool
from openhands.sdk.workspace import RemoteWorkspace

import openhands_vscode_runtime.v1.register  # noqa: F401  (the tool classes, see above)


def main() -> int:
    host, api_key, workspace, llm_base_url, task = sys.argv[1:6]
    llm = LLM(model='openai/scripted', base_url=llm_base_url, api_key='scripted-llm-key', usage_id='agent')
    agent = Agent(llm=llm, tools=[Tool(name='terminal'), Tool(name='file_editor')])
    # Kept on the agent-server after close() (the test reads its events).
    remote = RemoteWorkspace(host=host, api_key=api_key, working_dir=workspace)
    conversation = Conversation(agent=agent, workspace=remote, delete_on_close=False)
    print(json.dumps({'created': str(conversation.id)}), flush=True)
    conversation.send_message(f'parallel task {task} with {task}')
    conversation.run()
    status = conversation.state.execution_status
    print(json.dumps({'finished': str(conversation.id), 'status': getattr(status, 'value', str(status))}), flush=True)
    conversation.close()
    return 0


if __name__ == '__main__':
    sys.exit(main())
