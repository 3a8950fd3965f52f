"""How a conversation reaches its executor, for `VsCodeRuntime` (V0) and the V1 tools alike.

The two connection strategies:

* `ServerConnection`: inside the OpenHands (V0) server; the hub lives on the server's own Socket.IO
  object, and executors present OpenHands' `SESSION_API_KEY` or the executor token.
* `EmbeddedConnection`: this package's own Socket.IO server (one per process), a random key per
  conversation, and a headless executor spawned by this process. The only one V1 uses (the V1
  agent-server has no Socket.IO server of OpenHands').

A strategy only finds the hub and the credentials (`Endpoint`). `ExecutorLink` is what follows, the
same for both generations: open the conversation's channel, spawn the executor (or let one started
elsewhere attach), wait for it to register, and what an exit of the spawned executor means.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
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
from openhands_vscode_runtime.channel import Channel
from openhands_vscode_runtime.executor_process import ExecutorProcess, find_executor
from openhands_vscode_runtime.hub import ExecutorHub, hub_for
from openhands_vscode_runtime.settings import RuntimeSettings

logger = logging.getLogger('openhands_vscode_runtime')

EMBEDDED_CONNECT_TIMEOUT = 30.0
SERVER_CONNECT_TIMEOUT = 120.0
DEFAULT_SERVER_URL = 'http://127.0.0.1:3000'
# What a repr shows in place of a key.
REDACTED = '<redacted>'


class ConnectionSetupError(RuntimeError):
    """The connection cannot be set up (the message says why and what to do)."""


@dataclass(frozen=True, repr=False)
class Endpoint:
    hub: ExecutorHub
    # Where a spawned executor connects.
    server_url: str
    # The key a spawned executor presents, and every key an executor may present.
    session_api_key: str
    accepted_keys: tuple[str, ...]

    def __repr__(self) -> str:
        # The keys never go into a log line or a traceback's locals.
        return (
            f'Endpoint(hub={self.hub!r}, server_url={self.server_url!r}, session_api_key={REDACTED}, '
            f'accepted_keys=({", ".join(REDACTED for _ in self.accepted_keys)}))'
        )


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
        return await asyncio.to_thread(self.open_sync)

    def open_sync(self) -> Endpoint:
        """`open()` for a caller on a plain thread (the V1 tools are created on worker threads)."""
        from openhands_vscode_runtime.embedded import embedded_server

        server = embedded_server(
            self.settings.host,
            self.settings.port,
            ping_interval=self.settings.ping_interval,
            ping_timeout=self.settings.ping_timeout,
            tls_cert=self.settings.tls_cert,
            tls_key=self.settings.tls_key,
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


class ExecutorNotFound(ConnectionSetupError):
    """No headless executor to spawn (not installed, and `OH_VSCODE_EXECUTOR` unset)."""


class RegistrationFailed(RuntimeError):
    """No executor registered: the wait timed out, the spawned executor crashed, or the wait was
    cancelled (`ExecutorLink.cancel_registration`). The message says which."""


def spawn_by_default(settings: RuntimeSettings, strategy: ServerConnection | EmbeddedConnection) -> bool:
    """`OH_VSCODE_SPAWN_EXECUTOR` when set, else the strategy's default (embedded: spawn)."""
    return strategy.spawns_executor if settings.spawn_executor is None else settings.spawn_executor


