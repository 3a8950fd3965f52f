"""Starts the agent-server for the VS Code extension (managed mode) on a socket it binds itself,
with its keys from a pipe instead of its environment:

    python -m openhands_vscode_runtime.v1.launch --secrets-fd 3 --port-fd 4 [agent-server arguments]

* **Secrets** (`SESSION_API_KEY`, `OH_SECRET_KEY`): a JSON object read from `--secrets-fd` until
  end-of-file, then put into `os.environ` of this process only. `/proc/<pid>/environ` shows the
  environment the process was started with; later changes to `os.environ` do not appear there, so
  a process of the same user that reads it (the agent's bash, `cat /proc/<pid>/environ`) finds no
  key. After the agent-server has read its configuration they leave `os.environ` too, so the
  processes it starts do not inherit them.
* **Port**: bound here (`127.0.0.1`, port 0: the kernel picks one) before anything is reported,
  then written as one decimal line to `--port-fd`. The extension never picks a port and releases
  it, so no other process can take the port between the pick and the bind; on Linux it also
  checks that the listening socket of that port is one of this process's descriptors before it
  sends anything (extension/src/v1/agentServerProcess.ts). uvicorn serves the socket as it is.

The remaining arguments go to the agent-server's own `main()` (after `--host 127.0.0.1 --port
<bound port>`, which it prints). Only the standard library is imported at the top: the stand-in
of the extension's unit tests loads this file by path and uses the same three steps.
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import sys

LOOPBACK = '127.0.0.1'
# What leaves os.environ once the agent-server's configuration holds it.
SECRET_NAMES = ('SESSION_API_KEY', 'OH_SECRET_KEY')


def read_secrets(fd: int) -> dict[str, str]:
    """The JSON object on `fd` (read to end-of-file; the descriptor is closed)."""
    chunks = []
    try:
        while True:
            chunk = os.read(fd, 65536)
            if not chunk:
                break
            chunks.append(chunk)
    finally:
        os.close(fd)
    data = json.loads(b''.join(chunks) or b'{}')
    if not isinstance(data, dict) or not all(isinstance(k, str) and isinstance(v, str) for k, v in data.items()):
        raise SystemExit('launch: the secrets pipe must carry a JSON object of strings')
    return data


def bind_loopback() -> socket.socket:
    """A listening TCP socket on 127.0.0.1 and a port the kernel chose (not inherited by children)."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind((LOOPBACK, 0))
    sock.listen(2048)
    sock.set_inheritable(False)
    return sock


def report_port(fd: int, port: int) -> None:
    """Writes `port` and a newline to `fd` and closes it: the extension waits for this line."""
    try:
        os.write(fd, f'{port}\n'.encode())
    finally:
        os.close(fd)


def parse(argv: list[str]) -> tuple[argparse.Namespace, list[str]]:
    ap = argparse.ArgumentParser(prog='openhands_vscode_runtime.v1.launch', add_help=False)
    ap.add_argument('--secrets-fd', type=int, required=True)
    ap.add_argument('--port-fd', type=int, required=True)
    return ap.parse_known_args(argv)


def _serve_on(sock: socket.socket):
    """A stand-in for `uvicorn.run` that serves `sock` instead of binding host and port again."""
    import uvicorn

    def run(app, **kwargs):
        kwargs.pop('host', None)
        kwargs.pop('port', None)
        kwargs['reload'] = False  # a reloader would start a second process without this socket
        config = uvicorn.Config(app, **kwargs)
        config.load()  # imports the application, which reads its configuration
        for name in SECRET_NAMES:
            os.environ.pop(name, None)
        uvicorn.Server(config).run(sockets=[sock])

    return run


def main(argv: list[str] | None = None) -> None:
    args, rest = parse(sys.argv[1:] if argv is None else argv)
    secrets = read_secrets(args.secrets_fd)
    sock = bind_loopback()
    os.environ.update(secrets)
    report_port(args.port_fd, sock.getsockname()[1])

    import uvicorn

    from openhands_vscode_runtime.v1 import register

    register()
    # The agent-server's main() calls uvicorn.run(...) with host and port; it gets our socket. If
    # that call ever bound by itself, it would fail: the port is ours already (EADDRINUSE).
    uvicorn.run = _serve_on(sock)
    from openhands.agent_server.__main__ import main as agent_server_main

    sys.argv = [sys.argv[0], '--host', LOOPBACK, '--port', str(sock.getsockname()[1]), *rest]
    agent_server_main()


if __name__ == '__main__':
    main()
