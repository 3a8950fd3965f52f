"""The runtime's side of oh-executor/3 (docs/protocol.md), driven by a raw Socket.IO client:
handshake refusals (with their codes) and proofs, welcome, replacement, delegation payloads,
sealed messages and reply acknowledgements."""

from __future__ import annotations

import asyncio
import uuid

import engineio
import pytest
import socketio

from openhands.events.action import CmdRunAction
from openhands.events.serialization import event_to_dict

from openhands_vscode_runtime.embedded import EmbeddedServer, embedded_server
from openhands_vscode_runtime import protocol as P
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


class Client:
    """A scripted executor connection; with `key` it answers the challenge with that key's proof
    (after checking the server's, recorded in `server_proved`) and from then on opens every
    sealed message it receives (`events` holds the payloads) and seals what it sends."""

    def __init__(self, key: str | None = None):
        self.sio = socketio.AsyncClient(reconnection=False)
        self.events: list[tuple[str, object]] = []
        self.got = asyncio.Event()
        self.key = key
        self.server_proved: bool | None = None
        self.binding: P.SessionBinding | None = None
        self.auth: dict = {}

        self.connect_error = None

        @self.sio.on('*', namespace=NAMESPACE)
        async def any_event(event, data):
            if self.binding is not None and isinstance(data, dict) and 'body' in data:
                data = self.binding.open(event, data)
            self.events.append((event, data))
            self.got.set()

        @self.sio.on('oh_executor_challenge', namespace=NAMESPACE)
        async def challenge(data):
            self.events.append(('oh_executor_challenge', data))
            self.got.set()
            if self.key is None:
                return
            conv, nonce, sn = self.conversation_id, self.nonce, data['server_nonce']
            self.server_proved = P.server_proved(self.key, conv, nonce, data)
            signed = P.signed_auth_text(self.auth)
            self.binding = P.SessionBinding(self.key, conv, nonce, sn, 'executor')
            await self.sio.emit('oh_executor_auth', {
                'proof': P.executor_proof(self.key, conv, sn, nonce, signed), 'auth': signed},
                namespace=NAMESPACE)

        @self.sio.on('connect_error', namespace=NAMESPACE)
        async def connect_error(data):
            self.connect_error = data

    async def reply(self, payload: dict) -> dict:
        """Send a sealed reply and return the hub's (sealed) ack for it."""
        before = sum(1 for e, _ in self.events if e == P.EV_ACK)
        await self.sio.emit(P.EV_EVENT, self.binding.seal(P.EV_EVENT, payload), namespace=NAMESPACE)

        async def _w():
            while sum(1 for e, _ in self.events if e == P.EV_ACK) <= before:
                self.got.clear()
                await self.got.wait()

        await asyncio.wait_for(_w(), 5)
        return [d for e, d in self.events if e == P.EV_ACK][-1]

    async def connect(self, query: str, auth: dict | None):
        self.conversation_id = dict(p.split('=', 1) for p in query.split('&')).get(
            'conversation_id', '')
        self.nonce = (auth or {}).get('client_nonce', '')
        self.auth = auth or {}
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


def auth(workspace='/tmp', protocol=P.PROTOCOL_VERSION, nonce=True):
    a = {'protocol': protocol, 'executor_id': str(uuid.uuid4()), 'workspace': workspace,
         'client': 'test/0'}
    if nonce:
        a['client_nonce'] = P.new_nonce()
    return a


@pytest.mark.parametrize(
    'query_fn,auth_kw,code,message',
    [
        (lambda ch: 'latest_event_id=3', {}, 'no_conversation',
         'oh-executor: conversation_id is required'),
        (lambda ch: 'conversation_id=nobody', {}, 'no_runtime',
         'oh-executor: no VsCodeRuntime for conversation nobody'),
        (lambda ch: f'conversation_id={ch.conversation_id}', {'nonce': False}, 'no_key',
         'oh-executor: missing session_api_key'),
        (lambda ch: f'conversation_id={ch.conversation_id}', {'protocol': 2}, 'protocol',
         'oh-executor: protocol mismatch: server speaks oh-executor/3, executor sent oh-executor/2'),
    ],
)
def test_refusals(channel, query_fn, auth_kw, code, message):
    """Each refusal carries its code (what the executor maps) beside its words."""
    async def go():
        c = Client()
        with pytest.raises(socketio.exceptions.ConnectionError):
            await c.connect(query_fn(channel), auth(**auth_kw))
        return c.connect_error

    error = asyncio.run(go())  # {"message", "data": {"code", "message", ...}}
    assert error['data']['code'] == code and message in error['data']['message'], error
    assert error['message'] == error['data']['message'], error


