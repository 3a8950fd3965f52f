"""The two TCP relays of the network test, each on its own thread and event loop.

* `DelayRelay`: the stand-in for `tc netem delay` (this kernel has no sch_netem). It forwards the
  bytes of each connection unchanged, each chunk after `one_way_ms` in its direction, in order:
  a round trip through it takes 2 x one_way_ms more. TLS passes through it end to end (it cannot
  read or change anything), which is what a router on the path is.
* `TlsMiddleBox`: a relaying middle box that terminates TLS with a certificate of its own (signed
  by a CA the executor does not trust, or any certificate) and opens its own TLS connection to the
  real hub, forwarding both ways: it could read and change everything, so the executor must refuse
  it at the handshake. `connections` counts what reached it, `forwarded` the bytes it passed on.
"""

from __future__ import annotations

import asyncio
import ssl
import threading
import time


class _Relay:
    def __init__(self, listen_host: str, target_host: str, target_port: int) -> None:
        self.listen_host, self.target_host, self.target_port = listen_host, target_host, target_port
        self.loop = asyncio.new_event_loop()
        self.port = 0
        self.connections = 0
        self.forwarded = 0
        self._ready = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._server: asyncio.base_events.Server | None = None

    def server_ssl(self) -> ssl.SSLContext | None:
        return None

    def client_ssl(self) -> ssl.SSLContext | None:
        return None

    def start(self) -> _Relay:
        self._thread.start()
        assert self._ready.wait(10), 'relay did not start'
        return self

    def stop(self) -> None:
        """Closes the listener and every relayed connection, then ends the thread."""
        async def close() -> None:
            if self._server is not None:
                self._server.close()
            tasks = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)

        if self._thread.is_alive():
            asyncio.run_coroutine_threadsafe(close(), self.loop).result(5)
            self.loop.call_soon_threadsafe(self.loop.stop)
            self._thread.join(5)

    def _run(self) -> None:
        asyncio.set_event_loop(self.loop)
        self._server = self.loop.run_until_complete(
            asyncio.start_server(self._serve, self.listen_host, 0, ssl=self.server_ssl()))
        self.port = self._server.sockets[0].getsockname()[1]
        self._ready.set()
        self.loop.run_forever()

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.connections += 1
        try:
            try:
                up_reader, up_writer = await asyncio.open_connection(
                    self.target_host, self.target_port, ssl=self.client_ssl())
            except OSError:
                writer.close()
                return
            await asyncio.gather(self._pump(reader, up_writer), self._pump(up_reader, writer), return_exceptions=True)
        except asyncio.CancelledError:
            # `stop` cancels every connection; ending normally keeps asyncio's stream callback
            # (which asks a client task for its exception) from logging the cancellation.
            writer.close()

    async def _pump(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while data := await reader.read(65536):
                self.forwarded += len(data)
                writer.write(data)
                await writer.drain()
        finally:
            writer.close()


class DelayRelay(_Relay):
    """Forwards each chunk `one_way_ms` after it arrived (stand-in for netem's delay)."""

    def __init__(self, listen_host: str, target_host: str, target_port: int, one_way_ms: float) -> None:
        super().__init__(listen_host, target_host, target_port)
        self.delay = one_way_ms / 1000

    async def _pump(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        # Chunks wait in a queue with their due time; one writer per direction keeps their order.
        queue: asyncio.Queue[tuple[float, bytes]] = asyncio.Queue()

        async def deliver() -> None:
            while True:
                due, data = await queue.get()
                if not data:
                    break
                await asyncio.sleep(max(0.0, due - time.monotonic()))
                writer.write(data)
                await writer.drain()

        delivering = asyncio.ensure_future(deliver())
        try:
            while data := await reader.read(65536):
                self.forwarded += len(data)
                queue.put_nowait((time.monotonic() + self.delay, data))
        finally:
            queue.put_nowait((0.0, b''))
            try:
                await delivering
            finally:
                writer.close()


class TlsMiddleBox(_Relay):
    """Terminates TLS with (`cert`, `key`) and relays to the hub over TLS of its own."""

    def __init__(self, listen_host: str, target_host: str, target_port: int, cert: str, key: str) -> None:
        super().__init__(listen_host, target_host, target_port)
        self.cert, self.key = cert, key

    def server_ssl(self) -> ssl.SSLContext:
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        ctx.load_cert_chain(self.cert, self.key)
        return ctx

    def client_ssl(self) -> ssl.SSLContext:
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
        ctx.check_hostname = False
        ctx.verify_mode = ssl.CERT_NONE
        return ctx
