"""The `/oh-executor` Socket.IO namespace: executor registration and action delegation.

One `ExecutorHub` exists per Socket.IO server object (the OpenHands server's `sio`, or the
embedded server of this package); the server object holds it, as the handler of the namespace
(`sio.namespace_handlers['/oh-executor']`, see `hub_for`). The hub keeps conversation_id ->
`Channel` (channel.py); each `VsCodeRuntime` opens one channel for its conversation.

Threading model: the handlers and every `sio.emit` run on the hub's loop (the loop the Socket.IO
server runs on). Runtime methods run on other threads; they only touch a channel under its lock,
hand emits to the loop (`call_soon_threadsafe`), and wait on `concurrent.futures.Future`s, which the
hub loop resolves. Nothing here awaits a future that belongs to another loop.

The wire protocol is described in docs/protocol.md (`oh-executor/1`).
"""

from __future__ import annotations

import asyncio
import logging
import threading
from collections.abc import Coroutine, Sequence
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs

import socketio
from socketio.exceptions import ConnectionRefusedError

from openhands.events.observation import Observation
from openhands.events.serialization import event_from_dict

from openhands_vscode_runtime.channel import (  # noqa: F401 - re-exported
    EV_ACTION_OR_OBSERVATION,
    Channel,
    _keys,
    disconnected_message,
    key_matches,
    orphaned_message,
)
from openhands_vscode_runtime.settings import (
    ALLOWED_ORIGINS_ENV,
    DEFAULT_RECONNECT_GRACE_SECONDS,
    executor_token_file,
)

logger = logging.getLogger('openhands_vscode_runtime')

NAMESPACE = '/oh-executor'
PROTOCOL_VERSION = 1

# event names (EV_ACTION_OR_OBSERVATION, `oh_event`, comes from channel.py)
EV_WELCOME = 'oh_executor_welcome'
EV_REPLACED = 'oh_executor_replaced'


def missing_key_message(token_file: Path | None = None) -> str:
    token_file = token_file or executor_token_file()
    return (
        'oh-executor: missing session_api_key: no executor registers without a credential. In '
        'VS Code run "OpenHands: Set Session API Key" and enter the OpenHands server\'s '
        'SESSION_API_KEY or, when it has none, the executor token from '
        f'{token_file} on the server\'s machine (VS Code on that machine reads the file '
        'by itself; see docs/security.md).'
    )


class ExecutorNamespace(socketio.AsyncNamespace):
    """The `/oh-executor` handlers python-socketio calls; the server object keeps this instance
    (`sio.namespace_handlers`), and with it the hub."""

    def __init__(self, hub: ExecutorHub) -> None:
        super().__init__(NAMESPACE)
        self.hub = hub

    async def on_connect(self, sid: str, environ: dict[str, Any], auth: Any = None) -> None:
        await self.hub.handle_connect(sid, environ, auth)

    async def on_disconnect(self, sid: str, reason: Any = None) -> None:
        await self.hub.handle_disconnect(sid, reason)

    async def on_oh_event(self, sid: str, data: Any) -> dict[str, Any]:
        return await self.hub.handle_reply(sid, data)


