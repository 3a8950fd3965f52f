"""OpenHands V1 tools `terminal` and `file_editor` whose actions run in a connected executor
(VS Code, or the headless executor) instead of in this process.

The tool definitions (names, schemas, descriptions the LLM sees) are openhands-tools' own; only the
executors differ. Observations are built from the executor's V1 replies (docs/protocol.md,
"OpenHands V1 actions"). Secrets are handled as V1's `TerminalExecutor` handles them: the ones a
command mentions are exported into the session first (a separate command), and every known
secret value is masked in the output.
"""

from __future__ import annotations

import logging
import re
from typing import TYPE_CHECKING, Any, ClassVar

from openhands.sdk.llm import TextContent
from openhands.sdk.tool import ToolExecutor, register_tool
from openhands.tools.file_editor.definition import (
    FileEditorAction,
    FileEditorObservation,
    FileEditorTool,
)
from openhands.tools.terminal.definition import (
    TerminalAction,
    TerminalObservation,
    TerminalTool,
)
from openhands.tools.terminal.metadata import CmdOutputMetadata

from openhands_vscode_runtime.agent_env import ansi_c_quote
from openhands_vscode_runtime.v1.connection import (
    ExecutorConnection,
    ExecutorLimitReached,
    ExecutorUnavailable,
    acquire,
    install_lifecycle_hooks,
    release,
)
from openhands_vscode_runtime.v1.replies import V1Reply
from openhands_vscode_runtime.workspace_folders import folders_sentence, other_folders

if TYPE_CHECKING:
    from openhands.sdk.conversation import LocalConversation

logger = logging.getLogger('openhands_vscode_runtime.v1')

RESET_TEXT = (
    'Terminal session has been reset. All previous environment variables and session state have '
    'been cleared.'
)
_ENV_NAME = re.compile(r'^[A-Za-z_][A-Za-z0-9_]*$')


def _bash_quote(value: str) -> str:
    """ANSI-C quoting (`$'...'`) of an exported secret: V1's form (`\\n`, `\\r`, `\\t`), with
    every other control byte escaped as well (V1 types them raw, and a `\\x03` in a secret would
    reach the PTY as a Ctrl-C)."""
    return ansi_c_quote(value, named_escapes=True)


def _secret_registry(conversation: Any) -> Any:
    try:
        return conversation.state.secret_registry if conversation is not None else None
    except Exception:
        return None


class _ConnectionHolder:
    """A tool executor's hold on its conversation's connection, let go once by `close()` (V1
    closes every tool executor when the conversation is closed or deleted; the last one closes
    the connection and stops the executor process).

    A conversation over the window's limit (`ExecutorLimitReached` when its tools were created)
    holds none: each action tries again, and while the limit still holds it is answered with an
    error observation saying so, never a silent wait."""

    def __init__(self, connection: ExecutorConnection | None, *, pending: _Pending | None = None) -> None:
        self.connection = connection
        self._pending = pending
        self._released = False

    def _held(self) -> ExecutorConnection | str:
        """The connection, or the reason there is none (the text of the action's observation)."""
        if self.connection is None:
            p = self._pending
            if p is None or self._released:
                return 'openhands_vscode_runtime.v1: this tool has no executor (it was closed).'
            try:
                self.connection = acquire(p.conversation_id, p.workspace, no_change_timeout=p.no_change_timeout)
            except ExecutorUnavailable as e:
                return str(e)
        return self.connection

    def close(self) -> None:
        if not self._released:
            self._released = True
            if self.connection is not None:
                release(self.connection)


class _Pending:
    """What a tool over the limit needs to take its conversation's executor later."""

    def __init__(self, conversation_id: str, workspace: str, no_change_timeout: int | None) -> None:
        self.conversation_id = conversation_id
        self.workspace = workspace
        self.no_change_timeout = no_change_timeout


def _acquire_or_wait(conv_state: Any, no_change_timeout: int | None = None) -> tuple[ExecutorConnection | None, _Pending | None]:
    """The conversation's connection, or (over the limit) none yet and what to take it with."""
    cid, ws = str(conv_state.id), conv_state.workspace.working_dir
    try:
        return acquire(cid, ws, no_change_timeout=no_change_timeout), None
    except ExecutorLimitReached as e:
        logger.warning('openhands_vscode_runtime.v1: %s', e)
        return None, _Pending(cid, ws, no_change_timeout)


