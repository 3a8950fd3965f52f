"""The whole product with the real parts: the OpenHands server app, the agent controller and
CodeActAgent, VsCodeRuntime in server mode, the headless executor, and a client doing what the tab
does. Only the LLM is a stand-in (scripted_llm)."""

from __future__ import annotations

import time
from pathlib import Path

from client import ConversationSocket, HeadlessExecutor, RestClient, summary
from conftest import CONNECT_TIMEOUT, NO_CHANGE_TIMEOUT

TASK = 'Create proj/greet.py that greets the name in name.txt, make it run, and tidy it up.'


def greeting_script(ws: Path) -> list[dict]:
    proj = ws / 'proj'
    return [
        {'tool': 'think', 'args': {'thought': 'Plan: create the module, run it, fix what fails.'}},
        {
            'tool': 'execute_bash',
            'args': {'command': 'mkdir -p proj && cd proj && echo run >> ../runs.log && pwd'},
        },
        {
            'tool': 'str_replace_editor',
            'args': {
                'command': 'create',
                'path': str(proj / 'greet.py'),
                'file_text': (
                    'from pathlib import Path\n\n'
                    'name = Path("name.txt").read_text().strip()\n'
                    'print(f"hello {name}")\n'
                ),
            },
        },
        {'tool': 'execute_bash', 'args': {'command': 'python3 greet.py'}},
        # The agent reacts to the failure: the missing file's name comes from the traceback.
        {
            'match_last_observation': r"No such file or directory: '(\w+\.txt)'",
            'expect_in_last_observation': 'exit code 1',
            'tool': 'str_replace_editor',
            'args': {'command': 'create', 'path': f'{proj}/{{{{1}}}}', 'file_text': 'VS Code\n'},
        },
        {'tool': 'execute_bash', 'args': {'command': 'python3 greet.py'}},
        {
            'expect_in_last_observation': 'hello VS Code',
            'tool': 'str_replace_editor',
            'args': {
                'command': 'str_replace',
                'path': str(proj / 'greet.py'),
                'old_str': 'print(f"hello {name}")',
                'new_str': 'print(f"Hello, {name}!")',
            },
        },
        # A command that goes quiet for longer than the soft timeout: it waits for a file.
        {
            'tool': 'execute_bash',
            'args': {
                'command': 'echo waiting; while [ ! -f go ]; do sleep 0.1; done; python3 greet.py'
            },
        },
        {
            'expect_in_last_observation': f'no new output after {NO_CHANGE_TIMEOUT} seconds',
            'tool': 'str_replace_editor',
            'args': {'command': 'create', 'path': str(proj / 'go'), 'file_text': ''},
        },
        {'tool': 'execute_bash', 'args': {'command': '', 'is_input': 'false'}},
        {
            'expect_in_last_observation': 'Hello, VS Code!',
            'tool': 'finish',
            'args': {'message': 'proj/greet.py greets the name in proj/name.txt.'},
        },
    ]


def start_conversation(server, rest: RestClient, workspace: Path):
    """What the tab does: create the conversation, open its socket, attach the executor."""
    cid = rest.new_conversation()
    sock = ConversationSocket(server.url, server.session_api_key, cid).connect()
    executor = HeadlessExecutor(server.url, cid, server.session_api_key, workspace)
    attach_seconds = executor.start(timeout=CONNECT_TIMEOUT)
    sock.wait_agent_state('awaiting_user_input', 60)
    return cid, sock, executor, attach_seconds


def by_cause(events: list[dict], action: dict) -> dict:
    found = [e for e in events if e.get('cause') == action['id']]
    assert len(found) == 1, (summary(action), [summary(e) for e in found])
    return found[0]


def test_first_use_without_settings_is_refused_then_settings_are_stored(server, rest):
    settings_file = Path(server.info['state_dir']) / 'file_store' / 'settings.json'
    settings_file.unlink(missing_ok=True)  # a fresh install: no LLM settings yet
    status, body = rest.settings()
    assert (status, body) == (404, {'error': 'Settings not found'})
    status, body = rest.call('POST', '/api/conversations', {})
    assert status == 400
    assert body['msg_id'] == 'CONFIGURATION$SETTINGS_NOT_FOUND'
    assert body['message'] == 'Settings not found'

    # the first-use form: model, base URL and key through the settings API
    rest.store_settings(
        {'llm_model': 'openai/my-model', 'llm_base_url': 'http://127.0.0.1:9/v1',
         'llm_api_key': 'sk-first-use'}
    )
    status, body = rest.settings()
    assert status == 200
    assert body['llm_model'] == 'openai/my-model'
    assert body['llm_base_url'] == 'http://127.0.0.1:9/v1'
    assert body['llm_api_key_set'] is True
    assert body['llm_api_key'] is None  # never sent back


