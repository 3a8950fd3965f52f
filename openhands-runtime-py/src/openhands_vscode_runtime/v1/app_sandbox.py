"""The OpenHands app's (openhands-ai 1.11) process sandbox, starting agent-servers whose `terminal`
and `file_editor` are this package's: select it in the app's environment with

    RUNTIME=process
    OH_SANDBOX_KIND=openhands_vscode_runtime.v1.app_sandbox.VsCodeProcessSandboxServiceInjector
    OH_SANDBOX_PYTHON_EXECUTABLE=/path/to/v1-venv/bin/python   # openhands-agent-server 1.58 + this package

This module runs inside the app server (openhands-ai 1.11, whose own SDK pins 1.34); the agent-server
it starts runs in the V1 environment named by `python_executable`, as
`python -m openhands_vscode_runtime.v1.agent_server --port N` (the tools registered, bound to
127.0.0.1). Why a subclass and not only the app's own `agent_server_module` setting: the stock
process sandbox of 1.11.0 never reports a started agent-server as running, and reaches it through
a host name that does not resolve when the app runs in a container (docs/v1-app.md, with the
code locations). What this class changes, and nothing else:

* status: a live process is RUNNING whatever its scheduler state (the stock code calls an idle,
  sleeping server STARTING, so the app waits for it until its sandbox start timeout and fails);
  stopped (paused by the app) is PAUSED, a zombie or a gone process MISSING;
* address: the agent-server is reached and exposed as `http://127.0.0.1:PORT` (the stock code
  uses `localhost`, which the app rewrites to `host.docker.internal` whenever it detects a
  container, also for a process it started itself on the same host);
* readiness: the wait for `/alive` after the start is `startup_timeout` seconds (default 120; the
  stock wait is a fixed 30 s, and importing the SDK alone takes longer on a loaded machine).
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass
from typing import AsyncGenerator

import psutil
from fastapi import Request
from pydantic import Field

from openhands.app_server.sandbox.process_sandbox_service import (
    ProcessInfo,
    ProcessSandboxService,
    ProcessSandboxServiceInjector,
)
from openhands.app_server.sandbox.sandbox_models import AGENT_SERVER, ExposedUrl, SandboxInfo, SandboxStatus
from openhands.app_server.sandbox.sandbox_service import SandboxService
from openhands.app_server.services.injector import InjectorState

AGENT_SERVER_MODULE = 'openhands_vscode_runtime.v1.agent_server'
LOOPBACK = '127.0.0.1'


def process_status(pid: int) -> SandboxStatus:
    """The sandbox status of the agent-server process `pid`."""
    try:
        state = psutil.Process(pid).status()
    except (psutil.NoSuchProcess, psutil.AccessDenied):
        return SandboxStatus.MISSING
    if state == psutil.STATUS_ZOMBIE or state == psutil.STATUS_DEAD:
        return SandboxStatus.MISSING
    if state == psutil.STATUS_STOPPED:
        return SandboxStatus.PAUSED
    return SandboxStatus.RUNNING


@dataclass
class VsCodeProcessSandboxService(ProcessSandboxService):
    startup_timeout: float = 120.0

    def _base_url(self, port: int) -> str:
        return f'http://{LOOPBACK}:{port}'

    async def _server_answers(self, port: int) -> bool:
        try:
            response = await self.httpx_client.get(f'{self._base_url(port)}{self.health_check_path}', timeout=5.0)
        except Exception:
            return False
        return response.status_code == 200

    async def _wait_for_server_ready(self, port: int, timeout: int = 30) -> bool:
        # `timeout` is the caller's fixed 30 s; ours is the configured startup_timeout.
        deadline = time.monotonic() + self.startup_timeout
        while time.monotonic() < deadline:
            if await self._server_answers(port):
                return True
            await asyncio.sleep(0.5)
        return False

    def _get_process_status(self, process_info: ProcessInfo) -> SandboxStatus:
        return process_status(process_info.pid)

    async def _process_to_sandbox_info(self, sandbox_id: str, process_info: ProcessInfo) -> SandboxInfo:
        status = self._get_process_status(process_info)
        exposed_urls = None
        session_api_key = None
        if status == SandboxStatus.RUNNING:
            if await self._server_answers(process_info.port):
                exposed_urls = [ExposedUrl(name=AGENT_SERVER, url=self._base_url(process_info.port),
                                           port=process_info.port)]
                session_api_key = process_info.session_api_key
            else:
                status = SandboxStatus.ERROR
        return SandboxInfo(
            id=sandbox_id,
            created_by_user_id=process_info.user_id,
            sandbox_spec_id=process_info.sandbox_spec_id,
            status=status,
            session_api_key=session_api_key,
            exposed_urls=exposed_urls,
            created_at=process_info.created_at,
        )


class VsCodeProcessSandboxServiceInjector(ProcessSandboxServiceInjector):
    """`ProcessSandboxServiceInjector` with our agent-server module as the default and the
    fixes above; its other settings (`OH_SANDBOX_BASE_PORT`, `OH_SANDBOX_BASE_WORKING_DIR`,
    `OH_SANDBOX_PYTHON_EXECUTABLE`, ...) are the stock ones."""

    agent_server_module: str = Field(
        default=AGENT_SERVER_MODULE,
        description='Python module run as the agent server (ours registers the VS Code tools)',
    )
    startup_timeout: float = Field(
        default=120.0, description='Seconds a started agent server has to answer its health check'
    )

    async def inject(self, state: InjectorState, request: Request | None = None) -> AsyncGenerator[SandboxService, None]:
        from openhands.app_server.config import get_httpx_client, get_sandbox_spec_service, get_user_context

        async with (
            get_httpx_client(state, request) as httpx_client,
            get_sandbox_spec_service(state, request) as sandbox_spec_service,
            get_user_context(state, request) as user_context,
        ):
            yield VsCodeProcessSandboxService(
                user_id=await user_context.get_user_id(),
                sandbox_spec_service=sandbox_spec_service,
                base_working_dir=self.base_working_dir,
                base_port=self.base_port,
                python_executable=self.python_executable,
                agent_server_module=self.agent_server_module,
                health_check_path=self.health_check_path,
                httpx_client=httpx_client,
                default_sandbox_spec_id=await user_context.get_default_sandbox_spec_id(),
                startup_timeout=self.startup_timeout,
            )
