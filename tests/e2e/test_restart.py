"""A message typed while a conversation's loop restarts after a server restart (issue 22, item 8).

The real OpenHands server is stopped and started again on the same state (`--state-dir`); the
client rejoins the conversation, as the tab's socket does, while the headless executor reconnects
on its own (the server's waiting room welcomes it when the restarted runtime opens its channel).

OpenHands 1.6.0 adds a message sent in that window to the event stream before the restarted
AgentController subscribes, so the agent never sees it (docs/reliability.md). The tab therefore
holds a typed message after every (re)join until the loop behind the join is live
(extension/src/v0/v0Backend.ts `loopLive`: `GET /api/conversations/{id}` said RUNNING before the
rejoin, or an agent state newer than the join other than loading/init/stopped arrived). This test
runs that rule against the real server: the signals it relies on are the ones the restarted server
sends (and, right after the rejoin, the server already says RUNNING although the controller may not
exist yet, which is why the status is asked before), and the message sent when the rule allows
reaches the agent exactly once. The tab's code itself is unit-tested
(extension/src/v0/v0Backend.test.ts); here the client applies the same rule.
"""

from __future__ import annotations

import shutil
import socket
import tempfile
import time
from pathlib import Path

from client import ConversationSocket, HeadlessExecutor, RestClient
from conftest import KEY, NO_CHANGE_TIMEOUT
from oh_server import OpenHandsServer, llm_settings

from openhands_vscode_runtime.scripted_llm import ScriptedLLM, message_text

NOT_LIVE = {'loading', 'init', '', 'stopped'}
SECOND = 'now a second file, after the restart'


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(('127.0.0.1', 0))
        return s.getsockname()[1]


def _agent_states(sock: ConversationSocket) -> list[tuple[int, str]]:
    return [(e['id'], e['extras']['agent_state']) for e in sock.events
            if e.get('observation') == 'agent_state_changed']


def test_a_message_typed_while_the_loop_restarts_reaches_the_agent_once(tmp_path: Path) -> None:
    ws = (tmp_path / 'ws').resolve()
    ws.mkdir()
    state = Path(tempfile.mkdtemp(prefix='oh-e2e-restart-'))
    llm = ScriptedLLM([
        {'tool': 'execute_bash', 'args': {'command': 'echo one > one.txt'}},
        {'tool': 'finish', 'args': {'message': 'first done'}},
        {'tool': 'execute_bash', 'args': {'command': 'echo two > two.txt'}},
        {'tool': 'finish', 'args': {'message': 'second done'}},
    ])
    llm.start()
    opts = dict(no_settings=True, session_api_key=KEY, connect_timeout=60, no_change_timeout=NO_CHANGE_TIMEOUT,
                extra_args=['--port', str(_free_port()), '--state-dir', str(state)])
    executor = None
    try:
        with OpenHandsServer(ws, **opts) as first:
            rest = RestClient(first.url, KEY)
            rest.store_settings(llm_settings(llm.base_url))
            cid = rest.new_conversation()
            sock = ConversationSocket(first.url, KEY, cid).connect()
            executor = HeadlessExecutor(first.url, cid, KEY, ws)
            executor.start(timeout=60)
            sock.wait_agent_state('awaiting_user_input', 60)
            sock.send_message('write one.txt')
            sock.wait_agent_state('finished', 90)
            latest = max(e['id'] for e in sock.events)
            sock.disconnect()
        asked_before = len(llm.requests)

        with OpenHandsServer(ws, **opts) as second:
            rest = RestClient(second.url, KEY)
            # The tab's rule: asked before the rejoin, the restarted server runs no loop for the
            # conversation, so a message typed after the rejoin waits for the loop's own state.
            status = rest.conversation(cid)['status']
            assert status != 'RUNNING', status
            sock = ConversationSocket(second.url, KEY, cid, latest_event_id=latest).connect()
            t0 = time.monotonic()
            live = sock.wait_for(
                lambda e: e.get('observation') == 'agent_state_changed' and e['id'] > latest
                and e['extras']['agent_state'] not in NOT_LIVE,
                90, 'an agent state of the restarted loop',
            )
            waited = time.monotonic() - t0
            # What arrived before it are the states the rule ignores.
            assert all(s in NOT_LIVE for i, s in _agent_states(sock) if i < live['id']), _agent_states(sock)
            assert executor.running(), executor.log()
            sock.send_message(SECOND)
            sock.wait_for(
                lambda e: e.get('observation') == 'agent_state_changed' and e['id'] > live['id']
                and e['extras']['agent_state'] == 'finished', 90, 'the second finish',
            )
            sock.disconnect()
            print(f'\nrestart: the message waited {waited:.1f} s for the restarted loop')
    finally:
        if executor is not None:
            executor.stop()
        llm.stop()
        shutil.rmtree(state, ignore_errors=True)
    assert llm.mismatches == []
    assert (ws / 'two.txt').read_text() == 'two\n'
    # The agent saw the message once: in every LLM request after the restart, exactly one copy.
    after = llm.requests[asked_before:]
    assert after, 'the LLM was not asked after the restart'
    for request in after:
        copies = [m for m in request['messages'] if m.get('role') == 'user' and SECOND in message_text(m)]
        assert len(copies) == 1, [message_text(m)[:80] for m in request['messages']]
