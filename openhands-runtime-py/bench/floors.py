"""Floors for `run_action(CmdRunAction('echo hi'))` in embedded mode, measured beside it (bench_runtime).

An embedded `echo hi` is a Socket.IO round trip plus bash running `echo hi` on a PTY. Each floor
below keeps the real part and drops everything of ours around it:

* `socketio_round_trip`: the embedded server itself (`EmbeddedServer`: python-socketio under
  uvicorn, on its own thread and loop) with a `/floor` namespace; this thread sends the same payload
  the runtime sends for `echo hi`, through the hub's thread hop, and waits on a
  `concurrent.futures.Future` that the reply's handler resolves, as the runtime does. The other end
  is floor_client.py, a plain-socket websocket client that answers at once with an acknowledged
  reply shaped like the executor's. No executor, no hub bookkeeping, no OpenHands `run_action`.
* `bash_on_pty`: bash as the executor starts it (`--norc --noprofile -i`, readline on, `TERM`
  tmux-256color) with the reference's PS1 JSON block as a fixed string, driven straight from this
  process: type `echo hi` and Enter, read until the next block. Without the executor's prompt
  hook (which fills the block in without forking) and without the terminal renderer, it is a
  lower bound for any executor that keeps the reference's prompt protocol.
"""

from __future__ import annotations

import concurrent.futures
import json
import os
import pty
import select
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

FLOOR_NAMESPACE = '/floor'

# The reference's PS1 block as bash prints it after `echo hi` (values fixed; see module doc).
_PS1 = (
    '\n###PS1JSON###\n{\n  "pid": "",\n  "exit_code": "0",\n  "username": "\\u",\n'
    '  "hostname": "\\h",\n  "working_dir": "/tmp",\n  "py_interpreter_path": ""\n}\n'
    '###PS1END###\n'
)


def _echo_payload_and_reply() -> tuple[dict[str, Any], dict[str, Any]]:
    from openhands.events.action import CmdRunAction
    from openhands.events.observation import CmdOutputObservation
    from openhands.events.observation.commands import CmdOutputMetadata
    from openhands.events.serialization import event_to_dict

    action = CmdRunAction('echo hi')
    action.set_hard_timeout(120.0)
    payload = event_to_dict(action)
    payload['timeout'] = 120.0
    obs = CmdOutputObservation(
        content='hi',
        command='echo hi',
        metadata=CmdOutputMetadata(
            exit_code=0,
            pid=-1,
            username='root',
            hostname='host',
            working_dir='/tmp',
            py_interpreter_path='/usr/bin/python',
            suffix='\n[The command completed with exit code 0.]',
        ),
    )
    reply = {k: v for k, v in event_to_dict(obs).items() if k not in ('id', 'timestamp', 'source')}
    return payload, reply


def socketio_round_trip(n: int, warmup: int = 200) -> list[float]:
    """Milliseconds per round trip through the embedded server's Socket.IO stack (module doc)."""
    import socketio

    from openhands_vscode_runtime.embedded import EmbeddedServer

    pending: dict[int, concurrent.futures.Future] = {}
    joined: concurrent.futures.Future[str] = concurrent.futures.Future()

    class Floor(socketio.AsyncNamespace):
        async def on_connect(self, sid: str, environ: dict[str, Any], auth: Any = None) -> None:
            joined.set_result(sid)

        async def on_oh_event(self, sid: str, data: dict[str, Any]) -> dict[str, Any]:
            fut = pending.pop(data['cause'], None)
            if fut is not None:
                fut.set_result(data)
            return {'ok': True}

    server = EmbeddedServer()  # its own instance, not the process-wide one the runtime uses
    server.sio.register_namespace(Floor(FLOOR_NAMESPACE))
    server.start()
    payload, reply = _echo_payload_and_reply()
    client = subprocess.Popen(
        [sys.executable, str(Path(__file__).with_name('floor_client.py')), str(server.port),
         json.dumps(reply)]
    )
    try:
        sid = joined.result(timeout=30)

        def round_trip(rid: int) -> None:
            fut: concurrent.futures.Future = concurrent.futures.Future()
            pending[rid] = fut
            server.hub.call_threadsafe(
                server.sio.emit('oh_event', dict(payload, id=rid), to=sid, namespace=FLOOR_NAMESPACE)
            )
            fut.result(timeout=10)

        for rid in range(warmup):
            round_trip(rid)
        out = []
        for rid in range(warmup, warmup + n):
            t = time.perf_counter()
            round_trip(rid)
            out.append((time.perf_counter() - t) * 1000)
        return out
    finally:
        client.kill()
        client.wait()
        server.stop()


def bash_on_pty(n: int, warmup: int = 50) -> list[float]:
    """Milliseconds from typing `echo hi` to bash's next PS1 block on a bare PTY (module doc)."""
    home = tempfile.mkdtemp(prefix='oh-bench-floor-home-')  # no ~/.bashrc, no pyenv lock
    env = {
        'PATH': os.environ.get('PATH', '/usr/bin:/bin'),
        'HOME': home,
        'TERM': 'tmux-256color',
        'LANG': 'C.UTF-8',
        'LC_ALL': 'C.UTF-8',
        'PS1': _PS1,
        'PS2': '',
    }
    pid, fd = pty.fork()
    if pid == 0:  # the child: bash, as the executor starts it
        try:
            os.execve('/bin/bash', ['bash', '--norc', '--noprofile', '-i'], env)
        finally:
            os._exit(127)
    buf = bytearray()

    def read_until(done) -> None:
        while not done(buf):
            ready, _, _ = select.select([fd], [], [], 10)
            if not ready:
                raise TimeoutError(f'bash on a PTY: no prompt; got {bytes(buf[-300:])!r}')
            buf.extend(os.read(fd, 65536))

    try:
        read_until(lambda b: b.count(b'###PS1END###') >= 1)
        out = []
        for i in range(warmup + n):
            buf.clear()
            t = time.perf_counter()
            os.write(fd, b'echo hi\r')
            read_until(
                lambda b: b.endswith(b'###PS1END###\r\n')
                and b'hi\r\n' in b[b.find(b'echo hi') + 7 :]
            )
            if i >= warmup:
                out.append((time.perf_counter() - t) * 1000)
        return out
    finally:
        os.close(fd)
        try:
            os.kill(pid, 9)
            os.waitpid(pid, 0)
        except OSError:
            pass
        shutil.rmtree(home, ignore_errors=True)