def test_a_wrong_proof_is_refused_after_the_challenge(channel):
    async def go():
        c = Client(key='wrong')
        await c.connect(f'conversation_id={channel.conversation_id}', auth())
        refused = await c.wait_for('oh_executor_refused')
        assert c.server_proved is False  # the hub proved k3y, not 'wrong'
        assert refused['code'] == 'invalid_proof', refused
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
            'protocol': 3,
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

        bad = await a.reply({'observation': 'run', 'content': 'x'})
        assert bad['ok'] is False and 'cause' in bad['error']
        reply = {'observation': 'run', 'content': 'hi', 'cause': rid,
                 'extras': {'command': 'echo hi', 'metadata': {'exit_code': 0}}}
        assert await a.reply(reply) == {'cause': rid, 'ok': True}
        # a duplicate reply is acknowledged and ignored
        assert await a.reply(dict(reply, content='dup')) == {'cause': rid, 'ok': True}
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
        await c.reply({'observation': 'run', 'content': '', 'cause': rid,
                       'extras': {'command': 'true', 'metadata': {'exit_code': 0}}})
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


@pytest.mark.parametrize('how', ['unsealed', 'forged', 'replayed', 'skipped'])
def test_a_reply_that_fails_its_check_ends_the_session(channel, how):
    """What a party between the two ends could send the hub: the session ends (a sealed
    `session` refusal saying why), and the runtime never sees the reply."""
    async def go():
        c = Client(key='k3y')
        await c.connect(f'conversation_id={channel.conversation_id}', auth())
        await c.wait_for('oh_executor_welcome')
        rid, fut = await asyncio.to_thread(channel.submit, {'action': 'run', 'args': {'command': 'x'}})
        await c.wait_for('oh_event')
        reply = {'observation': 'run', 'content': 'forged', 'cause': rid,
                 'extras': {'command': 'x', 'metadata': {'exit_code': 0}}}
        if how == 'unsealed':
            envelope = reply
        elif how == 'forged':
            envelope = P.SessionBinding('not-k3y', channel.conversation_id, c.nonce, 'b' * 64,
                                        'executor').seal(P.EV_EVENT, reply)
        elif how == 'replayed':
            first = c.binding.seal(P.EV_EVENT, {'observation': 'null', 'content': '', 'cause': 0})
            await c.sio.emit(P.EV_EVENT, first, namespace=NAMESPACE)
            await c.wait_for(P.EV_ACK)
            envelope = first
        else:
            c.binding.send_seq += 1
            envelope = c.binding.seal(P.EV_EVENT, reply)
        await c.sio.emit(P.EV_EVENT, envelope, namespace=NAMESPACE)
        refused = await c.wait_for('oh_executor_refused')
        assert refused['code'] == 'session', refused
        expected = {'unsealed': 'an unauthenticated oh_event', 'forged': 'bad MAC on oh_event',
                    'replayed': 'replayed oh_event', 'skipped': 'out of order oh_event'}[how]
        assert expected in refused['message'], refused
        for _ in range(100):
            if not channel.executor_connected:
                break
            await asyncio.sleep(0.02)
        assert not channel.executor_connected
        assert not fut.done(), 'the runtime saw the tampered reply'
        await c.sio.disconnect()

    asyncio.run(go())


def test_the_python_and_rust_copies_agree():
    """The values crates/oh-transport pins in handshake.rs and session.rs."""
    a, b = 'a' * 64, 'b' * 64
    assert P.server_proof('k', 'conv', a, b) == (
        '19b6ee0956a6e93c66026f8bcfaebafb1ac45f0b4fcac40f3e2af02d908ee7b3')
    assert P.executor_proof('k', 'conv', b, a, '{"protocol":3}') == (
        '82c02370a6a3640c9cbd6bfb3dd747eca30919d17f78a2905e66771c8e1e903f')
    key = P.session_key('k', P.TO_SERVER, 'c', a, b)
    assert P.message_mac(key, P.TO_SERVER, 0, 'oh_event', '{"cause":1}') == (
        'ce555b78d4e87b6bbeece38351eaded42fa7350be174017e112989c87e3b7877')
