"""OpenHands V1: openhands-tools' own terminal/file editor vs ours (the executor over the V1
protocol), measured in the same run. Run by `bench/v1.sh` (`make bench`) in the V1 venv.

* `echo hi`: median wall time of one terminal call (after a warm-up), V1's tmux backend (its
  default when tmux is installed), V1's subprocess backend, and ours (tool executor -> Socket.IO ->
  headless executor -> PTY);
* a str_replace in the middle of a 6 MB file: V1's FileEditorExecutor vs ours;
* the agent loop: the same scripted LocalConversation (scripted stand-in LLM) with V1's tools and
  with ours.
Speed targets live here, never in timed tests.
"""

from __future__ import annotations

import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault('LITELLM_LOCAL_MODEL_COST_MAP', 'True')

N = int(os.environ.get('V1_BENCH_N', '20'))


def median_ms(fn, n: int = N) -> float:
    fn()  # warm-up
    times = []
    for _ in range(n):
        t0 = time.perf_counter()
        fn()
        times.append((time.perf_counter() - t0) * 1000)
    return statistics.median(times)


def bench_echo(ws: str) -> dict[str, float]:
    from openhands.tools.terminal.definition import TerminalAction
    from openhands.tools.terminal.impl import TerminalExecutor

    from openhands_vscode_runtime.v1.connection import acquire
    from openhands_vscode_runtime.v1.tools import VsCodeTerminalExecutor

    act = TerminalAction(command='echo hi')
    out = {}
    for backend in ('tmux', 'subprocess'):
        ex = TerminalExecutor(working_dir=ws, terminal_type=backend)
        try:
            assert 'hi' in ex(act).text
            out[f'V1 {backend}'] = median_ms(lambda: ex(act))
        finally:
            ex.close()
    ours = VsCodeTerminalExecutor(acquire('bench-echo', ws))
    try:
        assert ours(act).text == 'hi'
        out['ours'] = median_ms(lambda: ours(act))
    finally:
        ours.close()  # stops the executor
    return out


def bench_str_replace(ws: str) -> dict[str, float]:
    from openhands.tools.file_editor.definition import FileEditorAction
    from openhands.tools.file_editor.impl import FileEditorExecutor

    from openhands_vscode_runtime.v1.connection import acquire
    from openhands_vscode_runtime.v1.tools import VsCodeFileEditorExecutor

    line = 'x' * 99 + '\n'
    half = line * 30_000  # 3 MB on each side of the marker
    out = {}
    for name, ex in (('V1 FileEditor', FileEditorExecutor(workspace_root=ws)),
                     ('ours', VsCodeFileEditorExecutor(acquire('bench-editor', ws)))):
        path = os.path.join(ws, f'big-{name.split()[0]}.txt')
        times = []
        for i in range(5):
            Path(path).write_text(half + 'MARKER_OLD\n' + half)
            t0 = time.perf_counter()
            obs = ex(FileEditorAction(command='str_replace', path=path, old_str='MARKER_OLD', new_str='MARKER_NEW'))
            times.append((time.perf_counter() - t0) * 1000)
            assert not obs.is_error, obs.text[:300]
        assert Path(path).read_text().count('MARKER_NEW') == 1
        out[name] = statistics.median(times)
        ex.close()
    return out


def script(ws: str) -> list[dict]:
    return [
        {'tool': 'terminal', 'args': {'command': 'echo start > log.txt', 'summary': 's'}},
        {'tool': 'file_editor', 'args': {'command': 'create', 'path': f'{ws}/app.py', 'file_text': 'print(1)\n', 'summary': 's'}},
        {'tool': 'file_editor', 'args': {'command': 'str_replace', 'path': f'{ws}/app.py', 'old_str': '1', 'new_str': '2', 'summary': 's'}},
        {'tool': 'terminal', 'args': {'command': 'python3 app.py', 'summary': 's'}},
        {'expect_in_last_observation': '2', 'tool': 'terminal', 'args': {'command': 'for i in 1 2 3; do echo $i; done', 'summary': 's'}},
        {'tool': 'file_editor', 'args': {'command': 'view', 'path': f'{ws}/app.py', 'summary': 's'}},
        {'tool': 'terminal', 'args': {'command': 'ls -la', 'summary': 's'}},
        {'tool': 'finish', 'args': {'message': 'done'}},
    ]


def agent_loop(ws: str) -> float:
    from pydantic import SecretStr

    from openhands.sdk import LLM, Agent, Conversation, Tool
    from openhands_vscode_runtime.scripted_llm import ScriptedLLM

    with ScriptedLLM(script(ws)) as llm_server:
        llm = LLM(model='openai/scripted', base_url=llm_server.base_url, api_key=SecretStr('x'),
                  usage_id='agent', num_retries=0)
        agent = Agent(llm=llm, tools=[Tool(name='terminal'), Tool(name='file_editor')])
        t0 = time.perf_counter()
        conv = Conversation(agent=agent, workspace=ws, visualizer=None)
        conv.send_message('scripted task')
        conv.run()
        elapsed = time.perf_counter() - t0
        conv.close()
        assert llm_server.mismatches == [], llm_server.mismatches
    return elapsed


def main() -> int:
    root = tempfile.mkdtemp(prefix='ohv1-bench-')
    try:
        return run_all(root)
    finally:
        shutil.rmtree(root, ignore_errors=True)


def run_all(root: str) -> int:
    from openhands.sdk.tool import register_tool
    from openhands.tools.file_editor.definition import FileEditorTool
    from openhands.tools.terminal.definition import TerminalTool

    from openhands_vscode_runtime.v1 import register

    ws = os.path.join(root, 'ws')
    os.makedirs(ws)
    print('terminal `echo hi`, median of', N, '(ms):')
    for k, v in bench_echo(ws).items():
        print(f'  {k:16s} {v:8.2f}')
    print('str_replace in a 6 MB file, median of 5 (ms):')
    for k, v in bench_str_replace(ws).items():
        print(f'  {k:16s} {v:8.2f}')
    # Agent loop: V1's own tools (default registration), then ours.
    register_tool('terminal', TerminalTool)
    register_tool('file_editor', FileEditorTool)
    ws_v1 = os.path.join(root, 'loop-v1')
    os.makedirs(ws_v1)
    v1 = agent_loop(ws_v1)
    register()
    ws_ours = os.path.join(root, 'loop-ours')
    os.makedirs(ws_ours)
    ours = agent_loop(ws_ours)
    print('agent loop, same scripted 8-step task (s):')
    print(f'  V1 tools         {v1:8.2f}  (includes starting V1\'s terminal)')
    print(f'  ours             {ours:8.2f}  (includes spawning and registering the executor)')
    return 0


if __name__ == '__main__':
    sys.exit(main())
