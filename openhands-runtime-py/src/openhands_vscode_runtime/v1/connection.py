"""One executor per workspace for OpenHands V1 tools: the embedded Socket.IO server of this
package, a channel on its hub, and (by default) a spawned headless executor.

V1 runs its tools in the process of the conversation (an SDK `LocalConversation` or the
agent-server), so the connection lives there too. Set `OH_VSCODE_SPAWN_EXECUTOR=0` to wait for an
executor started elsewhere (VS Code): `ExecutorConnection.url`, `.conversation_id` and
`.session_api_key` say where it must connect.
"""

from __future__ import annotations

import atexit
import concurrent.futures
import json
import logging
import os
import secrets
import threading
import uuid
from typing import Any

from openhands_vscode_runtime.embedded import embedded_server
from openhands_vscode_runtime.executor_process import ExecutorProcess, find_executor
from openhands_vscode_runtime.hub import NAMESPACE
from openhands_vscode_runtime.private_dir import ensure_private_dir
from openhands_vscode_runtime.v1.replies import ErrorObservation, V1Reply

logger = logging.getLogger('openhands_vscode_runtime.v1')

# V1's NO_CHANGE_TIMEOUT_SECONDS (openhands-tools 1.58.0); V0's is 10.
V1_NO_CHANGE_TIMEOUT_SECONDS = 30
CONNECT_TIMEOUT_ENV = 'OH_VSCODE_CONNECT_TIMEOUT'
SPAWN_ENV = 'OH_VSCODE_SPAWN_EXECUTOR'
DISCOVERY_DIR_ENV = 'OH_VSCODE_V1_DISCOVERY_DIR'


def discovery_dir() -> str:
    """Where a connection waiting for an outside executor describes itself (one file each)."""
    configured = os.environ.get(DISCOVERY_DIR_ENV, '').strip()
    if configured:
        return configured
    state = os.environ.get('XDG_STATE_HOME') or os.path.join(os.path.expanduser('~'), '.local', 'state')
    return os.path.join(state, 'openhands-vscode-runtime', 'v1')


def write_discovery_file(info: dict[str, Any]) -> str:
    """`<dir>/<conversation_id>.json`, 0600 in a 0700 directory: it holds the executor secret,
    which only this user may read (the same rule as the executor token file)."""
    directory = discovery_dir()
    ensure_private_dir(directory)
    path = os.path.join(directory, f"{info['conversation_id']}.json")
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
    with os.fdopen(fd, 'w') as f:
        json.dump(info, f)
    return path


def terminal_env() -> dict[str, str]:
    """The environment V1 gives its terminal: this process's, without the credentials V1 strips
    (SESSION_API_KEY, OH_SESSION_API_KEYS_*, ...), with `AI_AGENT=openhands`. The executor and
    its shell start from it, so an agent-server's own key never reaches the agent's shell."""
    from openhands.sdk.utils import sanitized_env

    return sanitized_env()


class ExecutorUnavailable(RuntimeError):
    """No executor could be started or none registered in time."""


