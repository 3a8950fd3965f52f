"""A minimal Python stand-in for the headless executor, for protocol unit tests only.

It speaks oh-executor/3 (docs/protocol.md; the proofs and seals of
openhands_vscode_runtime/protocol.py) with the same command line as
npm/executor/bin/openhands-vscode-executor.js, but runs each command with `bash -c` (no session
state, no BashSession semantics) and implements only `run`, `read` and `write`. The real suite uses
the real executor; this file exists so that the runtime's side of the protocol can be tested on its
own (refusals, replacement, disconnects, exactly-once).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import subprocess
import sys
import threading
import uuid

import socketio

from openhands_vscode_runtime import protocol as P

NS = P.NAMESPACE


def _run(command: str, cwd: str, timeout: float | None) -> dict:
    try:
        proc = subprocess.run(
            ['bash', '-c', command], cwd=cwd, capture_output=True, text=True, timeout=timeout
        )
        out, code = (proc.stdout + proc.stderr).rstrip('\n'), proc.returncode
    except subprocess.TimeoutExpired:
        out, code = '', -1
    return {
        'observation': 'run',
        'content': out,
        'extras': {
            'command': command,
            'metadata': {'exit_code': code, 'working_dir': cwd},
            'hidden': False,
        },
    }


def _execute(data: dict, workspace: str) -> dict:
    kind = data.get('action')
    args = data.get('args', {})
    if kind == 'run':
        return _run(args['command'], workspace, data.get('timeout'))
    path = os.path.join(workspace, args.get('path', ''))
    if kind == 'read':
        try:
            with open(path) as f:
                return {'observation': 'read', 'content': f.read(), 'extras': {'path': args['path']}}
        except OSError as e:
            return {'observation': 'error', 'content': f'File not found: {e}', 'extras': {}}
    if kind == 'write':
        with open(path, 'w') as f:
            f.write(args.get('content', ''))
        return {'observation': 'write', 'content': '', 'extras': {'path': args['path']}}
    return {'observation': 'error', 'content': f'stand-in: unsupported action {kind}', 'extras': {}}


async def main() -> int:
    p = argparse.ArgumentParser()
    p.add_argument('--url', required=True)
    p.add_argument('--conversation', required=True)
    p.add_argument('--session-api-key-fd', type=int)
    p.add_argument('--workspace', required=True)
    p.add_argument('--no-change-timeout')
    p.add_argument('--protocol', type=int, default=P.PROTOCOL_VERSION)
    p.add_argument('--wrong-proof', action='store_true', help='answer the challenge with a bad proof')
    p.add_argument('--exit-on-stdin-eof', action='store_true')
    a = p.parse_args()
    # The key, as the real CLIs take it from the runtime: an inherited pipe, read to its end and closed.
    a.session_api_key = None
    if a.session_api_key_fd is not None:
        with os.fdopen(a.session_api_key_fd, 'rb') as f:
            a.session_api_key = f.read().decode().rstrip('\r\n') or None
    if a.exit_on_stdin_eof:
        # As the real CLIs: end of stdin means the spawning runtime is gone.
        def _watch_stdin() -> None:
            while sys.stdin.buffer.read1(4096):
                pass
            os._exit(0)

        threading.Thread(target=_watch_stdin, daemon=True).start()

    sio = socketio.AsyncClient(reconnection=True, reconnection_delay=0.5)
    executor_id = str(uuid.uuid4())
    started: dict[tuple[str, int], asyncio.Future] = {}
    session = {'id': None}
    welcomed = asyncio.Event()

    # Per connection (python-socketio reconnects with the same handlers): a fresh nonce, and the
    # session binding made from it and the server's nonce.
    conn: dict = {'nonce': None, 'auth': None, 'binding': None}
    send_lock = asyncio.Lock()

    def auth() -> dict:
        conn['nonce'] = P.new_nonce()
        conn['binding'] = None
        conn['auth'] = {
            'protocol': a.protocol,
            'executor_id': executor_id,
            'workspace': os.path.realpath(a.workspace),
            'client': 'standin/0',
            **({'client_nonce': conn['nonce']} if a.session_api_key else {}),
        }
        return conn['auth']

    def opened(event: str, data):
        """The payload of a sealed message; a message that fails its check ends this executor."""
        if conn['binding'] is None:
            return None
        try:
            return conn['binding'].open(event, data)
        except P.BindingError as e:
            print(f'session broken: {e}', flush=True)
            os._exit(4)

    async def send(event: str, payload) -> None:
        async with send_lock:
            await sio.emit(event, conn['binding'].seal(event, payload), namespace=NS)

    @sio.on(P.EV_CHALLENGE, namespace=NS)
    async def challenge(data):
        key, nonce = a.session_api_key, conn['nonce']
        if not P.server_proved(key, a.conversation, nonce, data):
            print('the server could not prove it holds the session key', flush=True)
            os._exit(3)
        sn = data['server_nonce']
        signed = P.signed_auth_text(conn['auth'])
        answer = P.executor_proof(key, a.conversation, sn, nonce, signed)
        if a.wrong_proof:
            answer = '0' * 64
        conn['binding'] = P.SessionBinding(key, a.conversation, nonce, sn, 'executor')
        await sio.emit(P.EV_AUTH, {'proof': answer, 'auth': signed}, namespace=NS)

    @sio.on(P.EV_REFUSED, namespace=NS)
    async def refused(data):
        if conn['binding'] is not None and isinstance(data, dict) and 'body' in data:
            data = opened(P.EV_REFUSED, data)
        print('refused', data.get('message'), flush=True)
        os._exit(2)

    @sio.on(P.EV_WAITING, namespace=NS)
    async def waiting(data):
        opened(P.EV_WAITING, data)

    @sio.on(P.EV_ACK, namespace=NS)
    async def ack(data):
        opened(P.EV_ACK, data)

    @sio.on(P.EV_CANCEL, namespace=NS)
    async def cancel(data):
        opened(P.EV_CANCEL, data)

    @sio.on(P.EV_WELCOME, namespace=NS)
    async def welcome(data):
        data = opened(P.EV_WELCOME, data)
        session['id'] = data['runtime_session']
        welcomed.set()

    @sio.on(P.EV_REPLACED, namespace=NS)
    async def replaced(data):
        opened(P.EV_REPLACED, data)
        print('replaced', flush=True)

    @sio.on(P.EV_EVENT, namespace=NS)
    async def on_event(data):
        data = opened(P.EV_EVENT, data)
        if not isinstance(data, dict):
            return
        rid = data.get('id')
        if not isinstance(rid, int):
            return
        key = (session['id'], rid)
        if key in started:
            fut = started[key]
            if fut.done():
                await send(P.EV_EVENT, fut.result())
            return
        fut = asyncio.get_running_loop().create_future()
        started[key] = fut
        reply = await asyncio.to_thread(_execute, data, a.workspace)
        reply['cause'] = rid
        fut.set_result(reply)
        await send(P.EV_EVENT, reply)

    query = f'conversation_id={a.conversation}'
    await sio.connect(
        f'{a.url}?{query}',
        namespaces=[NS],
        transports=['websocket'],
        auth=auth,
        wait_timeout=10,
    )
    await sio.wait()
    return 0


if __name__ == '__main__':
    sys.exit(asyncio.run(main()))
