"""`oh-executor replay` through the shipped Python side: a real `VsCodeRuntime` (embedded mode:
the real `hub.py` on the runtime's own Socket.IO server) that spawns the headless executor CLI
(npm/executor/bin/openhands-vscode-executor.js: the napi addon with its JS filesystem callbacks),
which registers over Socket.IO like VS Code does. Each action goes through what the agent loop
calls, `VsCodeRuntime.run/read/write/edit` (the reference side calls the same methods of
`ActionExecutor`), and the observation comes back as `event_to_dict`, the delegated id as its
cause. Same interface as `oh-executor replay`: action JSON lines on stdin, one observation line
on stdout each. Selected by `tests/conformance/run.sh --driver hub` (CONFORMANCE_DRIVER=hub).

    python tests/conformance/hub_replay.py --workspace WS --no-change-timeout N

`--serve` keeps one process (one import of OpenHands, one embedded Socket.IO server) for many
cases, which is what lets the whole case set go through the hub (`HubSide` in harness_sides.py,
one such process per harness worker). Each case gets a runtime of its own, on its own workspace,
with its own executor, exactly as in the one-case form:

    {"__case__": {"workspace": WS, "no_change_timeout": N}}   a new VsCodeRuntime, connected
    action lines                                              one observation line each
    {"__end__": true}                                         the runtime closed; answers {"__closed__": true}
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
CLI = REPO / 'npm/executor/bin/openhands-vscode-executor.js'

os.environ['OH_VSCODE_MODE'] = 'embedded'
os.environ.setdefault('OH_VSCODE_EXECUTOR', str(CLI))
os.environ.setdefault('LOG_LEVEL', 'ERROR')
os.environ.setdefault('OPENHANDS_SUPPRESS_BANNER', '1')


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument('--workspace')
    ap.add_argument('--no-change-timeout', default='10')
    ap.add_argument('--serve', action='store_true', help='many cases, one runtime each (see the module docstring)')
    a = ap.parse_args()
    if not a.serve and not a.workspace:
        ap.error('--workspace is required without --serve')
    out = sys.stdout
    sys.stdout = sys.stderr  # anything OpenHands prints must not mix with the observation lines
    if not a.serve:
        run_case(a.workspace, str(a.no_change_timeout), iter(sys.stdin), out)
        return 0
    _import_openhands()  # at start-up, while the harness prepares its first case
    lines = iter(sys.stdin)
    for line in lines:
        if not line.strip():
            continue
        case = json.loads(line)['__case__']
        run_case(case['workspace'], str(case['no_change_timeout']), lines, out)
        out.write(json.dumps({'__closed__': True}) + '\n')
        out.flush()
    # Every runtime is closed; threads OpenHands left behind (non-daemon) would keep the process
    # alive after the end of input, and the harness would wait for each worker in turn.
    sys.stderr.flush()
    os._exit(0)


def _import_openhands() -> None:
    import openhands.core.config  # noqa: F401
    import openhands_vscode_runtime  # noqa: F401


def run_case(workspace: str, no_change_timeout: str, lines, out) -> None:
    """A runtime on `workspace`; each action line of `lines` answered on `out`, until the
    input ends or says {"__end__": true}; then the runtime is closed."""
    from openhands.core.config import OpenHandsConfig
    from openhands.events import EventStream
    from openhands.events.serialization import event_from_dict, event_to_dict
    from openhands.llm.llm_registry import LLMRegistry
    from openhands.storage import get_file_store
    from openhands.utils.async_utils import call_async_from_sync

    from openhands_vscode_runtime import VsCodeRuntime

    config = OpenHandsConfig()
    config.workspace_base = workspace
    config.runtime = 'vscode'
    config.sandbox.runtime_startup_env_vars['NO_CHANGE_TIMEOUT_SECONDS'] = no_change_timeout
    store = tempfile.mkdtemp(prefix='ohconf-hub-store-')
    global _cases
    _cases += 1
    sid = f'conformance_{os.getpid()}_{_cases}'
    rt = VsCodeRuntime(config=config, event_stream=EventStream(sid, get_file_store('local', store)),
                       llm_registry=LLMRegistry(config), sid=sid, headless_mode=True)
    try:
        call_async_from_sync(rt.connect)
        for line in lines:
            if not line.strip():
                continue
            d = json.loads(line)
            if d.get('__end__'):
                break
            action_id = d.pop('id', None)
            kind = d.get('action')
            action = event_from_dict(d)
            obs = getattr(rt, kind)(action)
            if action_id is not None:
                obs._cause = action_id  # type: ignore[attr-defined]
            out.write(json.dumps(event_to_dict(obs)) + '\n')
            out.flush()
    finally:
        rt.close()
        shutil.rmtree(store, ignore_errors=True)


_cases = 0


if __name__ == '__main__':
    sys.exit(main())
