"""How a `VsCodeRuntime` reaches its executor: the two connection strategies.

* `ServerConnection`: inside the OpenHands server; the hub lives on the server's own Socket.IO
  object, and executors present OpenHands' `SESSION_API_KEY` or the executor token.
* `EmbeddedConnection`: this package's own Socket.IO server (one per process), a random key per
  runtime, and a headless executor spawned by the runtime.

A strategy only finds the hub and the credentials (`Endpoint`); opening the channel, spawning the
executor and waiting for it to register are the same for both and stay in the runtime.
"""

from __future__ import annotations

import asyncio
import logging
import secrets
import sys
from dataclasses import dataclass
from typing import Any

from openhands_vscode_runtime.credentials import (
    CredentialError,
    exposure_problem,
    load_or_create_executor_token,
)
from openhands_vscode_runtime.hub import ExecutorHub, hub_for
from openhands_vscode_runtime.settings import RuntimeSettings

logger = logging.getLogger('openhands_vscode_runtime')

EMBEDDED_CONNECT_TIMEOUT = 30.0
SERVER_CONNECT_TIMEOUT = 120.0
DEFAULT_SERVER_URL = 'http://127.0.0.1:3000'


class ConnectionSetupError(RuntimeError):
    """The connection cannot be set up (the message says why and what to do)."""


@dataclass(frozen=True)
class Endpoint:
    hub: ExecutorHub
    # Where a spawned executor connects.
    server_url: str
    # The key a spawned executor presents, and every key an executor may present.
    session_api_key: str
    accepted_keys: tuple[str, ...]


def openhands_sio() -> Any:
    """The OpenHands server's Socket.IO object when this process is an OpenHands server, else None.

    `openhands.server.shared` is never imported here: importing it starts a conversation manager.
    """
    shared = sys.modules.get('openhands.server.shared')
    return getattr(shared, 'sio', None) if shared is not None else None


class ServerConnection:
    mode = 'server'
    connect_timeout = SERVER_CONNECT_TIMEOUT
    spawns_executor = False

    def __init__(self, settings: RuntimeSettings) -> None:
        self.settings = settings

    @staticmethod
    def setup(settings: RuntimeSettings) -> None:
        """`Runtime.setup`: OpenHands' conversation manager calls it on the server loop at start-up
        (the loop every `sio.emit` must run on), so the hub learns its loop here, through a public
        hook, and the executor token exists before VS Code looks for it."""
        sio = openhands_sio()
        if sio is None:
            return
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            loop = None
        hub = hub_for(sio, loop)
        openhands_key = settings.openhands_session_api_key
        try:
            token, path = load_or_create_executor_token(settings.executor_token_file)
        except (OSError, CredentialError, UnicodeDecodeError) as e:
            logger.warning('oh-executor: cannot set up the executor token: %s', e)
            token = None
        else:
            if not openhands_key:
                logger.info(
                    'oh-executor: executors of this server authenticate with the executor token '
                    'in %s (VS Code on this machine reads it by itself)',
                    path,
                )
        # Valid for every conversation: an executor that proves one before its conversation's
        # runtime opens waits for it (docs/protocol.md, the waiting room).
        hub.set_standing_keys(tuple(k for k in (openhands_key, token) if k))

    async def open(self) -> Endpoint:
        sio = openhands_sio()
        if sio is None:
            import openhands.server.shared as shared  # explicit server mode only

            sio = shared.sio
        # Without setup() (an explicit server mode in a process that never ran it) the hub learns
        # the server loop from the first executor that connects: nothing is emitted before that.
        hub = hub_for(sio)
        openhands_key = self.settings.openhands_session_api_key
        problem = exposure_problem(openhands_key, self.settings.allow_unauthenticated_network)
        if problem is not None:
            raise ConnectionSetupError(problem)
        try:
            token, token_path = await asyncio.to_thread(
                load_or_create_executor_token, self.settings.executor_token_file
            )
        except (OSError, CredentialError, UnicodeDecodeError) as e:
            raise ConnectionSetupError(
                f'VsCodeRuntime: cannot set up the executor token: {e}'
            ) from None
        logger.info('oh-executor: executor token file: %s', token_path)
        hub.set_standing_keys(tuple(k for k in (openhands_key, token) if k))
        # Executors present OpenHands' key when it has one, or the executor token (always
        # accepted: VS Code on this machine reads it from token_path).
        return Endpoint(
            hub=hub,
            server_url=self.settings.server_url or DEFAULT_SERVER_URL,
            session_api_key=openhands_key or token,
            accepted_keys=tuple(k for k in (openhands_key, token) if k),
        )


class EmbeddedConnection:
    mode = 'embedded'
    connect_timeout = EMBEDDED_CONNECT_TIMEOUT
    spawns_executor = True

    def __init__(self, settings: RuntimeSettings) -> None:
        self.settings = settings

    async def open(self) -> Endpoint:
        from openhands_vscode_runtime.embedded import embedded_server

        server = await asyncio.to_thread(
            embedded_server,
            self.settings.host,
            self.settings.port,
            ping_interval=self.settings.ping_interval,
            ping_timeout=self.settings.ping_timeout,
        )
        key = secrets.token_urlsafe(24)
        return Endpoint(
            hub=server.hub,
            # OH_VSCODE_SERVER_URL, when set, is where the spawned executor connects (a proxy).
            server_url=self.settings.server_url or server.url,
            session_api_key=key,
            accepted_keys=(key,),
        )


def connection_for(settings: RuntimeSettings) -> ServerConnection | EmbeddedConnection:
    """The strategy of `settings.mode`; `auto` is server mode inside an OpenHands server."""
    mode = settings.mode
    if mode == 'auto':
        mode = 'server' if openhands_sio() is not None else 'embedded'
    return ServerConnection(settings) if mode == 'server' else EmbeddedConnection(settings)
