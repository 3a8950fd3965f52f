"""The stand-in for the LLM: a scripted OpenAI-compatible chat-completions server on 127.0.0.1.

Nothing here is a language model. Each `POST /v1/chat/completions` is answered with the next step of
a script: an assistant message whose `tool_calls` name one of CodeActAgent's tools (`execute_bash`,
`str_replace_editor`, `think`, `finish`, ...) with JSON arguments, or a plain text message. OpenHands
reaches it through its ordinary LLM settings (model `openai/<name>`, base URL, any key), so the real
agent controller and CodeActAgent run unchanged; only the model's choices are scripted. It is used
by `make demo`, the e2e suite, the real-host conversation test and the agent-loop benchmark.

Script: a JSON list of steps (or `{"steps": [...]}`). A step is

    {"tool": "execute_bash", "args": {"command": "ls"}}           one tool call
    {"tool": "finish", "args": {"message": "done"}}
    {"content": "plain text"}                                     a message without tool calls
    {"thought": "...", "tool": ..., "args": ...}                  text alongside the tool call

and may depend on the observation the agent got for the previous step (the last tool result or user
message of the request):

    "expect_in_last_observation": "exit code 1"       the text must contain this substring
    "match_last_observation": "No module named '(\\w+)'"  a regex that must match; its groups fill
                                                      "{{1}}" / "{{name}}" in the step's string args

When the condition fails the answer is a `finish` whose message starts with `SCRIPT MISMATCH`
(recorded in `mismatches`), so a run that diverged ends at once and says why. A finish alone looks
like success to a test, so a test must also ask whether the script was followed: in process through
`mismatches`, over HTTP through `GET /v1/scripted/mismatches` ->
`{"mismatches": [...], "requests": N}` (tests/vscode/suite/lib.js `assertScriptFollowed`). In-process users can
also pass `hook(index, step, messages) -> step` to compute a step from the request.

Which step answers a request is derived from the request itself: the number of assistant messages
already in its `messages` (each earlier answer became one). A retried request therefore gets the
same answer as the first attempt, and two agents never share a counter.

A request for a conversation's title (OpenHands V0 and V1 ask the conversation's LLM for one after
the first message, with a system message that asks for "concise, descriptive titles" and no tools)
is not a step: it is answered with the first line of the person's message, cut to 50 characters, and
counted in `title_requests`, not in `requests`, so a script never has to make room for it and a
conversation list shows a readable title.

Requests that carry `tools` are answered with native `tool_calls`; requests without them (OpenHands'
prompt-based function calling for models without native tool calling) get the same call as text in
the `<function=...><parameter=...>` format OpenHands parses. `"stream": true` is answered as SSE.

    ScriptedLLM(script).start() -> base_url ("http://127.0.0.1:PORT/v1"); .stop(); .requests

    python -m openhands_vscode_runtime.scripted_llm --script FILE.json [--port N]
        prints one JSON line {"base_url": ...} on stdout once listening, then serves until SIGTERM.
"""

from __future__ import annotations

import argparse
import copy
import json
import re
import signal
import sys
import threading
import time
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

Step = dict[str, Any]
Hook = Callable[[int, Step, list[dict[str, Any]]], Step]

MISMATCH_PREFIX = 'SCRIPT MISMATCH'
# The system message OpenHands (V0's conversation_summary, V1's title_utils) sends to get a title.
TITLE_PROMPT_MARK = 'generates concise, descriptive titles for conversations with OpenHands'
_TITLE_MESSAGE = re.compile(r'starts with this message:\n\n(.*)', re.S)
_PLACEHOLDER = re.compile(r'\{\{(\w+)\}\}')


def load_script(path: str | Path) -> list[Step]:
    data = json.loads(Path(path).read_text())
    if isinstance(data, dict):
        data = data.get('steps')
    if not isinstance(data, list) or not all(isinstance(s, dict) for s in data):
        raise ValueError(f'{path}: a script is a JSON list of steps (objects) or {{"steps": [...]}}')
    for i, step in enumerate(data):
        validate_step(step, i)
    return data


