"""The runtime's file operations on the host: `copy_to`, `copy_from`, `list_files`.

They work on the executor's workspace directly, with CLIRuntime's semantics: the executor runs on
the same machine as this process (embedded mode, or a local OpenHands server), so no round trip
through it is needed. Sandbox paths (`/workspace/...`, relative ones) map onto the workspace;
anything that resolves outside it is refused.
"""

from __future__ import annotations

import logging
import os
import shutil
import tempfile
import zipfile
from pathlib import Path

logger = logging.getLogger('openhands_vscode_runtime')


class HostFiles:
    """File operations on one workspace directory (an absolute, resolved path)."""

    def __init__(self, workspace: str) -> None:
        self.workspace = workspace

    def host_path(self, path: str) -> str:
        """Map a sandbox path into the workspace; refuse anything that resolves outside it."""
        ws = self.workspace
        if path == '/workspace':
            candidate = ws
        elif path.startswith('/workspace/'):
            candidate = os.path.join(ws, path[len('/workspace/'):])
        elif os.path.isabs(path):
            candidate = path
        else:
            candidate = os.path.join(ws, path)
        resolved = os.path.realpath(candidate)
        if resolved != ws and os.path.commonpath([resolved, ws]) != ws:
            raise PermissionError(f'Invalid path: {path}. You can only work with files in {ws}.')
        return resolved

    def copy_to(self, host_src: str, sandbox_dest: str, recursive: bool = False) -> None:
        if not os.path.exists(host_src):
            raise FileNotFoundError(f"Source path '{host_src}' does not exist.")
        dest = self.host_path(sandbox_dest)
        try:
            if os.path.isdir(host_src):
                if not recursive:
                    raise FileNotFoundError(
                        f"Source path '{host_src}' is not a valid file or directory."
                    )
                target = os.path.join(dest, os.path.basename(os.path.normpath(host_src)))
                if os.path.realpath(host_src) != os.path.realpath(target):
                    os.makedirs(dest, exist_ok=True)
                    shutil.copytree(host_src, target, dirs_exist_ok=True)
                return
            into_dir = os.path.isdir(dest) or sandbox_dest.endswith(('/', os.sep))
            new_dir = not os.path.exists(dest) and '.' not in os.path.basename(dest)
            if into_dir or new_dir:
                os.makedirs(dest, exist_ok=True)
                target = os.path.join(dest, os.path.basename(host_src))
            else:
                target = dest
                os.makedirs(os.path.dirname(target), exist_ok=True)
            shutil.copy2(host_src, target)
        except (FileNotFoundError, PermissionError):
            raise
        except shutil.SameFileError:
            return
        except Exception as e:
            raise RuntimeError(f'Unexpected error copying file: {e}') from e

    def list_files(self, path: str | None = None) -> list[str]:
        """Absolute paths of the entries of `path` (the workspace when None); [] on any error."""
        try:
            target = self.workspace if path is None else self.host_path(path)
            if not os.path.exists(target):
                return []
            if not os.path.isdir(target):
                return [target]
            return [os.path.join(target, name) for name in os.listdir(target)]
        except Exception as e:
            logger.warning('list_files(%r) failed: %s', path, e)
            return []

    def copy_from(self, path: str) -> Path:
        """A zip of `path` (a file or a directory) in a new temporary file."""
        source = self.host_path(path)
        if not os.path.exists(source):
            raise FileNotFoundError(f'Path not found: {path}')
        tmp = tempfile.NamedTemporaryFile(suffix='.zip', delete=False)
        tmp.close()
        try:
            with zipfile.ZipFile(tmp.name, 'w', zipfile.ZIP_DEFLATED) as archive:
                if os.path.isdir(source):
                    for root, _dirs, files in os.walk(source):
                        for name in files:
                            full = os.path.join(root, name)
                            archive.write(full, os.path.relpath(full, source))
                else:
                    archive.write(source, os.path.basename(source))
        except Exception as e:
            os.unlink(tmp.name)
            raise RuntimeError(f'Error creating zip file: {e}') from e
        return Path(tmp.name)
