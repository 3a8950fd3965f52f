"""Embedded mode: this package's own Socket.IO server, for tests, the CLI and the demo.

A python-socketio `AsyncServer` under uvicorn, on 127.0.0.1 and a random port (OH_VSCODE_HOST /
OH_VSCODE_PORT), running on its own thread and event loop; with a certificate and key
(OH_VSCODE_TLS_CERT / OH_VSCODE_TLS_KEY) it serves TLS and its URL is `https://` (docs/remote.md). One server per process, shared by every embedded runtime (each runtime has
its own conversation id and session key on the hub).
"""

from __future__ import annotations

import asyncio
import logging
import socket
import threading

import socketio
import uvicorn

from openhands_vscode_runtime.hub import ExecutorHub, hub_for
from openhands_vscode_runtime.settings import DEFAULT_PING_INTERVAL, DEFAULT_PING_TIMEOUT

logger = logging.getLogger('openhands_vscode_runtime')


class EmbeddedServer:
    def __init__(
        self,
        host: str = '127.0.0.1',
        port: int = 0,
        *,
        ping_interval: float = DEFAULT_PING_INTERVAL,
        ping_timeout: float = DEFAULT_PING_TIMEOUT,
        tls_cert: str | None = None,
        tls_key: str | None = None,
    ) -> None:
        # The Engine.IO heartbeat bounds how long a silent connection (no FIN, no RST) goes
        # unnoticed: the server drops it after ping_interval + ping_timeout without a pong, and
        # the executor (rust_engineio) after ping_interval + ping_timeout without a ping.
        self.ping_interval = ping_interval
        self.ping_timeout = ping_timeout
        self.sio = socketio.AsyncServer(
            async_mode='asgi',
            cors_allowed_origins=[],
            max_http_buffer_size=16 * 1024 * 1024,
            ping_interval=ping_interval,
            ping_timeout=ping_timeout,
            # The hub's handlers never wait (a welcome is its own task), so they run inline on
            # the message that carries them: one task less on a reply's way to the runtime.
            async_handlers=False,
        )
        # proto IPPROTO_TCP: asyncio sets TCP_NODELAY only on sockets that say so (else Nagle +
        # delayed ACK stall back-to-back messages by ~40 ms)
        self._sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
        self._sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self._sock.bind((host, port))
        self._sock.listen(128)
        self.host, self.port = self._sock.getsockname()[:2]
        self.url = f"{'https' if tls_cert else 'http'}://{self.host}:{self.port}"
        self.loop = asyncio.new_event_loop()
        self.hub: ExecutorHub = hub_for(self.sio, self.loop)
        config = uvicorn.Config(
            socketio.ASGIApp(self.sio, socketio_path='socket.io'),
            log_level='warning',
            lifespan='off',
            ws='websockets-sansio',
            ws_max_size=16 * 1024 * 1024,
            ws_ping_interval=None,
            # uvicorn loads both into an SSLContext here: a missing or unreadable file fails now.
            ssl_certfile=tls_cert,
            ssl_keyfile=tls_key,
        )
        self._server = uvicorn.Server(config)
        self._started = threading.Event()
        self._error: BaseException | None = None
        self._thread = threading.Thread(
            target=self._run, name='oh-executor-embedded-server', daemon=True
        )

    def start(self, timeout: float = 10.0) -> None:
        self._thread.start()
        if not self._started.wait(timeout):
            raise RuntimeError('oh-executor: the embedded Socket.IO server did not start')
        if self._error is not None:
            raise RuntimeError(f'oh-executor: the embedded server failed: {self._error}')

    def _run(self) -> None:
        asyncio.set_event_loop(self.loop)

        async def main() -> None:
            task = asyncio.ensure_future(self._server.serve(sockets=[self._sock]))
            while not self._server.started and not task.done():
                await asyncio.sleep(0.005)
            self._started.set()
            await task

        try:
            self.loop.run_until_complete(main())
        except BaseException as e:  # pragma: no cover - reported by start()
            self._error = e
            self._started.set()
        # What the server left (engine.io's ping tasks sleep out their interval) is cancelled and
        # awaited, as asyncio.run does, instead of being destroyed pending with the loop.
        leftover = [t for t in asyncio.all_tasks(self.loop) if not t.done()]
        for task in leftover:
            task.cancel()
        if leftover:
            self.loop.run_until_complete(asyncio.gather(*leftover, return_exceptions=True))

    def stop(self) -> None:
        """Stop the server: Socket.IO's background tasks first (as python-socketio asks), then
        uvicorn, which closes the connections."""
        if self._thread.is_alive() and not self.loop.is_closed():
            try:
                asyncio.run_coroutine_threadsafe(self.sio.shutdown(), self.loop).result(5)
            except Exception as e:  # a stop must still stop the web server
                logger.warning('oh-executor: Socket.IO shutdown of the embedded server: %s', e)
        self._server.should_exit = True
        self._thread.join(timeout=5)


_SERVER: EmbeddedServer | None = None
_SERVER_LOCK = threading.Lock()


def embedded_server(
    host: str = '127.0.0.1',
    port: int = 0,
    *,
    ping_interval: float = DEFAULT_PING_INTERVAL,
    ping_timeout: float = DEFAULT_PING_TIMEOUT,
    tls_cert: str | None = None,
    tls_key: str | None = None,
) -> EmbeddedServer:
    """The process-wide embedded server, started on first use (later arguments are ignored)."""
    global _SERVER
    with _SERVER_LOCK:
        if _SERVER is None or not _SERVER._thread.is_alive():
            server = EmbeddedServer(
                host, port, ping_interval=ping_interval, ping_timeout=ping_timeout,
                tls_cert=tls_cert, tls_key=tls_key,
            )
            server.start()
            _SERVER = server
        return _SERVER
