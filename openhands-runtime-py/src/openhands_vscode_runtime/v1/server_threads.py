"""A default thread pool for the agent-server's event loop wide enough for conversations that run
at the same time.

Why: the agent-server (openhands-agent-server 1.58) runs several kinds of work on its loop's
default executor (`loop.run_in_executor(None, ...)`, `asyncio.to_thread`), and some of it waits
there for a conversation's state lock, which that conversation's run holds for a whole step,
tool call included (a tool call can last minutes). Measured in the real VS Code host (py-spy,
one conversation inside a 25 s command): four of the pool's six threads (Python's default on two
cores) were taken by that one conversation: its tool call, two stats events and one state-update
event, the last three waiting for its lock. A second conversation needs a free thread to take
its first message and start its run; when the remaining two are taken as well, it waits until
the first conversation's step ends, and a task that waits for the other one never starts
(tests/v1/test_server_threads.py reproduces it with messages a user sends to the running
conversation).

The pool grows with the number of conversations the window lets run at once
(`OH_VSCODE_V1_MAX_CONVERSATIONS`): 16 threads plus 8 per conversation (the four above and room
for requests that wait too). Threads are made only when needed; one that waits on a lock costs
its stack and nothing else.
"""

from __future__ import annotations

import asyncio
import concurrent.futures

from openhands_vscode_runtime.v1.connection import max_conversations

#: How many conversations the pool is sized for when the window sets no limit.
DEFAULT_CONVERSATIONS = 4
BASE_THREADS = 16
THREADS_PER_CONVERSATION = 8


def default_executor_size(conversations: int | None = None) -> int:
    """Threads of the loop's default executor for `conversations` running at once (default: the
    limit from the environment, else `DEFAULT_CONVERSATIONS`)."""
    n = conversations or max_conversations() or DEFAULT_CONVERSATIONS
    return BASE_THREADS + THREADS_PER_CONVERSATION * max(n, DEFAULT_CONVERSATIONS)


def widen(loop: asyncio.AbstractEventLoop) -> int:
    """Gives `loop` a default executor of `default_executor_size()` threads; returns the size."""
    size = default_executor_size()
    loop.set_default_executor(concurrent.futures.ThreadPoolExecutor(max_workers=size, thread_name_prefix='asyncio'))
    return size


def widen_uvicorn() -> None:
    """Makes every `uvicorn.Server` widen its loop's default executor before it serves (idempotent;
    nothing when uvicorn is not installed: an SDK script that imports the tools serves nothing)."""
    try:
        import uvicorn
    except ImportError:
        return
    original = uvicorn.Server.serve
    if getattr(original, '_oh_widened', False):
        return

    async def serve(self, sockets=None):
        widen(asyncio.get_running_loop())
        return await original(self, sockets=sockets)

    serve._oh_widened = True  # type: ignore[attr-defined]
    uvicorn.Server.serve = serve
