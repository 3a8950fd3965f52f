"""The runtime's side of oh-executor/2 (docs/protocol.md), driven by a raw Socket.IO client:
handshake refusals and proofs, welcome, replacement, delegation payloads and reply
acknowledgements."""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import secrets
import uuid

import engineio
import pytest
import socketio

from openhands.events.action import CmdRunAction
from openhands.events.serialization import event_to_dict

from openhands_vscode_runtime.embedded import EmbeddedServer, embedded_server
from openhands_vscode_runtime.hub import NAMESPACE


@pytest.fixture
def hub():
    return embedded_server().hub


@pytest.fixture
def channel(hub):
    ch = hub.open_channel(
        f'conv-{uuid.uuid4().hex[:8]}',
        session_api_key='k3y',
        session_settings={'no_change_timeout_seconds': 7},
        reconnect_grace_seconds=1,
    )
    yield ch
    ch.close()


def proof(key: str, label: str, conversation_id: str, first: str, second: str) -> str:
    message = '\n'.join((label, conversation_id, first, second)).encode()
    return hmac.new(key.encode(), message, hashlib.sha256).hexdigest()


class Client:
    """A scripted executor connection; with `key` it answers the challenge with that key's proof
    (after checking the server's, recorded in `server_proved`)."""

    def __init__(self, key: str | None = None):
        self.sio = socketio.AsyncClient(reconnection=False)
        self.events: list[tuple[str, object]] = []
        self.got = asyncio.Event()
        self.key = key
        self.server_proved: bool | None = None

        self.connect_error = None

        @self.sio.on('*', namespace=NAMESPACE)
        async def any_event(event, data):
            self.events.append((event, data))
            self.got.set()

        @self.sio.on('oh_executor_challenge', namespace=NAMESPACE)
        async def challenge(data):
            self.events.append(('oh_executor_challenge', data))
            self.got.set()
            if self.key is None:
                return
            conv, nonce, sn = self.conversation_id, self.nonce, data['server_nonce']
            mine = proof(self.key, 'oh-executor/2 server', conv, nonce, sn)
            self.server_proved = any(hmac.compare_digest(mine, p) for p in data['server_proofs'])
            await self.sio.emit('oh_executor_auth', {
                'proof': proof(self.key, 'oh-executor/2 executor', conv, sn, nonce)},
                namespace=NAMESPACE)

        @self.sio.on('connect_error', namespace=NAMESPACE)
        async def connect_error(data):
            self.connect_error = data

    async def connect(self, query: str, auth: dict | None):
        self.conversation_id = dict(p.split('=', 1) for p in query.split('&')).get(
            'conversation_id', '')
        self.nonce = (auth or {}).get('client_nonce', '')
        await self.sio.connect(
            f'{embedded_server().url}?{query}',
            namespaces=[NAMESPACE],
            transports=['websocket'],
            auth=auth,
            wait_timeout=5,
        )

    async def wait_for(self, name: str, timeout: float = 5):
        async def _w():
            while not any(e == name for e, _ in self.events):
                self.got.clear()
                await self.got.wait()

        await asyncio.wait_for(_w(), timeout)
        return [d for e, d in self.events if e == name][-1]


def auth(workspace='/tmp', protocol=2, nonce=True):
    a = {'protocol': protocol, 'executor_id': str(uuid.uuid4()), 'workspace': workspace,
         'client': 'test/0'}
    if nonce:
        a['client_nonce'] = secrets.token_hex(32)
    return a


@pytest.mark.parametrize(
    'query_fn,auth_kw,message',
    [
        (lambda ch: 'latest_event_id=3', {}, 'oh-executor: conversation_id is required'),
        (lambda ch: 'conversation_id=nobody', {}, 'oh-executor: no VsCodeRuntime for conversation nobody'),
        (lambda ch: f'conversation_id={ch.conversation_id}', {'nonce': False},
         'oh-executor: missing session_api_key'),
        (lambda ch: f'conversation_id={ch.conversation_id}', {'protocol': 1},
         'oh-executor: protocol mismatch: server speaks 2, executor sent 1'),
    ],
)
def test_refusals(channel, query_fn, auth_kw, message):
    async def go():
        c = Client()
        with pytest.raises(socketio.exceptions.ConnectionError):
            await c.connect(query_fn(channel), auth(**auth_kw))
        return str(c.connect_error)

    text = asyncio.run(go())
    assert message in text


