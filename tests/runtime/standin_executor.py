"""A minimal Python stand-in for the headless executor, for protocol unit tests only.

It speaks oh-executor/2 (docs/protocol.md) with the same command line as
npm/executor/bin/openhands-vscode-executor.js, but runs each command with `bash -c` (no session
state, no BashSession semantics) and implements only `run`, `read` and `write`. The real suite uses
the real executor; this file exists so that the runtime's side of the protocol can be tested on its
own (refusals, replacement, disconnects, exactly-once).
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import hmac
import os
import secrets
import subprocess
import sys
import threading
import uuid

import socketio

NS = '/oh-executor'


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
    p.add_argument('--protocol', type=int, default=2)
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

    client_nonce = secrets.token_hex(32)

    def proof(label: str, first: str, second: str) -> str:
        message = '\n'.join((label, a.conversation, first, second)).encode()
        return hmac.new(a.session_api_key.encode(), message, hashlib.sha256).hexdigest()

    @sio.on('oh_executor_challenge', namespace=NS)
    async def challenge(data):
        sn = data['server_nonce']
        mine = proof('oh-executor/2 server', client_nonce, sn)
        if not any(hmac.compare_digest(mine, p) for p in data['server_proofs']):
            print('the server could not prove it holds the session key', flush=True)
            os._exit(3)
        answer = proof('oh-executor/2 executor', sn, client_nonce)
        if a.wrong_proof:
            answer = '0' * 64
        await sio.emit('oh_executor_auth', {'proof': answer}, namespace=NS)

    @sio.on('oh_executor_refused', namespace=NS)
    async def refused(data):
        print('refused', data.get('message'), flush=True)
        os._exit(2)

    @sio.on('oh_executor_welcome', namespace=NS)
    async def welcome(data):
        session['id'] = data['runtime_session']
        welcomed.set()

    @sio.on('oh_executor_replaced', namespace=NS)
    async def replaced(data):
        print('replaced', flush=True)

    @sio.on('oh_event', namespace=NS)
    async def on_event(data):
        rid = data.get('id')
        if not isinstance(rid, int):
            return
        key = (session['id'], rid)
        if key in started:
            fut = started[key]
            if fut.done():
                await sio.emit('oh_event', fut.result(), namespace=NS)
            return
        fut = asyncio.get_running_loop().create_future()
        started[key] = fut
        reply = await asyncio.to_thread(_execute, data, a.workspace)
        reply['cause'] = rid
        fut.set_result(reply)
        await sio.emit('oh_event', reply, namespace=NS)

    query = f'conversation_id={a.conversation}'
    await sio.connect(
        f'{a.url}?{query}',
        namespaces=[NS],
        transports=['websocket'],
        auth={
            'protocol': a.protocol,
            'executor_id': executor_id,
            'workspace': os.path.realpath(a.workspace),
            'client': 'standin/0',
            **({'client_nonce': client_nonce} if a.session_api_key else {}),
        },
        wait_timeout=10,
    )
    await sio.wait()
    return 0


if __name__ == '__main__':
    sys.exit(asyncio.run(main()))
