"""A relaying impostor (issue 32): it listens where the executor dials, opens its own connection to
the real hub with the executor's query and `auth`, and passes the handshake through both ways, so
both proofs succeed. Then, by `mode`:

  forward        passes everything on, untouched (the real server's actions must still run)
  inject         sends the executor its own `oh_event` (a `touch MARKER`), unsealed
  inject_sealed  the same in an envelope with the next sequence number and a made-up MAC
  tamper         rewrites the body of the real server's next action to `touch MARKER`
  replay         after the first action, sends it to the executor a second time
  drop           holds back the real server's first action (the next one arrives out of order)
  inject_reply   sends the hub an `oh_event` reply of its own for the first action

Each direction is forwarded by one task from a queue, in arrival order (a relay that reorders by
accident would prove nothing).

Used in-process by tests/runtime/test_relay.py and tests/v1/test_relay.py; `python
relay_impostor.py --mode M --marker PATH` runs a real embedded hub with one channel plus the relay
for the node suite (npm/executor/__test__/relay.test.js): it prints one JSON line
`{"ev": "ready", "relay_url", "conversation_id", "key"}`, then takes `{"cmd": "run", "command"}`
lines on stdin (each answered with `{"ev": "result", "content"}`) until stdin ends.
"""

from __future__ import annotations

import asyncio
import json
import socket
import sys
import threading
import time
import uuid
from typing import Any
from urllib.parse import parse_qs, urlencode

import socketio
import uvicorn
from socketio.exceptions import ConnectionRefusedError

NS = '/oh-executor'
MODES = ('forward', 'inject', 'inject_sealed', 'tamper', 'replay', 'drop', 'inject_reply')


def marker_action(marker: str, rid: int = 666) -> dict[str, Any]:
    return {'id': rid, 'action': 'run', 'timeout': 30.0,
            'args': {'command': f'touch {marker}', 'is_input': False, 'thought': '',
                     'blocking': False, 'is_static': False, 'cwd': None, 'hidden': False,
                     'confirmation_state': 'confirmed', 'security_risk': -1}}


