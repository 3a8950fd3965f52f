"""Settings of VsCodeRuntime, read from the environment when a runtime is created.

OpenHands' config classes reject unknown keys, so the runtime's own knobs are environment
variables (they can also be set in the environment of `openhands serve` or of a test run).
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from openhands_vscode_runtime.hub import DEFAULT_RECONNECT_GRACE_SECONDS

MODE_ENV = 'OH_VSCODE_MODE'
SPAWN_ENV = 'OH_VSCODE_SPAWN_EXECUTOR'
CONNECT_TIMEOUT_ENV = 'OH_VSCODE_CONNECT_TIMEOUT'
GRACE_ENV = 'OH_VSCODE_RECONNECT_GRACE_SECONDS'
HOST_ENV = 'OH_VSCODE_HOST'
PORT_ENV = 'OH_VSCODE_PORT'
SERVER_URL_ENV = 'OH_VSCODE_SERVER_URL'
PING_INTERVAL_ENV = 'OH_VSCODE_PING_INTERVAL'
PING_TIMEOUT_ENV = 'OH_VSCODE_PING_TIMEOUT'
DEFAULT_PING_INTERVAL = 10.0
DEFAULT_PING_TIMEOUT = 10.0


def _float(name: str, default: float) -> float:
    raw = os.environ.get(name, '').strip()
    if not raw:
        return default
    try:
        return float(raw)
    except ValueError as e:
        raise ValueError(f'{name} must be a number, got {raw!r}') from e


def _bool(name: str) -> bool | None:
    raw = os.environ.get(name, '').strip().lower()
    if not raw:
        return None
    return raw in ('1', 'true', 'yes', 'on')


@dataclass(frozen=True)
class RuntimeSettings:
    mode: str  # 'auto' | 'server' | 'embedded'
    spawn_executor: bool | None  # None: spawn in embedded mode only
    connect_timeout: float | None  # None: mode default
    reconnect_grace_seconds: float
    host: str
    port: int
    # Where a spawned executor connects; None: the embedded server's URL, or in server mode
    # http://127.0.0.1:3000.
    server_url: str | None
    # Engine.IO heartbeat of the embedded server (a silent connection is dropped after about
    # ping_interval + ping_timeout, on both sides).
    ping_interval: float
    ping_timeout: float

    @classmethod
    def from_env(cls) -> RuntimeSettings:
        mode = os.environ.get(MODE_ENV, 'auto').strip().lower() or 'auto'
        if mode not in ('auto', 'server', 'embedded'):
            raise ValueError(f'{MODE_ENV} must be auto, server or embedded, got {mode!r}')
        timeout_raw = os.environ.get(CONNECT_TIMEOUT_ENV, '').strip()
        return cls(
            mode=mode,
            spawn_executor=_bool(SPAWN_ENV),
            connect_timeout=_float(CONNECT_TIMEOUT_ENV, 0.0) if timeout_raw else None,
            reconnect_grace_seconds=_float(GRACE_ENV, DEFAULT_RECONNECT_GRACE_SECONDS),
            host=os.environ.get(HOST_ENV, '127.0.0.1'),
            port=int(os.environ.get(PORT_ENV, '0') or 0),
            server_url=os.environ.get(SERVER_URL_ENV, '').strip().rstrip('/') or None,
            ping_interval=_float(PING_INTERVAL_ENV, DEFAULT_PING_INTERVAL),
            ping_timeout=_float(PING_TIMEOUT_ENV, DEFAULT_PING_TIMEOUT),
        )
