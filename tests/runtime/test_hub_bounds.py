"""The hub's bounds on connections that have not proven the key (issue 32): a flood of connections
that never answer their challenge holds at most `pending_challenges_max` entries, each for at most
`auth_timeout_seconds`; the real executor still gets in during the flood, and unproven connections
no longer count toward the waiting room (where they could lock out a real early executor)."""

from __future__ import annotations

import asyncio
import threading
import time
import uuid
from pathlib import Path
from urllib.parse import urlencode

import socketio
from test_auth import handshake

from openhands_vscode_runtime import protocol as P
from openhands_vscode_runtime.embedded import embedded_server
from openhands_vscode_runtime.executor_process import ExecutorProcess, find_executor


class Flood:
    """`n` connections that take a challenge and never answer it, on a loop of their own."""

    def __init__(self, url: str, conversation_id: str, n: int) -> None:
        self.url, self.conversation_id, self.n = url, conversation_id, n
        self.challenged = 0
        self.refused: list[dict] = []
        self.clients: list[socketio.AsyncClient] = []
        self.loop = asyncio.new_event_loop()
        self.ready = threading.Event()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.thread.start()
        asyncio.run_coroutine_threadsafe(self._start(), self.loop).result(60)

    async def _one(self) -> None:
        c = socketio.AsyncClient(reconnection=False)

        @c.on(P.EV_CHALLENGE, namespace=P.NAMESPACE)
        async def challenge(data):
            self.challenged += 1

        @c.on(P.EV_REFUSED, namespace=P.NAMESPACE)
        async def refused(data):
            self.refused.append(data)

        await c.connect(f'{self.url}?{urlencode({"conversation_id": self.conversation_id})}',
                        namespaces=[P.NAMESPACE], transports=['websocket'], wait_timeout=10,
                        auth={'protocol': P.PROTOCOL_VERSION, 'executor_id': str(uuid.uuid4()),
                              'workspace': '/tmp', 'client': 'flood/0',
                              'client_nonce': P.new_nonce()})
        self.clients.append(c)

    async def _start(self) -> None:
        for _ in range(self.n):
            await self._one()

    def close(self) -> None:
        async def _close():
            for c in self.clients:
                await c.disconnect()
        asyncio.run_coroutine_threadsafe(_close(), self.loop).result(30)
        self.loop.call_soon_threadsafe(self.loop.stop)


def test_a_flood_of_unanswered_challenges_is_bounded_and_the_executor_gets_in(tmp_path):
    server = embedded_server()
    hub = server.hub
    key = uuid.uuid4().hex
    ch = hub.open_channel(f'flood-{uuid.uuid4().hex[:8]}', session_api_key=key,
                          session_settings={})
    hub.pending_challenges_max, hub.auth_timeout_seconds = 8, 5.0
    flood = None
    real = None
    try:
        flood = Flood(server.url, ch.conversation_id, 40)
        assert hub.pending_challenges <= 8, hub.pending_challenges
        deadline = time.monotonic() + 10
        while len(flood.refused) < 32:  # the oldest made room (or timed out), each told why
            assert time.monotonic() < deadline, (len(flood.refused), hub.pending_challenges)
            time.sleep(0.05)
        codes = [r['code'] for r in flood.refused]
        assert set(codes) <= {P.R_BUSY, P.R_AUTH_TIMEOUT} and codes.count(P.R_BUSY) >= 20, codes
        # The real executor, during the flood (every slot taken by a connection that will not answer).
        ws = tmp_path / 'ws'
        ws.mkdir()
        real = ExecutorProcess(find_executor(), url=server.url, conversation_id=ch.conversation_id,
                               session_api_key=key, workspace=str(ws), no_change_timeout=None)
        auth = ch.registration_future().result(30)
        assert auth['workspace'] == str(ws.resolve())
        assert hub.pending_challenges <= 8
        # In time: what is left of the flood is refused when its time is up.
        deadline = time.monotonic() + 10
        while hub.pending_challenges:
            assert time.monotonic() < deadline, hub.pending_challenges
            time.sleep(0.05)
        assert any(r['code'] == P.R_AUTH_TIMEOUT for r in flood.refused), flood.refused[-3:]
        assert real.proc.poll() is None, Path(real.log_path).read_text()
    finally:
        hub.pending_challenges_max = 64
        hub.auth_timeout_seconds = 10.0
        if flood is not None:
            flood.close()
        if real is not None:
            real.stop()
            real.remove_log()
        ch.close()


def test_unproven_connections_do_not_fill_the_waiting_room():
    """Server mode's waiting room (standing keys): a flood of connections that cannot prove a key
    for a conversation without a runtime used to take its 4 places; now only proven executors
    count, so a real early executor still waits instead of being refused."""
    server = embedded_server()
    hub = server.hub
    key = uuid.uuid4().hex
    hub.set_standing_keys([key])
    conversation_id = f'early-{uuid.uuid4().hex[:8]}'
    flood = None
    try:
        flood = Flood(server.url, conversation_id, 10)
        seen = handshake(server.url, conversation_id, key=key, prove_with=key, timeout=2)
        names = [n for n, _ in seen['events']]
        assert names[:2] == ['challenge', 'oh_executor_waiting'], seen
    finally:
        hub.set_standing_keys([])
        if flood is not None:
            flood.close()
