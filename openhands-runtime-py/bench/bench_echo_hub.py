"""`echo hi` round trips through the real embedded hub and a headless executor, nothing else.

    python openhands-runtime-py/bench/bench_echo_hub.py --executor PATH [--n 300]

The hub is whichever `openhands_vscode_runtime` is first on the path (bench/session_binding.sh
puts an older checkout first to measure its protocol against this one in the same run). Prints one
JSON line: p50/p90/mean in ms of `Channel.submit(run echo hi)` until its observation.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import tempfile
import time

os.environ.setdefault('LOG_LEVEL', 'ERROR')


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument('--executor', required=True)
    ap.add_argument('--n', type=int, default=300)
    a = ap.parse_args()
    import openhands_vscode_runtime as pkg
    from openhands_vscode_runtime.embedded import embedded_server
    from openhands_vscode_runtime.executor_process import ExecutorProcess

    server = embedded_server()
    key = os.urandom(24).hex()
    ch = server.hub.open_channel('bench-echo', session_api_key=key, session_settings={})
    ws = tempfile.mkdtemp(prefix='bench-echo-')
    proc = ExecutorProcess([a.executor], url=server.url, conversation_id='bench-echo',
                           session_api_key=key, workspace=ws, no_change_timeout=None)
    try:
        ch.registration_future().result(60)
        action = {'action': 'run', 'timeout': 30.0, 'args': {
            'command': 'echo hi', 'is_input': False, 'thought': '', 'blocking': False,
            'is_static': False, 'cwd': None, 'hidden': False, 'confirmation_state': 'confirmed',
            'security_risk': -1}}
        for _ in range(20):  # warm up (the shell starts on the first action)
            ch.submit(action)[1].result(30)
        times = []
        for _ in range(a.n):
            t0 = time.perf_counter()
            obs = ch.submit(action)[1].result(30)
            times.append((time.perf_counter() - t0) * 1000)
            assert obs.content.strip() == 'hi', obs
        times.sort()
        print(json.dumps({'hub': os.path.dirname(pkg.__file__), 'n': a.n,
                          'p50_ms': statistics.median(times),
                          'p90_ms': times[int(0.9 * (len(times) - 1))],
                          'mean_ms': statistics.mean(times)}), flush=True)
    finally:
        proc.stop()
        proc.remove_log()
        ch.close()
        server.stop()


if __name__ == '__main__':
    main()
