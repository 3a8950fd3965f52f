"""One executor per OpenHands V1 conversation: a channel on this package's embedded Socket.IO
server and (by default) a spawned headless executor, set up as `VsCodeRuntime` sets up V0's
(`connection.ExecutorLink`, settings from `settings.RuntimeSettings`).

V1 runs its tools in the process of the conversation (an SDK `LocalConversation` or the
agent-server), so the connection lives there too. It is keyed by V1's conversation id: the
`terminal` and `file_editor` of one conversation share it (one bash, one undo history), another
conversation gets its own even in the same folder, and so does a sub-agent (a conversation of its
own in V1). It closes when the last of its tools' executors is closed (V1 closes them when the
conversation is closed or deleted).

Set `OH_VSCODE_SPAWN_EXECUTOR=0` to wait for an executor started elsewhere (VS Code):
`ExecutorConnection.url`, `.conversation_id` and `.session_api_key` (and the discovery file) say
where it must connect.

`OH_VSCODE_V1_MAX_CONVERSATIONS` (the VS Code window's `openhands.v1.maxParallelConversations`)
limits how many conversations of this process hold an executor at once; a conversation over it
gets `ExecutorLimitReached`, which its tools answer each action with (tools.py).

A wait for an executor fails at once when the conversation is closed
(`cancel_start`, from `LocalConversation.close`) or the process is asked to stop
(`shutdown`, from uvicorn's signal handler): see `install_lifecycle_hooks`.
"""

from __future__ import annotations

import atexit
import contextlib
import json
import logging
import os
import tempfile
import threading
import time
import uuid
from typing import Any

from openhands_vscode_runtime.connection import (
    EmbeddedConnection,
    ExecutorLink,
    ExecutorNotFound,
    RegistrationFailed,
    connection_for as strategy_for,
    spawn_by_default,
)
from openhands_vscode_runtime.hub import NAMESPACE
from openhands_vscode_runtime.private_dir import ensure_private_dir
from openhands_vscode_runtime.settings import SPAWN_ENV, RuntimeSettings
from openhands_vscode_runtime.v1.replies import ErrorObservation, V1Reply

logger = logging.getLogger('openhands_vscode_runtime.v1')

# V1's NO_CHANGE_TIMEOUT_SECONDS (openhands-tools 1.58.0); V0's is 10.
V1_NO_CHANGE_TIMEOUT_SECONDS = 30
# Default connect timeouts of the V1 tools (`OH_VSCODE_CONNECT_TIMEOUT` overrides both): a spawned
# executor, and one a person starts in VS Code from the discovery file.
V1_SPAWNED_CONNECT_TIMEOUT = 60.0
V1_ATTACH_CONNECT_TIMEOUT = 600.0


def write_discovery_file(directory: str, info: dict[str, Any]) -> str:
    """`<directory>/<conversation_id>.json`, 0600 in a 0700 directory: it holds the executor secret,
    which only this user may read (the same rule as the executor token file)."""
    ensure_private_dir(directory)
    path = os.path.join(directory, f"{info['conversation_id']}.json")
    # Written aside and renamed over: a file left by a killed process for the same conversation
    # (an agent-server restarted, the conversation resumed) is replaced, never written through.
    fd, tmp = tempfile.mkstemp(dir=directory, prefix='.discovery-', suffix='.tmp')
    try:
        with os.fdopen(fd, 'w') as f:
            json.dump(info, f)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    return path


def terminal_env() -> dict[str, str]:
    """The environment V1 gives its terminal: this process's, without the credentials V1 strips
    (SESSION_API_KEY, OH_SESSION_API_KEYS_*, ...), with `AI_AGENT=openhands`. The executor and
    its shell start from it, so an agent-server's own key never reaches the agent's shell."""
    from openhands.sdk.utils import sanitized_env

    return sanitized_env()


class ExecutorUnavailable(RuntimeError):
    """No executor could be started, none registered in time, or the wait was cancelled."""


class ExecutorLimitReached(ExecutorUnavailable):
    """`OH_VSCODE_V1_MAX_CONVERSATIONS` conversations hold an executor already."""


