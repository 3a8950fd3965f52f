"""A client that does what the OpenHands tab does, for the e2e suite.

REST on the server (`/api/settings`, `/api/conversations`, with `X-Session-API-Key`), the UI's
Socket.IO connection on the default namespace (`conversation_id`, `latest_event_id`,
`session_api_key` query parameters; `oh_event` in, `oh_user_action` out), and the headless executor
started for a conversation once its runtime waits for one.
"""

from __future__ import annotations

import os
import subprocess
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import socketio
from oh_server import http_json

REPO = Path(__file__).resolve().parents[2]
EXECUTOR_JS = REPO / 'npm' / 'executor' / 'bin' / 'openhands-vscode-executor.js'
STARTING_RUNTIME = 'STATUS$STARTING_RUNTIME'


class RestClient:
    def __init__(self, url: str, session_api_key: str | None) -> None:
        self.url = url.rstrip('/')
        self.key = session_api_key

    def call(self, method: str, path: str, body: Any = None) -> tuple[int, Any]:
        return http_json(method, self.url + path, body, session_api_key=self.key)

    def settings(self) -> tuple[int, Any]:
        return self.call('GET', '/api/settings')

    def store_settings(self, body: dict[str, Any]) -> None:
        status, answer = self.call('POST', '/api/settings', body)
        assert status == 200, (status, answer)

    def new_conversation(self, **body: Any) -> str:
        status, answer = self.call('POST', '/api/conversations', body)
        assert status == 200 and answer.get('status') == 'ok', (status, answer)
        return answer['conversation_id']

    def conversations(self) -> list[dict[str, Any]]:
        status, answer = self.call('GET', '/api/conversations')
        assert status == 200, (status, answer)
        return answer['results']

    def conversation(self, conversation_id: str) -> dict[str, Any] | None:
        status, answer = self.call('GET', f'/api/conversations/{conversation_id}')
        assert status == 200, (status, answer)
        return answer

    def wait_runtime_status(self, conversation_id: str, wanted: str, timeout: float) -> float:
        """Seconds until the conversation's runtime_status (as the REST API shows it) is `wanted`."""
        start = time.monotonic()
        seen = None
        while time.monotonic() - start < timeout:
            info = self.conversation(conversation_id)
            seen = info and info.get('runtime_status')
            if seen == wanted:
                return time.monotonic() - start
            time.sleep(0.1)
        raise AssertionError(f'runtime_status of {conversation_id} stayed {seen!r}, not {wanted!r}')


class ConversationSocket:
    """The UI's Socket.IO connection to one conversation (default namespace)."""

    def __init__(
        self, url: str, session_api_key: str | None, conversation_id: str, latest_event_id: int = -1
    ) -> None:
        self.url = url
        self.key = session_api_key
        self.conversation_id = conversation_id
        self.latest_event_id = latest_event_id
        self.events: list[dict[str, Any]] = []  # oh_event payloads that are events (have 'id')
        self.other: list[dict[str, Any]] = []  # status updates and errors
        self._cond = threading.Condition()
        self.sio = socketio.Client(reconnection=False)
        self.connect_errors: list[Any] = []
        self.sio.on('oh_event', self._on_event)
        self.sio.on('connect_error', self.connect_errors.append)

    def _on_event(self, data: dict[str, Any]) -> None:
        with self._cond:
            if isinstance(data, dict) and ('action' in data or 'observation' in data):
                self.events.append(data)
            else:
                self.other.append(data)
            self._cond.notify_all()

    def connect(self, timeout: float = 30.0) -> ConversationSocket:
        query = f'conversation_id={self.conversation_id}&latest_event_id={self.latest_event_id}'
        if self.key:
            query += f'&session_api_key={self.key}'
        self.sio.connect(
            f'{self.url}?{query}',
            transports=['websocket'],
            socketio_path='socket.io',
            wait_timeout=timeout,
        )
        return self

    def disconnect(self) -> None:
        if self.sio.connected:
            self.sio.disconnect()

    def __enter__(self) -> ConversationSocket:
        return self.connect()

    def __exit__(self, *exc: object) -> None:
        self.disconnect()

    def send_message(self, text: str) -> None:
        """The user's message, as the web UI sends it."""
        self.sio.emit(
            'oh_user_action',
            {'action': 'message', 'args': {'content': text, 'image_urls': [], 'file_urls': []}},
        )

    def send_agent_state(self, state: str) -> None:
        """Stop / resume: a ChangeAgentStateAction (the web UI's stop button)."""
        self.sio.emit('oh_user_action', {'action': 'change_agent_state', 'args': {'agent_state': state}})

    def wait_for(
        self, predicate: Callable[[dict[str, Any]], bool], timeout: float, what: str = 'an event'
    ) -> dict[str, Any]:
        deadline = time.monotonic() + timeout
        checked = 0
        with self._cond:
            while True:
                for event in self.events[checked:]:
                    if predicate(event):
                        return event
                checked = len(self.events)
                left = deadline - time.monotonic()
                if left <= 0:
                    raise AssertionError(
                        f'no {what} within {timeout:g} s; last events: '
                        f'{[summary(e) for e in self.events[-8:]]}; other: {self.other[-4:]}'
                    )
                self._cond.wait(min(left, 0.5))

    def wait_other(
        self, predicate: Callable[[dict[str, Any]], bool], timeout: float, what: str
    ) -> dict[str, Any]:
        """Wait for a status update or error payload (not an event) matching `predicate`."""
        deadline = time.monotonic() + timeout
        with self._cond:
            while True:
                for item in self.other:
                    if predicate(item):
                        return item
                left = deadline - time.monotonic()
                if left <= 0:
                    raise AssertionError(f'no {what} within {timeout:g} s; other: {self.other}')
                self._cond.wait(min(left, 0.5))

    def wait_agent_state(self, state: str, timeout: float) -> dict[str, Any]:
        return self.wait_for(
            lambda e: e.get('observation') == 'agent_state_changed'
            and e.get('extras', {}).get('agent_state') == state,
            timeout,
            f'agent state {state!r}',
        )


