#!/usr/bin/env python3
"""Start the REAL OpenHands server app with VsCodeRuntime, isolated, for tests and manual runs.

`openhands.server.listen:app` (openhands-ai 1.6.0, the V0 server: REST `/api/...` and the UI's
Socket.IO on the default namespace) under uvicorn on 127.0.0.1 and a free port, with
`RUNTIME=openhands_vscode_runtime.VsCodeRuntime` in server mode: nothing is spawned for a
conversation; an executor (the VS Code extension, or the headless executor) registers on the
server's `/oh-executor` namespace with the conversation id and `SESSION_API_KEY`.

Everything the server writes (file store, HOME, V1 database, logs) lives in a fresh temp dir,
removed at exit. The browser, Jupyter and browsing are off. With `--llm-script FILE` a scripted
stand-in LLM (`openhands_vscode_runtime.scripted_llm`) is started in this process and stored as
the server's LLM settings through the server's own `POST /api/settings`; `--llm-base-url URL`
stores an LLM that is already running; `--no-settings` stores nothing (first use: the server
refuses to start conversations with "Settings not found").

    python tests/e2e/oh_server.py --workspace DIR [--llm-script FILE | --llm-base-url URL]
                                  [--no-settings] [--session-api-key K] [--port N]
                                  [--connect-timeout S] [--no-change-timeout S]

prints one JSON line once ready, `{"url", "session_api_key", "llm_base_url", "state_dir",
"log"}`, and serves until SIGTERM/SIGINT. From Python: `with OpenHandsServer(workspace=...) as s:`
runs the same command in a child process (the server reads its settings from the environment at
import time, so it needs a process of its own).
"""

from __future__ import annotations

import argparse
import json
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
SCRIPTED_MODEL = 'openai/scripted'
SCRIPTED_API_KEY = 'scripted-llm-key'


def http_json(
    method: str,
    url: str,
    body: Any = None,
    *,
    session_api_key: str | None = None,
    timeout: float = 30.0,
) -> tuple[int, Any]:
    """A small REST client: (status, decoded JSON or text). HTTP errors are returned, not raised."""
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(url, data=data, method=method)
    if data is not None:
        request.add_header('Content-Type', 'application/json')
    if session_api_key:
        request.add_header('X-Session-API-Key', session_api_key)
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            status, raw = response.status, response.read()
    except urllib.error.HTTPError as e:
        status, raw = e.code, e.read()
    try:
        return status, json.loads(raw or b'null')
    except json.JSONDecodeError:
        return status, raw.decode(errors='replace')


def llm_settings(base_url: str, model: str = SCRIPTED_MODEL, api_key: str = SCRIPTED_API_KEY):
    """The `POST /api/settings` body the web UI sends, for an OpenAI-compatible endpoint."""
    return {
        'llm_model': model,
        'llm_base_url': base_url,
        'llm_api_key': api_key,
        'agent': 'CodeActAgent',
        'confirmation_mode': False,
        'language': 'en',
        'user_consents_to_analytics': False,
    }


# ---------------------------------------------------------------------------------------------
# The server process
# ---------------------------------------------------------------------------------------------


