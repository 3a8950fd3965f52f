"""`oh-executor replay` through the socket: the headless executor CLI
(npm/executor/bin/openhands-vscode-executor.js: the napi addon, files on its own LocalFs)
registered over Socket.IO with the python-socketio server of crates/oh-transport/tests/support
(docs/protocol.md: welcome with the no-change timeout, `oh_event` out, `oh_reply` back, exactly
once). Same interface as `oh-executor replay`: action JSON lines on stdin, one observation line on
stdout each. Selected by `tests/conformance/run.sh --driver socket` (CONFORMANCE_DRIVER=socket).
OH_SOCKET_EXECUTOR (a JSON array) replaces `node CLI` as the executor's command: tests/cross runs
another target's headless executor under qemu that way (its flags are the same).

    python tests/conformance/socket_replay.py --workspace WS --no-change-timeout N
"""

from __future__ import annotations

import argparse
import json
import os
import queue
import socket
import subprocess
import sys
import threading
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
SERVER = REPO / 'crates/oh-transport/tests/support/server.py'
CLI = REPO / 'npm/executor/bin/openhands-vscode-executor.js'


def executor_command() -> list[str]:
    custom = os.environ.get('OH_SOCKET_EXECUTOR')
    if not custom:
        return ['node', str(CLI)]
    argv = json.loads(custom)
    if not (isinstance(argv, list) and argv and all(isinstance(a, str) for a in argv)):
        raise ValueError(f'OH_SOCKET_EXECUTOR must be a JSON array of strings, not {custom!r}')
    return argv


def free_port() -> int:
    with socket.socket() as s:
        s.bind(('127.0.0.1', 0))
        return s.getsockname()[1]


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument('--workspace', required=True)
    ap.add_argument('--no-change-timeout', default='10')
    a = ap.parse_args()
    port = free_port()
    server = subprocess.Popen(
        [sys.executable, str(SERVER), '--port', str(port), '--no-change-timeout', a.no_change_timeout],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
    )
    events: queue.Queue = queue.Queue()

    def pump() -> None:
        assert server.stdout is not None
        for line in server.stdout:
            try:
                events.put(json.loads(line))
            except json.JSONDecodeError:
                pass
        events.put(None)

    threading.Thread(target=pump, daemon=True).start()

    def wait(kind: str, pred=lambda ev: True, timeout: float = 60.0) -> dict:
        while True:
            ev = events.get(timeout=timeout)
            if ev is None:
                raise RuntimeError('the socket server exited')
            if ev.get('ev') == kind and pred(ev):
                return ev

    def cmd(obj: dict) -> None:
        assert server.stdin is not None
        server.stdin.write(json.dumps(obj) + '\n')
        server.stdin.flush()

    executor = None
    try:
        wait('listening')
        # server.py's default key, on a pipe the executor reads and closes (as the runtime passes it).
        key_fd, write_fd = os.pipe()
        os.write(write_fd, b'test-key')
        os.close(write_fd)
        executor = subprocess.Popen(
            executor_command() + ['--url', f'http://127.0.0.1:{port}', '--conversation', 'conv1',
             '--workspace', a.workspace, '--no-change-timeout', a.no_change_timeout, '--log-level', 'warn',
             '--session-api-key-fd', str(key_fd)],
            stdout=sys.stderr, stderr=sys.stderr, cwd=os.getcwd(), pass_fds=(key_fd,),
            env={k: v for k, v in os.environ.items() if k != 'OH_SESSION_API_KEY'},
        )
        os.close(key_fd)
        wait('registered')
        for line in sys.stdin:
            if not line.strip():
                continue
            action = json.loads(line)
            cmd({'cmd': 'send', 'payload': action})
            reply = wait('reply', lambda ev: (ev.get('data') or {}).get('cause') == action.get('id'), timeout=3600)
            sys.stdout.write(json.dumps(reply['data']) + '\n')
            sys.stdout.flush()
    finally:
        if executor is not None:
            executor.terminate()
            try:
                executor.wait(timeout=15)
            except subprocess.TimeoutExpired:
                executor.kill()
        cmd({'cmd': 'quit'})
        try:
            server.wait(timeout=10)
        except subprocess.TimeoutExpired:
            server.kill()
    return 0


if __name__ == '__main__':
    sys.exit(main())
