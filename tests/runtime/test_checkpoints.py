"""A checkpoint before each user message (docs/checkpoints.md): VsCodeRuntime takes it through
the real executor when the event stream delivers a user MessageAction, before any action the
agent takes in answer; a restore brings the workspace back byte for byte, whatever changed it
(bash `sed -i`, a generated file, `rm`, `chmod`, the editor)."""

from __future__ import annotations

import os
import shlex
import stat
import time
from pathlib import Path

import pytest
from conftest import load_runtime, real_executor_only

from openhands.events import EventSource
from openhands.events.action import CmdRunAction, FileEditAction, MessageAction
from openhands.events.event import FileEditSource
from openhands.events.observation import CmdOutputObservation

from openhands_vscode_runtime.checkpoints import CheckpointReply
from openhands_vscode_runtime.executor_process import find_executor

pytestmark = real_executor_only


def tree(root: str) -> dict[str, tuple]:
    """Every path under `root`: its kind, its bytes or link target, its permission bits."""
    out: dict[str, tuple] = {}
    for base, dirs, files in os.walk(root):
        for name in dirs + files:
            path = os.path.join(base, name)
            rel = os.path.relpath(path, root)
            st = os.lstat(path)
            mode = stat.S_IMODE(st.st_mode)
            if stat.S_ISLNK(st.st_mode):
                out[rel] = ('link', os.readlink(path))
            elif stat.S_ISDIR(st.st_mode):
                out[rel] = ('dir', mode)
            else:
                out[rel] = ('file', Path(path).read_bytes(), mode)
    return out


def seed(ws: str) -> None:
    Path(ws, 'a.txt').write_text('old line\nkeep\n')
    Path(ws, 'data').mkdir()
    Path(ws, 'data', 'keep.txt').write_bytes(b'\x00\x01binary\xff')
    Path(ws, 'run.sh').write_text('#!/bin/sh\necho run\n')
    os.chmod(Path(ws, 'run.sh'), 0o755)
    os.symlink('data/keep.txt', Path(ws, 'link'))
    Path(ws, 'empty').mkdir()


def wait_for(predicate, what: str, timeout: float = 30):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.05)
    raise AssertionError(f'timed out waiting for {what}')


def observation_of(runtime, action_id: int):
    return wait_for(
        lambda: next(
            (e for e in runtime.event_stream.search_events() if getattr(e, 'cause', None) == action_id),
            None,
        ),
        f'the observation of action {action_id}',
    )


def agent_does(runtime, action):
    runtime.event_stream.add_event(action, EventSource.AGENT)
    return observation_of(runtime, action.id)


def user_says(runtime, text: str) -> MessageAction:
    message = MessageAction(content=text)
    runtime.event_stream.add_event(message, EventSource.USER)
    return message


@pytest.fixture
def ckpt_runtime(temp_dir, monkeypatch):
    # The store in the test's own folder (the default is under the user's state folder).
    monkeypatch.setenv('OH_CHECKPOINT_DIR', os.path.join(temp_dir, 'store'))
    rt, _config = load_runtime(temp_dir)
    try:
        yield rt
    finally:
        rt.close()


