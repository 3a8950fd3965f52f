"""`VsCodeRuntime`: an OpenHands (V0) runtime whose sandbox is an executor in VS Code.

Shell and file actions (`run`, `read`, `write`, `edit`) are delegated over Socket.IO (namespace
`/oh-executor`, see docs/protocol.md) to an executor: the Rust core inside VS Code, or the
headless Node executor. Everything else happens here, on the host, with CLIRuntime's semantics.
"""

from __future__ import annotations

import asyncio
import collections
import concurrent.futures
import copy
import logging
import os
import shutil
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pydantic import SecretStr

from openhands.core.config import OpenHandsConfig
from openhands.core.exceptions import AgentRuntimeUnavailableError
from openhands.events import EventStream
from openhands.events.action import (
    Action,
    BrowseInteractiveAction,
    BrowseURLAction,
    CmdRunAction,
    FileEditAction,
    FileReadAction,
    FileWriteAction,
    IPythonRunCellAction,
    MessageAction,
)
from openhands.events.event import Event, EventSource, FileEditSource
from openhands.events.observation import (
    CmdOutputObservation,
    ErrorObservation,
    Observation,
)
from openhands.events.serialization import event_to_dict
from openhands.integrations.provider import PROVIDER_TOKEN_TYPE
from openhands.llm.llm_registry import LLMRegistry
from openhands.runtime.base import Runtime
from openhands.runtime.plugins import PluginRequirement
from openhands.runtime.runtime_status import RuntimeStatus

from openhands_vscode_runtime.agent_env import bash_export
from openhands_vscode_runtime.checkpoints import CheckpointReply, before_message_args, checkpoint_payload
from openhands_vscode_runtime.connection import (
    ConnectionSetupError,
    ExecutorLink,
    ExecutorNotFound,
    RegistrationFailed,
    ServerConnection,
    connection_for,
    spawn_by_default,
)
from openhands_vscode_runtime.executor_process import ExecutorProcess
from openhands_vscode_runtime.v0.host_files import HostFiles
from openhands_vscode_runtime.v0.ide_tools import IdeToolsEndpoint
from openhands_vscode_runtime.channel import Channel
from openhands_vscode_runtime.hub import NAMESPACE, ExecutorHub
from openhands_vscode_runtime.v0.runtime_mcp import RuntimeMcp
from openhands_vscode_runtime.workspace_folders import folders_sentence
from openhands_vscode_runtime.settings import RuntimeSettings

# Observations kept per stream id, so that an action delivered twice (stream + run_action) runs once.
_DONE_CACHE_SIZE = 256
_ENV_RETRIES = 3


RIPGREP_MISSING = (
    'ripgrep (`rg`) is not on PATH: OpenHands turns its grep and glob tools into `rg` commands, '
    'which will fail with "rg: command not found". Install it: `sudo apt-get install ripgrep` '
    '(Debian/Ubuntu), `sudo dnf install ripgrep` (Fedora), `brew install ripgrep` (macOS), '
    '`winget install BurntSushi.ripgrep.MSVC` (Windows), or `cargo install ripgrep`; then restart '
    'the executor (reload the VS Code window).'
)


def ripgrep_warning(path: str | None = None) -> str | None:
    """The warning to show when `rg` is not on `path` (default: this process's PATH), else None.

    The executor runs on this machine with this environment (embedded mode) or in the user's VS
    Code on the same machine (server mode), so this PATH is the best cheap guess for its shell's.
    """
    return None if shutil.which('rg', path=path) else RIPGREP_MISSING


CLOSED_WHILE_CONNECTING = 'the runtime was closed while it waited for its executor'


