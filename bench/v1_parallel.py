"""Several V1 conversations at once against one after another, through the real agent-server with
our `terminal`/`file_editor` (`--import-modules openhands_vscode_runtime.v1.register`), each
conversation with its own executor, in one run. Run by `bench/v1_parallel.sh` (`make bench`) in the
V1 venv.

Each conversation follows the same scripted loop (one scripted LLM for all: a request's step is
chosen by its own messages): a setup command, then STEPS tool calls alternating `echo stepN`
(terminal) and `view` of a 20-line file (file_editor), then `finish`. A step's time is the
agent-server's own record, `ActionEvent` to its `ObservationEvent`. First N conversations run one
after another (each alone: the baseline), then N at once (the POSTs from N threads). Printed:
wall-clock of each mode and their ratio, per-step p50/p95 of each mode and the ratio of the
parallel p50 to the lone p50, and the resident memory of the executors while N run at once.

Executors: the agent-server spawns one `openhands-vscode-executor` process per conversation
(OH_VSCODE_SPAWN_EXECUTOR's default), the headless build of the core the VS Code addon embeds; in
a VS Code window each is an addon `Executor` inside the extension host instead, so the process RSS
here bounds from above what one more executor adds there (it includes the process's own runtime).
A benchmark, not a test: it asserts only that every conversation followed the script.
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
import threading
import time
from datetime import datetime
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / 'tests' / 'v1'))
from agent_server import agent_server, call  # noqa: E402  (tests/v1: the agent-server helper)

from openhands_vscode_runtime.scripted_llm import ScriptedLLM  # noqa: E402
from v1_agent_server import pct  # noqa: E402  (this folder: the percentile the V1 benches share)

STEPS = int(os.environ.get('V1_PARALLEL_STEPS', '20'))
CONVERSATIONS = int(os.environ.get('V1_PARALLEL_CONVERSATIONS', '4'))


def script() -> list[dict]:
    # Relative paths are not accepted by the file editor: the workspace's path comes from the
    # setup command's output (each conversation has its own workspace).
    steps: list[dict] = [{'tool': 'terminal', 'args': {
        'command': 'seq 1 20 | sed "s/^/line /" > data.txt; echo "ws=$PWD"', 'summary': 'setup'}}]
    for i in range(STEPS):
        if i % 2 == 0:
            steps.append({'match_last_observation': r'ws=(\S+)|line 20', 'tool': 'terminal',
                          'args': {'command': f'echo step{i} ws=$PWD', 'summary': 'echo'}})
        else:
            steps.append({'match_last_observation': r'step\d+ ws=(\S+)', 'tool': 'file_editor',
                          'args': {'command': 'view', 'path': '{{1}}/data.txt', 'summary': 'read'}})
    steps.append({'tool': 'finish', 'args': {'message': 'done'}})
    return steps


def stamp(event: dict) -> float:
    return datetime.fromisoformat(event['timestamp']).timestamp()


def step_times(base: str, key: str, cid: str) -> tuple[list[float], list[float]]:
    """ms from each tool call to its observation (the setup step left out), and from each
    observation to the next action (the agent-server's loop and the LLM call: where the rest of a
    step goes)."""
    evs: list[dict] = []
    page = None
    while True:
        res = call('GET', f'{base}/api/conversations/{cid}/events/search?limit=100' + (f'&page_id={page}' if page else ''), key)
        evs.extend(res['items'])
        page = res.get('next_page_id')
        if not page:
            break
    evs.sort(key=stamp)
    actions = {e['id']: e for e in evs if e.get('kind') == 'ActionEvent'}
    times = [(stamp(e) - stamp(actions[e['action_id']])) * 1000 for e in evs
             if e.get('kind') == 'ObservationEvent' and e.get('action_id') in actions and e.get('tool_name') in ('terminal', 'file_editor')]
    assert len(times) == STEPS + 1, f'{cid}: {len(times)} observations, {STEPS + 1} expected'
    gaps, last = [], None
    for e in evs:
        if e.get('kind') == 'ObservationEvent':
            last = stamp(e)
        elif e.get('kind') == 'ActionEvent' and last is not None:
            gaps.append((stamp(e) - last) * 1000)
            last = None
    return times[1:], gaps


def executors() -> dict[int, tuple[int, int]]:
    """Every running openhands-vscode-executor process: pid -> (RSS, private memory) in KiB. The
    private part (Private_Clean + Private_Dirty of smaps_rollup) is what one more executor adds:
    the code pages are shared with the others."""
    out = {}
    for pid in filter(str.isdigit, os.listdir('/proc')):
        try:
            if not os.path.basename(os.readlink(f'/proc/{pid}/exe')).startswith('openhands-vscode-executor'):
                continue
            fields = {}
            for line in open(f'/proc/{pid}/smaps_rollup'):
                parts = line.split()
                if len(parts) >= 2 and parts[0].endswith(':') and parts[1].isdigit():
                    fields[parts[0][:-1]] = int(parts[1])
            out[int(pid)] = (fields.get('Rss', 0), fields.get('Private_Clean', 0) + fields.get('Private_Dirty', 0))
        except OSError:
            continue
    return out


def wait_finished(base: str, key: str, ids: list[str], sample: list[dict[int, tuple[int, int]]] | None = None) -> None:
    pending = set(ids)
    deadline = time.monotonic() + 600
    while pending:
        for cid in list(pending):
            status = call('GET', f'{base}/api/conversations/{cid}', key).get('execution_status')
            assert status not in ('error', 'stuck'), f'{cid} {status}'
            if status == 'finished':
                pending.discard(cid)
        if sample is not None:
            sample.append(executors())
        assert time.monotonic() < deadline, f'not finished: {pending}'
        time.sleep(0.05)


def main() -> int:
    root = Path(tempfile.mkdtemp(prefix='ohv1-parallel-'))
    os.environ['OH_TERMINAL_PROCESS_PRIORITY'] = 'none'
    try:
        with ScriptedLLM(script()) as llm, agent_server(root, env={'OH_VSCODE_V1_MAX_CONVERSATIONS': str(CONVERSATIONS * 2 + 1)}) as server:
            def workspace(name: str) -> Path:
                ws = root / name
                ws.mkdir()
                return ws

            # One after another: each conversation alone.
            lone: list[float] = []
            lone_gaps: list[float] = []
            t0 = time.perf_counter()
            for i in range(CONVERSATIONS):
                cid = server.start_conversation(llm, workspace(f'seq{i}'))
                wait_finished(server.base, server.key, [cid])
                steps, gaps = step_times(server.base, server.key, cid)
                lone.extend(steps)
                lone_gaps.extend(gaps)
            sequential_wall = time.perf_counter() - t0

            # All at once: the POSTs from threads (each returns once its tools exist).
            ids: list[str] = []
            lock = threading.Lock()

            def start(i: int) -> None:
                cid = server.start_conversation(llm, workspace(f'par{i}'))
                with lock:
                    ids.append(cid)

            # The executors of the conversations above stay (until their conversations are closed):
            # only the new ones count below.
            before = set(executors())
            rss: list[dict[int, tuple[int, int]]] = []
            t0 = time.perf_counter()
            threads = [threading.Thread(target=start, args=(i,)) for i in range(CONVERSATIONS)]
            for t in threads:
                t.start()
            for t in threads:
                t.join()
            wait_finished(server.base, server.key, ids, rss)
            parallel_wall = time.perf_counter() - t0
            together: list[float] = []
            together_gaps: list[float] = []
            for cid in ids:
                steps, gaps = step_times(server.base, server.key, cid)
                together.extend(steps)
                together_gaps.extend(gaps)
            assert llm.mismatches == [], llm.mismatches
    finally:
        shutil.rmtree(root, ignore_errors=True)
    n = CONVERSATIONS
    new = [{pid: m for pid, m in sample.items() if pid not in before} for sample in rss]
    busiest = max(new, key=lambda x: sum(r for r, _ in x.values()), default={})
    print(f'{n} conversations x {STEPS} steps (echo / file view), through the agent-server, ours, each its own executor:')
    print(f'  one after another: {sequential_wall:6.2f} s   at once: {parallel_wall:6.2f} s   ratio {sequential_wall / parallel_wall:4.2f}x (sequential / parallel)')
    print('  per step (ms, action -> observation)   p50     p95')
    print(f'    alone (one after another)         {pct(lone, 0.5):7.1f} {pct(lone, 0.95):7.1f}')
    print(f'    {n} at once                         {pct(together, 0.5):7.1f} {pct(together, 0.95):7.1f}')
    print(f'    at once / alone                   {pct(together, 0.5) / pct(lone, 0.5):6.2f}x {pct(together, 0.95) / pct(lone, 0.95):6.2f}x')
    print('  between steps (ms, observation -> next action: the agent-server and the LLM call)')
    print(f'    alone                             {pct(lone_gaps, 0.5):7.1f} {pct(lone_gaps, 0.95):7.1f}')
    print(f'    {n} at once                         {pct(together_gaps, 0.5):7.1f} {pct(together_gaps, 0.95):7.1f}')
    if busiest:
        rs = sorted(r / 1024 for r, _ in busiest.values())
        ps = sorted(p / 1024 for _, p in busiest.values())
        print(f'  the {len(busiest)} executors of the parallel run at their busiest sample (MiB): RSS {", ".join(f"{x:.1f}" for x in rs)}; '
              f'private {", ".join(f"{x:.1f}" for x in ps)} (mean {sum(ps) / len(ps):.1f})')
    return 0


if __name__ == '__main__':
    sys.exit(main())