def test_rest_requires_the_session_api_key(server):
    assert RestClient(server.url, None).settings()[0] == 401
    assert RestClient(server.url, 'wrong').call('GET', '/api/conversations')[0] == 401


def test_agent_does_the_task_in_the_workspace(server, rest, scripted, workspace):
    llm = scripted(greeting_script(workspace))
    started = time.monotonic()
    cid, sock, executor, attach_seconds = start_conversation(server, rest, workspace)
    try:
        assert attach_seconds < CONNECT_TIMEOUT
        assert any(c['conversation_id'] == cid for c in rest.conversations())
        sock.send_message(TASK)
        sock.wait_agent_state('finished', 120)
    finally:
        sock.disconnect()
        executor.stop()
    assert llm.mismatches == [], [(summary(e), e.get('content', '')[:300]) for e in sock.events]
    assert time.monotonic() - started < 120

    # files on disk
    proj = workspace / 'proj'
    assert (proj / 'greet.py').read_text() == (
        'from pathlib import Path\n\nname = Path("name.txt").read_text().strip()\n'
        'print(f"Hello, {name}!")\n'
    )
    assert (proj / 'name.txt').read_text() == 'VS Code\n'
    assert (workspace / 'runs.log').read_text() == 'run\n'

    events = sock.events
    user = [e for e in events if e.get('action') == 'message' and e['source'] == 'user']
    assert [e['args']['content'] for e in user] == [TASK]
    runs = [e for e in events if e.get('action') == 'run']
    assert [r['args']['command'] for r in runs] == [
        'mkdir -p proj && cd proj && echo run >> ../runs.log && pwd',
        'python3 greet.py',
        'python3 greet.py',
        'echo waiting; while [ ! -f go ]; do sleep 0.1; done; python3 greet.py',
        '',
    ]
    mkdir, fail, ok, quiet, cont = (by_cause(events, r) for r in runs)
    assert mkdir['observation'] == 'run'
    assert mkdir['content'] == str(proj)
    assert mkdir['extras']['metadata']['exit_code'] == 0
    assert mkdir['extras']['metadata']['working_dir'] == str(proj)
    # the failing command, and the agent's reaction to it (the file named in the traceback)
    assert fail['extras']['metadata']['exit_code'] == 1
    assert "FileNotFoundError: [Errno 2] No such file or directory: 'name.txt'" in fail['content']
    assert ok['extras']['metadata']['exit_code'] == 0 and ok['content'] == 'hello VS Code'
    # the soft timeout, continued with an empty command
    assert quiet['extras']['metadata']['exit_code'] == -1
    assert quiet['content'].startswith('waiting')
    assert f'no new output after {NO_CHANGE_TIMEOUT} seconds' in quiet['extras']['metadata']['suffix']
    assert cont['extras']['metadata']['exit_code'] == 0
    assert 'Hello, VS Code!' in cont['content']

    edits = [e for e in events if e.get('action') == 'edit']
    assert [(e['args']['command'], Path(e['args']['path']).name) for e in edits] == [
        ('create', 'greet.py'), ('create', 'name.txt'), ('str_replace', 'greet.py'), ('create', 'go'),
    ]
    replace = by_cause(events, edits[2])
    assert replace['observation'] == 'edit'
    diff = replace['extras']['diff']
    assert '-print(f"hello {name}")' in diff and '+print(f"Hello, {name}!")' in diff
    assert 'has been edited' in replace['content']

    think = [e for e in events if e.get('action') == 'think']
    assert [t['args']['thought'] for t in think] == ['Plan: create the module, run it, fix what fails.']
    finish = [e for e in events if e.get('action') == 'finish']
    assert [f['args']['final_thought'] for f in finish] == [
        'proj/greet.py greets the name in proj/name.txt.'
    ]
    # the LLM saw the same observations (each step's request carried the previous result)
    assert [r['step'] for r in llm.requests if r['step'] >= 1][:3] == [1, 2, 3]


