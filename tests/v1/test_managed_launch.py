"""openhands_vscode_runtime.v1.launch with the real agent-server, as the VS Code extension starts it
(extension/src/v1/agentServerProcess.ts): the keys come over a pipe and never appear in the
server's /proc/<pid>/environ (what another process of the same user, the agent's bash, can read);
the port is the one the server bound itself and reported over another pipe, and its listening
socket is one of the server's own descriptors; the key it was given is the one it requires."""

from __future__ import annotations

import json
import os
import secrets
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request

import pytest


def _listening_inodes(port: int) -> list[str]:
    inodes = []
    for table in ('/proc/net/tcp', '/proc/net/tcp6'):
        with open(table) as f:
            for line in f.readlines()[1:]:
                cols = line.split()
                if cols[3] == '0A' and int(cols[1].split(':')[1], 16) == port:
                    inodes.append(cols[9])
    return inodes


def _socket_inodes(pid: int) -> set[str]:
    out = set()
    for fd in os.listdir(f'/proc/{pid}/fd'):
        try:
            target = os.readlink(f'/proc/{pid}/fd/{fd}')
        except OSError:
            continue
        if target.startswith('socket:['):
            out.add(target[len('socket:[') : -1])
    return out


def _status(url: str, key: str | None = None) -> int:
    req = urllib.request.Request(url, headers={'X-Session-API-Key': key} if key else {})
    try:
        with urllib.request.urlopen(req, timeout=5) as r:
            return r.status
    except urllib.error.HTTPError as e:
        return e.code


@pytest.fixture
def launched(tmp_path):
    session_key, secret_key = secrets.token_urlsafe(32), secrets.token_urlsafe(32)
    secrets_r, secrets_w = os.pipe()
    port_r, port_w = os.pipe()
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in ('SESSION_API_KEY', 'OH_SECRET_KEY') and not k.startswith('OH_SESSION_API_KEYS')
    }
    env.update(
        OH_VSCODE_SPAWN_EXECUTOR='0',
        OH_VSCODE_V1_DISCOVERY_DIR=str(tmp_path / 'discovery'),
        OH_ENABLE_VSCODE='false',
        LITELLM_LOCAL_MODEL_COST_MAP='True',
        OPENHANDS_SUPPRESS_BANNER='1',
    )
    p = subprocess.Popen(
        [sys.executable, '-m', 'openhands_vscode_runtime.v1.launch',
         '--secrets-fd', str(secrets_r), '--port-fd', str(port_w),
         '--import-modules', 'openhands_vscode_runtime.v1.register'],
        pass_fds=(secrets_r, port_w), cwd=tmp_path, env=env, start_new_session=True,
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )
    os.close(secrets_r)
    os.close(port_w)
    with os.fdopen(secrets_w, 'w') as f:
        f.write(json.dumps({'SESSION_API_KEY': session_key, 'OH_SECRET_KEY': secret_key}))
    with os.fdopen(port_r) as f:
        port = int(f.readline())
    try:
        yield p, port, session_key, secret_key
    finally:
        os.killpg(p.pid, signal.SIGKILL)
        p.wait()


@pytest.mark.timeout(180)
def test_the_launched_server_holds_its_port_and_no_key_in_its_environ(launched):
    p, port, session_key, secret_key = launched

    def environ() -> bytes:
        with open(f'/proc/{p.pid}/environ', 'rb') as f:
            return f.read()

    # Reported before the SDK is imported: the socket listens already, and it is the server's.
    inodes = _listening_inodes(port)
    assert inodes and set(inodes) <= _socket_inodes(p.pid)
    with open(f'/proc/{p.pid}/cmdline', 'rb') as f:
        assert str(port).encode() not in f.read().split(b'\0')
    base = f'http://127.0.0.1:{port}'
    deadline = time.time() + 150
    while True:
        assert p.poll() is None, 'the agent-server exited during start-up'
        try:
            if _status(f'{base}/ready') == 200:
                break
        except OSError:
            pass
        assert time.time() < deadline, 'the agent-server did not get ready'
        time.sleep(0.5)
    # The key it was given over the pipe is the one it requires.
    assert _status(f'{base}/api/conversations/search') == 401
    assert _status(f'{base}/api/conversations/search', 'wrong') == 401
    assert _status(f'{base}/api/conversations/search', session_key) == 200
    # Running, with the keys in its os.environ (it reads and publishes them there): none is in the
    # environment the kernel shows to other processes of this user.
    e = environ()
    assert session_key.encode() not in e and secret_key.encode() not in e
    names = {kv.split(b'=', 1)[0] for kv in e.split(b'\0') if kv}
    assert not names & {b'SESSION_API_KEY', b'OH_SECRET_KEY', b'OH_SESSION_API_KEYS_0'}
    # Still the only listener on its port.
    assert set(_listening_inodes(port)) <= _socket_inodes(p.pid)