def validate_step(step: Step, index: int) -> None:
    if 'tool' in step:
        if not isinstance(step['tool'], str) or not isinstance(step.get('args', {}), dict):
            raise ValueError(f'step {index}: "tool" must be a name and "args" an object')
    elif not isinstance(step.get('content'), str):
        raise ValueError(f'step {index}: a step has a "tool" (with "args") or a "content" text')


def message_text(message: dict[str, Any]) -> str:
    """The text of a chat message whose content is a string or a list of content parts."""
    content = message.get('content')
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return ''.join(
            part.get('text', '') for part in content if isinstance(part, dict)
        )
    return ''


def last_observation(messages: list[dict[str, Any]]) -> str:
    """What the agent saw since its last answer: the tool results and user messages after it."""
    tail: list[str] = []
    for message in reversed(messages):
        if message.get('role') == 'assistant':
            break
        if message.get('role') in ('tool', 'user'):
            tail.append(message_text(message))
    return '\n'.join(reversed(tail))


def step_index(messages: list[dict[str, Any]]) -> int:
    return sum(1 for m in messages if m.get('role') == 'assistant')


def title_for(request: dict[str, Any]) -> str | None:
    """The title answering a title request (None: `request` is not one): the first non-empty line
    of the person's message, at most 50 characters."""
    messages = request.get('messages') or []
    if request.get('tools') or not any(
        m.get('role') == 'system' and TITLE_PROMPT_MARK in message_text(m) for m in messages
    ):
        return None
    asked = next((message_text(m) for m in reversed(messages) if m.get('role') == 'user'), '')
    found = _TITLE_MESSAGE.search(asked)
    text = found.group(1) if found else asked
    line = next((ln.strip() for ln in text.splitlines() if ln.strip()), 'Conversation')
    return line if len(line) <= 50 else line[:47] + '...'


def _fill(value: Any, groups: dict[str, str]) -> Any:
    if isinstance(value, str):
        return _PLACEHOLDER.sub(lambda m: groups.get(m.group(1), m.group(0)), value)
    if isinstance(value, list):
        return [_fill(v, groups) for v in value]
    if isinstance(value, dict):
        return {k: _fill(v, groups) for k, v in value.items()}
    return value


