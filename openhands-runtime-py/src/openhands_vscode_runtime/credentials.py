"""The executor credential of server mode, and the check that OpenHands is not open to the network.

No executor registers without a secret (docs/security.md). In embedded mode every runtime makes
its own random token and hands it to the executor it spawns. In server mode an executor presents
OpenHands' `SESSION_API_KEY` when the server has one, or the *executor token*: a random secret
this package creates once per user and keeps in a file only that user can read, so that VS Code on
the same machine finds it without the user copying anything.
"""

from __future__ import annotations

import ipaddress
import logging
import os
import secrets
import stat
import tempfile
from pathlib import Path

from openhands_vscode_runtime.private_dir import UnsafeDirectory, ensure_private_dir
from openhands_vscode_runtime.settings import (
    ALLOW_EXPOSED_ENV,
    executor_token_file,
)

logger = logging.getLogger('openhands_vscode_runtime')

TOKEN_BYTES = 32


class CredentialError(RuntimeError):
    """The executor credential cannot be set up safely."""


def token_file_path() -> Path:
    """The executor token file of this process's settings (`OH_VSCODE_EXECUTOR_TOKEN_FILE`, else
    `$XDG_STATE_HOME/openhands-vscode-runtime/executor-token`); see `settings.executor_token_file`."""
    return executor_token_file()


def _check_private(path: Path, st: os.stat_result) -> None:
    if not stat.S_ISREG(st.st_mode):
        raise CredentialError(f'the executor token file {path} is not a regular file')
    if hasattr(os, 'getuid') and st.st_uid != os.getuid():
        raise CredentialError(
            f'the executor token file {path} belongs to another user (uid {st.st_uid}); '
            'delete it so that a new one is created'
        )
    if st.st_mode & 0o077:
        raise CredentialError(
            f'the executor token file {path} can be read by other users '
            f'(mode {stat.S_IMODE(st.st_mode):04o}); run `chmod 600 {path}` or delete it '
            '(a new token is then created, and executors must use the new one)'
        )


def _read_token(path: Path) -> str:
    # O_NOFOLLOW: a symlink planted at the path must not redirect us to another file.
    flags = os.O_RDONLY | getattr(os, 'O_NOFOLLOW', 0)
    fd = os.open(path, flags)
    try:
        _check_private(path, os.fstat(fd))
        data = os.read(fd, 4096).decode('ascii', 'strict').strip()
    finally:
        os.close(fd)
    if len(data) < 32:
        raise CredentialError(f'the executor token file {path} is empty or too short; delete it')
    return data


def load_or_create_executor_token(path: Path | None = None) -> tuple[str, Path]:
    """The executor token, created on first use (mode 0600, in a 0700 directory).

    Creation is atomic: the token is written to a private temp file in the same directory and
    hard-linked into place, which fails if another process created the file first (then its token
    is used). A file that others can read is refused, never silently used.
    """
    path = path or token_file_path()
    directory = path.parent
    try:
        ensure_private_dir(directory)
    except UnsafeDirectory as e:
        raise CredentialError(str(e)) from None
    try:
        return _read_token(path), path
    except FileNotFoundError:
        pass
    token = secrets.token_urlsafe(TOKEN_BYTES)
    fd, tmp = tempfile.mkstemp(prefix='.executor-token-', dir=directory)  # mode 0600
    try:
        os.write(fd, (token + '\n').encode('ascii'))
        os.fsync(fd)
        os.close(fd)
        fd = -1
        try:
            os.link(tmp, path)
        except FileExistsError:
            return _read_token(path), path
    finally:
        if fd >= 0:
            os.close(fd)
        os.unlink(tmp)
    logger.info('oh-executor: created the executor token file %s', path)
    return token, path


# ---- is OpenHands reachable from other machines? -------------------------------------------


def _is_loopback(host: str) -> bool:
    try:
        return ipaddress.ip_address(host.split('%', 1)[0]).is_loopback
    except ValueError:
        return host == 'localhost'


def non_loopback_listeners() -> list[str]:
    """`host:port` of every TCP socket this process listens on that is not loopback-only.

    Uvicorn does not tell the ASGI app where it listens (a request's `scope['server']` is that
    connection's local address, not the bind address, and `python -m openhands.server` binds
    0.0.0.0 itself), so the process's own listening sockets are asked through psutil (a dependency
    of openhands-ai). An empty list also comes back when psutil cannot tell.
    """
    try:
        import psutil
    except ImportError:  # pragma: no cover - openhands-ai depends on psutil
        return []
    try:
        conns = psutil.Process().net_connections(kind='tcp')
    except Exception:  # pragma: no cover - platform without the information
        logger.debug('oh-executor: cannot list listening sockets', exc_info=True)
        return []
    found = []
    for c in conns:
        if c.status != psutil.CONN_LISTEN or not c.laddr:
            continue
        host, port = c.laddr[0], c.laddr[1]
        if not _is_loopback(host):
            found.append(f'{host}:{port}')
    return sorted(set(found))


_warned_loopback = False


def exposure_problem(
    session_api_key: str | None, allow_unauthenticated_network: bool = False
) -> str | None:
    """Why server mode must not start, or None.

    Without SESSION_API_KEY, OpenHands' own API (create conversations, send messages, list
    conversations) needs no authentication; anyone who can reach the port can then make the agent
    run commands on this machine through the user's VS Code. On loopback that is processes of this
    machine (warned about); on other interfaces it is the network (refused unless the user opts
    in with OH_VSCODE_ALLOW_UNAUTHENTICATED_NETWORK=1).
    """
    if session_api_key:
        return None
    global _warned_loopback
    exposed = non_loopback_listeners()
    if not exposed:
        if _warned_loopback:
            return None
        _warned_loopback = True
        logger.warning(
            'oh-executor: OpenHands has no SESSION_API_KEY: every process of this machine (and a '
            'web page, through DNS rebinding) can use its API and make the agent run commands in '
            'your VS Code. Set SESSION_API_KEY (see docs/security.md).'
        )
        return None
    message = (
        'VsCodeRuntime refuses to start: the OpenHands server has no SESSION_API_KEY and listens '
        f'on {", ".join(exposed)}, reachable from other machines. Anyone who can reach that port '
        'could use its API to make the agent run commands on this machine, in your VS Code. '
        'Set SESSION_API_KEY for the server (and the same key in VS Code: "OpenHands: Set '
        'Session API Key"), or bind the server to 127.0.0.1 (e.g. `uvicorn '
        'openhands.server.listen:app --host 127.0.0.1`), or, on a network you trust, set '
        f'{ALLOW_EXPOSED_ENV}=1.'
    )
    if allow_unauthenticated_network:
        logger.warning('oh-executor: %s=1: starting anyway. %s', ALLOW_EXPOSED_ENV, message)
        return None
    return message