def test_a_wrong_proof_is_refused_after_the_challenge(channel):
    async def go():
        c = Client(key='wrong')
        await c.connect(f'conversation_id={channel.conversation_id}', auth())
        refused = await c.wait_for('oh_executor_refused')
        assert c.server_proved is False  # the hub proved k3y, not 'wrong'
        assert refused['message'].startswith('oh-executor: invalid session_api_key')
        assert not any(e == 'oh_executor_welcome' for e, _ in c.events)
        assert channel.registrations == 0
        await c.sio.disconnect()

    asyncio.run(go())


def test_welcome_delegation_ack_and_replacement(channel):
    async def go():
        a = Client(key='k3y')
        await a.connect(f'conversation_id={channel.conversation_id}', auth('/ws/a'))
        welcome = await a.wait_for('oh_executor_welcome')
        assert a.server_proved is True
        assert welcome == {
            'protocol': 2,
            'conversation_id': channel.conversation_id,
            'runtime_session': channel.runtime_session,
            'session': {'no_change_timeout_seconds': 7},
        }
        for _ in range(100):
            if channel.executor_connected:
                break
            await asyncio.sleep(0.01)
        assert channel.workspace == '/ws/a'

        action = CmdRunAction('echo hi')
        action.set_hard_timeout(120.0, blocking=False)
        payload = event_to_dict(action)
        payload['timeout'] = 120.0
        rid, fut = await asyncio.to_thread(channel.submit, payload)
        sent = await a.wait_for('oh_event')
        assert sent['id'] == rid and sent['action'] == 'run'
        assert sent['args']['command'] == 'echo hi' and sent['timeout'] == 120.0

        bad = await a.sio.call('oh_event', {'observation': 'run', 'content': 'x'},
                               namespace=NAMESPACE, timeout=5)
        assert bad['ok'] is False and 'cause' in bad['error']
        reply = {'observation': 'run', 'content': 'hi', 'cause': rid,
                 'extras': {'command': 'echo hi', 'metadata': {'exit_code': 0}}}
        assert await a.sio.call('oh_event', reply, namespace=NAMESPACE, timeout=5) == {'ok': True}
        # a duplicate reply is acknowledged and ignored
        assert await a.sio.call('oh_event', dict(reply, content='dup'), namespace=NAMESPACE,
                                timeout=5) == {'ok': True}
        obs = await asyncio.wrap_future(fut)
        assert obs.content == 'hi' and obs.exit_code == 0

        b = Client(key='k3y')
        await b.connect(f'conversation_id={channel.conversation_id}', auth('/ws/b'))
        await b.wait_for('oh_executor_welcome')
        await a.wait_for('oh_executor_replaced')
        for _ in range(100):
            if not a.sio.connected and channel.workspace == '/ws/b':
                break
            await asyncio.sleep(0.02)
        assert not a.sio.connected
        assert channel.workspace == '/ws/b'
        await b.sio.disconnect()

    asyncio.run(go())


def test_pending_actions_are_resent_after_reconnect(channel):
    async def go():
        rid, fut = await asyncio.to_thread(channel.submit, {'action': 'run', 'args': {'command': 'true'}})
        c = Client(key='k3y')
        await c.connect(f'conversation_id={channel.conversation_id}', auth())
        sent = await c.wait_for('oh_event')
        assert sent['id'] == rid
        await c.sio.call('oh_event', {'observation': 'run', 'content': '', 'cause': rid,
                                      'extras': {'command': 'true', 'metadata': {'exit_code': 0}}},
                         namespace=NAMESPACE, timeout=5)
        assert (await asyncio.wrap_future(fut)).exit_code == 0
        await c.sio.disconnect()
        # disconnected: a new action waits for the grace period (1 s here), then fails
        rid2, fut2 = await asyncio.to_thread(channel.submit, {'action': 'run', 'args': {'command': 'true'}})
        obs = await asyncio.wait_for(asyncio.wrap_future(fut2), 5)
        assert obs.content.startswith('Runtime disconnected:')

    asyncio.run(go())


def test_a_stopped_embedded_server_leaves_no_task_pending():
    """stop() shuts Socket.IO down before uvicorn and awaits what is left (engine.io's ping task
    sleeps out its interval), so no task is destroyed pending with the loop."""
    server = EmbeddedServer(ping_interval=30, ping_timeout=30)
    server.start()

    async def connect_and_leave():
        # An Engine.IO connection is enough: it starts the ping task and the service task.
        eio = engineio.AsyncClient()
        await eio.connect(server.url, transports=['websocket'], engineio_path='socket.io')
        await eio.disconnect()

    asyncio.run(connect_and_leave())
    assert [t for t in asyncio.all_tasks(server.loop) if not t.done()], 'nothing to clean up'
    server.stop()
    assert not server._thread.is_alive()
    assert [t for t in asyncio.all_tasks(server.loop) if not t.done()] == []
