"""The IDE tools through VsCodeRuntime's MCP hooks (docs/ide-tools.md, "The OpenHands runtime
path"): the tools an executor announces reach the agent through OpenHands' own MCP tool fetch,
their calls travel over the executor channel exactly once and come back as MCPObservations; the
headless executor offers none and refuses a call that arrives anyway.

The real VS Code host is tested in tests/vscode (session 10); here the host is
`ide_host_executor.js`, a stand-in for VS Code around the real executor addon."""

from __future__ import annotations

import json
from pathlib import Path

import httpx
import pytest
from conftest import load_runtime, real_executor_only

from openhands.events.action.mcp import MCPAction
from openhands.events.observation import ErrorObservation
from openhands.events.observation.mcp import MCPObservation
from openhands.mcp.utils import fetch_mcp_tools_from_config
from openhands.utils.async_utils import call_async_from_sync

from openhands_vscode_runtime.v0.ide_tools import announced_tools

HOST = Path(__file__).with_name('ide_host_executor.js')


def _ide_servers(rt) -> list:
    return [s for s in rt.get_mcp_config().shttp_servers if s.url.startswith('http://127.0.0.1:')]


@real_executor_only
def test_the_headless_executor_offers_no_ide_tools_and_refuses_a_call(runtime) -> None:
    assert runtime.ide_tools == []
    assert _ide_servers(runtime) == []
    obs = call_async_from_sync(runtime.call_tool_mcp, 30, MCPAction(name='diagnostics', arguments={}))
    assert isinstance(obs, ErrorObservation)
    assert 'offers no IDE tools' in obs.content and 'need VS Code' in obs.content
    # A call that reaches the headless executor anyway (a runtime that does not check) is refused
    # there, with the reason.
    action = MCPAction(name='diagnostics', arguments={})
    action.set_hard_timeout(30)
    obs = runtime._delegate(action)
    assert isinstance(obs, ErrorObservation)
    assert obs.content.startswith('The IDE tool "diagnostics" needs VS Code')