def test_reconnect_replays_without_running_anything_again(server, rest, scripted, workspace):
    script = [
        {'tool': 'execute_bash', 'args': {'command': 'echo ran >> runs.log; wc -l < runs.log'}},
        {'tool': 'finish', 'args': {'message': 'appended one line'}},
    ]
    llm = scripted(script)
    cid, sock, executor, _ = start_conversation(server, rest, workspace)
    try:
        sock.send_message('append a line to runs.log')
        sock.wait_agent_state('finished', 60)
        sock.disconnect()
        first = list(sock.events)
        assert (workspace / 'runs.log').read_text() == 'ran\n'

        # reopen from the start: the same events, agent state last
        with ConversationSocket(server.url, server.session_api_key, cid, -1) as again:
            again.wait_agent_state('finished', 30)
            time.sleep(1)
            replay = list(again.events)
        ids = [e['id'] for e in replay]
        assert ids == sorted(set(ids)), ids
        assert replay[-1]['observation'] == 'agent_state_changed'
        assert replay[-1]['extras']['agent_state'] == 'finished'
        run_ids = {e['id'] for e in first if e.get('action') == 'run'}
        assert run_ids and run_ids <= set(ids)

        # resume after a given event: only the later ones come back
        middle = sorted(run_ids)[0]
        with ConversationSocket(server.url, server.session_api_key, cid, middle) as later:
            later.wait_agent_state('finished', 30)
            time.sleep(1)
            tail = list(later.events)
        assert tail and all(e['id'] > middle for e in tail)
        assert [e for e in tail if e.get('cause') == middle]  # the command's observation
        assert not [e for e in tail if e.get('action') == 'run']

        assert (workspace / 'runs.log').read_text() == 'ran\n'  # nothing ran twice
        assert executor.running()
    finally:
        sock.disconnect()
        executor.stop()
    assert llm.mismatches == []
    assert max(r['step'] for r in llm.requests) == 1  # no LLM call after the finish


def test_continue_a_finished_conversation(server, rest, scripted, workspace):
    llm = scripted([
        {'tool': 'execute_bash', 'args': {'command': 'echo one > one.txt'}},
        {'tool': 'finish', 'args': {'message': 'first done'}},
        {'expect_in_last_observation': 'now a second file', 'tool': 'execute_bash',
         'args': {'command': 'echo two > two.txt'}},
        {'tool': 'finish', 'args': {'message': 'second done'}},
    ])
    cid, sock, executor, _ = start_conversation(server, rest, workspace)
    try:
        sock.send_message('write one.txt')
        first_finish = sock.wait_agent_state('finished', 60)
        sock.send_message('now a second file')
        sock.wait_for(
            lambda e: e.get('observation') == 'agent_state_changed'
            and e['extras']['agent_state'] == 'finished' and e['id'] > first_finish['id'],
            60, 'the second finish',
        )
    finally:
        sock.disconnect()
        executor.stop()
    assert llm.mismatches == []
    assert (workspace / 'one.txt').read_text() == 'one\n'
    assert (workspace / 'two.txt').read_text() == 'two\n'


def test_runtime_without_executor_reports_the_error(server, rest, scripted, workspace):
    scripted([{'tool': 'finish', 'args': {'message': 'never reached'}}])
    cid = rest.new_conversation()
    with ConversationSocket(server.url, server.session_api_key, cid) as sock:
        update = sock.wait_other(
            lambda o: o.get('status_update') and o.get('type') == 'error',
            CONNECT_TIMEOUT + 30,
            'an error status update',
        )
    assert update['id'] == 'STATUS$ERROR_RUNTIME_DISCONNECTED'
    assert f'no executor registered within {CONNECT_TIMEOUT:g} s' in update['message']
    assert f'conversation {cid}' in update['message']
    assert 'namespace /oh-executor' in update['message']


def test_socket_refuses_a_wrong_session_api_key(server, rest, scripted, workspace):
    import pytest
    import socketio

    scripted([{'tool': 'finish', 'args': {'message': 'x'}}])
    cid = rest.new_conversation()
    sock = ConversationSocket(server.url, 'wrong-key', cid)
    try:
        with pytest.raises(socketio.exceptions.ConnectionError):
            sock.connect(timeout=10)
        assert sock.connect_errors == [{'message': 'invalid_session_api_key'}]
    finally:
        sock.disconnect()
        # the conversation's runtime still waits for its executor; stop it
        rest.call('POST', f'/api/conversations/{cid}/stop')
