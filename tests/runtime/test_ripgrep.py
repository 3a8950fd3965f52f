"""ripgrep: OpenHands turns its grep/glob tools into `rg` commands. VsCodeRuntime warns at start
when `rg` is not on PATH (with how to install it); `make test` installs it (scripts/setup-system.sh),
and the tools then work through the executor."""

from __future__ import annotations

import logging
import os
import shutil

import pytest
from conftest import load_runtime, real_executor_only

from openhands.agenthub.readonly_agent.function_calling import glob_to_cmdrun, grep_to_cmdrun
from openhands.core.logger import openhands_logger
from openhands.events.action import CmdRunAction

from openhands_vscode_runtime.v0.runtime import RIPGREP_MISSING, ripgrep_warning


def test_warning_names_the_fix_when_rg_is_missing(tmp_path):
    assert ripgrep_warning(path=str(tmp_path)) == RIPGREP_MISSING
    assert 'sudo apt-get install ripgrep' in RIPGREP_MISSING
    assert 'rg: command not found' in RIPGREP_MISSING
    fake = tmp_path / 'rg'
    fake.write_text('#!/bin/sh\n')
    fake.chmod(0o755)
    assert ripgrep_warning(path=str(tmp_path)) is None


class _Records(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.messages: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.messages.append(record.getMessage())


@pytest.mark.parametrize('has_rg', [False, True])
def test_connect_warns_only_without_rg(temp_dir, monkeypatch, tmp_path, has_rg):
    bin_dir = tmp_path / 'bin'
    bin_dir.mkdir()
    # the executor needs node; keep it reachable while rg is not
    node = shutil.which('node')
    assert node, 'node is needed for the headless executor'
    os.symlink(node, bin_dir / 'node')
    for tool in ('bash', 'sh', 'env', 'python3', 'cat', 'ls'):
        found = shutil.which(tool)
        if found:
            os.symlink(found, bin_dir / tool)
    if has_rg:
        rg = shutil.which('rg')
        assert rg, 'ripgrep is not installed: run scripts/setup-system.sh'
        os.symlink(rg, bin_dir / 'rg')
    monkeypatch.setenv('PATH', str(bin_dir))
    records = _Records()
    openhands_logger.addHandler(records)
    try:
        rt, _ = load_runtime(temp_dir)
        rt.close()
    finally:
        openhands_logger.removeHandler(records)
    warned = [m for m in records.messages if 'ripgrep (`rg`) is not on PATH' in m]
    assert len(warned) == (0 if has_rg else 1), records.messages


@real_executor_only
def test_grep_and_glob_tools_work_through_the_executor(runtime):
    assert shutil.which('rg'), 'ripgrep is not installed: run scripts/setup-system.sh'
    ws = runtime.config.workspace_mount_path_in_sandbox
    os.makedirs(os.path.join(ws, 'src'), exist_ok=True)
    with open(os.path.join(ws, 'src', 'a.py'), 'w') as f:
        f.write('def needle():\n    pass\n')
    with open(os.path.join(ws, 'b.txt'), 'w') as f:
        f.write('nothing here\n')
    grep = runtime.run_action(CmdRunAction(grep_to_cmdrun('needle', ws)))
    assert grep.exit_code == 0, grep.content
    assert f'{ws}/src/a.py' in grep.content and 'b.txt' not in grep.content
    found = runtime.run_action(CmdRunAction(glob_to_cmdrun('**/*.py', ws)))
    assert found.exit_code == 0, found.content
    assert f'{ws}/src/a.py' in found.content
