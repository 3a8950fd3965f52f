"""The Runtime contract (OpenHands' `openhands/runtime/base.py`): env vars, setup script,
event-stream path, copy/list files."""

from __future__ import annotations

import os
import time
import zipfile
from pathlib import Path

import pytest
from conftest import load_runtime, real_executor_only

from openhands.events import EventSource, EventStream
from openhands.events.action import (
    BrowseInteractiveAction,
    BrowseURLAction,
    CmdRunAction,
    FileReadAction,
    IPythonRunCellAction,
)
from openhands.events.observation import CmdOutputObservation, ErrorObservation
from openhands.runtime import get_runtime_cls

from openhands_vscode_runtime import VsCodeRuntime


def _home_snapshot() -> dict[str, bytes | None]:
    home = Path.home()
    snap: dict[str, bytes | None] = {}
    for name in ('.bashrc', '.gitconfig', '.config/git/config'):
        p = home / name
        snap[name] = p.read_bytes() if p.exists() else None
    return snap


def wait_for_observation(stream, cause: int, timeout: float = 30):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = [e for e in stream.search_events() if getattr(e, 'cause', None) == cause]
        if found:
            return found
        time.sleep(0.05)
    raise AssertionError(f'no observation with cause {cause} in the stream')


def test_selected_by_dotted_path():
    assert get_runtime_cls('openhands_vscode_runtime.VsCodeRuntime') is VsCodeRuntime


@real_executor_only
def test_env_vars_in_session_only(temp_dir, monkeypatch):
    before = _home_snapshot()
    monkeypatch.setenv('SANDBOX_ENV_FROM_HOST', 'host value')
    rt, config = load_runtime(
        temp_dir,
        env_vars={'foo': 'bar baz'},
        runtime_startup_env_vars={'STARTUP_VAR': 'up', 'NO_CHANGE_TIMEOUT_SECONDS': '5'},
    )
    try:
        assert rt.run_action(CmdRunAction('echo "$FOO|$FROM_HOST|$STARTUP_VAR"')).content == (
            'bar baz|host value|up'
        )
        rt.add_env_vars({'quux': 'with "quotes" and spaces'})
        assert rt.run_action(CmdRunAction('echo "$QUUX"')).content == 'with "quotes" and spaces'
        # the session setting reached the executor's welcome
        assert rt._channel.session_settings == {'no_change_timeout_seconds': 5}
        # nothing leaked into the host process environment
        assert 'QUUX' not in os.environ and 'FOO' not in os.environ
    finally:
        rt.close()
    assert _home_snapshot() == before, 'the runtime edited ~/.bashrc or the global git config'


@real_executor_only
def test_setup_script_runs_once(runtime):
    ws = runtime.config.workspace_mount_path_in_sandbox
    os.makedirs(f'{ws}/.openhands')
    with open(f'{ws}/.openhands/setup.sh', 'w') as f:
        f.write('echo "Hello World" >> README.md\nexport SETUP_DONE=yes\n')
    runtime.maybe_run_setup_script()
    # the stream copy of the action went through on_event too; give it time to (not) run again
    setup_action = [
        e for e in runtime.event_stream.search_events() if isinstance(e, CmdRunAction)
    ][-1]
    obs = wait_for_observation(runtime.event_stream, setup_action.id)
    assert len(obs) == 1 and isinstance(obs[0], CmdOutputObservation)
    assert obs[0].source == EventSource.ENVIRONMENT
    read = runtime.run_action(FileReadAction(path='README.md'))
    assert read.content == 'Hello World\n'
    assert runtime.run_action(CmdRunAction('echo $SETUP_DONE')).content == 'yes'


def test_stream_action_and_direct_run_execute_once(runtime):
    ws = runtime.config.workspace_mount_path_in_sandbox
    action = CmdRunAction('echo tick >> ticks.txt')
    runtime.event_stream.add_event(action, EventSource.AGENT)
    direct = runtime.run_action(action)
    assert direct.exit_code == 0
    obs = wait_for_observation(runtime.event_stream, action.id)
    assert len(obs) == 1
    assert obs[0].source == EventSource.AGENT
    assert obs[0].cause == action.id
    time.sleep(0.3)
    assert open(f'{ws}/ticks.txt').read() == 'tick\n'


def test_unsupported_actions_are_clear_errors(runtime):
    for action in (
        IPythonRunCellAction(code='print(1)'),
        BrowseURLAction(url='https://example.com'),
        BrowseInteractiveAction(browser_actions='goto("https://example.com")'),
    ):
        obs = runtime.run_action(action)
        assert isinstance(obs, ErrorObservation)
        assert 'not available in VsCodeRuntime' in obs.content