class RelayImpostor:
    """The relay, on its own thread and loop, listening on 127.0.0.1 (a free port)."""

    def __init__(self, upstream_url: str, mode: str, marker: str) -> None:
        assert mode in MODES, mode
        self.upstream_url = upstream_url.rstrip('/')
        self.mode = mode
        self.marker = marker
        self.seen: list[tuple[str, str]] = []  # (direction, event), for the test's messages
        self.injected = False
        self.sio = socketio.AsyncServer(async_mode='asgi', cors_allowed_origins='*',
                                        async_handlers=False, max_http_buffer_size=16 << 20)
        self.sio.on('connect', self._connect, namespace=NS)
        self.sio.on('disconnect', self._disconnect, namespace=NS)
        self.sio.on('*', self._from_executor, namespace=NS)
        self._upstream: dict[str, socketio.AsyncClient] = {}
        self._queues: dict[str, tuple[asyncio.Queue, asyncio.Queue]] = {}
        # The pumps of each connection, cancelled when it goes and when the relay stops (a pump
        # left waiting on its queue is destroyed with the loop, and asyncio warns of it).
        self._pumps: dict[str, list[asyncio.Task]] = {}
        self._actions_seen = 0
        self._first_action: Any = None
        sock = socket.socket()
        sock.bind(('127.0.0.1', 0))
        self.port = sock.getsockname()[1]
        sock.close()
        self.url = f'http://127.0.0.1:{self.port}'
        self.loop = asyncio.new_event_loop()
        self._server = uvicorn.Server(uvicorn.Config(
            socketio.ASGIApp(self.sio), host='127.0.0.1', port=self.port, log_level='warning',
            lifespan='off', ws='websockets-sansio'))
        self._thread = threading.Thread(target=self._run, daemon=True, name='relay-impostor')

    def start(self) -> RelayImpostor:
        self._thread.start()
        deadline = time.monotonic() + 10
        while not self._server.started:
            if time.monotonic() > deadline:
                raise RuntimeError('the relay did not start')
            time.sleep(0.02)
        return self

    def stop(self) -> None:
        self._server.should_exit = True
        self._thread.join(10)

    def _run(self) -> None:
        asyncio.set_event_loop(self.loop)
        self.loop.run_until_complete(self._serve())

    async def _serve(self) -> None:
        try:
            await self._server.serve()
        finally:
            pumps = [t for tasks in self._pumps.values() for t in tasks]
            for task in pumps:
                task.cancel()
            await asyncio.gather(*pumps, return_exceptions=True)

    # ---- executor -> relay -> hub ------------------------------------------------------

    async def _connect(self, sid: str, environ: dict[str, Any], auth: Any = None) -> None:
        client = socketio.AsyncClient(reconnection=False)
        to_executor: asyncio.Queue = asyncio.Queue()
        to_hub: asyncio.Queue = asyncio.Queue()
        self._queues[sid] = (to_executor, to_hub)

        async def from_hub(event: str, data: Any = None) -> None:
            self.seen.append(('to executor', event))
            to_executor.put_nowait((event, data))

        client.on('*', from_hub, namespace=NS)
        refusal: dict = {}
        client.on('connect_error', lambda d: refusal.update(d if isinstance(d, dict) else {}),
                  namespace=NS)
        # The executor's own query (the Engine.IO fields are the relay client's business).
        query = urlencode({k: v[0] for k, v in parse_qs(environ.get('QUERY_STRING', '')).items()
                           if k in ('conversation_id', 'latest_event_id')})
        try:
            await client.connect(f'{self.upstream_url}?{query}', namespaces=[NS],
                                 transports=['websocket'], auth=auth, wait_timeout=10)
        except socketio.exceptions.ConnectionError as e:
            # The hub's refusal, passed on as it came.
            raise ConnectionRefusedError(refusal.get('message', str(e)),
                                         refusal.get('data') or {}) from None
        self._upstream[sid] = client
        loop = asyncio.get_running_loop()
        self._pumps[sid] = [loop.create_task(self._pump_to_executor(sid, to_executor)),
                            loop.create_task(self._pump_to_hub(client, to_hub))]

    async def _from_executor(self, event: str, sid: str, data: Any = None) -> None:
        self.seen.append(('to hub', event))
        queues = self._queues.get(sid)
        if queues is not None:
            queues[1].put_nowait((event, data))

    async def _disconnect(self, sid: str, *args: Any) -> None:
        for task in self._pumps.pop(sid, []):
            task.cancel()
        client = self._upstream.pop(sid, None)
        if client is not None:
            await client.disconnect()

    async def _pump_to_hub(self, client: socketio.AsyncClient, q: asyncio.Queue) -> None:
        while True:
            event, data = await q.get()
            await client.emit(event, data, namespace=NS)

    # ---- hub -> relay -> executor, where the impostor acts ---------------------------------

    async def _pump_to_executor(self, sid: str, q: asyncio.Queue) -> None:
        async def emit(event: str, data: Any) -> None:
            await self.sio.emit(event, data, to=sid, namespace=NS)

        while True:
            event, data = await q.get()
            if event == 'oh_event':
                self._actions_seen += 1
                first = self._actions_seen == 1
                if first:
                    self._first_action = data
                if self.mode == 'tamper' and first and isinstance(data, dict):
                    body = json.loads(data['body'])
                    body['args']['command'] = f'touch {self.marker}'
                    data = dict(data, body=json.dumps(body))
                    self.injected = True
                elif self.mode == 'drop' and first:
                    self.injected = True
                    continue
                await emit(event, data)
                if self.mode == 'replay' and first:
                    await emit(event, self._first_action)
                    self.injected = True
                if self.mode == 'inject_reply' and first and isinstance(data, dict):
                    rid = json.loads(data['body']).get('id')
                    client = self._upstream.get(sid)
                    if client is not None:
                        await client.emit('oh_event', {
                            'observation': 'run', 'content': 'the relay says it ran', 'cause': rid,
                            'extras': {'command': 'x', 'metadata': {'exit_code': 0}}},
                            namespace=NS)
                        self.injected = True
                continue
            await emit(event, data)
            if event == 'oh_executor_welcome' and self.mode in ('inject', 'inject_sealed'):
                action = marker_action(self.marker)
                if self.mode == 'inject_sealed':
                    seq = (data.get('seq', 0) + 1) if isinstance(data, dict) else 1
                    action = {'seq': seq, 'body': json.dumps(action), 'mac': '0' * 64}
                await emit('oh_event', action)
                self.injected = True


def _serve_cli(mode: str, marker: str) -> None:
    from openhands_vscode_runtime.embedded import embedded_server

    server = embedded_server()
    key = uuid.uuid4().hex + uuid.uuid4().hex
    conversation_id = f'relay-{uuid.uuid4().hex[:8]}'
    ch = server.hub.open_channel(conversation_id, session_api_key=key, session_settings={},
                                 reconnect_grace_seconds=2)
    relay = RelayImpostor(server.url, mode, marker).start()
    print(json.dumps({'ev': 'ready', 'relay_url': relay.url, 'conversation_id': conversation_id,
                      'key': key}), flush=True)
    for line in sys.stdin:
        cmd = json.loads(line)
        if cmd.get('cmd') == 'run':
            _rid, fut = ch.submit({'action': 'run', 'timeout': 30.0, 'args': {
                'command': cmd['command'], 'is_input': False, 'thought': '', 'blocking': False,
                'is_static': False, 'cwd': None, 'hidden': False,
                'confirmation_state': 'confirmed', 'security_risk': -1}})
            try:
                obs = fut.result(cmd.get('timeout', 20))
                out = {'ev': 'result', 'content': getattr(obs, 'content', str(obs))}
            except Exception as e:  # the test reads the failure
                out = {'ev': 'result', 'error': repr(e)}
            print(json.dumps(out), flush=True)
    relay.stop()


if __name__ == '__main__':
    import argparse

    ap = argparse.ArgumentParser()
    ap.add_argument('--mode', choices=MODES, default='forward')
    ap.add_argument('--marker', required=True)
    a = ap.parse_args()
    _serve_cli(a.mode, a.marker)
