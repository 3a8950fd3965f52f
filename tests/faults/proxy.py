"""A loopback TCP proxy that can cut or stall the connections going through it (test tool).

`cut()` closes both sides of every open connection (FIN on both sockets). `stall()` stops
forwarding on every open connection without closing anything: no FIN, no RST, bytes are neither
delivered nor refused, as when a network path silently dies. Connections opened afterwards are
forwarded normally, so a client that notices and reconnects gets through.
"""

from __future__ import annotations

import asyncio
import threading
import time


class _Pipe:
    def __init__(self, client: asyncio.StreamWriter, upstream: asyncio.StreamWriter) -> None:
        self.client = client
        self.upstream = upstream
        self.stalled = False
        self.closed = False
        self.tasks: list[asyncio.Task] = []

    def close(self) -> None:
        self.closed = True
        for w in (self.client, self.upstream):
            try:
                w.close()
            except Exception:
                pass
        for t in self.tasks:
            t.cancel()


class FaultProxy:
    def __init__(self, upstream_host: str, upstream_port: int) -> None:
        self.upstream = (upstream_host, upstream_port)
        self.loop = asyncio.new_event_loop()
        self.pipes: list[_Pipe] = []
        self.accepted = 0
        self._cond = threading.Condition()
        self._server: asyncio.base_events.Server | None = None
        ready = threading.Event()

        def run() -> None:
            asyncio.set_event_loop(self.loop)
            self._server = self.loop.run_until_complete(
                asyncio.start_server(self._handle, '127.0.0.1', 0)
            )
            ready.set()
            self.loop.run_forever()

        self._thread = threading.Thread(target=run, name='fault-proxy', daemon=True)
        self._thread.start()
        ready.wait(5)
        assert self._server is not None
        self.port = self._server.sockets[0].getsockname()[1]
        self.url = f'http://127.0.0.1:{self.port}'

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            up_reader, up_writer = await asyncio.open_connection(*self.upstream)
        except OSError:
            writer.close()
            return
        pipe = _Pipe(writer, up_writer)
        pipe.tasks = [
            asyncio.ensure_future(self._pump(pipe, reader, up_writer)),
            asyncio.ensure_future(self._pump(pipe, up_reader, writer)),
        ]
        with self._cond:
            self.pipes.append(pipe)
            self.accepted += 1
            self._cond.notify_all()

    async def _pump(self, pipe: _Pipe, src: asyncio.StreamReader, dst: asyncio.StreamWriter):
        try:
            while True:
                data = await src.read(65536)
                if pipe.stalled:
                    # Keep the sockets open, deliver nothing, read nothing more.
                    await asyncio.Event().wait()
                if not data:
                    break
                dst.write(data)
                await dst.drain()
        except (ConnectionError, asyncio.CancelledError):
            pass
        finally:
            if not pipe.stalled:
                pipe.close()

    # ---- controls (any thread) ---------------------------------------------------------------

    def _call(self, fn) -> None:
        done = threading.Event()

        def run():
            try:
                fn()
            finally:
                done.set()

        self.loop.call_soon_threadsafe(run)
        done.wait(5)

    def cut(self) -> int:
        """Close both sides of every open connection; returns how many were cut."""
        count = 0

        def run():
            nonlocal count
            for p in self.pipes:
                if not p.closed and not p.stalled:
                    p.close()
                    count += 1

        self._call(run)
        return count

    def stall(self) -> int:
        """Stop forwarding on every open connection, closing nothing; returns how many."""
        count = 0

        def run():
            nonlocal count
            for p in self.pipes:
                if not p.closed and not p.stalled:
                    p.stalled = True
                    count += 1

        self._call(run)
        return count

    def wait_accepted(self, n: int, timeout: float) -> bool:
        """Wait until `n` connections have been accepted in total."""
        deadline = time.monotonic() + timeout
        with self._cond:
            while self.accepted < n:
                left = deadline - time.monotonic()
                if left <= 0:
                    return False
                self._cond.wait(left)
        return True

    def close(self) -> None:
        def run():
            for p in self.pipes:
                p.close()
            if self._server is not None:
                self._server.close()
            self.loop.call_later(0.05, self.loop.stop)

        self.loop.call_soon_threadsafe(run)
        self._thread.join(5)