def summary(event: dict[str, Any]) -> str:
    kind = event.get('action') or event.get('observation')
    extras = event.get('extras') or {}
    detail = event.get('args', {}).get('command') or extras.get('agent_state') or ''
    return f'{event.get("id")}:{event.get("source")}:{kind}{" " + str(detail)[:40] if detail else ""}'


class HeadlessExecutor:
    """The headless executor attached to one conversation of the server."""

    def __init__(
        self,
        url: str,
        conversation_id: str,
        session_api_key: str | None,
        workspace: str | Path,
        *,
        no_change_timeout: int | None = None,
    ) -> None:
        self.args = [
            os.environ.get('OH_VSCODE_NODE', 'node'),
            str(EXECUTOR_JS),
            '--url', url,
            '--conversation', conversation_id,
            '--workspace', str(workspace),
        ]
        # The key goes through a pipe (`--session-api-key-fd`), as the runtime passes it: never in
        # argv (every local user reads it in ps) nor the environment (/proc/PID/environ).
        self.env = {k: v for k, v in os.environ.items() if k != 'OH_SESSION_API_KEY'}
        self.session_api_key = session_api_key
        if no_change_timeout is not None:
            self.args += ['--no-change-timeout', str(no_change_timeout)]
        self.proc: subprocess.Popen | None = None
        fd, self.log_path = tempfile.mkstemp(prefix='oh-e2e-executor-', suffix='.log')
        os.close(fd)
        self.attempts = 0

    def log(self) -> str:
        return Path(self.log_path).read_text(errors='replace')

    def _spawn(self) -> subprocess.Popen:
        self.attempts += 1
        log = open(self.log_path, 'ab')
        key_fd = None
        args = self.args
        if self.session_api_key:
            key_fd, write_fd = os.pipe()
            os.write(write_fd, self.session_api_key.encode())
            os.close(write_fd)
            args = [*args, '--session-api-key-fd', str(key_fd)]
        try:
            return subprocess.Popen(
                args, stdin=subprocess.DEVNULL, stdout=log, stderr=log, env=self.env,
                start_new_session=True, pass_fds=() if key_fd is None else (key_fd,),
            )
        finally:
            log.close()
            if key_fd is not None:
                os.close(key_fd)

    def start(self, timeout: float = 30.0) -> float:
        """Start it and wait until it registered; seconds it took.

        The runtime may still be starting when this is called (the REST status says
        STARTING_RUNTIME just before the runtime opens its channel): the server keeps an executor
        that proved its key in its waiting room and welcomes it when the runtime opens
        (docs/protocol.md), so one start is enough; a refusal is a failure.
        """
        start = time.monotonic()
        proc = self._spawn()
        while proc.poll() is None:
            if 'registered with' in self.log():
                self.proc = proc
                return time.monotonic() - start
            if time.monotonic() - start > timeout:
                self._kill(proc)
                raise AssertionError(f'the executor did not register:\n{self.log()}')
            time.sleep(0.05)
        raise AssertionError(f'the executor exited with {proc.returncode}:\n{self.log()}')

    def running(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def _kill(self, proc: subprocess.Popen) -> None:
        if proc.poll() is None:
            proc.terminate()
            try:
                proc.wait(10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(5)

    def stop(self) -> None:
        if self.proc is not None:
            self._kill(self.proc)
            self.proc = None

    def __enter__(self) -> HeadlessExecutor:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()
