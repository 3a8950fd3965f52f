"""Shell behaviour through VsCodeRuntime and the real executor (OpenHands' `BashSession`
semantics, `openhands/runtime/utils/bash.py`)."""

from __future__ import annotations

import os
import re
import time

import pytest
from conftest import load_runtime, real_executor_only

from openhands.events.action import CmdRunAction
from openhands.events.observation import CmdOutputObservation, ErrorObservation

T = (
    "You may wait longer to see additional output by sending empty command '', send other "
    'commands to interact with the current process, send keys ("C-c", "C-z", "C-d") to '
    'interrupt/kill the previous command before sending your new command, or use the timeout '
    'parameter in execute_bash for future commands.'
)
CONTINUATION = '[Below is the output of the previous command.]\n'

pytestmark = real_executor_only


def run(rt, command: str, *, timeout: float | None = None, is_input: bool = False, blocking=None):
    action = CmdRunAction(command=command, is_input=is_input)
    if timeout is not None:
        action.set_hard_timeout(timeout, blocking=True if blocking is None else blocking)
    return rt.run_action(action)


@pytest.fixture
def rt1(temp_dir):
    """A runtime whose soft (no-change) timeout is 1 s, as the upstream tests configure it."""
    rt, _ = load_runtime(temp_dir, runtime_startup_env_vars={'NO_CHANGE_TIMEOUT_SECONDS': '1'})
    yield rt
    rt.close()


def test_echo_metadata(runtime):
    ws = runtime.config.workspace_mount_path_in_sandbox
    obs = run(runtime, 'echo hi')
    assert isinstance(obs, CmdOutputObservation), obs
    assert obs.content == 'hi'
    assert obs.exit_code == 0
    assert obs.metadata.working_dir == ws
    assert obs.metadata.prefix == ''
    assert obs.metadata.suffix == '\n[The command completed with exit code 0.]'
    assert obs.command == 'echo hi'


def test_workspace_is_the_executors(runtime, temp_dir):
    ws = runtime.config.workspace_mount_path_in_sandbox
    assert ws == os.path.realpath(os.path.join(temp_dir, 'workspace'))
    obs = run(runtime, 'pwd')
    assert obs.content == ws


def test_state_persists(runtime):
    ws = runtime.config.workspace_mount_path_in_sandbox
    assert run(runtime, 'mkdir -p sub/dir && cd sub/dir').exit_code == 0
    obs = run(runtime, 'pwd')
    assert obs.content == f'{ws}/sub/dir'
    assert obs.metadata.working_dir == f'{ws}/sub/dir'
    assert run(runtime, 'export MY_STATE=kept; my_fn() { echo "fn $1"; }').exit_code == 0
    assert run(runtime, 'echo $MY_STATE').content == 'kept'
    assert run(runtime, 'my_fn x').content == 'fn x'


def test_failing_commands(runtime):
    obs = run(runtime, 'false')
    assert obs.exit_code == 1 and obs.content == ''
    assert obs.metadata.suffix == '\n[The command completed with exit code 1.]'
    obs = run(runtime, 'ls /definitely/not/here')
    assert obs.exit_code == 2
    assert 'No such file or directory' in obs.content
    # the session survives failures
    assert run(runtime, 'echo alive').content == 'alive'


def test_empty_and_input_when_idle(runtime):
    obs = run(runtime, '')
    assert isinstance(obs, CmdOutputObservation)
    assert obs.content == 'ERROR: No previous running command to retrieve logs from.'
    assert obs.exit_code == -1
    obs = run(runtime, 'hello', is_input=True)
    assert obs.content == 'ERROR: No previous running command to interact with.'
    assert obs.command == ''


def test_multi_command_rejected(runtime):
    obs = run(runtime, 'echo a\necho b')
    assert isinstance(obs, ErrorObservation), obs
    assert obs.content == (
        'ERROR: Cannot execute multiple commands at once.\n'
        'Please run each command separately OR chain them into a single command via && or ;\n'
        'Provided commands:\n(1) echo a\n(2) echo b'
    )
    # one command with ; and a for loop over lines is fine
    assert run(runtime, 'echo a; echo b').content == 'a\nb'
    assert run(runtime, 'for i in 1 2; do\n echo $i\ndone').content == '1\n2'


def test_soft_timeout_then_continue(rt1):
    obs = run(rt1, 'echo start; sleep 3; echo end')
    assert obs.exit_code == -1, obs
    assert obs.content == 'start'
    assert obs.metadata.prefix == ''
    assert obs.metadata.suffix == f'\n[The command has no new output after 1 seconds. {T}]'
    seen = [obs]
    for _ in range(10):
        obs = run(rt1, '')
        seen.append(obs)
        if obs.exit_code != -1:
            break
        assert obs.metadata.prefix == CONTINUATION
    assert obs.exit_code == 0, seen
    assert obs.metadata.prefix == ''
    assert obs.content.endswith('end')
    assert 'start' not in obs.content  # only new output