class ExecutorConnection:
    def __init__(
        self,
        workspace: str,
        *,
        no_change_timeout: int | None = None,
        spawn: bool | None = None,
        connect_timeout: float | None = None,
    ) -> None:
        self.workspace = os.path.abspath(workspace)
        self.conversation_id = f'v1-{uuid.uuid4().hex}'
        self.session_api_key = secrets.token_urlsafe(24)
        self.no_change_timeout = no_change_timeout or V1_NO_CHANGE_TIMEOUT_SECONDS
        if spawn is None:
            spawn = os.environ.get(SPAWN_ENV, '1').strip().lower() not in ('0', 'false', 'no')
        if connect_timeout is None:
            connect_timeout = float(os.environ.get(CONNECT_TIMEOUT_ENV, '60' if spawn else '600'))
        server = embedded_server()
        self.url = server.url
        self.channel = server.hub.open_channel(
            self.conversation_id,
            session_api_key=(self.session_api_key,),
            session_settings={'no_change_timeout_seconds': self.no_change_timeout},
        )
        self.process: ExecutorProcess | None = None
        self.discovery_file: str | None = None
        if spawn:
            command = find_executor()
            if command is None:
                self.channel.close()
                raise ExecutorUnavailable(
                    'openhands_vscode_runtime.v1: the headless executor was not found; set '
                    'OH_VSCODE_EXECUTOR to the openhands-vscode-executor binary (or the npm '
                    f'package\'s bin script), or {SPAWN_ENV}=0 and connect an executor yourself.'
                )
            self.process = ExecutorProcess(
                command,
                url=self.url,
                conversation_id=self.conversation_id,
                session_api_key=self.session_api_key,
                workspace=self.workspace,
                no_change_timeout=self.no_change_timeout,
                on_exit=self._on_exit,
                base_env=terminal_env(),
            )
        else:
            # How an executor started elsewhere (VS Code) learns where to connect and its secret.
            self.discovery_file = write_discovery_file({
                'url': self.url, 'namespace': NAMESPACE, 'conversation_id': self.conversation_id,
                'session_api_key': self.session_api_key, 'workspace': self.workspace,
                'pid': os.getpid(),
            })
            logger.info(
                'openhands_vscode_runtime.v1: waiting for an executor: connect to %s namespace %s '
                'with conversation_id=%s (key and details in %s)', self.url, NAMESPACE,
                self.conversation_id, self.discovery_file,
            )
        try:
            self.channel.registration_future().result(timeout=connect_timeout)
        except Exception as e:
            tail = self.process.log_tail() if self.process is not None else ''
            self.close()
            raise ExecutorUnavailable(
                f'openhands_vscode_runtime.v1: no executor registered within {connect_timeout:g} s '
                f'({type(e).__name__}).' + (f'\nExecutor output:\n{tail}' if tail else '')
            ) from None

    def _on_exit(self, code: int) -> None:
        self.channel.fail_all(f'the executor process exited with code {code}', executor_dead=True)

    def call(self, kind: str, args: dict[str, Any]) -> V1Reply | ErrorObservation:
        """Delegate one V1 action and wait for the executor's reply (or the hub's failure)."""
        _rid, fut = self.channel.submit({'action': kind, 'args': args})
        return fut.result()

    def close(self) -> None:
        self.channel.close()
        if self.discovery_file is not None:
            try:
                os.unlink(self.discovery_file)
            except OSError:
                pass
            self.discovery_file = None
        if self.process is not None:
            self.process.stop()
            self.process.remove_log()
            self.process = None


_CONNECTIONS: dict[str, ExecutorConnection] = {}
# Workspaces whose connection is being started: its outcome, for every caller that asks meanwhile.
_STARTING: dict[str, concurrent.futures.Future[ExecutorConnection]] = {}
_LOCK = threading.Lock()


def connection_for(workspace: str, *, no_change_timeout: int | None = None) -> ExecutorConnection:
    """The process's connection for `workspace`, started on first use (the terminal and the
    file editor of a conversation share it, so they share one executor).

    A conversation creates its tools in parallel: callers that ask while the connection is being
    started wait for that one start and share its outcome, so an executor that never registers
    costs one connect timeout and one error, not one per tool. The wait is outside `_LOCK`, so
    other workspaces and `close_all` are not held up by it."""
    key = os.path.abspath(workspace)
    with _LOCK:
        conn = _CONNECTIONS.get(key)
        if conn is not None and not conn.channel.closed:
            return conn
        starting = _STARTING.get(key)
        if starting is None:
            starting = _STARTING[key] = concurrent.futures.Future()
            starter = True
        else:
            starter = False
    if not starter:
        return starting.result()
    try:
        conn = ExecutorConnection(key, no_change_timeout=no_change_timeout)
    except BaseException as e:
        with _LOCK:
            _STARTING.pop(key, None)
        # A KeyboardInterrupt belongs to the thread it interrupted; the others get an error.
        starting.set_exception(e if isinstance(e, Exception) else ExecutorUnavailable(
            f'openhands_vscode_runtime.v1: the executor start was interrupted ({type(e).__name__}).'
        ))
        raise
    with _LOCK:
        _STARTING.pop(key, None)
        _CONNECTIONS[key] = conn
    starting.set_result(conn)
    return conn


@atexit.register
def close_all() -> None:
    """Stop every executor this process started."""
    with _LOCK:
        conns = list(_CONNECTIONS.values())
        _CONNECTIONS.clear()
    for conn in conns:
        try:
            conn.close()
        except Exception:  # pragma: no cover - best effort at exit
            logger.debug('closing a V1 executor connection failed', exc_info=True)
