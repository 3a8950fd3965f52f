"""OpenHands runtime whose sandbox is VS Code (or the headless executor).

Select it in OpenHands with ``[core] runtime = "openhands_vscode_runtime.VsCodeRuntime"`` or
``RUNTIME=openhands_vscode_runtime.VsCodeRuntime``.
"""

from typing import Any

from openhands_vscode_runtime.protocol import NAMESPACE, PROTOCOL_VERSION

__all__ = ['NAMESPACE', 'PROTOCOL_VERSION', 'VsCodeRuntime']
__version__ = '0.1.0'


def __getattr__(name: str) -> Any:
    # Imported on first use: the V0 runtime needs openhands-ai, which an OpenHands V1 venv (the
    # `openhands_vscode_runtime.v1` tools) does not have.
    if name == 'VsCodeRuntime':
        try:
            from openhands_vscode_runtime.v0.runtime import VsCodeRuntime
        except ImportError as e:
            raise ImportError(
                f'VsCodeRuntime is the OpenHands V0 runtime and needs openhands-ai ({e}): install '
                "'openhands-vscode-runtime[v0]' (the V1 tools are openhands_vscode_runtime.v1, "
                "with '[v1]')"
            ) from e
        return VsCodeRuntime
    raise AttributeError(f'module {__name__!r} has no attribute {name!r}')