def test_copy_to(runtime, tmp_path):
    ws = runtime.config.workspace_mount_path_in_sandbox
    src = tmp_path / 'src'
    (src / 'inner').mkdir(parents=True)
    (src / 'a.txt').write_text('A')
    (src / 'inner' / 'b.txt').write_text('B')
    single = tmp_path / 'single.txt'
    single.write_text('S')

    runtime.copy_to(str(single), ws)  # into an existing directory
    assert Path(ws, 'single.txt').read_text() == 'S'
    runtime.copy_to(str(single), f'{ws}/newdir')  # no dot: a new directory
    assert Path(ws, 'newdir', 'single.txt').read_text() == 'S'
    runtime.copy_to(str(single), '/workspace/renamed.cfg')  # /workspace maps to the workspace
    assert Path(ws, 'renamed.cfg').read_text() == 'S'
    runtime.copy_to(str(single), 'deep/er/')  # trailing slash: a directory
    assert Path(ws, 'deep', 'er', 'single.txt').read_text() == 'S'
    runtime.copy_to(str(src), ws, recursive=True)
    assert Path(ws, 'src', 'inner', 'b.txt').read_text() == 'B'

    with pytest.raises(FileNotFoundError, match="Source path '.*nope' does not exist."):
        runtime.copy_to(str(tmp_path / 'nope'), ws)
    with pytest.raises(FileNotFoundError, match='is not a valid file or directory'):
        runtime.copy_to(str(src), ws, recursive=False)
    with pytest.raises(PermissionError):
        runtime.copy_to(str(single), '/etc/not-the-workspace.txt')


def test_list_files_and_copy_from(runtime, tmp_path):
    ws = runtime.config.workspace_mount_path_in_sandbox
    os.makedirs(f'{ws}/d/e')
    Path(ws, 'd', 'x.txt').write_text('x')
    Path(ws, 'd', 'e', 'y.txt').write_text('y')
    assert sorted(runtime.list_files()) == [f'{ws}/d']
    assert sorted(runtime.list_files(f'{ws}/d')) == [f'{ws}/d/e', f'{ws}/d/x.txt']
    assert runtime.list_files('d/x.txt') == [f'{ws}/d/x.txt']
    assert runtime.list_files('missing') == []

    zpath = runtime.copy_from(f'{ws}/d')
    with zipfile.ZipFile(zpath) as z:
        assert sorted(z.namelist()) == ['e/y.txt', 'x.txt']
        assert z.read('e/y.txt') == b'y'
    zpath.unlink()
    zpath = runtime.copy_from('d/x.txt')
    with zipfile.ZipFile(zpath) as z:
        assert z.namelist() == ['x.txt']
    zpath.unlink()
    with pytest.raises(FileNotFoundError, match='Path not found: nothing'):
        runtime.copy_from('nothing')


def test_mcp_config_like_cliruntime(runtime):
    from openhands.core.config.mcp_config import MCPStdioServerConfig

    server = MCPStdioServerConfig(name='echo', command='true')
    config = runtime.get_mcp_config([server])
    assert server in config.stdio_servers
    assert server in runtime.get_mcp_config().stdio_servers


def test_connect_fails_clearly_without_executor(temp_dir, monkeypatch):
    monkeypatch.setenv('OH_VSCODE_SPAWN_EXECUTOR', '0')
    monkeypatch.setenv('OH_VSCODE_CONNECT_TIMEOUT', '0.5')
    from openhands.core.exceptions import AgentRuntimeUnavailableError

    start = time.monotonic()
    with pytest.raises(AgentRuntimeUnavailableError, match='no executor registered within 0.5 s'):
        load_runtime(temp_dir)
    assert time.monotonic() - start < 5


def test_connect_fails_clearly_when_executor_dies(temp_dir, monkeypatch):
    monkeypatch.setenv('OH_VSCODE_EXECUTOR', 'bash -c "echo executor-broke >&2; exit 3"')
    from openhands.core.exceptions import AgentRuntimeUnavailableError

    with pytest.raises(AgentRuntimeUnavailableError, match='exited with code 3') as info:
        load_runtime(temp_dir)
    assert 'executor-broke' in str(info.value)


def test_attach_to_existing_shares_the_running_runtime(runtime):
    from openhands.core.exceptions import AgentRuntimeUnavailableError
    from openhands.llm.llm_registry import LLMRegistry
    from openhands.utils.async_utils import call_async_from_sync

    # as ServerConversation does: a new stream object on the same conversation
    stream = EventStream(runtime.sid, runtime.event_stream.file_store)
    attached = VsCodeRuntime(
        config=runtime.config,
        event_stream=stream,
        llm_registry=LLMRegistry(runtime.config),
        sid=runtime.sid,
        attach_to_existing=True,
    )
    call_async_from_sync(attached.connect)
    assert attached.run_action(CmdRunAction('echo shared')).content == 'shared'
    attached.close()  # does not close the owner's channel
    assert runtime.run_action(CmdRunAction('echo still')).content == 'still'

    lonely = VsCodeRuntime(
        config=runtime.config,
        llm_registry=LLMRegistry(runtime.config),
        sid='rt_000000',
        event_stream=EventStream('rt_000000', runtime.event_stream.file_store),
        attach_to_existing=True,
    )
    with pytest.raises(AgentRuntimeUnavailableError, match='no running runtime'):
        call_async_from_sync(lonely.connect)
    lonely.close()


def test_same_action_object_delivered_concurrently_runs_once(runtime):
    import concurrent.futures

    ws = runtime.config.workspace_mount_path_in_sandbox
    action = CmdRunAction('sleep 0.5; echo once >> once.txt')
    with concurrent.futures.ThreadPoolExecutor(2) as pool:
        a, b = pool.submit(runtime.run_action, action), pool.submit(runtime.run_action, action)
        obs_a, obs_b = a.result(30), b.result(30)
    assert obs_a.exit_code == 0 and obs_b.exit_code == 0
    assert open(f'{ws}/once.txt').read() == 'once\n'
    # once finished, the same object may be run again on purpose
    assert runtime.run_action(action).exit_code == 0
    assert open(f'{ws}/once.txt').read() == 'once\nonce\n'