class VsCodeTerminalExecutor(_ConnectionHolder, ToolExecutor[TerminalAction, TerminalObservation]):
    """`terminal` actions, run by the executor's bash session."""

    def _run(self, args: dict[str, Any]) -> TerminalObservation:
        conn = self._held()
        if isinstance(conn, str):
            return TerminalObservation.from_text(text=conn, is_error=True, command=args.get('command'), exit_code=None)
        reply = conn.call('v1_terminal', args)
        if not isinstance(reply, V1Reply) or reply.kind != 'v1_terminal':
            # The hub's own failure (no executor, executor gone, closed) or a refused action.
            return TerminalObservation.from_text(
                text=reply.content, is_error=True, command=args.get('command'), exit_code=None
            )
        ex = reply.extras
        md = ex.get('metadata') if isinstance(ex.get('metadata'), dict) else {}
        return TerminalObservation.from_text(
            text=reply.content,
            is_error=bool(ex.get('is_error')),
            command=ex.get('command'),
            exit_code=ex.get('exit_code'),
            timeout=bool(ex.get('timeout')),
            metadata=CmdOutputMetadata(**md),
        )

    def _export_secrets(self, command: str, timeout: float | None, conversation: Any) -> None:
        registry = _secret_registry(conversation)
        if registry is None or not command.strip():
            return
        try:
            env = registry.get_secrets_as_env_vars(command)
        except Exception:
            return
        valid = {k: v for k, v in env.items() if _ENV_NAME.match(k)}
        if not valid:
            return
        exports = ' && '.join(f'export {k}={_bash_quote(v)}' for k, v in valid.items())
        self._run({'command': exports, 'is_input': False, 'timeout': timeout, 'reset': False})

    def _mask(self, obs: TerminalObservation, conversation: Any) -> TerminalObservation:
        registry = _secret_registry(conversation)
        if registry is None or not obs.text:
            return obs
        try:
            masked = registry.mask_secrets_in_output(obs.text)
        except Exception:
            return obs
        if not masked or masked == obs.text:
            return obs
        data = obs.model_dump(exclude={'content', 'full_output_save_dir'})
        return TerminalObservation.from_text(text=masked, **data)

    def __call__(
        self, action: TerminalAction, conversation: LocalConversation | None = None
    ) -> TerminalObservation:
        if action.reset and action.is_input:
            raise ValueError('Cannot use reset=True with is_input=True')
        if action.reset:
            # Reset first, then export the secrets into the new session, then run the command.
            reset = self._run({'command': '', 'is_input': False, 'timeout': None, 'reset': True})
            if reset.is_error or not action.command.strip():
                return reset
            self._export_secrets(action.command, action.timeout, conversation)
            obs = self._run(
                {'command': action.command, 'is_input': False, 'timeout': action.timeout, 'reset': False}
            )
            # As V1 does: the command's observation, its text after the reset notice. (Not
            # through `from_text`, which would need every required field of a new observation.)
            obs = obs.model_copy(
                update={
                    'content': [TextContent(text=f'{RESET_TEXT}\n\n{obs.text}')],
                    'command': f'[RESET] {action.command}',
                }
            )
            return self._mask(obs, conversation)
        if not action.is_input:
            self._export_secrets(action.command, action.timeout, conversation)
        obs = self._run(
            {'command': action.command, 'is_input': action.is_input, 'timeout': action.timeout, 'reset': False}
        )
        return self._mask(obs, conversation)

    def interrupt(self) -> None:
        """C-c to the running command, as V1's own `TerminalExecutor.interrupt()` does (the
        conversation calls it from another thread when `interrupt()` cancels a tool call). The
        executor runs it beside the running command (`v1_interrupt` is not a command); the
        interrupted call then returns its own observation. Not waited for, like V1's."""
        if self.connection is None:
            return
        try:
            self.connection.channel.submit({'action': 'v1_interrupt', 'args': {}})
        except Exception:  # noqa: BLE001 - best effort, as V1's (it suppresses every error)
            logger.debug('v1_interrupt could not be sent', exc_info=True)


