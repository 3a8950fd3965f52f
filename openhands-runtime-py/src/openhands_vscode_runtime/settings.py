"""Settings of VsCodeRuntime: the one place this package reads its environment.

OpenHands' config classes reject unknown keys, so the runtime's own knobs are environment
variables (they can also be set in the environment of `openhands serve` or of a test run). They
are read once, when a runtime (V0) or a conversation's V1 tools are created
(`RuntimeSettings.from_env()`), and handed to the parts
that need them (connection strategies, hub channels, credentials, executor process); no other
module of this package reads `os.environ` for a setting. (The demo program reads its own LLM
variables; a spawned executor inherits this process's environment minus its credentials,
agent_env.py.)
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

MODE_ENV = 'OH_VSCODE_MODE'
SPAWN_ENV = 'OH_VSCODE_SPAWN_EXECUTOR'
CONNECT_TIMEOUT_ENV = 'OH_VSCODE_CONNECT_TIMEOUT'
GRACE_ENV = 'OH_VSCODE_RECONNECT_GRACE_SECONDS'
HOST_ENV = 'OH_VSCODE_HOST'
PORT_ENV = 'OH_VSCODE_PORT'
SERVER_URL_ENV = 'OH_VSCODE_SERVER_URL'
PING_INTERVAL_ENV = 'OH_VSCODE_PING_INTERVAL'
PING_TIMEOUT_ENV = 'OH_VSCODE_PING_TIMEOUT'
EXECUTOR_ENV = 'OH_VSCODE_EXECUTOR'
NODE_ENV = 'OH_VSCODE_NODE'
ALLOWED_ORIGINS_ENV = 'OH_VSCODE_ALLOWED_ORIGINS'
TOKEN_FILE_ENV = 'OH_VSCODE_EXECUTOR_TOKEN_FILE'
ALLOW_EXPOSED_ENV = 'OH_VSCODE_ALLOW_UNAUTHENTICATED_NETWORK'
OPENHANDS_KEY_ENV = 'SESSION_API_KEY'  # OpenHands' own key (server mode)
V1_DISCOVERY_DIR_ENV = 'OH_VSCODE_V1_DISCOVERY_DIR'
V1_REPLY_TIMEOUT_ENV = 'OH_VSCODE_V1_REPLY_TIMEOUT'
# The embedded hub serves TLS (https/wss) with this certificate chain and key (PEM files); a
# spawned executor trusts the CA file of OH_VSCODE_TLS_CA (else the system's store). docs/remote.md.
TLS_CERT_ENV = 'OH_VSCODE_TLS_CERT'
TLS_KEY_ENV = 'OH_VSCODE_TLS_KEY'
TLS_CA_ENV = 'OH_VSCODE_TLS_CA'

DEFAULT_PING_INTERVAL = 10.0
DEFAULT_PING_TIMEOUT = 10.0
DEFAULT_RECONNECT_GRACE_SECONDS = 15.0
# The time limit the V1 tools give an action that has none of its own (a `file_editor` action, a
# `terminal` command without `timeout`, which V1 runs for as long as its output keeps changing).
DEFAULT_V1_REPLY_TIMEOUT = 1800.0

_TRUE = ('1', 'true', 'yes', 'on')


def _text(env: Mapping[str, str], name: str) -> str:
    return env.get(name, '').strip()


def _float(env: Mapping[str, str], name: str, default: float) -> float:
    raw = _text(env, name)
    if not raw:
        return default
    try:
        return float(raw)
    except ValueError as e:
        raise ValueError(f'{name} must be a number, got {raw!r}') from e


def _bool(env: Mapping[str, str], name: str) -> bool | None:
    raw = _text(env, name).lower()
    if not raw:
        return None
    return raw in _TRUE


def state_dir(env: Mapping[str, str] | None = None) -> Path:
    """This package's state folder: `$XDG_STATE_HOME/openhands-vscode-runtime`
    (`~/.local/state/...` when XDG_STATE_HOME is unset)."""
    env = os.environ if env is None else env
    state = _text(env, 'XDG_STATE_HOME')
    base = Path(state) if state else Path.home() / '.local' / 'state'
    return base / 'openhands-vscode-runtime'


def executor_token_file(env: Mapping[str, str] | None = None) -> Path:
    """`$OH_VSCODE_EXECUTOR_TOKEN_FILE`, else `<state_dir>/executor-token`. The extension computes
    the same path."""
    env = os.environ if env is None else env
    configured = _text(env, TOKEN_FILE_ENV)
    if configured:
        return Path(configured).expanduser()
    return state_dir(env) / 'executor-token'


def v1_discovery_dir(env: Mapping[str, str] | None = None) -> Path:
    """`$OH_VSCODE_V1_DISCOVERY_DIR`, else `<state_dir>/v1`: where a V1 conversation waiting for an
    executor started elsewhere describes itself (docs/v1.md)."""
    env = os.environ if env is None else env
    configured = _text(env, V1_DISCOVERY_DIR_ENV)
    if configured:
        return Path(configured).expanduser()
    return state_dir(env) / 'v1'


@dataclass(frozen=True)
class RuntimeSettings:
    mode: str = 'auto'  # 'auto' | 'server' | 'embedded'
    spawn_executor: bool | None = None  # None: spawn in embedded mode only
    connect_timeout: float | None = None  # None: the connection strategy's default
    reconnect_grace_seconds: float = DEFAULT_RECONNECT_GRACE_SECONDS
    host: str = '127.0.0.1'
    port: int = 0
    # Where a spawned executor connects; None: the embedded server's URL, or in server mode
    # http://127.0.0.1:3000.
    server_url: str | None = None
    # Engine.IO heartbeat of the embedded server (a silent connection is dropped after about
    # ping_interval + ping_timeout, on both sides).
    ping_interval: float = DEFAULT_PING_INTERVAL
    ping_timeout: float = DEFAULT_PING_TIMEOUT
    # The headless executor: a command line or a `.js` path (None: the installed one), and the
    # Node binary for a `.js` executor (None: `node` on PATH).
    executor_command: str | None = None
    node: str | None = None
    # Origins (exact `scheme://host[:port]`) allowed to register from a browser; empty by default.
    allowed_origins: frozenset[str] = field(default_factory=frozenset)
    # Server mode: OpenHands' SESSION_API_KEY, the executor token file, and the opt-in to start
    # without a key on a network interface.
    openhands_session_api_key: str | None = field(default=None, repr=False)
    executor_token_file: Path = field(default_factory=lambda: executor_token_file({}))
    allow_unauthenticated_network: bool = False
    # V1 tools in attach mode: the folder of the discovery files.
    v1_discovery_dir: Path = field(default_factory=lambda: v1_discovery_dir({}))
    # V1 tools: how long an action without a time limit of its own may take (then the reply margin,
    # then the call ends with an error: Channel.call).
    v1_reply_timeout: float = DEFAULT_V1_REPLY_TIMEOUT
    # Embedded mode: the hub's TLS certificate chain and key (both or neither), and the CA file a
    # spawned executor checks the hub's certificate with.
    tls_cert: str | None = None
    tls_key: str | None = None
    tls_ca: str | None = None

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> RuntimeSettings:
        env = os.environ if env is None else env
        mode = _text(env, MODE_ENV).lower() or 'auto'
        if mode not in ('auto', 'server', 'embedded'):
            raise ValueError(f'{MODE_ENV} must be auto, server or embedded, got {mode!r}')
        origins = env.get(ALLOWED_ORIGINS_ENV, '')
        return cls(
            mode=mode,
            spawn_executor=_bool(env, SPAWN_ENV),
            connect_timeout=(
                _float(env, CONNECT_TIMEOUT_ENV, 0.0) if _text(env, CONNECT_TIMEOUT_ENV) else None
            ),
            reconnect_grace_seconds=_float(env, GRACE_ENV, DEFAULT_RECONNECT_GRACE_SECONDS),
            host=env.get(HOST_ENV, '127.0.0.1'),
            port=int(env.get(PORT_ENV, '0') or 0),
            server_url=_text(env, SERVER_URL_ENV).rstrip('/') or None,
            ping_interval=_float(env, PING_INTERVAL_ENV, DEFAULT_PING_INTERVAL),
            ping_timeout=_float(env, PING_TIMEOUT_ENV, DEFAULT_PING_TIMEOUT),
            executor_command=_text(env, EXECUTOR_ENV) or None,
            node=env.get(NODE_ENV) or None,
            allowed_origins=frozenset(
                o.strip().rstrip('/') for o in origins.split(',') if o.strip()
            ),
            openhands_session_api_key=env.get(OPENHANDS_KEY_ENV) or None,
            executor_token_file=executor_token_file(env),
            allow_unauthenticated_network=_text(env, ALLOW_EXPOSED_ENV).lower() in _TRUE,
            v1_discovery_dir=v1_discovery_dir(env),
            v1_reply_timeout=_float(env, V1_REPLY_TIMEOUT_ENV, DEFAULT_V1_REPLY_TIMEOUT),
            **_tls(env),
        )


def _tls(env: Mapping[str, str]) -> dict[str, str | None]:
    """The TLS settings; a certificate without its key (or the reverse) is refused here rather
    than served as plain http."""
    cert, key = _text(env, TLS_CERT_ENV) or None, _text(env, TLS_KEY_ENV) or None
    if (cert is None) != (key is None):
        raise ValueError(f'{TLS_CERT_ENV} and {TLS_KEY_ENV} go together: set both (PEM files) or neither')
    return {'tls_cert': cert, 'tls_key': key, 'tls_ca': _text(env, TLS_CA_ENV) or None}
