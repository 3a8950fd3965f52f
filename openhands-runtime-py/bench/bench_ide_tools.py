"""IDE tool call latency through the OpenHands runtime path, beside a plain `read` in the same run.

    python openhands-runtime-py/bench/bench_ide_tools.py [--n 200] [--tool where_am_i --args '{}']
    python openhands-runtime-py/bench/bench_ide_tools.py --wait-executor --workspace DIR \
        --tool hover --args '{"path": "src/main.ts", "line": 3, "column": 7}' --out bench.json

The path measured: `VsCodeRuntime.call_tool_mcp(MCPAction)` (what OpenHands calls for the agent's
MCP tool calls) -> the executor channel (Socket.IO, embedded mode) -> the executor (Rust) -> the
host's `onIdeTool` hook -> back as an MCPObservation. Anchor in the same run: `run_action` of a
tiny FileReadAction over the same channel and executor.

Hosts:
  * default: `tests/runtime/ide_host_executor.js`, a STAND-IN for VS Code around the real executor
    addon whose tool answers at once: the runtime path's own cost (what `make bench` runs);
  * `--wait-executor`: no executor is spawned; the script prints one JSON line
    `{"url", "conversation_id", "session_api_key", "workspace"}` and waits for one to register
    (the real VS Code extension in attach mode: tests/vscode/run.sh with OH_IDE_BENCH set), then
    measures that host's tool (e.g. `hover`, answered by TypeScript's language server).
Figures are printed (and written to `--out`); nothing is asserted.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import tempfile
import threading
import time
from pathlib import Path

# Sets the embedded mode and quiet logging before OpenHands is imported; shares the runtime set-up.
from bench_runtime import build, pct  # noqa: E402 - the script's own folder is on sys.path

REPO = Path(__file__).resolve().parents[2]
STANDIN_HOST = REPO / 'tests' / 'runtime' / 'ide_host_executor.js'


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument('--n', type=int, default=200)
    ap.add_argument('--warmup', type=int, default=20)
    ap.add_argument('--tool', default='where_am_i')
    ap.add_argument('--args', default='{"line": 3}')
    ap.add_argument('--read', help='the file the read anchor reads (default: a tiny file)')
    ap.add_argument('--workspace')
    ap.add_argument('--wait-executor', action='store_true')
    ap.add_argument('--connect-timeout', type=float, default=180)
    ap.add_argument('--out')
    ap.add_argument('--edits', type=int, default=0,
                    help='also time N `run` (echo) and N small str_replace edits of --edit-open (a file the '
                         'host has open in an editor) and of --edit-closed (one it has not), interleaved')
    ap.add_argument('--edit-open', help='a small file the host has open, unmodified, in an editor')
    ap.add_argument('--edit-closed', help='a small file no editor has open')
    ap.add_argument('--read-closed', help="with --edits: also time N file-editor views (OH_ACI: stat + read) of this file, "
                    "one no editor has open, and of --read")
    ap.add_argument('--gap-ms', type=float, default=0,
                    help='with --edits: a pause before each timed operation, untimed: the agent\'s turn (its LLM call) '
                         'that separates two actions in a real conversation; 0 (default) times them back to back')
    ap.add_argument('--js-fs', action='store_true',
                    help='stand-in host: file actions through JS callbacks over node fs (the fsBridge without VS Code)')
    args = ap.parse_args()

    from openhands.events.action import CmdRunAction, FileEditAction, FileReadAction
    from openhands.events.event import FileEditSource
    from openhands.events.observation import CmdOutputObservation, FileEditObservation
    from openhands.events.action.mcp import MCPAction
    from openhands.events.observation import FileReadObservation
    from openhands.events.observation.mcp import MCPObservation
    from openhands.utils.async_utils import call_async_from_sync

    ws = args.workspace or tempfile.mkdtemp(prefix='oh-bench-ws-')
    read_path = args.read or os.path.join(ws, 'tiny.txt')
    if not args.read:
        Path(read_path).write_text('tiny\n')
    if args.wait_executor:
        os.environ['OH_VSCODE_SPAWN_EXECUTOR'] = '0'
        os.environ['OH_VSCODE_CONNECT_TIMEOUT'] = f'{args.connect_timeout:g}'
    else:
        os.environ['OH_VSCODE_EXECUTOR'] = str(STANDIN_HOST)
        if args.js_fs:
            os.environ['OH_STANDIN_JS_FS'] = '1'
    sid = f'ide-bench-{os.getpid()}'
    from openhands_vscode_runtime import VsCodeRuntime

    rt = build(VsCodeRuntime, sid, ws)
    failed: list[BaseException] = []

    def connect() -> None:
        try:
            call_async_from_sync(rt.connect, args.connect_timeout + 30)
        except BaseException as e:  # reported below
            failed.append(e)

    t = threading.Thread(target=connect, daemon=True)
    t.start()
    if args.wait_executor:
        while rt.server_url is None and t.is_alive():
            time.sleep(0.05)
        print(json.dumps({'url': rt.server_url, 'conversation_id': sid, 'session_api_key': rt.session_api_key, 'workspace': ws}), flush=True)
    t.join()
    if failed:
        print(f'bench_ide_tools: connect failed: {failed[0]}', file=sys.stderr)
        return 1
    tool_args = json.loads(args.args)
    try:
        names = [x['name'] for x in rt.ide_tools]
        if args.tool not in names:
            print(f'bench_ide_tools: the executor offers no tool {args.tool!r} (it offers {names})', file=sys.stderr)
            return 1

        # As Runtime._handle_action runs them, in one event loop: an MCPAction awaits
        # call_tool_mcp, any other action runs run_action in a worker thread.
        async def tool_call() -> float:
            action = MCPAction(name=args.tool, arguments=tool_args)
            action.set_hard_timeout(60)
            t0 = time.perf_counter()
            obs = await rt.call_tool_mcp(action)
            ms = (time.perf_counter() - t0) * 1000
            if not isinstance(obs, MCPObservation) or json.loads(obs.content).get('isError'):
                raise RuntimeError(f'{args.tool} failed: {obs.content[:300]}')
            return ms

        async def read() -> float:
            t0 = time.perf_counter()
            obs = await asyncio.to_thread(rt.run_action, FileReadAction(path=read_path))
            ms = (time.perf_counter() - t0) * 1000
            if not isinstance(obs, FileReadObservation):
                raise RuntimeError(f'read failed: {obs.content[:300]}')
            return ms

        async def measure() -> tuple[list[float], list[float]]:
            for _ in range(args.warmup):
                await tool_call()
                await read()
            tool_ms: list[float] = []
            read_ms: list[float] = []
            for _ in range(args.n):  # interleaved: both see the same machine load
                tool_ms.append(await tool_call())
                read_ms.append(await read())
            return tool_ms, read_ms

        tool_ms, read_ms = asyncio.run(measure())

        def timed(action, kind) -> float:
            if args.gap_ms:
                time.sleep(args.gap_ms / 1000)
            t0 = time.perf_counter()
            obs = rt.run_action(action)
            ms = (time.perf_counter() - t0) * 1000
            if not isinstance(obs, kind):
                raise RuntimeError(f'{type(action).__name__} failed: {obs.content[:300]}')
            return ms

        def edit(path: str, i: int) -> FileEditAction:
            # Toggles one word of a two-line file: every edit changes the file.
            old, new = ('alpha', 'beta') if i % 2 == 0 else ('beta', 'alpha')
            return FileEditAction(path=path, command='str_replace', old_str=old, new_str=new, impl_source=FileEditSource.OH_ACI)

        ops: dict[str, list[float]] = {'run': [], 'edit_open': [], 'edit_closed': [], 'view_read': [], 'view_closed': []}
        for path in (args.edit_open, args.edit_closed):
            if args.edits and path and not Path(path).exists():  # the host may have it open already
                Path(path).write_text('alpha\nsecond line\n')
        for i in range(args.edits):  # interleaved, as above
            ops['run'].append(timed(CmdRunAction(command='echo hi'), CmdOutputObservation))
            if args.edit_open:
                ops['edit_open'].append(timed(edit(args.edit_open, i), FileEditObservation))
            if args.edit_closed:
                ops['edit_closed'].append(timed(edit(args.edit_closed, i), FileEditObservation))
            if args.read_closed:  # what the agent's file editor does: stat, then read
                ops['view_read'].append(timed(FileReadAction(path=read_path, impl_source=FileEditSource.OH_ACI), FileReadObservation))
                ops['view_closed'].append(timed(FileReadAction(path=args.read_closed, impl_source=FileEditSource.OH_ACI), FileReadObservation))
    finally:
        rt.close()
    host = 'the connected executor' if args.wait_executor else 'stand-in host (tests/runtime/ide_host_executor.js)'
    r = {
        'path': 'VsCodeRuntime.call_tool_mcp -> executor channel -> executor -> host',
        'host': host,
        'tool': args.tool,
        'n': args.n,
        'gap_ms': args.gap_ms,
        'tool_p50_ms': pct(tool_ms, 50),
        'tool_p90_ms': pct(tool_ms, 90),
        'read_p50_ms': pct(read_ms, 50),
        'read_p90_ms': pct(read_ms, 90),
    }
    r['tool_over_read_p50'] = r['tool_p50_ms'] / r['read_p50_ms']
    for name, values in ops.items():
        if values:
            r[f'{name}_n'] = len(values)
            r[f'{name}_p50_ms'] = pct(values, 50)
            r[f'{name}_p90_ms'] = pct(values, 90)
    print(
        f"IDE tool {args.tool} through VsCodeRuntime ({host}), n={args.n}: "
        f"p50 {r['tool_p50_ms']:.2f} ms  p90 {r['tool_p90_ms']:.2f} ms; "
        f"read p50 {r['read_p50_ms']:.2f} ms  p90 {r['read_p90_ms']:.2f} ms; "
        f"ratio p50 {r['tool_over_read_p50']:.2f}x",
        flush=True,
    )
    for name, values in ops.items():
        if values:
            print(f"{name} n={len(values)}: p50 {pct(values, 50):.2f} ms  p90 {pct(values, 90):.2f} ms", flush=True)
    if args.out:
        Path(args.out).write_text(json.dumps(r, indent=2))
    return 0


if __name__ == '__main__':
    sys.exit(main())