class ExecutorLink:
    """One conversation's channel on the hub and, when this process starts it, its headless
    executor: open the channel, spawn, wait for the registration, close.

    The exit policy of a spawned executor is decided here, once, for V0 and V1:

    * exit code 0 is a clean stop: the executor was replaced by a newer one (VS Code took the
      conversation over; its socket closed first and the channel serves through the replacement)
      or stopped by a signal it handles. Nothing fails at once; pending actions get the reconnect
      grace period, as for any executor whose socket closed.
    * any other code is a crash, a kill or a refusal (never a replacement): the registration wait
      and every pending action fail at once, and new actions fail until an executor registers.
    """

    def __init__(
        self,
        endpoint: Endpoint,
        conversation_id: str,
        settings: RuntimeSettings,
        *,
        session_settings: dict[str, Any],
    ) -> None:
        self.endpoint = endpoint
        self.conversation_id = conversation_id
        self.settings = settings
        self.channel: Channel = endpoint.hub.open_channel(
            conversation_id,
            session_api_key=endpoint.accepted_keys,
            session_settings=session_settings,
            reconnect_grace_seconds=settings.reconnect_grace_seconds,
            allowed_origins=settings.allowed_origins,
            token_file=settings.executor_token_file,
        )
        self.process: ExecutorProcess | None = None
        self.closed = False

    def spawn(
        self, workspace: str, *, no_change_timeout: float | None, base_env: dict[str, str] | None = None
    ) -> ExecutorProcess:
        """Start the headless executor on `workspace`, connecting to this link's channel.
        `base_env`: its environment (default: this process's)."""
        command = find_executor(self.settings)
        if command is None:
            raise ExecutorNotFound('the headless executor was not found')
        self.process = ExecutorProcess(
            command,
            url=self.endpoint.server_url,
            conversation_id=self.conversation_id,
            session_api_key=self.endpoint.session_api_key,
            workspace=workspace,
            no_change_timeout=no_change_timeout,
            on_exit=self._executor_exited,
            base_env=base_env,
            ca_file=self.settings.tls_ca,
        )
        return self.process

    @property
    def registration(self) -> concurrent.futures.Future[dict[str, Any]]:
        """Resolves with the executor's registration; fails as `wait_registered` says."""
        return self.channel.registration_future()

    def cancel_registration(self, reason: str) -> bool:
        """Fail a registration wait at once (any thread); False when it had already ended."""
        try:
            self.registration.set_exception(RegistrationFailed(reason))
        except concurrent.futures.InvalidStateError:
            return False
        return True

    def wait_registered(self, timeout: float) -> dict[str, Any]:
        """Block until an executor registered; `RegistrationFailed` says why not."""
        try:
            return self.registration.result(timeout=timeout)
        except concurrent.futures.TimeoutError:
            raise RegistrationFailed(f'no executor registered within {timeout:g} s') from None
        except RuntimeError as e:  # RegistrationFailed, or an exit (below)
            raise RegistrationFailed(str(e)) from None

    async def await_registered(self, timeout: float) -> dict[str, Any]:
        """`wait_registered` for a caller on an event loop."""
        try:
            return await asyncio.wait_for(asyncio.wrap_future(self.registration), timeout)
        except (TimeoutError, asyncio.TimeoutError):
            raise RegistrationFailed(f'no executor registered within {timeout:g} s') from None
        except RuntimeError as e:
            raise RegistrationFailed(str(e)) from None

    def log_tail(self) -> str:
        return self.process.log_tail() if self.process is not None else ''

    def _executor_exited(self, returncode: int) -> None:
        if self.closed:
            return
        reason = f'the headless executor process exited with code {returncode}'
        if returncode == 0:
            logger.info('%s; the channel keeps serving through any executor that replaced it', reason)
            return
        # The executor's log is removed on close, so what it says about a crash goes to our log.
        logger.warning('%s; its output ends with:\n%s', reason, self.log_tail())
        fut = self.registration
        if not fut.done():
            try:
                fut.set_exception(RuntimeError(reason))
            except concurrent.futures.InvalidStateError:
                pass
        self.channel.fail_all(reason, executor_dead=True)

    def close(self) -> None:
        """Close the channel (pending actions fail with "Runtime closed"), then stop the spawned
        executor. A registration wait is not failed here: `cancel_registration` does that."""
        if self.closed:
            return
        self.closed = True
        self.channel.close()
        if self.process is not None:
            self.process.stop()
            # The log is a temporary file in /tmp; what it says about a failure is in the error
            # message already (no registration) or in our log (a crash, `_executor_exited`).
            self.process.remove_log()
