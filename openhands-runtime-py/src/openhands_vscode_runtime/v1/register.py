"""Importing this module registers the executor-backed `terminal` and `file_editor` tools and,
in an agent-server, widens its loop's default thread pool (server_threads.py).

For the agent-server: `python -m openhands.agent_server --import-modules
openhands_vscode_runtime.v1.register` (or `tool_module_qualnames` in `POST /api/conversations`).
"""

from openhands_vscode_runtime.v1.tools import register

from openhands_vscode_runtime.v1.server_threads import widen_uvicorn

register()
widen_uvicorn()
