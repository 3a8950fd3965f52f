"""A conversation collected by the garbage collector closes itself (`LocalConversation.__del__` ->
`close` -> `connection.cancel_start`) on whatever thread the collection runs, which may be a thread
that holds the connections' lock at that moment (`acquire` builds a connection under it). That
thread must not wait for itself. The scenario runs in a child process: a thread stuck on the lock
would also hang this process's exit (`close_all` takes the lock at exit)."""

from __future__ import annotations

import subprocess
import sys

SCENARIO = r'''
import gc
from openhands_vscode_runtime.v1 import connection

class Finalized:
    """Stands in for the collected conversation: its finalizer does what LocalConversation's close
    hook does (install_lifecycle_hooks)."""
    def __del__(self):
        print(connection.cancel_start('collected-conversation', 'the conversation was closed'), flush=True)

with connection._LOCK:
    # A reference cycle, collected here as an allocation inside `acquire` could trigger it.
    obj = Finalized()
    obj.cycle = obj
    del obj
    gc.collect()
print('released', flush=True)
'''


def test_a_finalizer_on_the_thread_that_holds_the_lock_does_not_wait_for_itself() -> None:
    try:
        out = subprocess.run([sys.executable, '-c', SCENARIO], capture_output=True, text=True, timeout=30)
    except subprocess.TimeoutExpired as e:
        raise AssertionError(f'the thread holding the connections\' lock waits for itself in a finalizer: {e.stdout!r}') from None
    assert out.returncode == 0, out.stderr
    # No such conversation: nothing to cancel, and no wait.
    assert out.stdout.split() == ['False', 'released']
