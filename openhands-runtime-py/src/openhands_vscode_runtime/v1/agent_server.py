"""The V1 agent-server with this package's `terminal` and `file_editor` registered:
`python -m openhands_vscode_runtime.v1.agent_server [agent-server arguments]`.

It exists for launchers that run `python -m MODULE --port N` and let one choose MODULE but not
the arguments, such as the OpenHands app's process sandbox (openhands-ai 1.11,
`ProcessSandboxServiceInjector.agent_server_module`; docs/v1-app.md). The tools
are registered before the agent-server's own `main()` parses the arguments, which are passed on
unchanged, except one default: without `--host` it binds to 127.0.0.1. The agent-server alone
binds every interface when a session key is set, and the app's process sandbox always sets one
but reaches the server at `localhost`; the agent's shell and files need not be offered to the
network for that.
"""

from __future__ import annotations

import sys

LOOPBACK = '127.0.0.1'


def with_loopback_default(argv: list[str]) -> list[str]:
    """`argv` (without the program name) with `--host 127.0.0.1` added when it names no host."""
    if any(a == '--host' or a.startswith('--host=') for a in argv):
        return list(argv)
    return ['--host', LOOPBACK, *argv]


def main() -> None:
    from openhands_vscode_runtime.v1 import register
    from openhands_vscode_runtime.v1.server_threads import widen_uvicorn

    register()
    widen_uvicorn()  # conversations at once must not starve each other of threads (server_threads.py)
    from openhands.agent_server.__main__ import main as agent_server_main

    sys.argv = [sys.argv[0], *with_loopback_default(sys.argv[1:])]
    agent_server_main()


if __name__ == '__main__':
    main()