class VsCodeRuntime(RuntimeMcp, Runtime):
    """Runs the agent's shell and file actions in VS Code (or the headless executor).

    Modes:
      * server: inside the OpenHands server; the executor connects to the server's Socket.IO
        (namespace `/oh-executor`) with the conversation id.
      * embedded: a private Socket.IO server on 127.0.0.1 and a headless executor spawned by
        the runtime (tests, CLI, demo).
    See the package README for the settings.
    """

    def __init__(
        self,
        config: OpenHandsConfig,
        event_stream: EventStream,
        llm_registry: LLMRegistry,
        sid: str = 'default',
        plugins: list[PluginRequirement] | None = None,
        env_vars: dict[str, str] | None = None,
        status_callback: Callable[[str, RuntimeStatus, str], None] | None = None,
        attach_to_existing: bool = False,
        headless_mode: bool = False,
        user_id: str | None = None,
        git_provider_tokens: PROVIDER_TOKEN_TYPE | None = None,
    ) -> None:
        super().__init__(
            config=config,
            event_stream=event_stream,
            llm_registry=llm_registry,
            sid=sid,
            plugins=plugins,
            env_vars=env_vars,
            status_callback=status_callback,
            attach_to_existing=attach_to_existing,
            headless_mode=headless_mode,
            user_id=user_id,
            git_provider_tokens=git_provider_tokens,
        )
        self.settings = RuntimeSettings.from_env()
        self.mode: str | None = None
        self.server_url: str | None = None
        self._hub: ExecutorHub | None = None
        self._channel: Channel | None = None
        self._session_api_key: str | None = None
        # The channel this runtime opened and the executor it spawned (connection.ExecutorLink);
        # None when it attached to another runtime's channel.
        self._link: ExecutorLink | None = None
        self._workspace: str | None = None
        self._files: HostFiles | None = None
        self._closed = False
        self._dedupe_lock = threading.Lock()
        self._inflight: dict[Any, concurrent.futures.Future] = {}
        self._done: collections.OrderedDict[int, Observation] = collections.OrderedDict()
        self._ide_endpoint: IdeToolsEndpoint | None = None
        self._ide_lock = threading.Lock()
        # User message event id -> the id of the checkpoint taken before it (docs/checkpoints.md).
        self.checkpoints: dict[int, int] = {}

    # ====================================================================
    # Life cycle
    # ====================================================================

    @classmethod
    def setup(cls, config: OpenHandsConfig, headless_mode: bool = False) -> None:
        """Called by the OpenHands server on its loop at start-up: register the namespace."""
        try:
            settings = RuntimeSettings.from_env()
        except ValueError as e:  # reported again, as an error, by the first runtime
            logging.getLogger('openhands_vscode_runtime').warning('oh-executor: %s', e)
            return
        ServerConnection.setup(settings)

    async def connect(self) -> None:
        self.set_runtime_status(RuntimeStatus.STARTING_RUNTIME)
        strategy = connection_for(self.settings)
        self.mode = strategy.mode
        try:
            endpoint = await strategy.open()
        except ConnectionSetupError as e:
            self.set_runtime_status(RuntimeStatus.ERROR, str(e), 'error')
            raise AgentRuntimeUnavailableError(str(e)) from None
        self._hub = endpoint.hub
        self._session_api_key = endpoint.session_api_key
        self.server_url = endpoint.server_url

        if self.attach_to_existing:
            existing = self._hub.channel(self.sid)
            if existing is None:
                # Nothing runs for this conversation, and no executor can register without a
                # runtime waiting for it: fail now rather than block the caller.
                raise AgentRuntimeUnavailableError(
                    f'VsCodeRuntime: no running runtime for conversation {self.sid} to attach to'
                )
            # Another runtime of this conversation owns the executor: share its channel.
            self._channel = existing
            self._finish_connect(existing.workspace or '')
            self.set_runtime_status(RuntimeStatus.RUNTIME_STARTED)
            return

        no_change = self._no_change_timeout()
        self._link = ExecutorLink(
            endpoint,
            self.sid,
            self.settings,
            session_settings={'no_change_timeout_seconds': no_change},
        )
        self._channel = self._link.channel

        spawn = spawn_by_default(self.settings, strategy)
        workspace = self._spawn_executor(no_change) if spawn else None
        if not spawn:
            self.log(
                'info',
                f'Waiting for a VS Code executor: connect to {self.server_url} namespace '
                f'{NAMESPACE} with conversation_id={self.sid}',
            )
        timeout = self.settings.connect_timeout
        if timeout is None:
            timeout = strategy.connect_timeout
        await self._await_registration(timeout, spawned=spawn)

        self._finish_connect(self._channel.workspace or workspace or '')
        warning = ripgrep_warning()
        if warning:
            self.log('warning', f'VsCodeRuntime: {warning}')
        await asyncio.to_thread(self.setup_initial_env)
        self.set_runtime_status(RuntimeStatus.RUNTIME_STARTED)

    def _spawn_executor(self, no_change: float) -> str:
        """Start the headless executor on the host workspace; returns the workspace."""
        workspace = self._host_workspace()
        assert self._link is not None
        try:
            self._link.spawn(workspace, no_change_timeout=no_change)
        except ExecutorNotFound:
            self.close()
            raise AgentRuntimeUnavailableError(
                'VsCodeRuntime: the headless executor was not found. Install the platform '
                'wheel of openhands-vscode-runtime (it carries the native '
                'openhands-vscode-executor), or set OH_VSCODE_EXECUTOR to an executor '
                '(the native binary, or the npm package\'s bin/openhands-vscode-executor.js), '
                'or set OH_VSCODE_SPAWN_EXECUTOR=0 and connect an executor yourself.'
            ) from None
        return workspace

    async def _await_registration(self, timeout: float, *, spawned: bool) -> None:
        """Wait for the first executor to register; on failure close and say what to do."""
        assert self._link is not None
        try:
            await self._link.await_registered(timeout)
        except RegistrationFailed as e:
            if self._closed:
                raise AgentRuntimeUnavailableError(
                    f'VsCodeRuntime: {CLOSED_WHILE_CONNECTING} (conversation {self.sid}).'
                ) from None
            detail = str(e)
            tail = self._link.log_tail()
            self.close()
            message = (
                f'VsCodeRuntime: {detail} for conversation {self.sid} '
                f'(Socket.IO {self.server_url}, namespace {NAMESPACE}).'
            )
            if tail:
                message += f'\nExecutor output:\n{tail}'
            elif not spawned:
                message += (
                    ' Open the workspace in VS Code with the OpenHands extension connected to '
                    'this server, or set OH_VSCODE_CONNECT_TIMEOUT to wait longer.'
                )
            self.set_runtime_status(RuntimeStatus.ERROR_RUNTIME_DISCONNECTED, message, 'error')
            raise AgentRuntimeUnavailableError(message) from None

    def _finish_connect(self, workspace: str) -> None:
        self._workspace = os.path.realpath(workspace) if workspace else None
        self._files = HostFiles(self._workspace) if self._workspace else None
        if self._workspace:
            # Tests and the agent build their paths from this (CLIRuntime does the same).
            self.config.workspace_mount_path_in_sandbox = self._workspace
        self._runtime_initialized = True

    def _host_workspace(self) -> str:
        if self.config.workspace_base:
            path = os.path.abspath(self.config.workspace_base)
            os.makedirs(path, exist_ok=True)
            return path
        return tempfile.mkdtemp(prefix=f'openhands_workspace_{self.sid}_')

    def _no_change_timeout(self) -> float:
        raw = self.config.sandbox.runtime_startup_env_vars.get('NO_CHANGE_TIMEOUT_SECONDS')
        if raw is None:
            return 10
        try:
            value = float(raw)
        except (TypeError, ValueError):
            return 10
        return int(value) if value.is_integer() else value

    @property
    def executor_process(self) -> ExecutorProcess | None:
        return self._link.process if self._link is not None else None

    @property
    def session_api_key(self) -> str | None:
        return self._session_api_key

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        if self._ide_endpoint is not None:
            self._ide_endpoint.stop()
            self._ide_endpoint = None
        if self._link is not None:
            # A connect() still waiting for the executor ends now, not at its connect timeout
            # (OpenHands closes a runtime whose conversation is stopped or deleted while it starts).
            self._link.cancel_registration(CLOSED_WHILE_CONNECTING)
            # Its channel (this runtime owns it), then the executor it spawned.
            self._link.close()
        self._runtime_initialized = False
        super().close()

    # ====================================================================
    # Environment: the executor's shell session only, never the user's dotfiles
    # ====================================================================

    def add_env_vars(self, env_vars: dict[str, Any]) -> None:
        env = {str(k).upper(): v for k, v in env_vars.items()}
        if not env:
            return
        parts = []
        for key, value in env.items():
            if isinstance(value, SecretStr):
                value = value.get_secret_value()
            # Quoted so the value arrives verbatim: OpenHands' own `json.dumps` quoting leaves
            # `$(...)`, backticks and `$VAR` in a secret to bash, which runs them.
            parts.append(f'{bash_export(key, str(value))};')
        command = ' '.join(parts)
        last: Observation | None = None
        for attempt in range(_ENV_RETRIES):
            last = self.run(CmdRunAction(command))
            if isinstance(last, CmdOutputObservation) and last.exit_code == 0:
                return
            busy = isinstance(last, CmdOutputObservation) and last.exit_code == -1
            if busy and attempt < _ENV_RETRIES - 1:
                time.sleep(2**attempt)
                continue
            break
        if isinstance(last, CmdOutputObservation):
            detail = f'{last.content} (exit_code={last.exit_code})'
        else:
            detail = getattr(last, 'content', str(last))
        raise RuntimeError(f'Failed to add env vars [{env.keys()}] to environment: {detail}')

    def _setup_git_config(self) -> None:
        """Never touch the user's global git configuration."""
        self.log('debug', 'VsCodeRuntime keeps the user\'s own git configuration')

    # ====================================================================
    # Delegated actions
    # ====================================================================

    def run(self, action: CmdRunAction) -> Observation:
        return self._delegate(action)

    def read(self, action: FileReadAction) -> Observation:
        return self._delegate(action)

    def write(self, action: FileWriteAction) -> Observation:
        return self._delegate(action)

    def edit(self, action: FileEditAction) -> Observation:
        if action.impl_source == FileEditSource.LLM_BASED_EDIT:
            return self.llm_based_edit(action)
        return self._delegate(action)

    def _delegate(self, action: Action) -> Observation:
        """Send an action to the executor and wait for its observation, exactly once.

        An action with a stream id can reach the runtime twice (the event stream delivers a copy
        to `on_event`, and `maybe_run_setup_script` also calls `run_action` on it): the second
        delivery gets the first one's observation.
        """
        if action.timeout is None:
            action.set_hard_timeout(
                self.config.sandbox.timeout, blocking=bool(getattr(action, 'blocking', False))
            )
        stream_id = action.id if action.id != Event.INVALID_ID else None
        key: Any = ('stream', stream_id) if stream_id is not None else ('object', id(action))
        with self._dedupe_lock:
            if stream_id is not None and stream_id in self._done:
                return self._copy_for(action, self._done[stream_id])
            running = self._inflight.get(key)
            if running is None:
                mine: concurrent.futures.Future = concurrent.futures.Future()
                self._inflight[key] = mine
        if running is not None:
            return self._copy_for(action, running.result())

        try:
            obs = self._roundtrip(action)
        except BaseException as e:
            with self._dedupe_lock:
                self._inflight.pop(key, None)
            mine.set_exception(e)
            raise
        # A later delivery of a stream event gets a copy of the observation as it came back (the
        # event stream sets id, timestamp and cause on the one returned here). An action without a
        # stream id has no later delivery, and a deep copy costs more than the rest of the
        # runtime's share of a round trip, so it is skipped; a concurrent call with the very same
        # action object copies the observation itself (`_copy_for`).
        pristine = copy.deepcopy(obs) if stream_id is not None else obs
        with self._dedupe_lock:
            self._inflight.pop(key, None)
            if stream_id is not None:
                self._done[stream_id] = pristine
                while len(self._done) > _DONE_CACHE_SIZE:
                    self._done.popitem(last=False)
        result = self._with_cause(action, obs)  # before a waiter may copy it
        mine.set_result(pristine)
        return result

    def _copy_for(self, action: Action, obs: Observation) -> Observation:
        return self._with_cause(action, copy.deepcopy(obs))

    @staticmethod
    def _with_cause(action: Action, obs: Observation) -> Observation:
        if action.id != Event.INVALID_ID:
            obs._cause = action.id  # type: ignore[attr-defined]
        elif hasattr(obs, '_cause'):
            del obs._cause  # the delegated id means nothing outside the runtime
        return obs

    def _roundtrip(self, action: Action) -> Observation:
        payload = event_to_dict(action)
        timeout = float(action.timeout or self.config.sandbox.timeout)
        payload['timeout'] = timeout
        return self._exchange(payload, timeout, f'({type(action).__name__})')

    def _exchange(self, payload: dict[str, Any], timeout: float, what: str) -> Any:
        """Send one payload to the executor and wait for its reply (`Channel.call`: `timeout`
        plus the reply margin, then a cancel); the ErrorObservation of a runtime that is not
        connected or of a reply that never came."""
        channel = self._channel
        if channel is None or self._closed:
            return ErrorObservation(
                'Runtime not connected: VsCodeRuntime.connect() has not completed '
                '(or the runtime was closed).'
            )
        return channel.call(payload, timeout, what)

    # ====================================================================
    # Checkpoints: the workspace before each user message (docs/checkpoints.md)
    # ====================================================================

    def on_event(self, event: Event) -> None:
        # The stream calls this runtime's subscriber with one event at a time, in order: the
        # checkpoint is complete before any action the agent takes in answer to the message
        # reaches the executor.
        if isinstance(event, MessageAction) and event.source == EventSource.USER:
            self._checkpoint_before(event)
        super().on_event(event)

    def _checkpoint_before(self, message: MessageAction) -> None:
        if self._link is None or self._channel is None or self._closed:
            return  # an attached runtime: the one that owns the executor takes them
        reply = self.checkpoint('take', before_message_args(self.sid, message.id))
        if isinstance(reply, CheckpointReply) and isinstance(reply.result.get('id'), int):
            self.checkpoints[message.id] = reply.result['id']
            self.log('info', f'VsCodeRuntime: {reply.content} (before user message {message.id})')
        else:
            # The agent goes on without it (an executor that predates checkpoints refuses them).
            self.log(
                'warning',
                f'VsCodeRuntime: no checkpoint before user message {message.id}: '
                f'{getattr(reply, "content", reply)}',
            )

    def checkpoint(self, kind: str, args: dict[str, Any]) -> CheckpointReply | Observation:
        """Run `checkpoint_<kind>` (take, list, plan, restore, blob) in the executor: its
        `CheckpointReply`, or the ErrorObservation of a failure."""
        timeout = float(self.config.sandbox.timeout)
        return self._exchange(checkpoint_payload(kind, args, timeout), timeout, f'(checkpoint_{kind})')

    # ====================================================================
    # Not available in VS Code
    # ====================================================================

    def run_ipython(self, action: IPythonRunCellAction) -> Observation:
        return ErrorObservation(
            'IPython is not available in VsCodeRuntime: run Python through the shell '
            '(e.g. `python3 script.py`) instead, and disable the Jupyter plugin in the agent config.'
        )

    def browse(self, action: BrowseURLAction) -> Observation:
        return ErrorObservation(
            'Browsing is not available in VsCodeRuntime: there is no browser in the VS Code '
            'executor. Use the shell (e.g. `curl`) instead.'
        )

    def browse_interactive(self, action: BrowseInteractiveAction) -> Observation:
        return ErrorObservation(
            'Interactive browsing is not available in VsCodeRuntime: there is no browser in the '
            'VS Code executor.'
        )

    # MCP (`get_mcp_config`, `call_tool_mcp`, the IDE tools): runtime_mcp.RuntimeMcp, a base class.

    # ====================================================================
    # Files on the host (the executor's workspace): host_files.HostFiles
    # ====================================================================

    @property
    def workspace_root(self) -> Path:
        if self._workspace:
            return Path(self._workspace)
        return Path(self.config.workspace_mount_path_in_sandbox)

    def _host_files(self) -> HostFiles:
        if not self._runtime_initialized or self._files is None:
            raise RuntimeError('Runtime not initialized')
        return self._files

    def _host_path(self, path: str) -> str:
        return self._host_files().host_path(path)

    def copy_to(self, host_src: str, sandbox_dest: str, recursive: bool = False) -> None:
        self._host_files().copy_to(host_src, sandbox_dest, recursive)

    def list_files(self, path: str | None = None) -> list[str]:
        return self._host_files().list_files(path)

    def copy_from(self, path: str) -> Path:
        return self._host_files().copy_from(path)

    # ====================================================================
    # Misc
    # ====================================================================

    @property
    def vscode_url(self) -> str | None:
        return None

    @property
    def additional_agent_instructions(self) -> str:
        ws = self._workspace or self.config.workspace_mount_path_in_sandbox
        roots = self._channel.roots if self._channel is not None else []
        others = [r for r in roots if os.path.realpath(r) != ws]
        if not others:
            return (
                f'Your working directory is {ws}, the workspace open in the user\'s VS Code. '
                "You are working directly on the user's machine: the environment is usually "
                'already set up.'
            )
        # A multi-root workspace (docs/multi-root.md): the sentence V1's terminal tool says too.
        return (
            f'{folders_sentence(ws, others)} You are working directly on the user\'s machine: the '
            'environment is usually already set up.'
        )
