"""The IDE tools of the connected VS Code window, offered to the OpenHands agent.

The executor announces the tools its host runs in `auth.ide_tools` when it registers (the VS Code
extension does; the headless executor announces none, because these tools need a live VS Code).
OpenHands V0 gets MCP tools only from MCP servers (`add_mcp_tools_to_agent` lists the tools of
every server in `runtime.get_mcp_config()` over HTTP), so the runtime serves the announced list as
a small MCP endpoint of its own: streamable HTTP on 127.0.0.1, a random token, no browser origins.
The agent's calls do not go through that endpoint: OpenHands hands every `MCPAction` to
`runtime.call_tool_mcp`, which sends the IDE tools' calls over the executor channel like any other
action (exactly once, the action's timeout) and gets OpenHands' `MCPObservation` back.
See docs/ide-tools.md ("The OpenHands runtime path").
"""

from __future__ import annotations

import asyncio
import contextlib
import hmac
import json
import logging
import secrets
import threading
from typing import Any, Callable

logger = logging.getLogger(__name__)

MCP_PATH = '/mcp'
SERVER_NAME = 'vscode-ide'


def announced_tools(auth: dict[str, Any]) -> list[dict[str, Any]]:
    """The well-formed tools of an executor's `auth.ide_tools` (MCP `Tool` objects).

    A malformed entry is left out (and logged) rather than failing the registration: the agent
    then simply does not see that tool.
    """
    raw = auth.get('ide_tools')
    if not isinstance(raw, list):
        return []
    tools: list[dict[str, Any]] = []
    seen: set[str] = set()
    for entry in raw:
        ok = (
            isinstance(entry, dict)
            and isinstance(entry.get('name'), str)
            and entry['name']
            and entry['name'] not in seen
            and isinstance(entry.get('description', ''), str)
            and isinstance(entry.get('inputSchema'), dict)
        )
        if not ok:
            logger.warning('oh-executor: ignoring a malformed IDE tool announcement: %.200r', entry)
            continue
        seen.add(entry['name'])
        tools.append(
            {
                'name': entry['name'],
                'description': entry.get('description', ''),
                'inputSchema': entry['inputSchema'],
            }
        )
    return tools


class IdeToolsEndpoint:
    """An MCP endpoint (streamable HTTP, 127.0.0.1, bearer token) that lists the IDE tools.

    `tools()` is read on every `tools/list`, so a re-registered executor's list is what the
    agent's next fetch sees. `tools/call` runs `call(name, arguments)` (a blocking function that
    goes over the executor channel) in a worker thread; OpenHands itself calls through
    `call_tool_mcp`, so this is only for other clients holding the token.
    """

    def __init__(
        self,
        tools: Callable[[], list[dict[str, Any]]],
        call: Callable[[str, dict[str, Any]], str],
    ) -> None:
        self._tools = tools
        self._call = call
        self.token = secrets.token_hex(32)
        self.url: str | None = None
        self._server: Any = None
        self._thread: threading.Thread | None = None

    def start(self, timeout: float = 10.0) -> str:
        """Serve on a free port in a daemon thread; returns the URL."""
        import uvicorn

        config = uvicorn.Config(
            self._asgi_app(),
            host='127.0.0.1',
            port=0,
            log_level='warning',
            lifespan='on',
            access_log=False,
        )
        server = uvicorn.Server(config)
        server.install_signal_handlers = lambda: None  # type: ignore[method-assign]
        self._server = server
        self._thread = threading.Thread(
            target=server.run, name='vscode-ide-tools-mcp', daemon=True
        )
        self._thread.start()
        deadline = threading.Event()
        waited = 0.0
        while not server.started:
            if not self._thread.is_alive() or waited >= timeout:
                raise RuntimeError('the IDE tools MCP endpoint did not start')
            deadline.wait(0.02)
            waited += 0.02
        port = server.servers[0].sockets[0].getsockname()[1]
        self.url = f'http://127.0.0.1:{port}{MCP_PATH}'
        return self.url

    def stop(self) -> None:
        server, thread = self._server, self._thread
        self._server = self._thread = None
        self.url = None
        if server is not None:
            server.should_exit = True
        if thread is not None:
            thread.join(timeout=5)

    def _mcp_server(self) -> Any:
        import mcp.types as types
        from mcp.server.lowlevel import Server

        server: Any = Server(SERVER_NAME)

        @server.list_tools()
        async def list_tools() -> list[types.Tool]:
            return [types.Tool(**t) for t in self._tools()]

        @server.call_tool(validate_input=False)
        async def call_tool(name: str, arguments: dict[str, Any]) -> types.CallToolResult:
            text = await asyncio.to_thread(self._call, name, arguments or {})
            return types.CallToolResult.model_validate(json.loads(text))

        return server

    def _asgi_app(self) -> Callable[..., Any]:
        from mcp.server.streamable_http_manager import StreamableHTTPSessionManager

        manager = StreamableHTTPSessionManager(
            app=self._mcp_server(), stateless=True, json_response=True
        )
        token = self.token.encode()

        async def refuse(send: Callable[..., Any], status: int, message: str) -> None:
            body = json.dumps({'error': message}).encode()
            await send(
                {
                    'type': 'http.response.start',
                    'status': status,
                    'headers': [(b'content-type', b'application/json')],
                }
            )
            await send({'type': 'http.response.body', 'body': body})

        async def app(scope: dict[str, Any], receive: Callable[..., Any], send: Callable[..., Any]) -> None:
            if scope['type'] == 'lifespan':
                async with contextlib.AsyncExitStack() as stack:
                    while True:
                        message = await receive()
                        if message['type'] == 'lifespan.startup':
                            await stack.enter_async_context(manager.run())
                            await send({'type': 'lifespan.startup.complete'})
                        elif message['type'] == 'lifespan.shutdown':
                            await send({'type': 'lifespan.shutdown.complete'})
                            return
                return
            if scope['type'] != 'http':
                return
            headers = {k.decode('latin-1').lower(): v for k, v in scope.get('headers', [])}
            if b'origin' in {k.encode() for k in headers}:
                # A web page: never (the agent's MCP client sends no Origin).
                await refuse(send, 403, 'cross-origin requests are refused')
                return
            if scope.get('path', '').rstrip('/') != MCP_PATH:
                await refuse(send, 404, 'not found')
                return
            auth = headers.get('authorization', b'')
            given = auth[7:].strip() if auth[:7].lower() == b'bearer ' else b''
            if not hmac.compare_digest(given, token):
                await refuse(send, 401, 'missing or invalid bearer token')
                return
            await manager.handle_request(scope, receive, send)

        return app
