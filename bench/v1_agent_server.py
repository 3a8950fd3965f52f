"""The V1 agent loop's per-step overhead through the real agent-server: the same scripted task
with our `terminal`/`file_editor` (`--import-modules openhands_vscode_runtime.v1.register`, the
headless executor) and with V1's own (openhands-tools' default backends: tmux when installed),
in one run. Run by `bench/v1.sh` (`make bench`) in the V1 venv.

The task: STEPS terminal calls of a trivial command (`echo stepN`) interleaved with STEPS file
reads (`file_editor view` of a 20-line file), then `finish`. A step's time is the agent-server's
own record: from the `ActionEvent` (the agent decided the call) to its `ObservationEvent` (the tool
answered), both stamped by the agent-server. The first call of each tool is reported on its own
(V1 starts its terminal, ours its executor session, on first use as well as at creation).
Whole-conversation time (the POST that creates the conversation and its tools, to `finished`)
is printed too. A benchmark, not a test: it asserts only that the script was followed.
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
import time
from datetime import datetime
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / 'tests' / 'v1'))
from agent_server import agent_server, call  # noqa: E402  (tests/v1: the agent-server helper)

from openhands_vscode_runtime.scripted_llm import ScriptedLLM  # noqa: E402

STEPS = int(os.environ.get('V1_LOOP_STEPS', '20'))


def script(ws: str) -> list[dict]:
    steps: list[dict] = [{'tool': 'terminal', 'args': {
        'command': 'seq 1 20 | sed "s/^/line /" > data.txt', 'summary': 'setup'}}]
    for i in range(STEPS):
        steps.append({'tool': 'terminal', 'args': {'command': f'echo step{i}', 'summary': 'echo'}})
        steps.append({'expect_in_last_observation': f'step{i}', 'tool': 'file_editor',
                      'args': {'command': 'view', 'path': f'{ws}/data.txt', 'summary': 'read'}})
    steps.append({'expect_in_last_observation': 'line 20', 'tool': 'finish', 'args': {'message': 'done'}})
    return steps


def pct(values: list[float], p: float) -> float:
    ordered = sorted(values)
    k = (len(ordered) - 1) * p
    lo, hi = int(k), min(int(k) + 1, len(ordered) - 1)
    return ordered[lo] + (ordered[hi] - ordered[lo]) * (k - lo)


def events(base: str, key: str, cid: str) -> list[dict]:
    out: list[dict] = []
    page = None
    while True:
        url = f'{base}/api/conversations/{cid}/events/search?limit=100' + (f'&page_id={page}' if page else '')
        res = call('GET', url, key)
        out.extend(res['items'])
        page = res.get('next_page_id')
        if not page:
            return out


def stamp(event: dict) -> float:
    return datetime.fromisoformat(event['timestamp']).timestamp()


def run(tmp: Path, ours: bool) -> dict:
    ws = tmp / 'ws'
    ws.mkdir(parents=True)
    with ScriptedLLM(script(str(ws))) as llm, agent_server(tmp, import_modules=ours) as server:
        t0 = time.perf_counter()
        cid = server.start_conversation(llm, ws)
        while call('GET', f'{server.base}/api/conversations/{cid}', server.key).get('execution_status') not in (
                'finished', 'error', 'stuck'):
            time.sleep(0.05)
        wall = time.perf_counter() - t0
        assert llm.mismatches == [], llm.mismatches
        evs = events(server.base, server.key, cid)
    actions = {e['id']: e for e in evs if e.get('kind') == 'ActionEvent'}
    per_tool: dict[str, list[float]] = {'terminal': [], 'file_editor': []}
    for e in evs:
        if e.get('kind') == 'ObservationEvent' and e['action_id'] in actions and e['tool_name'] in per_tool:
            per_tool[e['tool_name']].append((stamp(e) - stamp(actions[e['action_id']])) * 1000)
    assert len(per_tool['terminal']) == STEPS + 1 and len(per_tool['file_editor']) == STEPS, \
        {k: len(v) for k, v in per_tool.items()}
    return {'wall': wall, **per_tool}


def main() -> int:
    root = Path(tempfile.mkdtemp(prefix='ohv1-loop-'))
    # Same priority for both terminals (V1 1.58 runs its bash under `nice -n 10` by default):
    # on a busy machine the niced shell alone would be starved.
    os.environ['OH_TERMINAL_PROCESS_PRIORITY'] = 'none'
    try:
        results = {'V1 own tools': run(root / 'v1', ours=False), 'ours': run(root / 'ours', ours=True)}
    finally:
        shutil.rmtree(root, ignore_errors=True)
    print(f'agent loop through the agent-server, {STEPS} x `echo` + {STEPS} x file `view` (ms, action -> observation):')
    print(f'  {"":14s} {"tool":12s} {"first":>8s} {"p50":>8s} {"p95":>8s}')
    for name, r in results.items():
        for tool in ('terminal', 'file_editor'):
            # The terminal's first call is the setup step; the editor's first is its first view.
            first, rest = r[tool][0], r[tool][1:]
            print(f'  {name:14s} {tool:12s} {first:8.1f} {pct(rest, 0.5):8.1f} {pct(rest, 0.95):8.1f}')
    for tool in ('terminal', 'file_editor'):
        v1, ours = results['V1 own tools'][tool][1:], results['ours'][tool][1:]
        print(f'  ratio {tool:12s} p50 {pct(v1, 0.5) / pct(ours, 0.5):5.1f}x  p95 {pct(v1, 0.95) / pct(ours, 0.95):5.1f}x  (V1 / ours)')
    print(f'  whole conversation (POST to finished): V1 {results["V1 own tools"]["wall"]:.2f} s, '
          f'ours {results["ours"]["wall"]:.2f} s')
    return 0


if __name__ == '__main__':
    sys.exit(main())