@pytest.fixture
def ide_runtime(temp_dir: str, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv('OH_VSCODE_EXECUTOR', str(HOST))
    rt, _ = load_runtime(temp_dir)
    try:
        yield rt
    finally:
        rt.close()


def test_announced_tools_reach_the_agent_and_calls_go_over_the_executor(ide_runtime) -> None:
    rt = ide_runtime
    assert [t['name'] for t in rt.ide_tools] == ['where_am_i', 'broken', 'wait_for_user', 'cancelled_calls']
    # What add_mcp_tools_to_agent does: OpenHands' own fetch over the runtime's MCP config.
    tools = call_async_from_sync(fetch_mcp_tools_from_config, 30, rt.get_mcp_config())
    by_name = {t['function']['name']: t['function'] for t in tools}
    assert set(by_name) == {'where_am_i', 'broken', 'wait_for_user', 'cancelled_calls'}
    assert by_name['where_am_i']['parameters']['properties'] == {'line': {'type': 'integer'}}

    action = MCPAction(name='where_am_i', arguments={'line': 3})
    action.set_hard_timeout(30)
    action._id = 41  # as the event stream numbers it
    obs = call_async_from_sync(rt.call_tool_mcp, 30, action)
    assert isinstance(obs, MCPObservation), obs
    assert (obs.name, obs.arguments) == ('where_am_i', {'line': 3})
    result = json.loads(obs.content)
    assert result['isError'] is False
    assert json.loads(result['content'][0]['text']) == {'name': 'where_am_i', 'arguments': {'line': 3}, 'calls': 1}
    # Exactly once: a second delivery of the same stream event gets the first answer.
    again = call_async_from_sync(rt.call_tool_mcp, 30, action)
    assert json.loads(json.loads(again.content)['content'][0]['text'])['calls'] == 1

    failed = MCPAction(name='broken', arguments={})
    failed.set_hard_timeout(30)
    obs = call_async_from_sync(rt.call_tool_mcp, 30, failed)
    assert isinstance(obs, ErrorObservation)
    assert obs.content == 'The IDE tool "broken" failed: the stand-in host refuses'

    unknown = call_async_from_sync(rt.call_tool_mcp, 30, MCPAction(name='nope', arguments={}))
    assert isinstance(unknown, ErrorObservation)
    assert 'the IDE tools are broken, cancelled_calls, wait_for_user, where_am_i' in unknown.content


def test_a_call_the_runtime_gives_up_on_is_cancelled_in_the_host(ide_runtime, monkeypatch) -> None:
    """An IDE call whose reply timeout passes (an `open_diff` nobody answers) is cancelled in the
    host: the stand-in's `wait_for_user` waits until its call is cancelled, and `cancelled_calls`
    reports which calls the host saw cancelled (the stand-in stands in for VS Code only, so that
    this runs without a VS Code window; tests/vscode cancels a real open_diff)."""
    import openhands_vscode_runtime.channel as channel_module

    rt = ide_runtime
    monkeypatch.setattr(channel_module, 'REPLY_MARGIN_SECONDS', 0.5)
    waiting = MCPAction(name='wait_for_user', arguments={})
    waiting.set_hard_timeout(1)
    obs = call_async_from_sync(rt.call_tool_mcp, 30, waiting)
    assert isinstance(obs, ErrorObservation), obs
    assert obs.content.startswith('Runtime timed out: the VS Code executor did not answer action')
    monkeypatch.setattr(channel_module, 'REPLY_MARGIN_SECONDS', 15.0)
    report = MCPAction(name='cancelled_calls', arguments={})
    report.set_hard_timeout(30)
    seen = call_async_from_sync(rt.call_tool_mcp, 30, report)
    assert isinstance(seen, MCPObservation), seen
    cancelled = json.loads(json.loads(seen.content)['content'][0]['text'])['cancelled']
    # Exactly the call that timed out, and it was still running in the host when cancelled.
    assert [c['name'] for c in cancelled] == ['wait_for_user'], cancelled
    # Its late "cancelled" answer reached the runtime after it had given up: dropped, not used.
    assert rt._channel.duplicate_replies == 1


def test_the_runtime_endpoint_refuses_web_pages_and_callers_without_the_token(ide_runtime) -> None:
    (server,) = _ide_servers(ide_runtime)
    body = {'jsonrpc': '2.0', 'id': 1, 'method': 'tools/list', 'params': {}}
    headers = {'accept': 'application/json, text/event-stream', 'content-type': 'application/json'}
    r = httpx.post(server.url, json=body, headers=headers)
    assert r.status_code == 401
    r = httpx.post(server.url, json=body, headers={**headers, 'authorization': 'Bearer ' + '0' * 64})
    assert r.status_code == 401
    r = httpx.post(server.url, json=body, headers={**headers, 'authorization': f'Bearer {server.api_key}', 'origin': 'http://evil.example'})
    assert r.status_code == 403


def test_malformed_announcements_are_left_out() -> None:
    auth = {
        'ide_tools': [
            {'name': 'ok', 'description': 'd', 'inputSchema': {'type': 'object'}},
            {'name': 'ok', 'description': 'duplicate', 'inputSchema': {'type': 'object'}},
            {'name': 5, 'inputSchema': {}},
            {'name': 'no_schema'},
            'x',
        ]
    }
    assert [t['name'] for t in announced_tools(auth)] == ['ok']
    assert announced_tools({}) == [] and announced_tools({'ide_tools': 'x'}) == []


class _RecordingHub:
    """Records what a Channel emits (the cancel rules need no socket)."""

    def __init__(self) -> None:
        self.emitted: list[tuple[str, object, str]] = []

    def emit_threadsafe(self, event: str, data: object, sid: str) -> None:
        self.emitted.append((event, data, sid))

    def unregister(self, *_a) -> None:
        pass


def test_cancel_rules_unknown_ids_and_reconnects() -> None:
    """`Channel.cancel`: nothing for an id never sent or already answered; at once to the executor
    that has the action; for an executor that is away, when that same executor registers again,
    never to a different one."""
    import asyncio

    from openhands_vscode_runtime.channel import EV_CANCEL, Channel

    hub = _RecordingHub()
    ch = Channel(hub, 'conv', 'k' * 32, {}, 15.0)
    loop = asyncio.new_event_loop()
    try:
        ch.cancel(99)  # never sent
        ch.executor_registered('sid1', {'executor_id': 'A'})
        rid, _ = ch.submit({'action': 'call_tool_mcp', 'args': {'name': 'open_diff'}})
        ch.cancel(rid)
        assert [e for e in hub.emitted if e[0] == EV_CANCEL] == [(EV_CANCEL, {'id': rid}, 'sid1')]
        ch.cancel(rid)  # already given up: once only
        assert len([e for e in hub.emitted if e[0] == EV_CANCEL]) == 1

        # Sent to A, A goes away, the runtime gives up: the cancel waits for A.
        rid2, _ = ch.submit({'action': 'call_tool_mcp', 'args': {'name': 'open_diff'}})
        ch.executor_disconnected('sid1', loop)
        ch.cancel(rid2)
        assert len([e for e in hub.emitted if e[0] == EV_CANCEL]) == 1
        assert ch.executor_registered('sid2', {'executor_id': 'A'}) == []  # not re-sent
        assert ch.take_cancels() == [rid2]
        assert ch.take_cancels() == []

        # Sent to A, A goes away, executor B registers: B never had it, no cancel for B.
        rid3, _ = ch.submit({'action': 'call_tool_mcp', 'args': {'name': 'open_diff'}})
        ch.executor_disconnected('sid2', loop)
        ch.cancel(rid3)
        ch.executor_registered('sid3', {'executor_id': 'B'})
        assert ch.take_cancels() == []
    finally:
        loop.close()