class ExecutorHub:
    """The `/oh-executor` namespace of one Socket.IO server: its channels and handlers.

    `loop` is the loop the server runs on (every emit happens there); None until known: the hub
    then learns it from its first handler call.
    """

    def __init__(self, sio: socketio.AsyncServer, loop: asyncio.AbstractEventLoop | None) -> None:
        self.sio = sio
        self.loop = loop
        self._channels: dict[str, Channel] = {}
        self._by_sid: dict[str, Channel] = {}
        self._lock = threading.Lock()
        sio.register_namespace(ExecutorNamespace(self))

    # ---- registry ------------------------------------------------------------------------

    def open_channel(
        self,
        conversation_id: str,
        *,
        session_api_key: str | Sequence[str],
        session_settings: dict[str, Any],
        reconnect_grace_seconds: float = DEFAULT_RECONNECT_GRACE_SECONDS,
        allowed_origins: frozenset[str] = frozenset(),
        token_file: Path | None = None,
    ) -> Channel:
        """`session_api_key`: the key (or keys) an executor must present; at least one.
        `allowed_origins`: web pages allowed to register; `token_file`: named when a key is
        missing."""
        if not _keys(session_api_key):
            raise ValueError(
                'oh-executor: a channel needs at least one executor key (no executor may register '
                'without a secret)'
            )
        ch = Channel(
            self,
            conversation_id,
            session_api_key,
            session_settings,
            reconnect_grace_seconds,
            allowed_origins=allowed_origins,
            token_file=token_file,
        )
        with self._lock:
            old = self._channels.get(conversation_id)
            self._channels[conversation_id] = ch
        if old is not None and not old.closed:
            logger.warning(
                'oh-executor: a new VsCodeRuntime replaces the open one for conversation %s',
                conversation_id,
            )
            old.close()
        return ch

    def channel(self, conversation_id: str) -> Channel | None:
        with self._lock:
            ch = self._channels.get(conversation_id)
        return ch if ch is not None and not ch.closed else None

    def unregister(self, ch: Channel, executor_sid: str | None) -> None:
        with self._lock:
            if self._channels.get(ch.conversation_id) is ch:
                del self._channels[ch.conversation_id]
        if executor_sid is not None:
            self.call_threadsafe(self._drop_executor(executor_sid))

    async def _drop_executor(self, sid: str) -> None:
        self._by_sid.pop(sid, None)
        try:
            await self.sio.disconnect(sid, namespace=NAMESPACE)
        except Exception:  # pragma: no cover - best effort at close
            pass

    # ---- loop plumbing -------------------------------------------------------------------

    def call_threadsafe(self, coro: Coroutine[Any, Any, Any]) -> None:
        loop = self.loop
        if loop is None or loop.is_closed():
            coro.close()
            return
        try:
            running = asyncio.get_running_loop()
        except RuntimeError:
            running = None
        if running is loop:
            loop.create_task(coro)
            return
        try:
            # Not run_coroutine_threadsafe: nobody waits for the result, so the task is started
            # on the loop without a second future chained to it (an emit is on every action's
            # path).
            loop.call_soon_threadsafe(_start_logged, coro)
        except RuntimeError:  # loop closed meanwhile
            coro.close()

    def emit_threadsafe(self, event: str, data: Any, sid: str) -> None:
        self.call_threadsafe(self.sio.emit(event, data, to=sid, namespace=NAMESPACE))

    # ---- handlers (hub loop; called by ExecutorNamespace) ---------------------------------

    async def handle_connect(self, sid: str, environ: dict[str, Any], auth: Any = None) -> None:
        if self.loop is None:
            self.loop = asyncio.get_running_loop()
        query = parse_qs(environ.get('QUERY_STRING', ''))
        conversation_id = (query.get('conversation_id') or [''])[0]
        ch = self.channel(conversation_id) if conversation_id else None
        # A browser always sends Origin on a WebSocket; executors (rust_socketio/tungstenite,
        # python-socketio) send none. Polling is refused because a same-origin polling request
        # (a DNS-rebinding page) carries no Origin. A page is refused before it learns anything
        # (even whether the conversation exists).
        origin = environ.get('HTTP_ORIGIN')
        allowed = ch.allowed_origins if ch is not None else frozenset()
        if origin is not None and origin.rstrip('/') not in allowed:
            logger.warning('oh-executor: refused a connection from a web page (Origin %s)', origin)
            raise ConnectionRefusedError(
                f'oh-executor: cross-origin connection refused (Origin {origin}): executors do '
                f'not run in web pages; an origin can be allowed with {ALLOWED_ORIGINS_ENV}'
            )
        if (query.get('transport') or [''])[0] != 'websocket':
            raise ConnectionRefusedError(
                'oh-executor: executors must connect with the websocket transport (polling is '
                'refused)'
            )
        if not conversation_id:
            raise ConnectionRefusedError('oh-executor: conversation_id is required')
        if ch is None:
            raise ConnectionRefusedError(
                f'oh-executor: no VsCodeRuntime for conversation {conversation_id}'
            )
        given = (query.get('session_api_key') or [''])[0]
        if not given:
            raise ConnectionRefusedError(missing_key_message(ch.token_file))
        if not key_matches(given, ch.accepted_keys):
            raise ConnectionRefusedError('oh-executor: invalid session_api_key')
        auth = auth if isinstance(auth, dict) else {}
        protocol = auth.get('protocol')
        if protocol != PROTOCOL_VERSION:
            raise ConnectionRefusedError(
                f'oh-executor: protocol mismatch: server speaks {PROTOCOL_VERSION}, '
                f'executor sent {protocol}'
            )
        self._by_sid[sid] = ch
        # The CONNECT packet is sent after this handler returns; welcome the executor after it.
        asyncio.get_running_loop().create_task(self._welcome(sid, ch, auth))

    async def _welcome(self, sid: str, ch: Channel, auth: dict[str, Any]) -> None:
        await asyncio.sleep(0)
        if ch.closed or self._by_sid.get(sid) is not ch:
            return
        old = ch.executor_sid
        if old is not None and old != sid:
            logger.info(
                'oh-executor: executor %s replaces %s for conversation %s',
                sid,
                old,
                ch.conversation_id,
            )
            self._by_sid.pop(old, None)
            try:
                await self.sio.emit(
                    EV_REPLACED, {'conversation_id': ch.conversation_id}, to=old,
                    namespace=NAMESPACE,
                )
                await self.sio.disconnect(old, namespace=NAMESPACE)
            except Exception:  # pragma: no cover
                logger.debug('oh-executor: could not drop the replaced executor', exc_info=True)
        await self.sio.emit(
            EV_WELCOME,
            {
                'protocol': PROTOCOL_VERSION,
                'conversation_id': ch.conversation_id,
                'runtime_session': ch.runtime_session,
                'session': ch.session_settings,
            },
            to=sid,
            namespace=NAMESPACE,
        )
        resend = ch.executor_registered(sid, auth)
        logger.info(
            'oh-executor: executor %s registered for conversation %s (workspace %s, client %s, '
            're-sending %d pending)',
            sid,
            ch.conversation_id,
            auth.get('workspace'),
            auth.get('client'),
            len(resend),
        )
        for payload in resend:
            await self.sio.emit(EV_ACTION_OR_OBSERVATION, payload, to=sid, namespace=NAMESPACE)

    async def handle_disconnect(self, sid: str, reason: Any = None) -> None:
        ch = self._by_sid.pop(sid, None)
        if ch is not None:
            ch.executor_disconnected(sid, asyncio.get_running_loop())

    async def handle_reply(self, sid: str, data: Any) -> dict[str, Any]:
        ch = self._by_sid.get(sid)
        if ch is None:
            return {'ok': False, 'error': 'oh-executor: this connection is not registered'}
        if not isinstance(data, dict) or 'observation' not in data:
            return {'ok': False, 'error': 'oh-executor: an oh_event reply must be an observation'}
        cause = data.get('cause')
        if not isinstance(cause, int) or isinstance(cause, bool):
            return {'ok': False, 'error': f'oh-executor: reply without an int cause: {cause!r}'}
        # The runtime's event stream assigns these; never trust them from the executor.
        clean = {k: v for k, v in data.items() if k not in ('id', 'timestamp', 'source')}
        try:
            obs = event_from_dict(clean)
        except Exception as e:
            return {'ok': False, 'error': f'oh-executor: malformed observation: {e}'}
        if not isinstance(obs, Observation):
            return {'ok': False, 'error': 'oh-executor: an oh_event reply must be an observation'}
        ch.resolve(cause, obs)
        return {'ok': True}