MAX_CONVERSATIONS_ENV = 'OH_VSCODE_V1_MAX_CONVERSATIONS'


def max_conversations() -> int | None:
    """The limit from the environment (read at each start: a test or a launcher may set it
    late); unset, empty, not a whole number or below 1: no limit."""
    try:
        n = int(os.environ.get(MAX_CONVERSATIONS_ENV, '').strip())
    except ValueError:
        return None
    return n if n >= 1 else None


def channel_id(conversation_id: str) -> str:
    """The hub's id for a V1 conversation (what an attaching executor names): `v1-<hex>`."""
    try:
        return f'v1-{uuid.UUID(str(conversation_id)).hex}'
    except ValueError:
        return f'v1-{conversation_id}'


class ExecutorConnection:
    """The executor of one V1 conversation. Construction opens the channel and spawns the executor
    (or writes the discovery file) without waiting; `wait_registered` waits."""

    def __init__(
        self,
        conversation_id: str,
        workspace: str,
        *,
        settings: RuntimeSettings | None = None,
        no_change_timeout: int | None = None,
    ) -> None:
        self.settings = settings or RuntimeSettings.from_env()
        self.v1_conversation_id = str(conversation_id)
        self.conversation_id = channel_id(conversation_id)
        self.workspace = os.path.abspath(workspace)
        self.no_change_timeout = no_change_timeout or V1_NO_CHANGE_TIMEOUT_SECONDS
        strategy = strategy_for(self.settings)
        if not isinstance(strategy, EmbeddedConnection):
            raise ExecutorUnavailable(
                'openhands_vscode_runtime.v1: OH_VSCODE_MODE=server is the OpenHands V0 server\'s '
                'mode; the V1 tools serve their executor from this process (embedded mode).'
            )
        self.spawn = spawn_by_default(self.settings, strategy)
        timeout = self.settings.connect_timeout
        if timeout is None:
            timeout = V1_SPAWNED_CONNECT_TIMEOUT if self.spawn else V1_ATTACH_CONNECT_TIMEOUT
        self.connect_timeout = timeout
        self._deadline = time.monotonic() + timeout
        endpoint = strategy.open_sync()
        self.url = endpoint.server_url
        self.session_api_key = endpoint.session_api_key
        self.link = ExecutorLink(
            endpoint,
            self.conversation_id,
            self.settings,
            session_settings={'no_change_timeout_seconds': self.no_change_timeout},
        )
        self.channel = self.link.channel
        self.discovery_file: str | None = None
        # The tools' executors holding this connection (`acquire`/`release`).
        self._users = 0
        self._close_lock = threading.Lock()
        if self.spawn:
            try:
                self.link.spawn(self.workspace, no_change_timeout=self.no_change_timeout,
                                base_env=terminal_env())
            except ExecutorNotFound:
                self.link.close()
                raise ExecutorUnavailable(
                    'openhands_vscode_runtime.v1: the headless executor was not found; set '
                    'OH_VSCODE_EXECUTOR to the openhands-vscode-executor binary (or the npm '
                    f'package\'s bin script), or {SPAWN_ENV}=0 and connect an executor yourself.'
                ) from None
        else:
            # How an executor started elsewhere (VS Code) learns where to connect and its secret.
            try:
                self.discovery_file = write_discovery_file(str(self.settings.v1_discovery_dir), {
                    'url': self.url, 'namespace': NAMESPACE, 'conversation_id': self.conversation_id,
                    'session_api_key': self.session_api_key, 'workspace': self.workspace,
                    'pid': os.getpid(),
                })
            except OSError as e:
                self.link.close()
                raise ExecutorUnavailable(
                    f'openhands_vscode_runtime.v1: cannot write the discovery file: {e}'
                ) from None
            logger.info(
                'openhands_vscode_runtime.v1: waiting for an executor: connect to %s namespace %s '
                'with conversation_id=%s (key and details in %s)', self.url, NAMESPACE,
                self.conversation_id, self.discovery_file,
            )

    @property
    def process(self) -> Any:
        return self.link.process

    def wait_registered(self) -> None:
        """Wait (what is left of the connect timeout) for the executor; `ExecutorUnavailable`
        when none registered, the spawned one crashed, or the wait was cancelled."""
        try:
            self.link.wait_registered(max(0.0, self._deadline - time.monotonic()))
        except RegistrationFailed as e:
            detail = str(e)
            if detail.startswith('no executor registered within'):
                detail = f'no executor registered within {self.connect_timeout:g} s'
                # Every tool waiting for this start gets the same outcome.
                self.cancel(detail)
            tail = self.link.log_tail()
            raise ExecutorUnavailable(
                f'openhands_vscode_runtime.v1: {detail} (conversation {self.v1_conversation_id}).'
                + (f'\nExecutor output:\n{tail}' if tail else '')
            ) from None

    def cancel(self, reason: str) -> bool:
        """Fail a wait for the executor at once; False when it had registered (or failed) already."""
        return self.link.cancel_registration(reason)

    def call(self, kind: str, args: dict[str, Any]) -> V1Reply | ErrorObservation:
        """Delegate one V1 action and wait for the executor's reply, the hub's failure, or the
        end of the wait: V0's rule (`Channel.call`), bounded by the terminal's own `timeout` or,
        for an action without one, `RuntimeSettings.v1_reply_timeout`."""
        timeout = args.get('timeout') if kind == 'v1_terminal' else None
        limit = float(timeout) if isinstance(timeout, (int, float)) else self.settings.v1_reply_timeout
        return self.channel.call({'action': kind, 'args': args}, limit, f'({kind})')

    def close(self) -> None:
        """Fail a wait still running, close the channel and stop the executor (idempotent)."""
        self.cancel(f'the conversation {self.v1_conversation_id} was closed')
        with self._close_lock:
            if self.link.closed:
                return
            self.link.close()
            if self.discovery_file is not None:
                try:
                    os.unlink(self.discovery_file)
                except OSError:
                    pass
                self.discovery_file = None
            if self.link.process is not None:
                self.link.process.remove_log()
        _forget(self)


