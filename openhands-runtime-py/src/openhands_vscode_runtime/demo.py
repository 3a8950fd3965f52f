"""A short scripted agent session through VsCodeRuntime (embedded mode + the headless executor).

    python -m openhands_vscode_runtime.demo [--workspace DIR]

Prints every action and the observation exactly as the agent (the LLM) would see it. Exits 0 when
every step produced the kind of observation it should.
"""

from __future__ import annotations

import argparse
import logging
import os
import sys
import tempfile
import time

os.environ.setdefault('LOG_LEVEL', 'ERROR')
os.environ.setdefault('OPENHANDS_SUPPRESS_BANNER', '1')
os.environ.setdefault('OH_VSCODE_MODE', 'embedded')

BAR = '-' * 78


def agent_text(obs) -> str:
    from openhands.events.observation import (
        CmdOutputObservation,
        ErrorObservation,
        FileReadObservation,
    )

    if isinstance(obs, CmdOutputObservation):
        return obs.to_agent_observation()
    if isinstance(obs, FileReadObservation):
        return obs.content
    if isinstance(obs, ErrorObservation):
        return f'{obs.content}\n[Error occurred in processing last action]'
    return str(obs)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--workspace', help='workspace directory (default: a new temp dir)')
    parser.add_argument('--no-change-timeout', type=int, default=2)
    args = parser.parse_args(argv)

    from openhands.core.config import OpenHandsConfig
    from openhands.core.logger import openhands_logger
    from openhands.events import EventStream
    from openhands.events.action import CmdRunAction, FileEditAction, FileReadAction
    from openhands.events.event import FileEditSource, FileReadSource
    from openhands.events.observation import (
        CmdOutputObservation,
        FileEditObservation,
        FileReadObservation,
    )
    from openhands.llm.llm_registry import LLMRegistry
    from openhands.storage import get_file_store
    from openhands.utils.async_utils import call_async_from_sync

    from openhands_vscode_runtime import VsCodeRuntime

    # `python -m` imported openhands (through this package) before LOG_LEVEL could apply
    openhands_logger.setLevel(logging.ERROR)
    workspace = args.workspace or tempfile.mkdtemp(prefix='oh-vscode-demo-')
    config = OpenHandsConfig()
    config.workspace_base = workspace
    config.sandbox.runtime_startup_env_vars = {
        'NO_CHANGE_TIMEOUT_SECONDS': str(args.no_change_timeout)
    }
    store = tempfile.mkdtemp(prefix='oh-vscode-demo-store-')
    sid = 'demo'
    runtime = VsCodeRuntime(
        config=config,
        event_stream=EventStream(sid, get_file_store('local', store)),
        llm_registry=LLMRegistry(config),
        sid=sid,
        headless_mode=True,
    )
    start = time.perf_counter()
    try:
        call_async_from_sync(runtime.connect)
    except Exception as e:
        print(f'connect() failed: {e}', file=sys.stderr)
        return 1
    ws = runtime.config.workspace_mount_path_in_sandbox
    print(f'VsCodeRuntime connected in {time.perf_counter() - start:.2f} s ({runtime.mode} mode, '
          f'executor pid {runtime.executor_process.pid if runtime.executor_process else "-"})')
    print(f'workspace: {ws}\n')

    path = f'{ws}/demo/hello.py'
    steps = [
        ('cd into a new directory', CmdRunAction('mkdir -p demo && cd demo'), CmdOutputObservation),
        ('a failing command', CmdRunAction('ls does-not-exist'), CmdOutputObservation),
        (
            'create a file (str_replace_editor create)',
            FileEditAction(
                path=path,
                command='create',
                file_text='def greet():\n    return "hello"\n\nprint(greet())\n',
                impl_source=FileEditSource.OH_ACI,
            ),
            FileEditObservation,
        ),
        (
            'edit it (str_replace_editor str_replace)',
            FileEditAction(
                path=path,
                command='str_replace',
                old_str='return "hello"',
                new_str='return "hello from VS Code"',
                impl_source=FileEditSource.OH_ACI,
            ),
            FileEditObservation,
        ),
        (
            'view it (str_replace_editor view)',
            FileReadAction(path=path, impl_source=FileReadSource.OH_ACI),
            FileReadObservation,
        ),
        ('run it', CmdRunAction('python3 hello.py'), CmdOutputObservation),
        (
            f'a command that goes quiet for longer than the {args.no_change_timeout} s soft timeout',
            CmdRunAction(
                f'echo working; sleep {args.no_change_timeout + 1}; echo still working; '
                f'sleep {args.no_change_timeout + 1}; echo done'
            ),
            CmdOutputObservation,
        ),
    ]
    ok = True
    try:
        for title, action, expected in steps:
            ok &= _step(runtime, title, action, expected)
        # continue the timed-out command with '' until it completes
        for _ in range(10):
            obs = runtime.run_action(CmdRunAction(''))
            _show("continue with ''", CmdRunAction(''), obs)
            ok &= isinstance(obs, CmdOutputObservation)
            if not isinstance(obs, CmdOutputObservation) or obs.exit_code != -1:
                break
        ok &= isinstance(obs, CmdOutputObservation) and obs.exit_code == 0
    finally:
        runtime.close()
    print(BAR)
    print('demo finished: ' + ('OK' if ok else 'FAILED'))
    return 0 if ok else 1


def _show(title, action, obs) -> None:
    from openhands.events.action import CmdRunAction

    print(BAR)
    print(f'# {title}')
    if isinstance(action, CmdRunAction):
        print(f'$ {action.command}')
    else:
        print(f'> {type(action).__name__} {getattr(action, "command", "") or "view"} {action.path}')
    print(f'[{type(obs).__name__}]')
    print(agent_text(obs))


def _step(runtime, title, action, expected) -> bool:
    obs = runtime.run_action(action)
    _show(title, action, obs)
    return isinstance(obs, expected)


if __name__ == '__main__':
    sys.exit(main())