def _start_logged(coro: Coroutine[Any, Any, Any]) -> None:
    asyncio.ensure_future(coro).add_done_callback(_log_failure)


def _log_failure(task: asyncio.Future) -> None:
    if task.cancelled():
        return
    exc = task.exception()
    if exc is not None:
        logger.warning('oh-executor: emit failed: %s', exc)


def hub_for(
    sio: socketio.AsyncServer, loop: asyncio.AbstractEventLoop | None = None
) -> ExecutorHub:
    """The hub of a Socket.IO server, created (with its handlers) on first use.

    The server object holds it as its `/oh-executor` namespace handler, so the hub lives exactly
    as long as the server and no registry of servers is kept here. Called from the server's
    threads and others (the embedded server's start, `VsCodeRuntime.setup`/`connect`).
    """
    with _CREATE_LOCK:
        handler = sio.namespace_handlers.get(NAMESPACE)
        if isinstance(handler, ExecutorNamespace):
            hub = handler.hub
            if hub.loop is None and loop is not None:
                hub.loop = loop
            return hub
        if handler is not None:
            raise RuntimeError(
                f'oh-executor: the Socket.IO server already has another {NAMESPACE} handler'
            )
        return ExecutorHub(sio, loop)


# Only serialises the first creation of a hub on a server (two runtimes connecting at once).
_CREATE_LOCK = threading.Lock()
