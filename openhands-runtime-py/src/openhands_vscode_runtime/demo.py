"""The main job: OpenHands' real agent loop working through VsCodeRuntime.

    python -m openhands_vscode_runtime.demo [--workspace DIR] [--task TEXT]

The agent controller and CodeActAgent (`openhands.core.main.run_controller`) run a short task on
VsCodeRuntime in embedded mode, which starts the headless executor (Rust core, persistent bash on a
PTY). By default the LLM is the scripted stand-in (`openhands_vscode_runtime.scripted_llm`): its
answers are fixed in advance, so the demo runs offline and the same way every time. Set
`LLM_MODEL` and `LLM_API_KEY` (and `LLM_BASE_URL` if needed) to let a real model do the task.
Prints each step (action and a short observation) and the agent's final message; exits 0 when the
agent finished.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import os
import sys
import tempfile
import time

os.environ.setdefault('LOG_LEVEL', 'ERROR')
os.environ.setdefault('OPENHANDS_SUPPRESS_BANNER', '1')
os.environ.setdefault('LITELLM_LOCAL_MODEL_COST_MAP', 'True')
os.environ.setdefault('OH_VSCODE_MODE', 'embedded')

TASK = (
    'Write hello.py in the workspace: it reads a name from name.txt and prints "Hello, <name>!". '
    'Run it and make sure it works.'
)
BAR = '-' * 78


def scripted_steps(ws: str) -> list[dict]:
    """What the scripted stand-in answers, step by step (one step reacts to a failure)."""
    return [
        {'tool': 'think', 'args': {'thought': 'Write the script first, then run it and fix it.'}},
        {
            'tool': 'str_replace_editor',
            'args': {
                'command': 'create',
                'path': f'{ws}/hello.py',
                'file_text': 'from pathlib import Path\n\n'
                'name = Path("name.txt").read_text().strip()\n'
                'print(f"hello {name}")\n',
            },
        },
        {'tool': 'execute_bash', 'args': {'command': 'python3 hello.py'}},
        {
            # reacts to the failure: the file named in the traceback is created
            'match_last_observation': r"No such file or directory: '(\w+\.txt)'",
            'tool': 'str_replace_editor',
            'args': {'command': 'create', 'path': f'{ws}/{{{{1}}}}', 'file_text': 'VS Code\n'},
        },
        {
            'tool': 'str_replace_editor',
            'args': {
                'command': 'str_replace',
                'path': f'{ws}/hello.py',
                'old_str': 'print(f"hello {name}")',
                'new_str': 'print(f"Hello, {name}!")',
            },
        },
        {'tool': 'execute_bash', 'args': {'command': 'python3 hello.py && ls'}},
        {
            'expect_in_last_observation': 'Hello, VS Code!',
            'tool': 'finish',
            'args': {'message': 'hello.py prints "Hello, VS Code!" (the name comes from name.txt).'},
        },
    ]


def _short(text: str, lines: int = 6, width: int = 100) -> str:
    rows = (text or '').rstrip('\n').splitlines() or ['']
    if len(rows) > lines:  # the head and the tail (where a traceback says what went wrong)
        half = lines // 2
        rows = [*rows[:half], f'... ({len(rows) - 2 * half} more lines)', *rows[-half:]]
    out = [r if len(r) <= width else r[: width - 3] + '...' for r in rows]
    return '\n'.join('    ' + r for r in out)


def print_event(event) -> None:
    from openhands.events import EventSource
    from openhands.events.action import (
        AgentFinishAction,
        AgentThinkAction,
        CmdRunAction,
        FileEditAction,
        FileReadAction,
        MessageAction,
    )
    from openhands.events.observation import (
        CmdOutputObservation,
        ErrorObservation,
        FileEditObservation,
        FileReadObservation,
    )

    if isinstance(event, MessageAction):
        who = 'user' if event.source == EventSource.USER else 'agent'
        print(f'[{who}] {event.content}')
    elif isinstance(event, AgentThinkAction):
        print(f'[think] {event.thought}')
    elif isinstance(event, CmdRunAction) and event.source == EventSource.AGENT:
        print(BAR)
        print(f'$ {event.command}' if event.command else "$ (continue: '')")
    elif isinstance(event, (FileEditAction, FileReadAction)) and event.source == EventSource.AGENT:
        print(BAR)
        print(f'> str_replace_editor {getattr(event, "command", "") or "view"} {event.path}')
    elif isinstance(event, AgentFinishAction):
        print(BAR)
        print(f'[finish] {event.final_thought or event.message}')
    elif isinstance(event, CmdOutputObservation) and event.cause is not None:
        print(_short(event.content))
        print(f'    [exit code {event.exit_code}]')
    elif isinstance(event, FileEditObservation):
        print(_short(event.diff or event.content, lines=8))
    elif isinstance(event, FileReadObservation):
        print(_short(event.content))
    elif isinstance(event, ErrorObservation):
        print(f'    [error] {_short(event.content)}')


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--workspace', help='workspace directory (default: a new temp dir)')
    parser.add_argument('--task', default=TASK, help='the task (a real model only)')
    parser.add_argument('--max-iterations', type=int, default=30)
    args = parser.parse_args(argv)

    from pydantic import SecretStr

    from openhands.core.config import LLMConfig, OpenHandsConfig
    from openhands.core.logger import openhands_logger
    from openhands.core.main import run_controller
    from openhands.core.schema import AgentState
    from openhands.core.setup import create_agent, create_runtime
    from openhands.events import EventStreamSubscriber
    from openhands.events.action import AgentFinishAction, MessageAction
    from openhands.utils.async_utils import call_async_from_sync
    from openhands.utils.utils import create_registry_and_conversation_stats

    from openhands_vscode_runtime.scripted_llm import ScriptedLLM

    openhands_logger.setLevel(logging.ERROR)
    workspace = os.path.realpath(args.workspace or tempfile.mkdtemp(prefix='oh-vscode-demo-'))
    os.makedirs(workspace, exist_ok=True)

    model, key = os.environ.get('LLM_MODEL'), os.environ.get('LLM_API_KEY')
    scripted = None
    if model and key:
        llm = LLMConfig(model=model, api_key=SecretStr(key), base_url=os.environ.get('LLM_BASE_URL'))
        task = args.task
        print(f'LLM: {model} (a real model, from LLM_MODEL / LLM_API_KEY)')
    else:
        scripted = ScriptedLLM(scripted_steps(workspace))
        llm = LLMConfig(
            model='openai/scripted',
            base_url=scripted.start(),
            api_key=SecretStr('scripted'),
            native_tool_calling=True,
            num_retries=0,
        )
        task = TASK
        print(
            'LLM: SCRIPTED stand-in (openhands_vscode_runtime.scripted_llm, '
            f'{len(scripted.script)} fixed answers; no model is called).\n'
            '     Set LLM_MODEL and LLM_API_KEY (and LLM_BASE_URL) to use a real model.'
        )

    config = OpenHandsConfig()
    config.runtime = 'openhands_vscode_runtime.VsCodeRuntime'
    config.workspace_base = workspace
    config.enable_browser = False
    config.max_iterations = args.max_iterations
    config.file_store = 'local'
    config.file_store_path = tempfile.mkdtemp(prefix='oh-vscode-demo-store-')
    config.set_llm_config(llm)
    agent_config = config.get_agent_config(config.default_agent)
    agent_config.enable_browsing = False
    agent_config.enable_jupyter = False

    sid = f'demo-{os.getpid()}'
    llm_registry, _stats, config = create_registry_and_conversation_stats(config, sid, None)
    agent = create_agent(config, llm_registry)
    runtime = create_runtime(config, llm_registry, sid=sid, headless_mode=True, agent=agent)
    start = time.perf_counter()
    try:
        call_async_from_sync(runtime.connect)
    except Exception as e:
        print(f'VsCodeRuntime.connect() failed: {e}', file=sys.stderr)
        return 1
    process = runtime.executor_process
    print(
        f'VsCodeRuntime connected in {time.perf_counter() - start:.2f} s ({runtime.mode} mode, '
        f'headless executor pid {process.pid if process else "-"})\nworkspace: {workspace}\n'
        f'agent: {config.default_agent}\n{BAR}'
    )
    runtime.event_stream.subscribe(
        EventStreamSubscriber.TEST, print_event, 'openhands-vscode-demo'
    )

    def keep_going(_state) -> str:
        return 'Please continue with the task on your own; finish when it is done.'

    started = time.perf_counter()
    try:
        # on this (main) thread: run_controller installs a SIGINT handler on its loop
        state = asyncio.run(run_controller(
            config=config,
            initial_user_action=MessageAction(content=task),
            sid=sid,
            runtime=runtime,
            fake_user_response_fn=keep_going,
            headless_mode=True,
        ))
    finally:
        runtime.close()
        if scripted is not None:
            scripted.stop()
    elapsed = time.perf_counter() - started
    print(BAR)
    ok = state is not None and state.agent_state == AgentState.FINISHED
    if scripted is not None and scripted.mismatches:
        ok = False
        print('scripted LLM: ' + '; '.join(scripted.mismatches))
    finals = [e for e in (state.history if state else []) if isinstance(e, AgentFinishAction)]
    message = state and state.get_last_agent_message()
    final = finals[-1].final_thought if finals else (message.content if message else '-')
    print(f'final message: {final}')
    print(
        f'agent state: {state.agent_state.value if state else "none"}; '
        f'{elapsed:.1f} s; demo {"OK" if ok else "FAILED"}'
    )
    return 0 if ok else 1


if __name__ == '__main__':
    sys.exit(main())
