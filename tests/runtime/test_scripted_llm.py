"""The scripted stand-in LLM reports a mismatch where a test can see it: its answer to a diverged
run is a `finish` (which alone reads like success), so the mismatch list is also served over
HTTP (`GET /v1/scripted/mismatches`, what tests/vscode/suite/lib.js `assertScriptFollowed` asks)."""

from __future__ import annotations

import json
import urllib.request

from openhands_vscode_runtime.scripted_llm import MISMATCH_PREFIX, ScriptedLLM

SCRIPT = [
    {'tool': 'execute_bash', 'args': {'command': 'false'}},
    {'tool': 'finish', 'args': {'message': 'done'}, 'expect_in_last_observation': 'exit code 0'},
]


def _post(base: str, messages: list[dict]) -> dict:
    req = urllib.request.Request(
        f'{base}/chat/completions',
        data=json.dumps({'messages': messages, 'tools': [{'type': 'function'}]}).encode(),
        headers={'Content-Type': 'application/json', 'Authorization': 'Bearer k'},
    )
    with urllib.request.urlopen(req) as r:
        return json.load(r)['choices'][0]['message']


def _mismatches(base: str) -> dict:
    with urllib.request.urlopen(f'{base}/scripted/mismatches') as r:  # no key needed
        return json.load(r)


def test_a_followed_script_reports_no_mismatch_and_a_diverged_one_does():
    with ScriptedLLM(SCRIPT, require_api_key='k') as llm:
        first = [{'role': 'user', 'content': 'go'}]
        _post(llm.base_url, first)
        assert _mismatches(llm.base_url) == {'mismatches': [], 'requests': 1}
        followed = first + [{'role': 'assistant', 'content': ''}, {'role': 'tool', 'content': 'exit code 0'}]
        assert json.loads(_post(llm.base_url, followed)['tool_calls'][0]['function']['arguments']) == {'message': 'done'}
        assert _mismatches(llm.base_url) == {'mismatches': [], 'requests': 2}
        diverged = first + [{'role': 'assistant', 'content': ''}, {'role': 'tool', 'content': 'exit code 1'}]
        call = _post(llm.base_url, diverged)['tool_calls'][0]['function']
        assert call['name'] == 'finish'  # looks like success to whoever only checks for a finish
        got = _mismatches(llm.base_url)
        assert got['requests'] == 3 and len(got['mismatches']) == 1
        assert got['mismatches'][0].startswith(f'{MISMATCH_PREFIX} at step 1:')
        assert got['mismatches'] == llm.mismatches


def test_a_title_request_gets_a_title_and_is_not_a_step():
    """OpenHands asks the conversation's LLM for a title after the first message (V0 and V1, the
    same system message). Before, it was answered with the script's first step, a tool call as text,
    which the conversation list showed as the title."""
    with ScriptedLLM(SCRIPT, require_api_key='k') as llm:
        system = {'role': 'system', 'content': 'You are a helpful assistant that generates concise, descriptive '
                                               'titles for conversations with OpenHands. Return only the title.'}
        ask = {'role': 'user', 'content': 'Generate a title (maximum 50 characters) for a conversation that starts '
                                          'with this message:\n\nRun the tests\nand fix what fails.'}
        req = urllib.request.Request(
            f'{llm.base_url}/chat/completions', data=json.dumps({'messages': [system, ask]}).encode(),
            headers={'Content-Type': 'application/json', 'Authorization': 'Bearer k'})
        with urllib.request.urlopen(req) as r:
            message = json.load(r)['choices'][0]['message']
        assert message == {'role': 'assistant', 'content': 'Run the tests'}
        assert llm.title_requests == 1 and _mismatches(llm.base_url) == {'mismatches': [], 'requests': 0}
        # The script still starts at its first step for the conversation itself.
        assert _post(llm.base_url, [{'role': 'user', 'content': 'go'}])['tool_calls'][0]['function']['name'] == 'execute_bash'