# V1 conversation id -> its connection (registered or still waiting for its executor).
_CONNECTIONS: dict[str, ExecutorConnection] = {}
# Reentrant: a finalizer can run on a thread that holds it. Garbage collection runs at any
# allocation, so a `LocalConversation` of an earlier conversation collected while `acquire` builds
# a connection under this lock calls `__del__` -> `close` -> `cancel_start` on that same thread
# (seen: the V1 end-to-end tests hung there); with a plain lock that thread waits for itself.
_LOCK = threading.RLock()
# Set by `shutdown`: the reason every later start fails at once.
_SHUTDOWN: list[str] = []


def _forget(conn: ExecutorConnection) -> None:
    with _LOCK:
        if _CONNECTIONS.get(conn.v1_conversation_id) is conn:
            del _CONNECTIONS[conn.v1_conversation_id]


def acquire(conversation_id: str, workspace: str, *, no_change_timeout: int | None = None) -> ExecutorConnection:
    """The connection of V1 conversation `conversation_id`, started on first use and waited for;
    the caller holds it until `release`. The tools of a conversation are created in parallel:
    they share one start and its outcome (one connect timeout and one error when no executor
    comes, not one each). The wait is outside `_LOCK`, so other conversations, `cancel_start` and
    `shutdown` are not held up by it."""
    key = str(conversation_id)
    with _LOCK:
        if _SHUTDOWN:
            raise ExecutorUnavailable(f'openhands_vscode_runtime.v1: {_SHUTDOWN[0]}')
        conn = _CONNECTIONS.get(key)
        if conn is None or conn.link.closed:
            limit = max_conversations()
            held = sum(1 for c in _CONNECTIONS.values() if not c.link.closed)
            if limit is not None and held >= limit:
                raise ExecutorLimitReached(
                    f'This VS Code window already runs {held} conversation(s) at once, its limit '
                    f'(openhands.v1.maxParallelConversations = {limit}): no executor for '
                    f'conversation {key} now. Close or delete another conversation (or raise the '
                    'setting), then run this one again.'
                )
            conn = ExecutorConnection(key, workspace, no_change_timeout=no_change_timeout)
            _CONNECTIONS[key] = conn
        conn._users += 1
    try:
        conn.wait_registered()
    except BaseException as e:
        if not isinstance(e, Exception):
            # A KeyboardInterrupt belongs to the thread it interrupted; the others get an error.
            conn.cancel(f'the executor start was interrupted ({type(e).__name__})')
        release(conn)
        conn.close()
        raise
    return conn


