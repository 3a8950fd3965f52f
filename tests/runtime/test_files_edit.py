"""File actions (OpenHands' action execution server and `OHEditor`): default read/write and the
str_replace_editor (OH_ACI) flows."""

from __future__ import annotations

import os

from conftest import real_executor_only

from openhands.events.action import FileEditAction, FileReadAction, FileWriteAction
from openhands.events.event import FileEditSource, FileReadSource
from openhands.events.observation import (
    ErrorObservation,
    FileEditObservation,
    FileReadObservation,
    FileWriteObservation,
)

pytestmark = real_executor_only


def edit(rt, path, command, **kw):
    return rt.run_action(
        FileEditAction(path=path, command=command, impl_source=FileEditSource.OH_ACI, **kw)
    )


def view(rt, path, view_range=None):
    return rt.run_action(
        FileReadAction(path=path, impl_source=FileReadSource.OH_ACI, view_range=view_range)
    )


def test_create_view_replace_flow(runtime):
    ws = runtime.config.workspace_mount_path_in_sandbox
    path = f'{ws}/a.py'
    obs = edit(runtime, path, 'create', file_text='x = 1\ny = 2\n')
    assert isinstance(obs, FileEditObservation), obs
    assert obs.content == f'File created successfully at: {path}'
    assert obs.diff == f'--- {path}\n+++ {path}\n@@ -0,0 +1,2 @@\n+x = 1\n+y = 2'
    assert obs.prev_exist is False
    assert open(path).read() == 'x = 1\ny = 2\n'

    obs = view(runtime, path)
    assert isinstance(obs, FileReadObservation)
    assert obs.content == (
        f"Here's the result of running `cat -n` on {path}:\n     1\tx = 1\n     2\ty = 2\n     3\t\n"
    )

    obs = edit(runtime, path, 'str_replace', old_str=' = ', new_str='=')
    assert obs.content == (
        'ERROR:\nNo replacement was performed. Multiple occurrences of old_str ` = ` in lines '
        '[1, 2]. Please ensure it is unique.'
    )

    obs = view(runtime, path, view_range=[2, 3])
    assert obs.content == (
        "NOTE: We only show up to 2 since there're only 2 lines in this file.\n"
        f"Here's the result of running `cat -n` on {path}:\n     2\ty = 2\n"
    )

    obs = edit(runtime, path, 'str_replace', old_str='y = 2', new_str='y = 3')
    assert obs.content.startswith(f'The file {path} has been edited. ')
    assert obs.content.endswith(
        'Review the changes and make sure they are as expected. Edit the file again if necessary.'
    )
    assert obs.old_content == 'y = 2' and obs.new_content == 'y = 3'
    assert open(path).read() == 'x = 1\ny = 3\n'

    obs = edit(runtime, path, 'undo_edit')
    assert obs.content.startswith(f'Last edit to {path} undone successfully. ')
    assert open(path).read() == 'x = 1\ny = 2\n'


def test_insert_glue_and_undo(runtime):
    ws = runtime.config.workspace_mount_path_in_sandbox
    path = f'{ws}/n.txt'
    with open(path, 'w') as f:
        f.write('x\ny')
    obs = edit(runtime, path, 'insert', insert_line=2, new_str='NEW')
    assert obs.content == (
        f"The file {path} has been edited. Here's the result of running `cat -n` on a snippet "
        'of the edited file:\n     1\tx\n     2\tyNEW\n     3\t\nReview the changes and make sure '
        'they are as expected (correct indentation, no duplicate lines, etc). Edit the file '
        'again if necessary.'
    )
    assert obs.diff == f'--- {path}\n+++ {path}\n@@ -2 +2,2 @@\n-y\n+yNEW\n+'
    assert open(path).read() == 'x\nyNEW\n'
    obs = edit(runtime, path, 'undo_edit')
    assert obs.content == (
        f"Last edit to {path} undone successfully. Here's the result of running `cat -n` on "
        f'{path}:\n     1\tx\n     2\ty\n'
    )
    obs = edit(runtime, path, 'undo_edit')
    assert obs.content == f'ERROR:\nNo edit history found for {path}.'


def test_editor_errors(runtime):
    ws = runtime.config.workspace_mount_path_in_sandbox
    with open(f'{ws}/exists.txt', 'w') as f:
        f.write('hi\n')
    obs = view(runtime, 'exists.txt')
    assert obs.content == (
        'ERROR:\nInvalid `path` parameter: exists.txt. The path should be an absolute path, '
        f'starting with `/`. Maybe you meant {ws}/exists.txt?'
    )
    obs = edit(runtime, f'{ws}/exists.txt', 'create', file_text='x')
    assert obs.content == (
        f'ERROR:\nInvalid `path` parameter: {ws}/exists.txt. File already exists at: '
        f'{ws}/exists.txt. Cannot overwrite files using command `create`.'
    )
    obs = edit(runtime, f'{ws}/missing.txt', 'str_replace', old_str='a', new_str='b')
    assert obs.content == (
        f'ERROR:\nInvalid `path` parameter: {ws}/missing.txt. The path {ws}/missing.txt does not '
        'exist. Please provide a valid path.'
    )
    assert open(f'{ws}/exists.txt').read() == 'hi\n'  # nothing was truncated


def test_str_replace_with_empty_old_str(runtime):
    ws = runtime.config.workspace_mount_path_in_sandbox
    path = f'{ws}/nums.txt'
    obs = runtime.run_action(FileWriteAction(path=path, content='1\n2\n3'))
    assert isinstance(obs, FileWriteObservation), obs
    assert open(path).read() == '1\n2\n3\n'  # docker-style write adds a newline
    obs = edit(runtime, path, 'str_replace', old_str='', new_str='x')
    assert obs.content == (
        'ERROR:\nNo replacement was performed. Multiple occurrences of old_str `` in lines '
        '[1, 2, 3, 4]. Please ensure it is unique.'
    )


def test_default_write_and_read(runtime):
    ws = runtime.config.workspace_mount_path_in_sandbox
    obs = runtime.run_action(FileWriteAction(path='w/new.txt', content='alpha\nbeta'))
    assert isinstance(obs, FileWriteObservation), obs
    assert obs.path == f'{ws}/w/new.txt'
    assert open(f'{ws}/w/new.txt').read() == 'alpha\nbeta\n'
    obs = runtime.run_action(FileReadAction(path='w/new.txt'))
    assert isinstance(obs, FileReadObservation)
    assert obs.content == 'alpha\nbeta\n'
    obs = runtime.run_action(FileReadAction(path=f'{ws}/w/new.txt', start=1, end=2))
    assert obs.content == 'alpha\nbeta\n'
    obs = runtime.run_action(FileReadAction(path='w/none.txt'))
    assert isinstance(obs, ErrorObservation)
    assert obs.content == (
        f'File not found: {ws}/w/none.txt. Your current working directory is {ws}.'
    )


def test_read_relative_follows_the_shell_cwd(runtime):
    ws = runtime.config.workspace_mount_path_in_sandbox
    os.makedirs(f'{ws}/d')
    with open(f'{ws}/d/README.md', 'w') as f:
        f.write('Hello World\n')
    from openhands.events.action import CmdRunAction

    assert runtime.run_action(CmdRunAction('cd d')).exit_code == 0
    obs = runtime.run_action(FileReadAction(path='README.md'))
    assert isinstance(obs, FileReadObservation), obs
    assert obs.content == 'Hello World\n'
