"""Peak RSS of the Python VsCodeRuntime process (and of its spawned headless executor) for one
scenario; bench/memory.sh runs each scenario in a fresh process, beside a baseline (`echo hi`).

    python bench/runtime_memory.py {baseline|output|read} WORKSPACE

Embedded mode: this process holds the runtime, the hub and the event stream; the executor is a
child process (`find_executor()`, or `OH_VSCODE_EXECUTOR`). The runtime's peak is this process's
`ru_maxrss` (children excluded); the executor's is its `VmHWM` read before the runtime closes.
Prints one JSON line.
"""

from __future__ import annotations

import json
import os
import resource
import sys
import tempfile
import time

os.environ.setdefault('LOG_LEVEL', 'ERROR')
os.environ.setdefault('OPENHANDS_SUPPRESS_BANNER', '1')
os.environ['OH_VSCODE_MODE'] = 'embedded'


def vm_kib(pid: int, field: str) -> int:
    with open(f'/proc/{pid}/status') as f:
        for line in f:
            if line.startswith(field + ':'):
                return int(line.split()[1])
    return 0


def main() -> int:
    scenario, workspace = sys.argv[1], sys.argv[2]
    from openhands.core.config import OpenHandsConfig
    from openhands.events import EventStream
    from openhands.events.action import CmdRunAction, FileReadAction
    from openhands.llm.llm_registry import LLMRegistry
    from openhands.storage import get_file_store
    from openhands.utils.async_utils import call_async_from_sync

    from openhands_vscode_runtime import VsCodeRuntime

    config = OpenHandsConfig()
    config.workspace_base = workspace
    config.runtime = 'vscode'
    store = tempfile.mkdtemp(prefix='oh-mem-store-')
    rt = VsCodeRuntime(config=config, event_stream=EventStream(f'mem_{scenario}', get_file_store('local', store)),
                       llm_registry=LLMRegistry(config), sid=f'mem_{scenario}', headless_mode=True)
    call_async_from_sync(rt.connect)
    connected_kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    if scenario == 'baseline':
        action = CmdRunAction('echo hi')
    elif scenario == 'output':
        action = CmdRunAction('head -c 100000000 /dev/zero | tr "\\0" x | fold -w 1000')
    elif scenario == 'read':
        action = FileReadAction(path=os.path.join(workspace, 'big.txt'))
    else:
        raise SystemExit(f'unknown scenario {scenario}')
    action.set_hard_timeout(600)
    t = time.perf_counter()
    obs = rt.run_action(action)
    seconds = time.perf_counter() - t
    proc = rt.executor_process
    executor_kib = vm_kib(proc.pid, 'VmHWM') if proc is not None else 0
    peak_kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    print(json.dumps({
        'scenario': scenario, 'runtime_peak_kib': peak_kib, 'runtime_connected_kib': connected_kib,
        'executor_peak_kib': executor_kib, 'observation': type(obs).__name__,
        'content_chars': len(getattr(obs, 'content', '')), 'seconds': round(seconds, 2),
    }), flush=True)
    rt.close()
    return 0


if __name__ == '__main__':
    sys.exit(main())