def test_hard_timeout_and_ctrl_c(rt1):
    obs = run(rt1, 'sleep 30', timeout=1)
    assert obs.exit_code == -1
    assert obs.metadata.suffix == f'\n[The command timed out after 1.0 seconds. {T}]'
    # a new command is refused while the old one runs
    obs = run(rt1, 'echo new')
    assert obs.exit_code == -1
    assert obs.metadata.prefix == CONTINUATION
    assert obs.metadata.suffix.startswith(
        '\n[Your command "echo new" is NOT executed. The previous command is still running'
    )
    obs = run(rt1, 'C-c', is_input=True)
    assert obs.exit_code == 130, obs
    assert obs.metadata.suffix == (
        '\n[The command completed with exit code 130. CTRL+C was sent.]'
    )
    assert run(rt1, 'echo after').content == 'after'


def test_incremental_output_with_hard_timeout(rt1):
    obs = run(rt1, 'for i in $(seq 1 4); do echo $i; sleep 2; done', timeout=2.5)
    assert obs.exit_code == -1
    assert obs.content.startswith('1')
    assert '[The command timed out after 2.5 seconds.' in obs.metadata.suffix
    obs = run(rt1, '', timeout=2.5)
    assert obs.metadata.prefix == CONTINUATION
    assert obs.content.strip().startswith('2') or obs.content.strip().startswith('3'), obs
    run(rt1, 'C-c', is_input=True)


def test_interactive_input(rt1):
    obs = run(rt1, 'read -p "name? " NAME && echo "hello $NAME"')
    assert obs.exit_code == -1
    assert 'name?' in obs.content
    obs = run(rt1, 'bob', is_input=True)
    assert obs.exit_code == 0, obs
    assert obs.content.endswith('hello bob')


def test_cat_then_ctrl_d(rt1):
    obs = run(rt1, 'cat')
    assert obs.exit_code == -1
    obs = run(rt1, 'ping-pong', is_input=True)
    assert 'ping-pong' in obs.content
    obs = run(rt1, 'C-d', is_input=True)
    assert obs.exit_code == 0
    assert obs.metadata.suffix == '\n[The command completed with exit code 0. CTRL+D was sent.]'


def test_long_output_is_truncated_like_docker(runtime):
    obs = run(runtime, 'for i in $(seq 1 50000); do echo "Line $i"; done', timeout=60)
    assert obs.exit_code == 0
    assert 'Line 50000' in obs.content
    assert 'Line 40000' in obs.content
    assert re.fullmatch(
        r'\[Previous command outputs are truncated\. Showing the last \d+ lines of the output '
        r'below\.\]\n',
        obs.metadata.prefix,
    ), obs.metadata.prefix


def test_output_over_30000_chars_is_middle_truncated(runtime):
    obs = run(runtime, 'python3 -c "print(\'x\' * 40000)"')
    assert obs.exit_code == 0
    assert '[... Observation truncated due to length ...]' in obs.content
    assert len(obs.content) == 30047


def test_background_job(runtime):
    start = time.monotonic()
    obs = run(runtime, '(sleep 1; echo bg-done > bg.txt) &')
    assert obs.exit_code == 0
    assert obs.metadata.pid > 0
    assert time.monotonic() - start < 5
    bg = os.path.join(runtime.config.workspace_base, 'bg.txt')
    deadline = time.monotonic() + 30
    while not (os.path.exists(bg) and open(bg).read() == 'bg-done\n'):  # the job's last effect
        assert time.monotonic() < deadline, 'the background job did not finish within 30 s'
        time.sleep(0.02)
    obs = run(runtime, 'cat bg.txt')
    # interactive bash reports the finished job before the next prompt, as in the tmux runtime
    assert obs.content.split('\n')[0] == 'bg-done'
    assert obs.content.split('\n')[1:] in ([], ['[1]+  Done                    ( sleep 1; echo bg-done > bg.txt )'])


def test_background_server_and_curl(runtime):
    obs = run(runtime, 'python3 -m http.server 18081 > server.log 2>&1 &')
    assert obs.exit_code == 0
    try:
        for _ in range(20):
            obs = run(runtime, 'curl -s -o /dev/null -w "%{http_code}" http://127.0.0.1:18081/')
            if obs.content == '200':
                break
            time.sleep(0.25)
        assert obs.content == '200'
    finally:
        run(runtime, 'kill %1')


def test_sandbox_timeout_is_the_default_hard_timeout(temp_dir):
    rt, _ = load_runtime(
        temp_dir,
        runtime_startup_env_vars={'NO_CHANGE_TIMEOUT_SECONDS': '30'},
        sandbox_timeout=2,
    )
    try:
        action = CmdRunAction('sleep 10')
        assert action.timeout is None
        start = time.monotonic()
        obs = rt.run_action(action)
        assert time.monotonic() - start < 8
        assert action.timeout == 2
        assert obs.exit_code == -1
        assert '[The command timed out after 2.0 seconds.' in obs.metadata.suffix
    finally:
        rt.close()


def test_find_exec_with_escaped_semicolon_runs(runtime, temp_dir):
    """OpenHands' test_command_backslash (issue 10): an absolute path and a trailing `\\;` run."""
    d = os.path.join(temp_dir, 'find_dir')
    assert run(runtime, f'mkdir -p {d} && echo "implemented_function" > {d}/file_1.txt').exit_code == 0
    obs = run(runtime, f'find {d} -type f -exec grep -l "implemented_function" {{}} \\;')
    assert obs.exit_code == 0, obs
    assert f'{d}/file_1.txt' in obs.content
    # completed by its prompt, not ended by the soft timeout
    assert obs.metadata.suffix == '\n[The command completed with exit code 0.]'
