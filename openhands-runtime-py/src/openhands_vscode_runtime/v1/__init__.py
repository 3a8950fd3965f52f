"""OpenHands V1 (software-agent-sdk, openhands-tools 1.58.x): `terminal` and `file_editor` tools
whose actions run in a connected executor (VS Code or the headless one). See docs/v1.md.

    from openhands_vscode_runtime.v1 import register
    register()   # before creating the Agent/Conversation

The tool classes live in `openhands_vscode_runtime.v1.tools` (importing it needs openhands-sdk
and openhands-tools); `openhands_vscode_runtime.v1.register` registers them on import.
"""

from typing import Any


def register() -> None:
    from openhands_vscode_runtime.v1.tools import register as _register

    _register()


def __getattr__(name: str) -> Any:
    if name in ('VsCodeTerminalTool', 'VsCodeFileEditorTool', 'VsCodeTerminalExecutor', 'VsCodeFileEditorExecutor'):
        from openhands_vscode_runtime.v1 import tools

        return getattr(tools, name)
    raise AttributeError(name)
