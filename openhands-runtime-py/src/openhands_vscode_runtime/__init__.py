"""OpenHands runtime whose sandbox is VS Code (or the headless executor).

Select it in OpenHands with ``[core] runtime = "openhands_vscode_runtime.VsCodeRuntime"`` or
``RUNTIME=openhands_vscode_runtime.VsCodeRuntime``.
"""

from openhands_vscode_runtime.hub import NAMESPACE, PROTOCOL_VERSION
from openhands_vscode_runtime.runtime import VsCodeRuntime

__all__ = ['NAMESPACE', 'PROTOCOL_VERSION', 'VsCodeRuntime']
__version__ = '0.1.0'
