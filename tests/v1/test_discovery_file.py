"""The V1 discovery file holds an executor secret: `write_discovery_file` writes it 0600 (a
temporary file from `mkstemp`, renamed into place) in a 0700 folder. A file or symlink already at
its path (left by a killed process for the same conversation, or planted) is replaced by the rename,
never written through; a folder left open to other users is tightened, another user's folder
refused (private_dir.py)."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import pytest

from openhands_vscode_runtime.private_dir import UnsafeDirectory
from openhands_vscode_runtime.v1.connection import write_discovery_file

INFO = {'conversation_id': 'conv1', 'url': 'http://127.0.0.1:1', 'session_api_key': 'secret-key'}


@pytest.fixture
def discovery(tmp_path: Path) -> Path:
    return tmp_path / 'state' / 'v1'


def mode(p: Path) -> int:
    return stat.S_IMODE(os.lstat(p).st_mode)


def test_new_file_is_0600_in_a_0700_folder(discovery: Path) -> None:
    path = Path(write_discovery_file(str(discovery), INFO))
    assert path == discovery / 'conv1.json'
    assert json.loads(path.read_text()) == INFO
    assert mode(path) == 0o600
    assert mode(discovery) == 0o700


def test_an_existing_file_is_replaced_not_written_through(discovery: Path, tmp_path: Path) -> None:
    discovery.mkdir(parents=True, mode=0o700)
    planted = discovery / 'conv1.json'
    planted.write_text('planted')
    os.chmod(planted, 0o644)
    other_name = tmp_path / 'other-name'  # a second name of the same inode
    os.link(planted, other_name)
    path = Path(write_discovery_file(str(discovery), INFO))
    assert other_name.read_text() == 'planted', 'the secret was written into the existing file'
    assert json.loads(path.read_text()) == INFO
    assert mode(path) == 0o600


def test_a_planted_symlink_is_not_followed(discovery: Path, tmp_path: Path) -> None:
    discovery.mkdir(parents=True, mode=0o700)
    target = tmp_path / 'elsewhere.json'  # does not exist: a plain open(O_CREAT) would create it
    (discovery / 'conv1.json').symlink_to(target)
    path = Path(write_discovery_file(str(discovery), INFO))
    assert not target.exists(), 'the secret was written through the symlink'
    assert not path.is_symlink() and mode(path) == 0o600


def test_a_loose_existing_folder_is_made_private(discovery: Path) -> None:
    discovery.mkdir(parents=True)
    os.chmod(discovery, 0o777)
    write_discovery_file(str(discovery), INFO)
    assert mode(discovery) == 0o700


def test_another_users_folder_is_refused(as_root: None, discovery: Path) -> None:
    discovery.mkdir(parents=True, mode=0o700)
    os.chown(discovery, 54321, 54321)
    with pytest.raises(UnsafeDirectory):
        write_discovery_file(str(discovery), INFO)
    assert not (discovery / 'conv1.json').exists()
