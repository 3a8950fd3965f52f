"""A small backend speaking docs/protocol.md (oh-executor/3) for the VS Code integration tests.

It plays the part of the OpenHands server + VsCodeRuntime without the agent:

* `POST /api/conversations` creates a conversation (and a "runtime" waiting for it), like the
  OpenHands server API; `--conversation ID` pre-creates one for attach mode.
* Socket.IO namespace `/oh-executor` with the handshake, welcome, replacement and ack rules, and
  every message after the proofs sealed (openhands_vscode_runtime/protocol.py).
* Test control endpoints (loopback only): `GET /test/state`, `GET /test/connections` (requests
  to the Socket.IO endpoint and namespace connect attempts, refused ones included), `POST /test/delegate`
  (`{"conversation_id", "action": {...event_to_dict...}, "timeout"}`) which allocates an id,
  emits `oh_event` to the registered executor and answers with the observation.

The executor handshake proves `--session-api-key`, or without one the executor token of this
machine (created like server mode creates it, where VS Code on this machine reads it).

Run: python fake_backend.py [--port 0] [--session-api-key K] [--conversation ID]
Prints `READY <port>` when listening.
"""
from __future__ import annotations

import argparse
import asyncio
import itertools
import json
import sys
import uuid

import socketio
from aiohttp import web

from openhands_vscode_runtime import protocol as P

NS = P.NAMESPACE


def executor_key(args: argparse.Namespace) -> str:
    if args.session_api_key:
        return args.session_api_key
    from openhands_vscode_runtime.credentials import load_or_create_executor_token

    return load_or_create_executor_token()[0]


class Runtime:
    def __init__(self, conversation_id: str) -> None:
        self.conversation_id = conversation_id
        self.session = str(uuid.uuid4())
        self.sid: str | None = None
        self.executor_id: str | None = None
        self.workspace: str | None = None
        self.ids = itertools.count(1)
        self.pending: dict[int, asyncio.Future] = {}
        self.sent: dict[int, dict] = {}
        self.replies: list[dict] = []