def _isolated_env(args: argparse.Namespace, state: Path, key: str, url: str) -> None:
    """Settings of the server (read from the environment when OpenHands is imported)."""
    home = state / 'home'
    home.mkdir(parents=True, exist_ok=True)
    env = {
        'HOME': str(home),
        'USER': os.environ.get('USER') or 'openhands-e2e',
        'TMUX_TMPDIR': str(state / 'tmux'),
        'GIT_CONFIG_GLOBAL': str(state / 'gitconfig'),
        'XDG_CONFIG_HOME': str(home / '.config'),
        'XDG_CACHE_HOME': str(home / '.cache'),
        'XDG_DATA_HOME': str(home / '.local' / 'share'),
        'OPENHANDS_PERSISTENCE_DIR': str(state / 'persistence'),
        'OH_PERSISTENCE_DIR': str(state / 'persistence'),
        'FILE_STORE': 'local',
        'FILE_STORE_PATH': str(state / 'file_store'),
        'WORKSPACE_BASE': str(Path(args.workspace).resolve()),
        'SERVE_FRONTEND': 'false',
        # The V1 app server is mounted too, and `GET /api/conversations` merges its conversations:
        # its default sandbox service needs a Docker daemon. The process sandbox service needs
        # nothing until a V1 conversation is started (none is here).
        'OH_SANDBOX_KIND': 'ProcessSandboxServiceInjector',
        'OH_SANDBOX_BASE_WORKING_DIR': str(state / 'v1-sandboxes'),
        'OH_SANDBOX_SPEC_KIND': 'ProcessSandboxSpecServiceInjector',
        'OPENHANDS_SUPPRESS_BANNER': '1',
        'LITELLM_LOCAL_MODEL_COST_MAP': 'True',
        'SESSION_API_KEY': key,
        'RUNTIME': 'openhands_vscode_runtime.VsCodeRuntime',
        'OH_VSCODE_MODE': 'server',
        'OH_VSCODE_SPAWN_EXECUTOR': '0',
        'OH_VSCODE_SERVER_URL': url,
        'ENABLE_BROWSER': 'false',
        'AGENT_ENABLE_BROWSING': 'false',
        'AGENT_ENABLE_JUPYTER': 'false',
        'LOG_LEVEL': os.environ.get('LOG_LEVEL', 'WARNING'),
        'LOG_TO_FILE': 'false',
    }
    if not args.prompt_tool_calling:
        # The scripted model is in no provider's feature list; real tool-calling models get
        # native calls by default, so the suite exercises that path.
        env['LLM_NATIVE_TOOL_CALLING'] = 'true'
    env['LLM_NUM_RETRIES'] = '0'
    if args.connect_timeout is not None:
        env['OH_VSCODE_CONNECT_TIMEOUT'] = str(args.connect_timeout)
    if args.no_change_timeout is not None:
        env['SANDBOX_RUNTIME_STARTUP_ENV_VARS'] = repr(
            {'NO_CHANGE_TIMEOUT_SECONDS': str(args.no_change_timeout)}
        )
    os.environ.update(env)
    for name in ('TMUX_TMPDIR',):
        Path(env[name]).mkdir(parents=True, exist_ok=True)


def serve(args: argparse.Namespace) -> int:
    # A given state dir is reused and kept (a server restarted on the same conversations).
    state = Path(args.state_dir) if args.state_dir else Path(tempfile.mkdtemp(prefix='oh-e2e-server-'))
    key = args.session_api_key or secrets.token_urlsafe(24)
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(('127.0.0.1', args.port))
    sock.listen(128)
    port = sock.getsockname()[1]
    url = f'http://127.0.0.1:{port}'
    _isolated_env(args, state, key, url)

    llm = None
    llm_base_url = args.llm_base_url
    if args.llm_script:
        sys.path.insert(0, str(HERE.parent.parent / 'openhands-runtime-py' / 'src'))
        from openhands_vscode_runtime.scripted_llm import ScriptedLLM, load_script

        llm = ScriptedLLM(load_script(args.llm_script), log_path=args.llm_log)
        llm_base_url = llm.start()

    import asyncio

    import uvicorn

    from openhands.server.listen import app

    server = uvicorn.Server(
        uvicorn.Config(app, log_level='warning', lifespan='on', ws='websockets-sansio')
    )
    ready = {
        'url': url,
        'session_api_key': key,
        'llm_base_url': llm_base_url if not args.no_settings else None,
        'state_dir': str(state),
        'workspace': os.environ['WORKSPACE_BASE'],
    }

    async def announce() -> None:
        while not server.started:
            if server.should_exit:
                return
            await asyncio.sleep(0.02)
        if llm_base_url and not args.no_settings:
            status, body = await asyncio.to_thread(
                http_json,
                'POST',
                f'{url}/api/settings',
                llm_settings(llm_base_url, args.llm_model, args.llm_api_key),
                session_api_key=key,
            )
            if status != 200:
                print(f'oh_server: storing LLM settings failed: {status} {body}', file=sys.stderr)
                server.should_exit = True
                return
        print(json.dumps(ready), flush=True)

    async def main() -> None:
        announcer = asyncio.ensure_future(announce())
        await server.serve(sockets=[sock])
        announcer.cancel()

    # uvicorn handles SIGTERM/SIGINT during serve() and re-raises them afterwards: with these
    # no-op handlers the re-raise returns here and the clean-up below runs.
    signal.signal(signal.SIGTERM, lambda *_: None)
    signal.signal(signal.SIGINT, lambda *_: None)
    try:
        asyncio.run(main())
    finally:
        if llm is not None:
            llm.stop()
        if not args.keep_state and not args.state_dir:
            shutil.rmtree(state, ignore_errors=True)
    return 0


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        description='The real OpenHands server app with VsCodeRuntime (server mode), isolated.'
    )
    parser.add_argument('--workspace', required=True, help='the workspace (WORKSPACE_BASE)')
    llm = parser.add_mutually_exclusive_group()
    llm.add_argument('--llm-script', help='start the scripted stand-in LLM with this script')
    llm.add_argument('--llm-base-url', help='store this OpenAI-compatible base URL as the LLM')
    parser.add_argument('--llm-model', default=SCRIPTED_MODEL)
    parser.add_argument('--llm-api-key', default=SCRIPTED_API_KEY)
    parser.add_argument('--llm-log', help='the scripted LLM appends one JSON line per answer here')
    parser.add_argument('--no-settings', action='store_true', help='store no LLM settings')
    parser.add_argument('--session-api-key', help='SESSION_API_KEY (default: generated)')
    parser.add_argument('--port', type=int, default=0)
    parser.add_argument('--connect-timeout', type=float, help='OH_VSCODE_CONNECT_TIMEOUT')
    parser.add_argument('--no-change-timeout', type=int, help='the soft timeout of commands')
    parser.add_argument('--prompt-tool-calling', action='store_true',
                        help='leave native tool calling to the model features (scripted: off)')
    parser.add_argument('--keep-state', action='store_true', help='keep the temp state dir')
    parser.add_argument('--state-dir', help='use (and keep) this state dir instead of a temp one')
    args = parser.parse_args(argv)
    if args.no_settings and args.llm_base_url:
        parser.error('--no-settings and --llm-base-url contradict each other')
    return args