def test_checkpoint_before_each_user_message_restores_byte_for_byte(ckpt_runtime):
    runtime = ckpt_runtime
    ws = runtime.config.workspace_mount_path_in_sandbox
    seed(ws)
    before_first = tree(ws)

    first = user_says(runtime, 'please update the project')
    # The agent's first action follows the message at once: the checkpoint must still come first.
    sed = CmdRunAction(
        "sed -i 's/old/new/' a.txt && seq 1 500 > generated.txt && rm data/keep.txt "
        '&& chmod 600 run.sh && rmdir empty && ln -sfn a.txt link && mkdir src'
    )
    obs = agent_does(runtime, sed)
    assert isinstance(obs, CmdOutputObservation) and obs.exit_code == 0, obs
    assert first.id in runtime.checkpoints
    edit = FileEditAction(
        path=os.path.join(ws, 'a.txt'), command='str_replace', old_str='keep',
        new_str='edited by the editor', impl_source=FileEditSource.OH_ACI,
    )
    obs = agent_does(runtime, edit)
    assert obs.observation == 'edit' and not obs.content.startswith('ERROR'), obs
    create = FileEditAction(
        path=os.path.join(ws, 'src', 'new.py'), command='create', file_text='print(1)\n',
        impl_source=FileEditSource.OH_ACI,
    )
    obs = agent_does(runtime, create)
    assert obs.observation == 'edit' and not obs.content.startswith('ERROR'), obs
    after_first = tree(ws)
    assert Path(ws, 'a.txt').read_text() == 'new line\nedited by the editor\n'
    assert Path(ws, 'src', 'new.py').read_text() == 'print(1)\n'
    assert after_first != before_first

    second = user_says(runtime, 'now remove the generated file')
    obs = agent_does(runtime, CmdRunAction('rm generated.txt && echo tail >> src/new.py'))
    assert isinstance(obs, CmdOutputObservation) and obs.exit_code == 0, obs
    assert second.id in runtime.checkpoints
    assert runtime.checkpoints[second.id] != runtime.checkpoints[first.id]

    # Each checkpoint says which message of which conversation it precedes (structured, not in
    # its label), so a checkpoint list tells them apart.
    listed = runtime.checkpoint('list', {})
    assert isinstance(listed, CheckpointReply), listed
    before = {c['id']: c.get('before_message') for c in listed.result['checkpoints']}
    assert before[runtime.checkpoints[first.id]] == {'conversation_id': runtime.sid, 'message': first.id}
    assert before[runtime.checkpoints[second.id]] == {'conversation_id': runtime.sid, 'message': second.id}

    # Restore to before the second message: the state after the first turn, exactly.
    restored = runtime.checkpoint('restore', {'id': runtime.checkpoints[second.id]})
    assert isinstance(restored, CheckpointReply), restored
    assert tree(ws) == after_first
    # Before the first message: the seeded tree, byte for byte, modes and symlinks included.
    plan = runtime.checkpoint('plan', {'id': runtime.checkpoints[first.id]})
    assert {c['path'] for c in plan.result['changes']} >= {'a.txt', 'generated.txt', 'data/keep.txt', 'run.sh', 'empty', 'link', 'src', 'src/new.py'}
    restored = runtime.checkpoint('restore', {'id': runtime.checkpoints[first.id]})
    assert isinstance(restored, CheckpointReply), restored
    assert tree(ws) == before_first
    # The restore is undoable: its undo checkpoint holds the state it replaced.
    undo = runtime.checkpoint('restore', {'id': restored.result['undo_checkpoint']})
    assert isinstance(undo, CheckpointReply), undo
    assert tree(ws) == after_first


def test_no_checkpoint_for_agent_messages(ckpt_runtime):
    runtime = ckpt_runtime
    said = MessageAction(content='I am done')
    runtime.event_stream.add_event(said, EventSource.AGENT)
    marker = CmdRunAction('true')
    agent_does(runtime, marker)
    assert runtime.checkpoints == {}
    listed = runtime.checkpoint('list', {})
    assert isinstance(listed, CheckpointReply), listed
    assert listed.result['checkpoints'] == []


def test_multi_root_agent_told_every_folder_and_checkpoints_cover_them(temp_dir, monkeypatch):
    """A multi-root workspace (the executor's `--root`, what the extension passes for every
    folder): the agent is told every folder and where the shell starts; a checkpoint before a
    user message covers all of them."""
    other = os.path.join(temp_dir, 'api')
    os.makedirs(other)
    Path(other, 'server.py').write_text('PORT = 1\n')
    command = find_executor()
    assert command is not None
    monkeypatch.setenv('OH_VSCODE_EXECUTOR', shlex.join([*command, '--root', other]))
    monkeypatch.setenv('OH_CHECKPOINT_DIR', os.path.join(temp_dir, 'store'))
    runtime, _config = load_runtime(temp_dir)
    try:
        ws = runtime.config.workspace_mount_path_in_sandbox
        assert runtime._channel.roots == [ws, os.path.realpath(other)]
        told = runtime.additional_agent_instructions
        assert f'2 folders: {ws} and {os.path.realpath(other)}' in told
        assert f'The shell starts in the first one, {ws}' in told
        obs = agent_does(runtime, CmdRunAction('pwd'))
        assert obs.content.strip().splitlines()[0] == ws

        Path(ws, 'app.txt').write_text('v1\n')
        before = (tree(ws), tree(other))
        message = user_says(runtime, 'change the port in the api folder too')
        obs = agent_does(runtime, CmdRunAction(f"sed -i 's/1/2/' {other}/server.py && echo v2 > app.txt && touch {other}/new.py"))
        assert isinstance(obs, CmdOutputObservation) and obs.exit_code == 0, obs
        assert (tree(ws), tree(other)) != before

        restored = runtime.checkpoint('restore', {'id': runtime.checkpoints[message.id]})
        assert isinstance(restored, CheckpointReply), restored
        assert {c['root'] for c in restored.result['applied']} == {ws, os.path.realpath(other)}
        assert (tree(ws), tree(other)) == before
    finally:
        runtime.close()
