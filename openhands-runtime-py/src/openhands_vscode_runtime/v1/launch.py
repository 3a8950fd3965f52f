"""Starts the agent-server for the VS Code extension (managed mode) on a socket it binds itself,
with its keys from a pipe instead of its environment:

    python -m openhands_vscode_runtime.v1.launch --secrets-fd 3 --port-fd 4 [agent-server arguments]

* **Secrets** (`SESSION_API_KEY`, `OH_SECRET_KEY`): a JSON object read from `--secrets-fd` until
  end-of-file, then put into `os.environ` of this process only. `/proc/<pid>/environ` shows the
  environment the process was started with; later changes to `os.environ` do not appear there, so
  a process of the same user that reads it (the agent's bash, `cat /proc/<pid>/environ`) finds no
  key. They stay in `os.environ` (the process's memory): the agent-server itself publishes its
  session key there for in-process callers (`export_session_api_key`), and the SDK removes both
  names from the environment of the commands it starts (`sanitized_env`).
* **Port**: bound here (`127.0.0.1`, port 0: the kernel picks one) before anything is reported,
  then written as one decimal line to `--port-fd`. The extension never picks a port and releases
  it, so no other process can take the port between the pick and the bind; on Linux it also
  checks that the listening socket of that port is one of this process's descriptors before it
  sends anything (extension/src/v1/agentServerProcess.ts). uvicorn serves the socket as it is:
  `uvicorn.Server.run`, which the agent-server's `main()` reaches (its own `LoggingServer`, a
  subclass, or `uvicorn.run`), is given this socket instead of binding host and port again.

The remaining arguments go to the agent-server's own `main()` (after `--host 127.0.0.1 --port
<bound port>`, which it prints and publishes as its internal URL). Only the standard library is
imported at the top: the stand-in of the extension's unit tests loads this file by path and uses
the same three steps.
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import sys

LOOPBACK = '127.0.0.1'


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


def serve_on(sock: socket.socket) -> None:
    """Makes every `uvicorn.Server` serve `sock` instead of binding its configured host and port."""
    import uvicorn

    original = uvicorn.Server.run

    def run(self, sockets=None):
        # A reloader or worker processes would serve from other processes, without this socket.
        self.config.reload = False
        self.config.workers = 1
        return original(self, sockets=[sock])

    uvicorn.Server.run = run


def main(argv: list[str] | None = None) -> None:
    args, rest = parse(sys.argv[1:] if argv is None else argv)
    secrets = read_secrets(args.secrets_fd)
    sock = bind_loopback()
    os.environ.update(secrets)
    report_port(args.port_fd, sock.getsockname()[1])

    from openhands_vscode_runtime.v1 import register
    from openhands_vscode_runtime.v1.server_threads import widen_uvicorn

    register()
    # A second conversation must not wait for a free thread behind the first one's step (server_threads.py).
    widen_uvicorn()
    # If the server ever bound by itself instead, it would fail loudly: the port is ours (EADDRINUSE).
    serve_on(sock)
    from openhands.agent_server.__main__ import main as agent_server_main

    sys.argv = [sys.argv[0], '--host', LOOPBACK, '--port', str(sock.getsockname()[1]), *rest]
    agent_server_main()


if __name__ == '__main__':
    main()
