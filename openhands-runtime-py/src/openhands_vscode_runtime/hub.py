"""The `/oh-executor` Socket.IO namespace: executor registration and action delegation.

One `ExecutorHub` exists per Socket.IO server object (the OpenHands server's `sio`, or the
embedded server of this package); the server object holds it, as the handler of the namespace
(`sio.namespace_handlers['/oh-executor']`, see `hub_for`). The hub keeps conversation_id ->
`Channel` (channel.py); each `VsCodeRuntime` opens one channel for its conversation.

Threading model: the handlers and every `sio.emit` run on the hub's loop (the loop the Socket.IO
server runs on). Runtime methods run on other threads; they only touch a channel under its lock,
hand emits to the loop (`call_soon_threadsafe`), and wait on `concurrent.futures.Future`s, which the
hub loop resolves. Nothing here awaits a future that belongs to another loop.

The wire protocol is described in docs/protocol.md (`oh-executor/3`); its names, proofs and
message MACs are in protocol.py.
"""

from __future__ import annotations

import asyncio
import json
import logging
import threading
from collections.abc import Coroutine, Sequence
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs

import socketio

try:  # openhands-ai (V0): replies become OpenHands observations
    from openhands.events.observation import Observation
    from openhands.events.serialization import event_from_dict
except ImportError:  # an OpenHands V1 venv (no openhands-ai): see v1/replies.py
    from openhands_vscode_runtime.v1.replies import Observation, event_from_dict

from openhands_vscode_runtime.checkpoints import CHECKPOINT_OBSERVATION, CheckpointReply
from openhands_vscode_runtime.channel import Channel, _keys, key_matches
from openhands_vscode_runtime.protocol import (
    EV_ACK,
    EV_AUTH,
    EV_CANCEL,
    EV_CHALLENGE,
    EV_EVENT,
    EV_REFUSED,
    EV_REPLACED,
    EV_WAITING,
    EV_WELCOME,
    NAMESPACE,
    PROTOCOL_VERSION,
    R_AUTH_TIMEOUT,
    R_BUSY,
    R_INVALID_PROOF,
    R_NO_CONVERSATION,
    R_NO_KEY,
    R_NO_RUNTIME,
    R_ORIGIN,
    R_PROTOCOL,
    R_SESSION,
    R_TRANSPORT,
    R_WAITING_ROOM_FULL,
    R_WAITING_TIMEOUT,
    BindingError,
    SessionBinding,
    is_nonce,
    new_nonce,
    proving_key,
    refusal,
    server_proof,
)
from openhands_vscode_runtime.hub_refusals import (
    AUTH_TIMEOUT_SECONDS,
    PENDING_CHALLENGES_MAX,
    WAITING_ROOM_PER_CONVERSATION,
    WAITING_ROOM_SECONDS,
    WAITING_ROOM_TOTAL,
    invalid_proof_message,
    missing_key_message,
    refuse_connect,
    waiting_room_full_message,
    waiting_room_timeout_message,
)
from openhands_vscode_runtime.settings import ALLOWED_ORIGINS_ENV, DEFAULT_RECONNECT_GRACE_SECONDS

logger = logging.getLogger('openhands_vscode_runtime')

__all__ = ['NAMESPACE', 'PROTOCOL_VERSION', 'WAITING_ROOM_SECONDS', 'ExecutorHub', 'hub_for']

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

    async def on_oh_event(self, sid: str, data: Any = None) -> None:
        # Checked before anything awaits: python-socketio runs each event as it arrives (or in
        # tasks started in arrival order), so the sequence numbers are seen in wire order.
        await self.hub.handle_reply(sid, data)

    async def on_oh_executor_auth(self, sid: str, data: Any = None) -> None:
        await self.hub.handle_auth(sid, data)


class _Challenged:
    """A connection that was sent a challenge and has not answered yet."""

    def __init__(self, conversation_id: str, keys: tuple[str, ...], client_nonce: str,
                 server_nonce: str) -> None:
        self.conversation_id = conversation_id
        self.keys = keys
        self.client_nonce = client_nonce
        self.server_nonce = server_nonce
        self.timer: asyncio.TimerHandle | None = None


class _Waiting:
    """An executor that proved a standing key and waits for its conversation's runtime."""

    def __init__(self, key: str, auth: dict[str, Any], timer: asyncio.TimerHandle) -> None:
        self.key = key
        self.auth = auth
        self.timer = timer


