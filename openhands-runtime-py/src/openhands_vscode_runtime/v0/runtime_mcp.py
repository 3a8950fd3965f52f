"""The MCP side of `VsCodeRuntime`: the IDE tools of the connected VS Code window (their calls
go over the executor channel) and the configured MCP servers on the host, as CLIRuntime calls them.

A mixin because OpenHands reaches it through `Runtime`'s own methods (`get_mcp_config`,
`call_tool_mcp`); it uses the runtime's channel, its `_delegate` and its config. See ide_tools.py
for the endpoint that lists the IDE tools to the agent.
"""

from __future__ import annotations

import asyncio
import json
import threading
from typing import TYPE_CHECKING, Any

from openhands.core.config.mcp_config import (
    MCPConfig,
    MCPSHTTPServerConfig,
    MCPStdioServerConfig,
)
from openhands.events.action.mcp import MCPAction
from openhands.events.observation import ErrorObservation, Observation
from openhands.events.observation.mcp import MCPObservation

from openhands_vscode_runtime.v0.ide_tools import IdeToolsEndpoint, announced_tools

if TYPE_CHECKING:
    from openhands.core.config import OpenHandsConfig

    from openhands_vscode_runtime.channel import Channel


class RuntimeMcp:
    """`get_mcp_config` and `call_tool_mcp` of `VsCodeRuntime`."""

    # Provided by VsCodeRuntime.
    config: OpenHandsConfig
    sid: str
    _channel: Channel | None
    _closed: bool
    _ide_lock: threading.Lock
    _ide_endpoint: IdeToolsEndpoint | None
    # Also used: `self._delegate(action)` (VsCodeRuntime) and `self.log(level, message)` (Runtime).
    # Not declared here: a stub on this class would shadow Runtime's own `log` in the MRO.

    @property
    def ide_tools(self) -> list[dict[str, Any]]:
        """The IDE tools the registered executor announced (none for the headless executor)."""
        channel = self._channel
        return announced_tools(channel.executor_info) if channel is not None else []

    def _configured_mcp(
        self, extra_stdio_servers: list[MCPStdioServerConfig] | None = None
    ) -> MCPConfig:
        # Kept on self.config so that call_tool_mcp sees the stdio servers added earlier.
        mcp = self.config.mcp
        if extra_stdio_servers:
            servers = list(mcp.stdio_servers)
            for server in extra_stdio_servers:
                if server not in servers:
                    servers.append(server)
            mcp.stdio_servers = servers
        return mcp

    def get_mcp_config(
        self, extra_stdio_servers: list[MCPStdioServerConfig] | None = None
    ) -> MCPConfig:
        mcp = self._configured_mcp(extra_stdio_servers)
        if not self.ide_tools or self._closed:
            return mcp
        # OpenHands lists MCP tools only through MCP servers: the runtime's own endpoint lists the
        # announced IDE tools (ide_tools.py); their calls come back through call_tool_mcp.
        with self._ide_lock:
            if self._ide_endpoint is None:
                endpoint = IdeToolsEndpoint(lambda: self.ide_tools, self._ide_tool_text)
                endpoint.start()
                self._ide_endpoint = endpoint
                self.log('info', f'VsCodeRuntime: IDE tools listed for the agent at {endpoint.url}')
            url, token = self._ide_endpoint.url, self._ide_endpoint.token
        assert url is not None
        ide = MCPSHTTPServerConfig(url=url, api_key=token)
        return mcp.model_copy(update={'shttp_servers': [*mcp.shttp_servers, ide]})

    def _call_ide_tool(self, action: MCPAction) -> Observation:
        """One IDE tool call over the executor channel: an MCPObservation or an ErrorObservation."""
        return self._delegate(action)

    def _ide_tool_text(self, name: str, arguments: dict[str, Any]) -> str:
        """A call from the runtime's MCP endpoint: the `CallToolResult` JSON."""
        action = MCPAction(name=name, arguments=arguments)
        action.set_hard_timeout(self.config.sandbox.timeout, blocking=False)
        obs = self._call_ide_tool(action)
        if isinstance(obs, MCPObservation):
            return obs.content
        return json.dumps({'content': [{'type': 'text', 'text': obs.content}], 'isError': True})

    async def call_tool_mcp(self, action: MCPAction) -> Observation:
        from openhands.mcp.utils import call_tool_mcp as call_mcp_tool
        from openhands.mcp.utils import create_mcp_clients

        ide_names = {t['name'] for t in self.ide_tools}
        if action.name in ide_names:
            return await asyncio.to_thread(self._call_ide_tool, action)
        mcp = self._configured_mcp()
        if not (mcp.sse_servers or mcp.shttp_servers or mcp.stdio_servers):
            if not ide_names:
                return ErrorObservation(
                    f'MCP tool {action.name!r} is not available: the executor of this runtime '
                    'offers no IDE tools (they need VS Code: the headless executor has none) '
                    'and no MCP server is configured.'
                )
            return ErrorObservation(
                f'MCP tool {action.name!r} is not available: the IDE tools are '
                f'{", ".join(sorted(ide_names))}, and no other MCP server is configured.'
            )
        try:
            clients = await create_mcp_clients(
                mcp.sse_servers, mcp.shttp_servers, self.sid, mcp.stdio_servers
            )
            if not clients:
                return ErrorObservation(
                    'No MCP clients could be created - check server configurations'
                )
            return await call_mcp_tool(clients, action)
        except Exception as e:
            return ErrorObservation(f'Error executing MCP tool {action.name}: {e}')