# ---------------------------------------------------------------------------------------------
# From Python (pytest): the same command in a child process
# ---------------------------------------------------------------------------------------------


class OpenHandsServer:
    """`with OpenHandsServer(workspace=...) as server:` -> server.url, .session_api_key, ..."""

    def __init__(
        self,
        workspace: str | Path,
        *,
        llm_script: str | Path | None = None,
        llm_base_url: str | None = None,
        no_settings: bool = False,
        session_api_key: str | None = None,
        connect_timeout: float | None = None,
        no_change_timeout: int | None = None,
        extra_args: list[str] | None = None,
        env: dict[str, str] | None = None,
        python: str = sys.executable,
        startup_timeout: float = 120.0,
    ) -> None:
        args = [python, str(Path(__file__).resolve()), '--workspace', str(workspace)]
        if llm_script:
            args += ['--llm-script', str(llm_script)]
        if llm_base_url:
            args += ['--llm-base-url', llm_base_url]
        if no_settings:
            args.append('--no-settings')
        if session_api_key:
            args.append(f'--session-api-key={session_api_key}')  # joined: a key may start with '-'
        if connect_timeout is not None:
            args += ['--connect-timeout', str(connect_timeout)]
        if no_change_timeout is not None:
            args += ['--no-change-timeout', str(no_change_timeout)]
        self.args = args + list(extra_args or [])
        self.env = {**os.environ, **(env or {})}
        self.startup_timeout = startup_timeout
        self.proc: subprocess.Popen | None = None
        self.info: dict[str, Any] = {}
        fd, self.log_path = tempfile.mkstemp(prefix='oh-e2e-server-', suffix='.log')
        os.close(fd)

    @property
    def url(self) -> str:
        return self.info['url']

    @property
    def session_api_key(self) -> str:
        return self.info['session_api_key']

    @property
    def llm_base_url(self) -> str | None:
        return self.info.get('llm_base_url')

    def log_tail(self, chars: int = 4000) -> str:
        try:
            return Path(self.log_path).read_text(errors='replace')[-chars:]
        except OSError:
            return ''

    def start(self) -> OpenHandsServer:
        log = open(self.log_path, 'ab')
        self.proc = subprocess.Popen(
            self.args,
            stdout=subprocess.PIPE,
            stderr=log,
            stdin=subprocess.DEVNULL,
            env=self.env,
            start_new_session=True,
        )
        log.close()
        line: list[bytes] = []

        def read_line() -> None:
            assert self.proc is not None and self.proc.stdout is not None
            line.append(self.proc.stdout.readline())

        reader = threading.Thread(target=read_line, daemon=True)
        reader.start()
        reader.join(self.startup_timeout)
        if not line or not line[0].strip():
            self.stop()
            raise RuntimeError(
                f'the OpenHands server did not become ready within {self.startup_timeout:g} s; '
                f'its log:\n{self.log_tail()}'
            )
        self.info = json.loads(line[0])
        return self

    def stop(self, timeout: float = 20.0) -> None:
        proc, self.proc = self.proc, None
        if proc is None:
            return
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
            try:
                proc.wait(timeout)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait(5)
        else:
            try:
                os.killpg(proc.pid, signal.SIGKILL)  # whatever it left in its group
            except ProcessLookupError:
                pass
        if proc.stdout is not None:
            proc.stdout.close()

    def __enter__(self) -> OpenHandsServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    started = time.monotonic()
    code = serve(args)
    print(f'oh_server: stopped after {time.monotonic() - started:.1f} s', file=sys.stderr)
    return code


if __name__ == '__main__':
    sys.exit(main())
