"""Ends the process (and its process group) when its stdin reaches end-of-file.

The VS Code extension starts its agent-server with
``--import-modules openhands_vscode_runtime.v1.register,openhands_vscode_runtime.v1.exit_with_parent``
and ``OH_VSCODE_EXIT_ON_STDIN_EOF=1``, holding the write end of the server's stdin and never
writing to it. The pipe closes when the extension host ends, however it ends (a window closed, a
crash, SIGKILL; `deactivate` does not run in the last two), so the server never outlives the
window that owns it. As with the headless executor's ``--exit-on-stdin-eof`` (docs/reliability.md).

On EOF: SIGTERM to the process group (the agent-server's graceful shutdown), then SIGKILL after
``GRACE_SECONDS``: an agent-server whose tool call waits for an executor does not finish a SIGTERM
shutdown (tests/vscode/run.sh says the same). Without the variable, importing does nothing.
"""

import os
import signal
import sys
import threading
import time

ENV = 'OH_VSCODE_EXIT_ON_STDIN_EOF'
GRACE_SECONDS = 8.0


def _watch(stdin_fd: int) -> None:
    try:
        while os.read(stdin_fd, 65536):
            pass
    except OSError:
        pass
    group = os.getpgrp()
    os.killpg(group, signal.SIGTERM)
    time.sleep(GRACE_SECONDS)
    os.killpg(group, signal.SIGKILL)


def install() -> bool:
    """Starts the watch when the variable asks for it; True when it started."""
    if os.environ.get(ENV) != '1' or sys.stdin is None:
        return False
    threading.Thread(target=_watch, args=(sys.stdin.fileno(),), name='exit-with-parent', daemon=True).start()
    return True


install()