def release(conn: ExecutorConnection) -> None:
    """A tool's executor lets go of `conn`; the last one closes it."""
    with _LOCK:
        conn._users -= 1
        last = conn._users <= 0
    if last:
        conn.close()


def cancel_start(conversation_id: str, reason: str) -> bool:
    """Fail the wait of conversation `conversation_id` for its executor, if one is running."""
    with _LOCK:
        conn = _CONNECTIONS.get(str(conversation_id))
    return conn.cancel(reason) if conn is not None else False


def shutdown(reason: str) -> None:
    """The process is stopping: every wait for an executor fails now, every later start at once.
    Registered connections stay; the conversations close them."""
    with _LOCK:
        if not _SHUTDOWN:
            _SHUTDOWN.append(reason)
        conns = list(_CONNECTIONS.values())
    for conn in conns:
        conn.cancel(reason)


@atexit.register
def close_all() -> None:
    """Stop every executor this process started."""
    with _LOCK:
        conns = list(_CONNECTIONS.values())
    for conn in conns:
        try:
            conn.close()
        except Exception:  # pragma: no cover - best effort at exit
            logger.debug('closing a V1 executor connection failed', exc_info=True)


_HOOKS_INSTALLED = threading.Lock()
_hooks: list[str] = []


def install_lifecycle_hooks() -> None:
    """Two hooks, so that closing a conversation or stopping the process ends a wait for an
    executor at once (idempotent; `register()` installs them):

    * `LocalConversation.close` first cancels that conversation's wait. V1 creates the tools inside
      the conversation's first `send_message`/`run` (in the agent-server: inside
      `POST /api/conversations`), so while they wait there is no tool executor yet for V1's own
      close to close; the agent-server's `DELETE /api/conversations/{id}` and its shutdown close
      the `LocalConversation`.
    * `uvicorn.Server.handle_exit` (the agent-server's SIGTERM/SIGINT handler) first calls
      `shutdown`. uvicorn's graceful shutdown waits for running requests before the application's
      own shutdown closes any conversation, so without it a SIGTERM waited for the connect
      timeout. The work is handed to a thread: a signal handler must not take locks the
      interrupted thread may hold.
    """
    with _HOOKS_INSTALLED:
        if _hooks:
            return
        _hooks.append('installed')
        try:
            from openhands.sdk.conversation.impl.local_conversation import LocalConversation
        except ImportError:  # pragma: no cover - the SDK is what calls the tools
            LocalConversation = None  # type: ignore[assignment,misc]
        if LocalConversation is not None:
            original_close = LocalConversation.close

            def close(self: Any) -> None:
                cid = getattr(getattr(self, '_state', None), 'id', None)
                if cid is not None:
                    cancel_start(str(cid), f'the conversation {cid} was closed')
                original_close(self)

            close.__wrapped__ = original_close  # type: ignore[attr-defined]
            LocalConversation.close = close  # type: ignore[method-assign]
        try:
            import uvicorn
        except ImportError:  # pragma: no cover - an SDK process without uvicorn
            return
        original_exit = uvicorn.Server.handle_exit

        def handle_exit(self: Any, sig: int, frame: Any) -> None:
            threading.Thread(
                target=shutdown, args=(f'the process is stopping (signal {sig})',),
                name='oh-v1-shutdown', daemon=True,
            ).start()
            original_exit(self, sig, frame)

        handle_exit.__wrapped__ = original_exit  # type: ignore[attr-defined]
        uvicorn.Server.handle_exit = handle_exit  # type: ignore[method-assign]