def build(args: argparse.Namespace) -> web.Application:
    sio = socketio.AsyncServer(async_mode='aiohttp', cors_allowed_origins='*', logger=False, engineio_logger=False)
    app = web.Application()
    # Every request that reaches the Socket.IO endpoint and every namespace connect attempt
    # (accepted or refused), so a test can prove that nothing even tried to register.
    traffic = {'socketio_requests': 0, 'namespace_connects': 0, 'socketio_queries': []}

    @web.middleware
    async def count_socketio(request: web.Request, handler):
        if request.path.startswith('/socket.io'):
            traffic['socketio_requests'] += 1
            traffic['socketio_queries'].append(request.query_string[:300])
        return await handler(request)

    app.middlewares.append(count_socketio)
    sio.attach(app)
    runtimes: dict[str, Runtime] = {}
    by_sid: dict[str, Runtime] = {}
    challenged: dict[str, tuple] = {}
    bound: dict[str, tuple[P.SessionBinding, asyncio.Lock]] = {}

    async def send(sid: str, event: str, payload) -> None:
        entry = bound.get(sid)
        if entry is None:
            return
        async with entry[1]:
            await sio.emit(event, entry[0].seal(event, payload), to=sid, namespace=NS)

    def refused(code: str, message: str) -> Exception:
        return socketio.exceptions.ConnectionRefusedError(message, P.refusal(code, message))
    key = executor_key(args)
    if args.conversation:
        runtimes[args.conversation] = Runtime(args.conversation)

    @sio.on('connect', namespace=NS)
    async def connect(sid, environ, auth):
        from urllib.parse import parse_qs
        traffic['namespace_connects'] += 1
        query = parse_qs(environ.get('QUERY_STRING', ''))
        cid = (query.get('conversation_id') or [''])[0]
        if not cid:
            raise refused(P.R_NO_CONVERSATION, 'oh-executor: conversation_id is required')
        rt = runtimes.get(cid)
        if rt is None:
            raise refused(P.R_NO_RUNTIME, f'oh-executor: no VsCodeRuntime for conversation {cid}')
        auth = auth or {}
        if auth.get('protocol') != P.PROTOCOL_VERSION:
            raise socketio.exceptions.ConnectionRefusedError(
                f"oh-executor: protocol mismatch: server speaks {P.PROTOCOL_VERSION}, executor sent "
                f"{auth.get('protocol')}", P.refusal(P.R_PROTOCOL, 'protocol mismatch',
                                                     server_protocol=P.PROTOCOL_VERSION))
        client_nonce = auth.get('client_nonce')
        if not P.is_nonce(client_nonce):
            raise refused(P.R_NO_KEY, 'oh-executor: missing session_api_key')
        server_nonce = P.new_nonce()
        challenged[sid] = (rt, client_nonce, server_nonce)

        async def challenge():
            await asyncio.sleep(0)
            await sio.emit(P.EV_CHALLENGE, {'server_nonce': server_nonce, 'server_proofs': [
                P.server_proof(key, cid, client_nonce, server_nonce)]}, to=sid, namespace=NS)

        asyncio.get_running_loop().create_task(challenge())

    @sio.on('oh_executor_auth', namespace=NS)
    async def executor_auth(sid, data=None):
        entry = challenged.pop(sid, None)
        if entry is None:
            return
        rt, client_nonce, server_nonce = entry
        cid = rt.conversation_id
        signed = data.get('auth') if isinstance(data, dict) else None
        proved = isinstance(signed, str) and P.proving_key(
            data.get('proof'), [key], cid, server_nonce, client_nonce, signed) is not None
        if not proved:
            await sio.emit(P.EV_REFUSED, P.refusal(P.R_INVALID_PROOF, 'oh-executor: invalid session_api_key'),
                           to=sid, namespace=NS)
            await sio.disconnect(sid, namespace=NS)
            return
        auth = json.loads(signed)
        bound[sid] = (P.SessionBinding(key, cid, client_nonce, server_nonce, 'server'), asyncio.Lock())
        old = rt.sid
        rt.sid, rt.executor_id, rt.workspace = sid, auth.get('executor_id'), auth.get('workspace')
        by_sid[sid] = rt
        print(f'executor {auth} registered for {cid} (sid {sid})', flush=True)
        await send(sid, P.EV_WELCOME, {
            'protocol': P.PROTOCOL_VERSION, 'conversation_id': cid, 'runtime_session': rt.session,
            'session': {'no_change_timeout_seconds': args.no_change_timeout},
        })
        if old and old != sid:
            await send(old, P.EV_REPLACED, {'conversation_id': cid})
            await sio.disconnect(old, namespace=NS)
        for aid, action in rt.sent.items():  # re-send pending actions after a reconnect
            if not rt.pending[aid].done():
                await send(sid, P.EV_EVENT, action)

    @sio.on('disconnect', namespace=NS)
    async def disconnect(sid, *a):
        bound.pop(sid, None)
        rt = by_sid.pop(sid, None)
        if rt and rt.sid == sid:
            rt.sid = None
        print(f'executor sid {sid} disconnected', flush=True)

    @sio.on('oh_event', namespace=NS)
    async def oh_event(sid, data):
        entry = bound.get(sid)
        if entry is None:
            return
        try:
            data = entry[0].open(P.EV_EVENT, data)
        except P.BindingError as e:
            print(f'session of {sid} broken: {e}', flush=True)
            await send(sid, P.EV_REFUSED, P.refusal(P.R_SESSION, f'oh-executor: the server ended this session: {e}'))
            await sio.disconnect(sid, namespace=NS)
            return
        rt = by_sid.get(sid)
        cause = data.get('cause') if isinstance(data, dict) else None
        if rt is None or not isinstance(data, dict) or 'cause' not in data or 'id' in data:
            await send(sid, P.EV_ACK, {'cause': cause, 'ok': False, 'error': 'malformed reply'})
            return
        rt.replies.append(data)
        fut = rt.pending.get(int(data['cause']))
        if fut and not fut.done():
            fut.set_result(data)
        await send(sid, P.EV_ACK, {'cause': cause, 'ok': True})

    async def create_conversation(request: web.Request):
        if args.session_api_key and request.headers.get('X-Session-API-Key') != args.session_api_key:
            return web.json_response({'status': 'error', 'message': 'unauthorized'}, status=401)
        cid = uuid.uuid4().hex
        runtimes[cid] = Runtime(cid)
        print(f'created conversation {cid}', flush=True)
        return web.json_response({'status': 'ok', 'conversation_id': cid, 'conversation_status': 'STARTING'})

    async def state(request: web.Request):
        return web.json_response({cid: {'registered': rt.sid is not None, 'executor_id': rt.executor_id,
                                        'workspace': rt.workspace, 'replies': len(rt.replies)}
                                  for cid, rt in runtimes.items()})

    async def connections(request: web.Request):
        return web.json_response(traffic)

    async def delegate(request: web.Request):
        body = await request.json()
        rt = runtimes.get(body.get('conversation_id', ''))
        if rt is None:
            return web.json_response({'error': 'no such conversation'}, status=404)
        wait = float(body.get('wait_registered', 30))
        loop = asyncio.get_running_loop()
        deadline = loop.time() + wait
        while rt.sid is None and loop.time() < deadline:
            await asyncio.sleep(0.1)
        if rt.sid is None:
            return web.json_response({'error': 'no executor registered'}, status=409)
        aid = next(rt.ids)
        action = dict(body['action'])
        action['id'] = aid
        action['timeout'] = body.get('timeout', 120)
        rt.pending[aid] = loop.create_future()
        rt.sent[aid] = action
        await send(rt.sid, P.EV_EVENT, action)
        try:
            obs = await asyncio.wait_for(asyncio.shield(rt.pending[aid]), float(action['timeout']) + 15)
        except asyncio.TimeoutError:
            return web.json_response({'error': f'no reply for action {aid}'}, status=504)
        return web.json_response(obs)

    app.router.add_post('/api/conversations', create_conversation)
    app.router.add_get('/test/state', state)
    app.router.add_get('/test/connections', connections)
    app.router.add_post('/test/delegate', delegate)
    return app


async def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument('--port', type=int, default=0)
    p.add_argument('--session-api-key', default='')
    p.add_argument('--conversation', default='')
    p.add_argument('--no-change-timeout', type=float, default=10)
    args = p.parse_args()
    runner = web.AppRunner(build(args))
    await runner.setup()
    site = web.TCPSite(runner, '127.0.0.1', args.port)
    await site.start()
    port = site._server.sockets[0].getsockname()[1]
    print(f'READY {port}', flush=True)
    await asyncio.Event().wait()


if __name__ == '__main__':
    try:
        asyncio.run(main())
    except KeyboardInterrupt:
        sys.exit(0)
