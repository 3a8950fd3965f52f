"""A folder only this user can enter, for files that hold a secret (the executor token file, the
V1 discovery files).

`os.makedirs(mode=0o700, exist_ok=True)` leaves an existing folder as it is: one created earlier
with a loose mode (by hand, by an older version, under another umask) would stay listable and, if
group/other-writable, let another user rename or plant files beside the secret. An existing
folder is therefore checked: another user's folder is refused, a loose mode is tightened to 0700.
"""

from __future__ import annotations

import logging
import os
import stat

logger = logging.getLogger('openhands_vscode_runtime')


class UnsafeDirectory(RuntimeError):
    """A folder meant to be private belongs to another user or is not a folder."""


def ensure_private_dir(path: str | os.PathLike[str]) -> None:
    """Create `path` (0700) or check it: owned by this user, mode tightened to 0700 if looser."""
    os.makedirs(path, mode=0o700, exist_ok=True)
    st = os.stat(path)
    if not stat.S_ISDIR(st.st_mode):
        raise UnsafeDirectory(f'{path} is not a folder')
    if hasattr(os, 'getuid') and st.st_uid != os.getuid():
        raise UnsafeDirectory(
            f'the folder {path} belongs to another user (uid {st.st_uid}); it must be yours '
            'and private: remove it or choose another location'
        )
    if st.st_mode & 0o077:
        os.chmod(path, 0o700)
        logger.warning(
            'the folder %s was open to other users (mode %04o); it holds secrets: set it to 0700',
            path,
            stat.S_IMODE(st.st_mode),
        )
