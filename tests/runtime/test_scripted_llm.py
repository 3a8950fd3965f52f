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