class ScriptedLLM:
    """The scripted stand-in for an OpenAI-compatible LLM server (see the module docstring)."""

    def __init__(
        self,
        script: list[Step],
        *,
        host: str = '127.0.0.1',
        port: int = 0,
        model: str = 'scripted',
        hook: Hook | None = None,
        require_api_key: str | None = None,
        log_path: str | Path | None = None,
    ) -> None:
        for i, step in enumerate(script):
            validate_step(step, i)
        self.script = list(script)
        self.model = model
        self.hook = hook
        self.require_api_key = require_api_key
        self.log_path = Path(log_path) if log_path else None
        self.requests: list[dict[str, Any]] = []
        self.title_requests = 0
        self.mismatches: list[str] = []
        self._lock = threading.Lock()
        self._host, self._port = host, port
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None
        self.base_url = ''

    # ---- life cycle -----------------------------------------------------------------------

    def start(self) -> str:
        owner = self

        class Handler(_Handler):
            llm = owner

        self._server = ThreadingHTTPServer((self._host, self._port), Handler)
        self._server.daemon_threads = True
        host, port = self._server.server_address[:2]
        self.base_url = f'http://{host}:{port}/v1'
        self._thread = threading.Thread(
            target=self._server.serve_forever, name='scripted-llm', daemon=True
        )
        self._thread.start()
        return self.base_url

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None
        if self._thread is not None:
            self._thread.join(5)
            self._thread = None

    def __enter__(self) -> ScriptedLLM:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # ---- answering ------------------------------------------------------------------------

    def answer(self, messages: list[dict[str, Any]]) -> tuple[int, Step]:
        """The step for a request with these messages (after conditions and the hook)."""
        index = step_index(messages)
        if index >= len(self.script):
            return index, self._mismatch(
                index, f'the script has {len(self.script)} steps; the agent asked for step {index}'
            )
        step = copy.deepcopy(self.script[index])
        observed = last_observation(messages)
        expected = step.pop('expect_in_last_observation', None)
        if expected is not None and expected not in observed:
            return index, self._mismatch(
                index, f'expected {expected!r} in the last observation, got {observed[-500:]!r}'
            )
        pattern = step.pop('match_last_observation', None)
        if pattern is not None:
            found = re.search(pattern, observed, re.MULTILINE)
            if found is None:
                return index, self._mismatch(
                    index, f'{pattern!r} does not match the last observation {observed[-500:]!r}'
                )
            groups = {str(i): g or '' for i, g in enumerate([found.group(0), *found.groups()])}
            groups.update({k: v or '' for k, v in found.groupdict().items()})
            step = _fill(step, groups)
        if self.hook is not None:
            step = self.hook(index, step, messages)
            validate_step(step, index)
        return index, step

    def _mismatch(self, index: int, why: str) -> Step:
        text = f'{MISMATCH_PREFIX} at step {index}: {why}'
        with self._lock:
            self.mismatches.append(text)
        return {'tool': 'finish', 'args': {'message': text}}

    def completion(self, request: dict[str, Any]) -> dict[str, Any]:
        """The chat.completion object answering `request` (also logged in `requests`)."""
        received = time.time()
        title = title_for(request)
        if title is not None:
            with self._lock:
                self.title_requests += 1
            return {
                'id': 'chatcmpl-scripted-title',
                'object': 'chat.completion',
                'created': int(received),
                'model': request.get('model') or self.model,
                'choices': [{'index': 0, 'message': {'role': 'assistant', 'content': title}, 'finish_reason': 'stop'}],
                'usage': {'prompt_tokens': 1, 'completion_tokens': 1, 'total_tokens': 2},
            }
        messages = request.get('messages') or []
        index, step = self.answer(messages)
        native = bool(request.get('tools'))
        message: dict[str, Any] = {'role': 'assistant', 'content': step.get('content')}
        finish_reason = 'stop'
        if 'tool' in step:
            args = step.get('args', {})
            call_id = f'call_{index}'
            thought = step.get('thought') or ''
            if native:
                message['content'] = thought or None
                message['tool_calls'] = [
                    {
                        'id': call_id,
                        'type': 'function',
                        'function': {'name': step['tool'], 'arguments': json.dumps(args)},
                    }
                ]
                finish_reason = 'tool_calls'
            else:
                params = ''.join(
                    f'<parameter={k}>{v if isinstance(v, str) else json.dumps(v)}</parameter>\n'
                    for k, v in args.items()
                )
                text = f'<function={step["tool"]}>\n{params}</function>'
                message['content'] = f'{thought}\n\n{text}' if thought else text
        prompt_tokens = sum(len(message_text(m)) // 4 for m in messages)
        completion_tokens = max(1, len(json.dumps(message)) // 4)
        response = {
            'id': f'chatcmpl-scripted-{index}',
            'object': 'chat.completion',
            'created': int(received),
            'model': request.get('model') or self.model,
            'choices': [{'index': 0, 'message': message, 'finish_reason': finish_reason}],
            'usage': {
                'prompt_tokens': prompt_tokens,
                'completion_tokens': completion_tokens,
                'total_tokens': prompt_tokens + completion_tokens,
            },
        }
        entry = {
            'step': index,
            'received': received,
            'answered': time.time(),
            'native_tools': native,
            'stream': bool(request.get('stream')),
            'last_observation': last_observation(messages),
            'response': message,
        }
        with self._lock:
            # The tools as the LLM got them (their descriptions: tests/v1/test_multi_root.py).
            self.requests.append({**entry, 'messages': messages, 'tools': request.get('tools') or []})
            if self.log_path is not None:
                with self.log_path.open('a') as f:
                    f.write(json.dumps(entry) + '\n')
        return response


class _Handler(BaseHTTPRequestHandler):
    llm: ScriptedLLM
    protocol_version = 'HTTP/1.1'
    server_version = 'ScriptedLLM/1'

    def log_message(self, format: str, *args: Any) -> None:  # quiet
        pass

    def _send_json(self, status: int, body: dict[str, Any]) -> None:
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header('Content-Type', 'application/json')
        self.send_header('Content-Length', str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _authorized(self) -> bool:
        required = self.llm.require_api_key
        if required is None:
            return True
        if self.headers.get('Authorization', '') == f'Bearer {required}':
            return True
        self._send_json(
            401,
            {
                'error': {
                    'message': 'Incorrect API key provided (scripted LLM).',
                    'type': 'invalid_request_error',
                    'code': 'invalid_api_key',
                }
            },
        )
        return False

    def do_GET(self) -> None:
        if self.path.rstrip('/') in ('/v1/scripted/mismatches', '/scripted/mismatches'):
            # Not behind the API key: a test asks this with only the base URL it configured.
            with self.llm._lock:
                body = {'mismatches': list(self.llm.mismatches), 'requests': len(self.llm.requests)}
            self._send_json(200, body)
            return
        if self.path.rstrip('/') in ('/v1/models', '/models'):
            if not self._authorized():
                return
            self._send_json(
                200,
                {
                    'object': 'list',
                    'data': [{'id': self.llm.model, 'object': 'model', 'owned_by': 'scripted'}],
                },
            )
            return
        self._send_json(404, {'error': {'message': f'no route {self.path}'}})

    def do_POST(self) -> None:
        length = int(self.headers.get('Content-Length') or 0)
        raw = self.rfile.read(length) if length else b''
        if self.path.rstrip('/') not in ('/v1/chat/completions', '/chat/completions'):
            self._send_json(404, {'error': {'message': f'no route {self.path}'}})
            return
        if not self._authorized():
            return
        try:
            request = json.loads(raw or b'{}')
        except json.JSONDecodeError as e:
            self._send_json(400, {'error': {'message': f'invalid JSON: {e}'}})
            return
        response = self.llm.completion(request)
        if request.get('stream'):
            self._send_stream(response)
        else:
            self._send_json(200, response)

    def _send_stream(self, response: dict[str, Any]) -> None:
        choice = response['choices'][0]
        message = choice['message']
        delta: dict[str, Any] = {'role': 'assistant', 'content': message.get('content')}
        if message.get('tool_calls'):
            delta['tool_calls'] = [
                {**call, 'index': i} for i, call in enumerate(message['tool_calls'])
            ]
        base = {k: response[k] for k in ('id', 'created', 'model')}
        chunks = [
            {**base, 'object': 'chat.completion.chunk',
             'choices': [{'index': 0, 'delta': delta, 'finish_reason': None}]},
            {**base, 'object': 'chat.completion.chunk',
             'choices': [{'index': 0, 'delta': {}, 'finish_reason': choice['finish_reason']}],
             'usage': response['usage']},
        ]
        body = b''.join(f'data: {json.dumps(c)}\n\n'.encode() for c in chunks) + b'data: [DONE]\n\n'
        self.send_response(200)
        self.send_header('Content-Type', 'text/event-stream')
        self.send_header('Content-Length', str(len(body)))
        self.end_headers()
        self.wfile.write(body)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description='Scripted stand-in for an OpenAI-compatible LLM server (no model behind it).'
    )
    parser.add_argument('--script', required=True, help='JSON list of steps')
    parser.add_argument('--port', type=int, default=0, help='port on 127.0.0.1 (default: free)')
    parser.add_argument('--model', default='scripted', help='the id listed by GET /v1/models')
    parser.add_argument('--require-api-key', help='answer 401 unless this bearer key is sent')
    parser.add_argument('--log', help='append one JSON line per answered request to this file')
    args = parser.parse_args(argv)
    try:
        script = load_script(args.script)
    except (OSError, ValueError) as e:
        print(f'scripted_llm: {e}', file=sys.stderr)
        return 64

    llm = ScriptedLLM(
        script,
        port=args.port,
        model=args.model,
        require_api_key=args.require_api_key,
        log_path=args.log,
    )

    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    signal.signal(signal.SIGINT, lambda *_: stop.set())
    base_url = llm.start()
    print(json.dumps({'base_url': base_url}), flush=True)
    print(
        f'scripted_llm: stand-in LLM ({len(script)} scripted steps) at {base_url}', file=sys.stderr
    )
    stop.wait()
    llm.stop()
    return 0


if __name__ == '__main__':
    sys.exit(main())
