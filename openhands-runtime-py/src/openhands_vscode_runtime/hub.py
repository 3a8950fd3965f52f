"""The `/oh-executor` Socket.IO namespace: executor registration and action delegation.

One `ExecutorHub` exists per Socket.IO server object (the OpenHands server's `sio`, or the
embedded server of this package); the server object holds it, as the handler of the namespace
(`sio.namespace_handlers['/oh-executor']`, see `hub_for`). The hub keeps conversation_id ->
`Channel`; each `VsCodeRuntime` opens one channel for its conversation.

Threading model: the handlers and every `sio.emit` run on the hub's loop (the loop the Socket.IO
server runs on). Runtime methods run on other threads; they only touch a channel under its lock,
schedule emits with `run_coroutine_threadsafe`, and wait on `concurrent.futures.Future`s, which the
hub loop resolves. Nothing here awaits a future that belongs to another loop.

The wire protocol is described in docs/protocol.md (`oh-executor/1`).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import hmac
import itertools
import logging
import threading
import uuid
from collections.abc import Coroutine, Sequence
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs

import socketio
from socketio.exceptions import ConnectionRefusedError

from openhands.events.observation import ErrorObservation, Observation
from openhands.events.serialization import event_from_dict

from openhands_vscode_runtime.settings import (
    ALLOWED_ORIGINS_ENV,
    DEFAULT_RECONNECT_GRACE_SECONDS,
    executor_token_file,
)

logger = logging.getLogger('openhands_vscode_runtime')

NAMESPACE = '/oh-executor'
PROTOCOL_VERSION = 1

# event names
EV_ACTION_OR_OBSERVATION = 'oh_event'
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


def _keys(session_api_key: str | Sequence[str] | None) -> tuple[str, ...]:
    if session_api_key is None:
        return ()
    if isinstance(session_api_key, str):
        session_api_key = (session_api_key,)
    return tuple(k for k in session_api_key if k)


def key_matches(given: str, accepted: Sequence[str]) -> bool:
    """Constant-time comparison against every accepted key (no early exit on a match)."""
    ok = False
    for key in accepted:
        ok |= hmac.compare_digest(given.encode(), key.encode())
    return ok


def disconnected_message(conversation_id: str, detail: str) -> str:
    return (
        f'Runtime disconnected: no VS Code executor is connected for conversation '
        f'{conversation_id} ({detail}). The action was not executed or its result was lost; '
        f'reconnect the executor (open the workspace in VS Code with the OpenHands extension, '
        f'or restart the headless executor) and retry.'
    )


def orphaned_message(conversation_id: str, rid: int) -> str:
    return (
        f'Runtime disconnected: the VS Code executor running this action (id {rid}) went away '
        f'and a different executor registered for conversation {conversation_id}. The action '
        f'may have run, in part or fully, so it is not sent again (it must not run twice); '
        f'check its effects before retrying.'
    )


def _identity(sid: str | None, auth: dict[str, Any]) -> str:
    executor_id = auth.get('executor_id')
    # Without an executor_id every connection counts as a different executor.
    return f'id:{executor_id}' if isinstance(executor_id, str) and executor_id else f'sid:{sid}'


class Channel:
    """The link between one runtime (one conversation) and its executor.

    Methods are safe to call from any thread, except `executor_registered`,
    `executor_disconnected` and `resolve`: the hub calls them on its loop.
    """

    def __init__(
        self,
        hub: ExecutorHub,
        conversation_id: str,
        session_api_key: str | Sequence[str],
        session_settings: dict[str, Any],
        reconnect_grace_seconds: float,
        *,
        allowed_origins: frozenset[str] = frozenset(),
        token_file: Path | None = None,
    ) -> None:
        self.hub = hub
        self.conversation_id = conversation_id
        # Every key an executor may present; never empty (see ExecutorHub.open_channel).
        self.accepted_keys = _keys(session_api_key)
        self.session_settings = dict(session_settings)
        self.reconnect_grace_seconds = reconnect_grace_seconds
        # Web pages (by Origin) allowed to register an executor for this conversation.
        self.allowed_origins = allowed_origins
        # Named in the refusal of an executor without a key (where the executor token lives).
        self.token_file = token_file
        self.runtime_session = str(uuid.uuid4())
        self.closed = False

        self._lock = threading.Lock()
        self._ids = itertools.count(1)
        self._pending: dict[int, tuple[dict[str, Any], concurrent.futures.Future]] = {}
        # rid -> identity of the executor the action was sent to (None: not sent yet). Only that
        # executor may get it again: another one cannot know whether it already ran.
        self._sent_to: dict[int, str | None] = {}
        self._executor_sid: str | None = None
        self._executor_auth: dict[str, Any] = {}
        self._registrations = 0
        # Replies received, and those for an id already resolved or unknown (ignored).
        self.replies_received = 0
        self.duplicate_replies = 0
        self._registered = threading.Event()
        self._first_registration: concurrent.futures.Future[dict[str, Any]] = (
            concurrent.futures.Future()
        )
        # Set when actions must fail at once instead of waiting for a (re)connect.
        self._dead_reason: str | None = None
        self._grace_timer: asyncio.TimerHandle | None = None

    # ---- state, any thread ---------------------------------------------------------------

    @property
    def executor_connected(self) -> bool:
        return self._executor_sid is not None

    @property
    def executor_sid(self) -> str | None:
        return self._executor_sid

    @property
    def executor_info(self) -> dict[str, Any]:
        return dict(self._executor_auth)

    @property
    def workspace(self) -> str | None:
        ws = self._executor_auth.get('workspace')
        return ws if isinstance(ws, str) and ws else None

    @property
    def registrations(self) -> int:
        return self._registrations

    def registration_future(self) -> concurrent.futures.Future[dict[str, Any]]:
        """Resolves with the executor's auth payload on the first registration."""
        return self._first_registration

    def pending_count(self) -> int:
        with self._lock:
            return len(self._pending)

    # ---- delegation, any thread ----------------------------------------------------------

    def submit(self, payload: dict[str, Any]) -> tuple[int, concurrent.futures.Future]:
        """Send an action payload (event_to_dict form, without a correlation id).

        Returns the delegated id and a future that resolves with the Observation.
        """
        fut: concurrent.futures.Future = concurrent.futures.Future()
        with self._lock:
            rid = next(self._ids)
            payload = dict(payload)
            payload['id'] = rid
            if self.closed:
                fut.set_result(ErrorObservation('Runtime closed: the VsCodeRuntime was closed.'))
                return rid, fut
            if self._dead_reason is not None and self._executor_sid is None:
                fut.set_result(
                    ErrorObservation(disconnected_message(self.conversation_id, self._dead_reason))
                )
                return rid, fut
            self._pending[rid] = (payload, fut)
            sid = self._executor_sid
            self._sent_to[rid] = self._executor_identity if sid is not None else None
        if sid is not None:
            self.hub.emit_threadsafe(EV_ACTION_OR_OBSERVATION, payload, sid)
        return rid, fut

    @property
    def _executor_identity(self) -> str:
        return _identity(self._executor_sid, self._executor_auth)

    def forget(self, rid: int) -> None:
        with self._lock:
            self._pending.pop(rid, None)
            self._sent_to.pop(rid, None)

    def fail_all(self, reason: str, executor_dead: bool = False) -> None:
        """Fail every pending action with a 'Runtime disconnected' error, and every new one until
        an executor registers again (any thread).

        `executor_dead`: the active executor is known to be gone (its process died) although its
        socket's disconnect may not have reached the hub yet; forget it now, or new actions would
        be sent to it and wait for the reconnect grace period.
        """
        with self._lock:
            if executor_dead:
                self._executor_sid = None
            self._dead_reason = reason
            pending = list(self._pending.values())
            self._pending.clear()
            self._sent_to.clear()
        for _payload, fut in pending:
            if not fut.done():
                fut.set_result(
                    ErrorObservation(disconnected_message(self.conversation_id, reason))
                )

    def close(self) -> None:
        with self._lock:
            self.closed = True
            pending = list(self._pending.values())
            self._pending.clear()
            self._sent_to.clear()
            sid = self._executor_sid
        for _payload, fut in pending:
            if not fut.done():
                fut.set_result(ErrorObservation('Runtime closed: the VsCodeRuntime was closed.'))
        self.hub.unregister(self, sid)

    # ---- called by the hub, on its loop -----------------------------------------------------

    def executor_registered(self, sid: str, auth: dict[str, Any]) -> list[dict[str, Any]]:
        """Make `sid` the active executor; returns the pending payloads to re-send.

        Only actions never sent, or sent to this same executor (same `executor_id`: it dedupes),
        are sent; those another executor received fail, since it may have run them.
        """
        orphans: list[tuple[int, concurrent.futures.Future]] = []
        with self._lock:
            self._executor_sid = sid
            self._executor_auth = dict(auth)
            self._registrations += 1
            self._dead_reason = None
            if self._grace_timer is not None:
                self._grace_timer.cancel()
                self._grace_timer = None
            me = self._executor_identity
            resend = []
            for rid, (payload, fut) in sorted(self._pending.items()):
                sent_to = self._sent_to.get(rid)
                if sent_to is None or sent_to == me:
                    self._sent_to[rid] = me
                    resend.append(payload)
                else:
                    orphans.append((rid, fut))
            for rid, _fut in orphans:
                del self._pending[rid]
                del self._sent_to[rid]
        for rid, fut in orphans:
            if not fut.done():
                fut.set_result(ErrorObservation(orphaned_message(self.conversation_id, rid)))
        if orphans:
            logger.warning(
                'oh-executor: %d action(s) of conversation %s were running in an executor that '
                'went away; a different executor registered, so they failed instead of being '
                'sent again',
                len(orphans),
                self.conversation_id,
            )
        self._registered.set()
        if not self._first_registration.done():
            self._first_registration.set_result(dict(auth))
        return resend

    def executor_disconnected(self, sid: str, loop: asyncio.AbstractEventLoop) -> None:
        with self._lock:
            if self._executor_sid != sid:
                return  # an older, replaced socket
            self._executor_sid = None
            if self.closed:
                return
            if self._grace_timer is not None:
                self._grace_timer.cancel()
            grace = self.reconnect_grace_seconds
            self._grace_timer = loop.call_later(grace, self._grace_expired, grace)
        logger.warning(
            'oh-executor: executor %s of conversation %s disconnected; waiting up to %ss for it '
            'to reconnect',
            sid,
            self.conversation_id,
            self.reconnect_grace_seconds,
        )

    def _grace_expired(self, grace: float) -> None:
        with self._lock:
            self._grace_timer = None
            if self._executor_sid is not None:
                return
        self.fail_all(f'it disconnected and did not reconnect within {grace:g} s')

    def resolve(self, rid: int, obs: Observation) -> None:
        with self._lock:
            entry = self._pending.pop(rid, None)
            self._sent_to.pop(rid, None)
            self.replies_received += 1
            if entry is None:
                self.duplicate_replies += 1
        if entry is None:
            logger.debug('oh-executor: ignoring a reply for unknown or finished id %s', rid)
            return
        fut = entry[1]
        if not fut.done():
            fut.set_result(obs)


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