class _Bound:
    """A proven connection: its session binding and the lock that keeps seal order = wire order."""

    def __init__(self, binding: SessionBinding) -> None:
        self.binding = binding
        self.lock = asyncio.Lock()


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
        # Hub loop only: connections between the challenge and their proof (bounded, oldest
        # first), the proven connections' session bindings, and the waiting room
        # (conversation_id -> sid -> _Waiting, in arrival order).
        self._challenged: dict[str, _Challenged] = {}
        self._bound: dict[str, _Bound] = {}
        self._waiting: dict[str, dict[str, _Waiting]] = {}
        # Keys an executor may prove before its conversation's runtime exists (server mode: the
        # executor token and OpenHands' SESSION_API_KEY); empty: no waiting room.
        self._standing_keys: tuple[str, ...] = ()
        self.waiting_room_seconds = WAITING_ROOM_SECONDS
        self.auth_timeout_seconds = AUTH_TIMEOUT_SECONDS
        self.pending_challenges_max = PENDING_CHALLENGES_MAX
        sio.register_namespace(ExecutorNamespace(self))

    def set_standing_keys(self, keys: Sequence[str]) -> None:
        """Keys valid for every conversation of this server (server mode). An executor that
        proves one of them before its runtime opens waits for it (bounded) instead of being
        refused."""
        self._standing_keys = _keys(tuple(keys))

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
        # Executors that arrived first and wait for this conversation are welcomed now.
        self.call_threadsafe(self._admit_waiting(ch))
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
        """Send `event` to a proven connection, sealed (any thread)."""
        self.call_threadsafe(self._send(sid, event, data))

    async def _send(self, sid: str, event: str, data: Any) -> bool:
        """Seal and emit on the hub loop. The lock keeps the order of the sequence numbers the
        order of the wire (an emit is complete when python-socketio has queued the packet)."""
        bound = self._bound.get(sid)
        if bound is None:
            return False  # gone (or never proven): nothing may reach it
        async with bound.lock:
            envelope = bound.binding.seal(event, data)
            await self.sio.emit(event, envelope, to=sid, namespace=NAMESPACE)
        return True

    @property
    def pending_challenges(self) -> int:
        """Connections between their challenge and their proof (for tests and status)."""
        return len(self._challenged)

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
            raise refuse_connect(
                R_ORIGIN,
                f'oh-executor: cross-origin connection refused (Origin {origin}): executors do '
                f'not run in web pages; an origin can be allowed with {ALLOWED_ORIGINS_ENV}',
            )
        if (query.get('transport') or [''])[0] != 'websocket':
            raise refuse_connect(
                R_TRANSPORT,
                'oh-executor: executors must connect with the websocket transport (polling is '
                'refused)',
            )
        if not conversation_id:
            raise refuse_connect(R_NO_CONVERSATION, 'oh-executor: conversation_id is required')
        auth = auth if isinstance(auth, dict) else {}
        protocol = auth.get('protocol')
        if protocol != PROTOCOL_VERSION:
            raise refuse_connect(
                R_PROTOCOL,
                f'oh-executor: protocol mismatch: server speaks oh-executor/{PROTOCOL_VERSION}, '
                f'executor sent oh-executor/{protocol}',
                server_protocol=PROTOCOL_VERSION,
            )
        client_nonce = auth.get('client_nonce')
        if not is_nonce(client_nonce):
            # An executor without a key sends no nonce (it could not check our proof).
            raise refuse_connect(
                R_NO_KEY, missing_key_message(ch.token_file if ch is not None else None)
            )
        if ch is not None:
            keys = ch.accepted_keys
        elif self._standing_keys:
            # Only proven executors count: unproven connections have their own bound (below),
            # so a flood of them cannot fill the waiting room.
            waiting_here = len(self._waiting.get(conversation_id, {}))
            waiting_all = sum(len(w) for w in self._waiting.values())
            if waiting_here >= WAITING_ROOM_PER_CONVERSATION or waiting_all >= WAITING_ROOM_TOTAL:
                raise refuse_connect(R_WAITING_ROOM_FULL,
                                      waiting_room_full_message(conversation_id))
            keys = self._standing_keys
        else:
            raise refuse_connect(
                R_NO_RUNTIME, f'oh-executor: no VsCodeRuntime for conversation {conversation_id}'
            )
        while len(self._challenged) >= self.pending_challenges_max:
            # The connection that has waited longest makes room: a real executor answers in one
            # round trip, so only one that does not answer is dropped.
            oldest_sid = next(iter(self._challenged))
            oldest = self._challenged.pop(oldest_sid)
            if oldest.timer is not None:
                oldest.timer.cancel()
            self.call_threadsafe(self._refuse(
                oldest_sid, R_BUSY,
                f'oh-executor: too many connections are answering a challenge (at most '
                f'{self.pending_challenges_max}); this one had not answered and made room'))
        server_nonce = new_nonce()
        pending = _Challenged(conversation_id, keys, client_nonce, server_nonce)
        self._challenged[sid] = pending
        pending.timer = asyncio.get_running_loop().call_later(
            self.auth_timeout_seconds, self._auth_expired, sid, pending
        )
        # The CONNECT packet is sent after this handler returns; challenge the executor after it.
        asyncio.get_running_loop().create_task(self._challenge(sid, pending))

    async def _challenge(self, sid: str, pending: _Challenged) -> None:
        await asyncio.sleep(0)
        if self._challenged.get(sid) is not pending:
            return
        proofs = [
            server_proof(key, pending.conversation_id, pending.client_nonce, pending.server_nonce)
            for key in pending.keys
        ]
        await self.sio.emit(
            EV_CHALLENGE, {'server_nonce': pending.server_nonce, 'server_proofs': proofs},
            to=sid, namespace=NAMESPACE,
        )

    def _auth_expired(self, sid: str, pending: _Challenged) -> None:
        if self._challenged.get(sid) is pending:
            del self._challenged[sid]
            self.call_threadsafe(self._refuse(
                sid, R_AUTH_TIMEOUT,
                f'oh-executor: no {EV_AUTH} within {self.auth_timeout_seconds:g} s'
            ))

    async def _refuse(self, sid: str, code: str, message: str) -> None:
        """Refuse a connection after its CONNECT was accepted (the handshake runs after it):
        sealed when the connection is proven, so that the executor may believe its words."""
        logger.warning('oh-executor: refused %s (%s): %s', sid, code, message)
        try:
            if not await self._send(sid, EV_REFUSED, refusal(code, message)):
                await self.sio.emit(EV_REFUSED, refusal(code, message), to=sid,
                                    namespace=NAMESPACE)
            self._bound.pop(sid, None)
            await self.sio.disconnect(sid, namespace=NAMESPACE)
        except Exception:  # pragma: no cover - the connection may be gone already
            logger.debug('oh-executor: could not refuse %s', sid, exc_info=True)

    async def handle_auth(self, sid: str, data: Any) -> None:
        pending = self._challenged.pop(sid, None)
        if pending is None:
            return  # not challenged, or answered already: nothing to do
        if pending.timer is not None:
            pending.timer.cancel()
        proof = data.get('proof') if isinstance(data, dict) else None
        # The executor signs the auth it registers with (its id, workspace, IDE tools): what a
        # relay changed in the connect's `auth` is never used.
        signed = data.get('auth') if isinstance(data, dict) else None
        key = None
        auth: Any = None
        if isinstance(signed, str):
            key = proving_key(proof, pending.keys, pending.conversation_id, pending.server_nonce,
                              pending.client_nonce, signed)
            try:
                auth = json.loads(signed)
            except ValueError:
                auth = None
        if key is None or not isinstance(auth, dict):
            await self._refuse(sid, R_INVALID_PROOF, invalid_proof_message())
            return
        self._bound[sid] = _Bound(SessionBinding(key, pending.conversation_id, pending.client_nonce,
                                                 pending.server_nonce, 'server'))
        ch = self.channel(pending.conversation_id)
        if ch is not None:
            if not key_matches(key, ch.accepted_keys):
                await self._refuse(sid, R_INVALID_PROOF, invalid_proof_message())
                return
            self._by_sid[sid] = ch
            await self._welcome(sid, ch, auth)
            return
        conversation_id = pending.conversation_id
        timer = asyncio.get_running_loop().call_later(
            self.waiting_room_seconds, self._waiting_expired, conversation_id, sid
        )
        self._waiting.setdefault(conversation_id, {})[sid] = _Waiting(key, auth, timer)
        # Tells the executor how long to wait for its welcome (instead of its usual 10 s).
        await self._send(sid, EV_WAITING, {'seconds': self.waiting_room_seconds})
        logger.info(
            'oh-executor: executor %s proved its key and waits (up to %gs) for the runtime of '
            'conversation %s', sid, self.waiting_room_seconds, conversation_id,
        )

    def _waiting_expired(self, conversation_id: str, sid: str) -> None:
        room = self._waiting.get(conversation_id, {})
        if room.pop(sid, None) is None:
            return
        if not room:
            self._waiting.pop(conversation_id, None)
        self.call_threadsafe(self._refuse(
            sid, R_WAITING_TIMEOUT,
            waiting_room_timeout_message(conversation_id, self.waiting_room_seconds)
        ))

    async def _admit_waiting(self, ch: Channel) -> None:
        room = self._waiting.pop(ch.conversation_id, None)
        if not room:
            return
        for sid, waiting in room.items():  # arrival order: the last one stays registered
            waiting.timer.cancel()
            if ch.closed:
                await self._refuse(sid, R_NO_RUNTIME, f'oh-executor: no VsCodeRuntime for '
                                                      f'conversation {ch.conversation_id}')
            elif not key_matches(waiting.key, ch.accepted_keys):
                await self._refuse(sid, R_INVALID_PROOF, invalid_proof_message())
            else:
                self._by_sid[sid] = ch
                await self._welcome(sid, ch, waiting.auth)

    async def _welcome(self, sid: str, ch: Channel, auth: dict[str, Any]) -> None:
        await asyncio.sleep(0)
        if ch.closed or self._by_sid.get(sid) is not ch:
            return
        old = ch.executor_sid
        if old is not None and old != sid:
            logger.info('oh-executor: executor %s replaces %s for conversation %s', sid, old,
                        ch.conversation_id)
            self._by_sid.pop(old, None)
            try:
                await self._send(old, EV_REPLACED, {'conversation_id': ch.conversation_id})
                self._bound.pop(old, None)
                await self.sio.disconnect(old, namespace=NAMESPACE)
            except Exception:  # pragma: no cover
                logger.debug('oh-executor: could not drop the replaced executor', exc_info=True)
        await self._send(
            sid,
            EV_WELCOME,
            {
                'protocol': PROTOCOL_VERSION,
                'conversation_id': ch.conversation_id,
                'runtime_session': ch.runtime_session,
                'session': ch.session_settings,
            },
        )
        resend = ch.executor_registered(sid, auth)
        logger.info('oh-executor: executor %s registered for conversation %s (workspace %s, client '
                    '%s, re-sending %d pending)', sid, ch.conversation_id, auth.get('workspace'),
                    auth.get('client'), len(resend))
        for payload in resend:
            await self._send(sid, EV_EVENT, payload)
        for rid in ch.take_cancels():
            await self._send(sid, EV_CANCEL, {'id': rid})

    async def handle_disconnect(self, sid: str, reason: Any = None) -> None:
        pending = self._challenged.pop(sid, None)
        if pending is not None and pending.timer is not None:
            pending.timer.cancel()
        self._bound.pop(sid, None)
        for conversation_id, room in list(self._waiting.items()):
            waiting = room.pop(sid, None)
            if waiting is not None:
                waiting.timer.cancel()
                if not room:
                    del self._waiting[conversation_id]
        ch = self._by_sid.pop(sid, None)
        if ch is not None:
            ch.executor_disconnected(sid, asyncio.get_running_loop())

    async def handle_reply(self, sid: str, data: Any) -> None:
        bound = self._bound.get(sid)
        if bound is None:
            return  # not proven: nothing it says is read
        try:
            reply = bound.binding.open(EV_EVENT, data)
        except BindingError as e:
            await self._session_failed(sid, str(e))
            return
        ack = self._accept_reply(sid, reply)
        # Its own task: the handler never waits (the embedded server runs handlers inline).
        asyncio.get_running_loop().create_task(self._send(sid, EV_ACK, ack))

    async def _session_failed(self, sid: str, reason: str) -> None:
        """A message from the executor failed its check: end the session, and say why (sealed,
        so the executor knows it comes from us)."""
        ch = self._by_sid.get(sid)
        logger.error('oh-executor: session of %s (conversation %s) ended: %s', sid,
                     ch.conversation_id if ch else '?', reason)
        await self._refuse(sid, R_SESSION, f'oh-executor: the server ended this session: {reason}')

    def _accept_reply(self, sid: str, data: Any) -> dict[str, Any]:
        """Hand a verified reply to its channel; the ack's `{cause, ok[, error]}`."""
        cause = data.get('cause') if isinstance(data, dict) else None
        ch = self._by_sid.get(sid)

        def refused(error: str) -> dict[str, Any]:
            return {'cause': cause, 'ok': False, 'error': f'oh-executor: {error}'}

        if ch is None:
            return refused('this connection is not registered')
        if not isinstance(data, dict) or 'observation' not in data:
            return refused('an oh_event reply must be an observation')
        if not isinstance(cause, int) or isinstance(cause, bool):
            return refused(f'reply without an int cause: {cause!r}')
        # The runtime's event stream assigns these; never trust them from the executor.
        clean = {k: v for k, v in data.items() if k not in ('id', 'timestamp', 'source')}
        if clean.get('observation') == CHECKPOINT_OBSERVATION:
            # This project's own observation (OpenHands has no such class): the JSON as it came.
            ch.resolve(cause, CheckpointReply(clean))
            return {'cause': cause, 'ok': True}
        try:
            obs = event_from_dict(clean)
        except Exception as e:
            return refused(f'malformed observation: {e}')
        if not isinstance(obs, Observation):
            return refused('an oh_event reply must be an observation')
        ch.resolve(cause, obs)
        return {'cause': cause, 'ok': True}


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
