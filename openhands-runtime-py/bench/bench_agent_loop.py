"""Per-step runtime overhead in OpenHands' real agent loop: VsCodeRuntime against LocalRuntime (the
action execution server) and CLIRuntime, measured in the same run.

    python openhands-runtime-py/bench/bench_agent_loop.py [--runtimes vscode,local,cli]

Each runtime runs the same 30-step task in `openhands.core.main.run_controller` with CodeActAgent;
the LLM is the scripted stand-in (`openhands_vscode_runtime.scripted_llm`). A step's overhead is the
time from the action event entering the event stream to its observation event (both stamped by
`EventStream.add_event`). Each runtime runs in a child process of its own (LocalRuntime leaves
processes behind and the runtimes read their settings from the environment). This is a benchmark,
not a test: it prints figures, it asserts only that every step got its observation.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import datetime

STEPS = 30
RUNTIMES = {
    'vscode': 'openhands_vscode_runtime.VsCodeRuntime',
    'local': 'local',
    'cli': 'cli',
}


def script(ws: str) -> list[dict]:
    """30 runtime steps (15 bash, 15 editor), then finish."""
    steps: list[dict] = []
    for i in range(STEPS):
        kind = i % 3
        if kind == 0:
            steps.append({'tool': 'str_replace_editor', 'args': {
                'command': 'create', 'path': f'{ws}/f{i}.txt', 'file_text': f'line {i}\nvalue=a\n'}})
        elif kind == 1:
            steps.append({'tool': 'execute_bash', 'args': {
                'command': f'cat f{i - 1}.txt && echo step{i}'}})
        elif (i // 3) % 2 == 0:
            steps.append({'tool': 'str_replace_editor', 'args': {
                'command': 'str_replace', 'path': f'{ws}/f{i - 2}.txt',
                'old_str': 'value=a', 'new_str': f'value={i}'}})
        else:
            steps.append({'tool': 'execute_bash', 'args': {
                'command': f'grep -c value f{i - 2}.txt; ls | wc -l'}})
    steps.append({'tool': 'finish', 'args': {'message': 'done'}})
    return steps


def pct(values: list[float], p: float) -> float:
    ordered = sorted(values)
    k = (len(ordered) - 1) * p
    lo, hi = int(k), min(int(k) + 1, len(ordered) - 1)
    return ordered[lo] + (ordered[hi] - ordered[lo]) * (k - lo)


def child(runtime_name: str) -> dict:
    os.environ.setdefault('LITELLM_LOCAL_MODEL_COST_MAP', 'True')
    os.environ.setdefault('LOG_LEVEL', 'ERROR')
    os.environ['OH_VSCODE_MODE'] = 'embedded'
    import asyncio
    import logging

    from pydantic import SecretStr

    from openhands.core.config import LLMConfig, OpenHandsConfig
    from openhands.core.logger import openhands_logger
    from openhands.core.main import run_controller
    from openhands.core.schema import AgentState
    from openhands.core.setup import create_agent, create_runtime
    from openhands.events.action import Action, MessageAction
    from openhands.events.observation import Observation
    from openhands.utils.async_utils import call_async_from_sync
    from openhands.utils.utils import create_registry_and_conversation_stats

    from openhands_vscode_runtime.scripted_llm import ScriptedLLM

    openhands_logger.setLevel(logging.ERROR)
    ws = os.path.realpath(tempfile.mkdtemp(prefix=f'oh-bench-loop-{runtime_name}-'))
    llm = ScriptedLLM(script(ws))
    config = OpenHandsConfig()
    config.runtime = RUNTIMES[runtime_name]
    config.workspace_base = ws
    config.enable_browser = False
    config.run_as_openhands = False
    config.max_iterations = STEPS + 5
    config.file_store = 'local'
    config.file_store_path = tempfile.mkdtemp(prefix='oh-bench-loop-store-')
    config.set_llm_config(LLMConfig(model='openai/scripted', base_url=llm.start(),
                                    api_key=SecretStr('scripted'), native_tool_calling=True,
                                    num_retries=0))
    agent_config = config.get_agent_config(config.default_agent)
    agent_config.enable_browsing = False
    agent_config.enable_jupyter = False
    sid = f'bench-{runtime_name}-{os.getpid()}'
    registry, _stats, config = create_registry_and_conversation_stats(config, sid, None)
    agent = create_agent(config, registry)
    runtime = create_runtime(config, registry, sid=sid, headless_mode=True, agent=agent)
    t0 = time.perf_counter()
    call_async_from_sync(runtime.connect)
    connect_s = time.perf_counter() - t0
    t1 = time.perf_counter()
    try:
        state = asyncio.run(run_controller(config=config, initial_user_action=MessageAction(
            content='Do the 30 scripted steps.'), sid=sid, runtime=runtime, headless_mode=True))
    finally:
        wall = time.perf_counter() - t1
        runtime.close()
        llm.stop()
    history = state.history if state else []
    actions = {e.id: e for e in history if isinstance(e, Action) and e.runnable}
    overheads: list[float] = []
    kinds: list[str] = []
    for obs in history:
        if isinstance(obs, Observation) and obs.cause in actions:
            a = datetime.fromisoformat(actions[obs.cause].timestamp)
            o = datetime.fromisoformat(obs.timestamp)
            overheads.append((o - a).total_seconds())
            kinds.append(actions[obs.cause].action)
    llm_s = sum(r['answered'] - r['received'] for r in llm.requests)
    return {
        'runtime': runtime_name,
        'finished': bool(state and state.agent_state == AgentState.FINISHED),
        'mismatches': llm.mismatches,
        'steps': len(overheads),
        'connect_s': connect_s,
        'wall_s': wall,
        'llm_server_s': llm_s,
        'overheads_s': overheads,
        'kinds': kinds,
    }


def run_child(name: str, base: str) -> dict:
    home = tempfile.mkdtemp(prefix=f'oh-bench-home-{name}-', dir=base)
    env = {
        **os.environ,
        'HOME': home,
        'USER': os.environ.get('USER') or 'bench',
        'TMUX_TMPDIR': tempfile.mkdtemp(prefix='tmux-', dir=base),
        'GIT_CONFIG_GLOBAL': os.path.join(home, '.gitconfig'),
        'LITELLM_LOCAL_MODEL_COST_MAP': 'True',
    }
    proc = subprocess.run(
        [sys.executable, __file__, '--child', name], env=env, capture_output=True, text=True,
        timeout=900, start_new_session=True,
    )
    lines = [ln for ln in proc.stdout.splitlines() if ln.startswith('{')]
    if proc.returncode != 0 or not lines:
        return {'runtime': name, 'error': (proc.stderr or proc.stdout)[-2000:]}
    return json.loads(lines[-1])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--runtimes', default='vscode,local,cli')
    parser.add_argument('--child')
    parser.add_argument('--json', help='write the raw results here')
    args = parser.parse_args()
    if args.child:
        print(json.dumps(child(args.child)), flush=True)
        return 0
    base = tempfile.mkdtemp(prefix='oh-bench-loop-')
    results = {}
    for name in args.runtimes.split(','):
        print(f'agent loop, {STEPS} steps, runtime {name} ...', file=sys.stderr, flush=True)
        results[name] = run_child(name, base)
    if args.json:
        with open(args.json, 'w') as f:
            json.dump(results, f, indent=1)
    print(f'\nPer-step runtime overhead in the real agent loop (CodeActAgent, scripted LLM), '
          f'{STEPS} steps, action event -> observation event:\n')
    print('| runtime | steps | p50 ms | p90 ms | mean ms | sum of steps s | wall s (excl. LLM) '
          '| connect s | p50 vs VsCode |')
    print('|---|---|---|---|---|---|---|---|---|')
    base_p50 = None
    ok = True
    for name, r in results.items():
        if 'error' in r:
            print(f'| {name} | error: {r["error"].splitlines()[-1] if r["error"] else "?"} |')
            ok = False
            continue
        ov = [x * 1000 for x in r['overheads_s']]
        p50, p90 = statistics.median(ov), pct(ov, 0.9)
        if base_p50 is None and name == 'vscode':
            base_p50 = p50
        ratio = f'{p50 / base_p50:.1f}x' if base_p50 else '-'
        print(f'| {name} | {r["steps"]} | {p50:.1f} | {p90:.1f} | {statistics.mean(ov):.1f} | '
              f'{sum(r["overheads_s"]):.2f} | {r["wall_s"] - r["llm_server_s"]:.2f} | '
              f'{r["connect_s"]:.2f} | {ratio} |')
        if not r['finished'] or r['mismatches'] or r['steps'] != STEPS:
            ok = False
            print(f'  ! {name}: finished={r["finished"]} steps={r["steps"]} {r["mismatches"]}')
    print('\nBy action type (p50 / p90 ms):\n')
    print('| runtime | run (execute_bash) | edit (str_replace_editor) | run p50 vs VsCode |')
    print('|---|---|---|---|')
    base_run = None
    for name, r in results.items():
        if 'error' in r:
            continue
        cells = []
        for kind in ('run', 'edit'):
            xs = [x * 1000 for x, k in zip(r['overheads_s'], r['kinds']) if k == kind]
            cells.append(f'{statistics.median(xs):.1f} / {pct(xs, 0.9):.1f} (n={len(xs)})' if xs else '-')
        runs = [x for x, k in zip(r['overheads_s'], r['kinds']) if k == 'run']
        run_p50 = statistics.median(runs) if runs else None
        if name == 'vscode':
            base_run = run_p50
        ratio = f'{run_p50 / base_run:.1f}x' if base_run and run_p50 else '-'
        print(f'| {name} | {cells[0]} | {cells[1]} | {ratio} |')
    print('\nwall s (excl. LLM): run_controller wall time minus the time the scripted LLM server '
          'spent answering; connect s is outside it.')
    return 0 if ok else 1


if __name__ == '__main__':
    sys.exit(main())