class VsCodeFileEditorExecutor(_ConnectionHolder, ToolExecutor[FileEditorAction, FileEditorObservation]):
    """`file_editor` actions, run by the executor's editor (on VS Code's file system there)."""

    def __call__(
        self, action: FileEditorAction, conversation: LocalConversation | None = None
    ) -> FileEditorObservation:
        args = {
            'command': action.command,
            'path': action.path,
            'file_text': action.file_text,
            'old_str': action.old_str,
            'new_str': action.new_str,
            'insert_line': action.insert_line,
            'view_range': action.view_range,
        }
        conn = self._held()
        if isinstance(conn, str):
            return FileEditorObservation.from_text(text=conn, is_error=True, command=action.command)
        reply = conn.call('v1_file_editor', args)
        if not isinstance(reply, V1Reply) or reply.kind != 'v1_file_editor':
            return FileEditorObservation.from_text(text=reply.content, is_error=True, command=action.command)
        ex = reply.extras
        return FileEditorObservation.from_text(
            text=reply.content,
            is_error=bool(ex.get('is_error')),
            command=action.command,
            path=ex.get('path'),
            prev_exist=bool(ex.get('prev_exist', True)),
            old_content=ex.get('old_content'),
            new_content=ex.get('new_content'),
        )


class VsCodeTerminalTool(TerminalTool):
    """openhands-tools' `terminal`, executed by the connected executor."""

    name: ClassVar[str] = 'terminal'

    @classmethod
    def create(  # type: ignore[override]
        cls, conv_state: Any, no_change_timeout_seconds: int | None = None, **_ignored: Any
    ) -> list[VsCodeTerminalTool]:
        conn, pending = _acquire_or_wait(conv_state, no_change_timeout_seconds)
        tools = list(super().create(conv_state, executor=VsCodeTerminalExecutor(conn, pending=pending)))
        return [_with_workspace_folders(t, conn) for t in tools] if conn is not None else tools


class VsCodeFileEditorTool(FileEditorTool):
    """openhands-tools' `file_editor`, executed by the connected executor."""

    name: ClassVar[str] = 'file_editor'

    @classmethod
    def create(cls, conv_state: Any) -> list[VsCodeFileEditorTool]:  # type: ignore[override]
        conn, pending = _acquire_or_wait(conv_state)
        tools = super().create(conv_state)
        for tool in tools:
            _drop_unused_history_folder(tool.executor)
        return [t.set_executor(VsCodeFileEditorExecutor(conn, pending=pending)) for t in tools]


def _with_workspace_folders(tool: VsCodeTerminalTool, conn: ExecutorConnection) -> VsCodeTerminalTool:
    """A multi-root workspace (the executor's `auth.roots`): the description names every folder
    and says where the shell starts. The tool's description is the one place of V1 that our tools
    own and the LLM reads with every request: the system prompt and its suffix belong to whoever
    creates the conversation (`agent.agent_context`), and an observation is seen only after a first
    command. With one folder the description stays V1's own."""
    first = conn.channel.workspace or conn.workspace
    others = other_folders(conn.channel.roots, first)
    if not others:
        return tool
    return tool.model_copy(update={'description': f'{tool.description}\n\n{folders_sentence(first, others)}'})


def _drop_unused_history_folder(replaced: object) -> None:
    """V1's `FileEditorTool.create` builds V1's own editor, whose undo history is a fresh
    `oh_editor_history_*` folder in the temp dir; ours replaces that executor before it runs
    anything, so the folder would stay behind, one per conversation. `rmdir` removes it only while
    empty. The attribute path is V1 1.58.x's; another shape leaves the folder (a leak, not an error)."""
    try:
        folder = replaced.editor._history_manager.cache.directory  # type: ignore[attr-defined]
        folder.rmdir()
    except (AttributeError, OSError):
        logger.debug('V1 editor history folder not removed', exc_info=True)


def register() -> None:
    """Make `terminal` and `file_editor` resolve to the executor-backed tools in this process."""
    install_lifecycle_hooks()
    register_tool('terminal', VsCodeTerminalTool)
    register_tool('file_editor', VsCodeFileEditorTool)
