"""`Channel`: the link between one runtime (one conversation) and its executor.

It keeps the actions sent and not yet answered, which executor each was sent to (only that one may
get it again), the grace period after a disconnect, and the futures the runtime waits on. The hub
(`hub.py`) creates channels and calls `executor_registered`, `executor_disconnected` and `resolve`
on its loop; the runtime calls the rest from its own threads. See hub.py for the threading model.

A channel reaches its hub only through `ChannelHost` (sending to an executor, letting go of the
channel), which the hub passes in: this module does not import hub.py, so the dependency runs one
way (hub -> channel).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import hmac
import itertools
import logging
import threading
import uuid
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Protocol

from openhands_vscode_runtime.protocol import EV_CANCEL, EV_EVENT

try:  # openhands-ai (V0): the hub's failures are OpenHands observations
    from openhands.events.observation import ErrorObservation, Observation
except ImportError:  # an OpenHands V1 venv (no openhands-ai): see v1/replies.py
    from openhands_vscode_runtime.v1.replies import ErrorObservation, Observation

logger = logging.getLogger('openhands_vscode_runtime')

EV_ACTION_OR_OBSERVATION = EV_EVENT

# How much longer than an action's own time limit a caller waits for the executor's reply (the
# executor ends a command at its limit; the margin covers the reply's way back and a re-send after
# a reconnect).
REPLY_MARGIN_SECONDS = 15.0


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


class ChannelHost(Protocol):
    """What a channel needs from the hub that created it (`ExecutorHub` is one)."""

    def emit_threadsafe(self, event: str, data: Any, sid: str) -> None:
        """Send `event` to the executor connection `sid`, sealed (any thread)."""

    def unregister(self, ch: Channel, executor_sid: str | None) -> None:
        """Forget a closed channel and drop its executor connection, if any."""


class Channel:
    """The link between one runtime (one conversation) and its executor.

    Methods are safe to call from any thread, except `executor_registered`,
    `executor_disconnected` and `resolve`: the hub calls them on its loop.
    """

    def __init__(
        self,
        host: ChannelHost,
        conversation_id: str,
        session_api_key: str | Sequence[str],
        session_settings: dict[str, Any],
        reconnect_grace_seconds: float,
        *,
        allowed_origins: frozenset[str] = frozenset(),
        token_file: Path | None = None,
    ) -> None:
        self.host = host
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
        # rid -> identity of the executor that received an action the runtime gave up on while
        # no executor was connected: the cancel goes to that executor when it registers again.
        self._unsent_cancels: dict[int, str] = {}
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
    def roots(self) -> list[str]:
        """Every folder of the executor's workspace, `workspace` first (`auth.roots`; an executor
        that sends none has one folder)."""
        roots = self._executor_auth.get('roots')
        if isinstance(roots, list) and roots and all(isinstance(r, str) and r for r in roots):
            return list(roots)
        ws = self.workspace
        return [ws] if ws else []

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
            self.host.emit_threadsafe(EV_ACTION_OR_OBSERVATION, payload, sid)
        return rid, fut

    def call(self, payload: dict[str, Any], timeout: float, what: str) -> Any:
        """Send one action and wait for its reply: the one reply rule of V0 and V1.

        `timeout` is the action's own time limit (V0: its hard timeout; V1: the terminal's
        `timeout`, or the V1 tools' reply timeout for an action without one); the wait is that
        plus `REPLY_MARGIN_SECONDS`. A reply that has not come by then is given up on: the action is
        cancelled in the executor (`cancel`; its late reply is dropped) and the caller gets an
        ErrorObservation saying so. The hub's own failures (closed, no executor) come back the same
        way, as the future's result.
        """
        rid, fut = self.submit(payload)
        wait = timeout + REPLY_MARGIN_SECONDS
        try:
            return fut.result(timeout=wait)
        except concurrent.futures.TimeoutError:
            # Stop it in the executor too: an IDE tool (an `open_diff` waiting for the user) or
            # a checkpoint of a huge tree would otherwise run on, its late answer dropped.
            self.cancel(rid)
            return ErrorObservation(
                f'Runtime timed out: the VS Code executor did not answer action {rid} '
                f'{what} within {wait:g} s.'
            )

    @property
    def _executor_identity(self) -> str:
        return _identity(self._executor_sid, self._executor_auth)

    def cancel(self, rid: int) -> None:
        """The runtime gave up on `rid` (its reply timeout passed): forget it, and tell the
        executor that received it to stop it (`oh_executor_cancel`). An action never sent, or
        already answered, needs nothing; for an executor that is away the cancel waits for its
        re-registration (the same executor only: another one never got the action)."""
        with self._lock:
            self._pending.pop(rid, None)
            sent_to = self._sent_to.pop(rid, None)
            if sent_to is None:
                return
            sid = self._executor_sid
            if sid is None or self._executor_identity != sent_to:
                self._unsent_cancels[rid] = sent_to
                return
        self.host.emit_threadsafe(EV_CANCEL, {'id': rid}, sid)

    def take_cancels(self) -> list[int]:
        """Ids to cancel in the executor that has just registered (hub, after the re-sends)."""
        with self._lock:
            me = self._executor_identity
            mine = [rid for rid, target in self._unsent_cancels.items() if target == me]
            self._unsent_cancels.clear()
        return sorted(mine)

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
        self.host.unregister(self, sid)

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
