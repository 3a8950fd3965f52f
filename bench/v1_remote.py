"""The agent on the server, its hands here: per-step overhead of our V1 tools when the executor is
across a link with 0, 20, 50 and 100 ms round trip, against the same loop with V1's own tools
running on the server side, in one run. Run by `bench/v1.sh` (`make bench`) in the V1 venv.

The set-up of issue 36 on one machine: the real agent-server with our tools, its hub served with
TLS (a test CA made here, `tests/v1/pki.py`), waiting for an executor started elsewhere
(`OH_VSCODE_SPAWN_EXECUTOR=0`); the headless executor (`OH_VSCODE_EXECUTOR`) dials it with
`--ca-file` through `DelayRelay` (tests/remote/relays.py), the userspace stand-in for `tc netem
delay` (this kernel has no sch_netem): every chunk forwarded RTT/2 late each way. At 0 ms the relay
is still in the path (one more userspace hop than a direct connection). V1's own tools run the
same commands in the agent-server's process: no network, the baseline.

The loop: STEPS terminal calls of `echo stepN`, then `finish`, by the scripted stand-in LLM. A
step's time is the agent-server's own record, from the `ActionEvent` to its `ObservationEvent`;
the first call is reported apart (V1 starts its terminal on first use, ours its session). The
overhead of a step is ours minus V1's own (p50 of each); the target is at most one round trip + 2 ms.
A benchmark, not a test: it asserts only that the script was followed.
"""

from __future__ import annotations

import os
import shutil
import socket
import sys
import tempfile
import threading
import time
from pathlib import Path

here = Path(__file__).resolve().parent
sys.path.insert(0, str(here.parent / 'tests' / 'v1'))
sys.path.insert(0, str(here.parent / 'tests' / 'remote'))
from agent_server import agent_server  # noqa: E402
from pki import make_pki  # noqa: E402
from relays import DelayRelay  # noqa: E402
from v1_agent_server import events, pct, stamp  # noqa: E402

from openhands_vscode_runtime.executor_process import ExecutorProcess, find_executor  # noqa: E402
from openhands_vscode_runtime.scripted_llm import ScriptedLLM  # noqa: E402

STEPS = int(os.environ.get('V1_REMOTE_STEPS', '20'))
RTTS = [int(x) for x in os.environ.get('V1_REMOTE_RTTS', '0,20,50,100').split(',')]


def script() -> list[dict]:
    steps: list[dict] = [{'tool': 'terminal', 'args': {'command': 'echo start', 'summary': 'first'}}]
    for i in range(STEPS):
        steps.append({'expect_in_last_observation': 'start' if i == 0 else f'step{i - 1}', 'tool': 'terminal',
                      'args': {'command': f'echo step{i}', 'summary': 'echo'}})
    steps.append({'expect_in_last_observation': f'step{STEPS - 1}', 'tool': 'finish', 'args': {'message': 'done'}})
    return steps


def free_port() -> int:
    with socket.socket() as s:
        s.bind(('127.0.0.1', 0))
        return s.getsockname()[1]


def step_times(server, cid: str) -> list[float]:
    evs = events(server.base, server.key, cid)
    actions = {e['id']: e for e in evs if e.get('kind') == 'ActionEvent'}
    out = [(stamp(e) - stamp(actions[e['action_id']])) * 1000 for e in evs
           if e.get('kind') == 'ObservationEvent' and e['action_id'] in actions and e.get('tool_name') == 'terminal']
    assert len(out) == STEPS + 1, len(out)
    return out


def wait_finished(server, cid: str, timeout: float = 300) -> None:
    deadline = time.monotonic() + timeout
    while (status := server.status(cid)) not in ('finished', 'error', 'stuck'):
        assert time.monotonic() < deadline, f'conversation still {status}'
        time.sleep(0.05)
    assert status == 'finished', status


def relay_rtt(rtt_ms: int, n: int = 20) -> float:
    """p50 of a 1-byte echo through `DelayRelay` set to `rtt_ms` (ms): what the stand-in itself
    takes, so that its own lateness is not counted as ours."""
    srv = socket.socket()
    srv.bind(('127.0.0.1', 0))
    srv.listen(1)

    def echo() -> None:
        conn, _ = srv.accept()
        with conn:
            while data := conn.recv(64):
                conn.sendall(data)

    threading.Thread(target=echo, daemon=True).start()
    relay = DelayRelay('127.0.0.1', '127.0.0.1', srv.getsockname()[1], rtt_ms / 2).start()
    times = []
    try:
        with socket.create_connection(('127.0.0.1', relay.port)) as c:
            c.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            for _ in range(n):
                t0 = time.perf_counter()
                c.sendall(b'x')
                assert c.recv(1) == b'x'
                times.append((time.perf_counter() - t0) * 1000)
    finally:
        relay.stop()
        srv.close()
    return pct(times, 0.5)


def run_own(tmp: Path) -> list[float]:
    ws = tmp / 'ws'
    ws.mkdir(parents=True)
    with ScriptedLLM(script()) as llm, agent_server(tmp, import_modules=False) as server:
        cid = server.start_conversation(llm, ws)
        wait_finished(server, cid)
        assert llm.mismatches == [], llm.mismatches
        return step_times(server, cid)


def run_remote(tmp: Path, rtt_ms: int | None) -> list[float]:
    """Our tools, the executor over TLS through the relay delaying `rtt_ms` (None: no relay, the
    executor dials the hub directly: what the link adds is measured against this)."""
    ws = tmp / 'ws'
    ws.mkdir(parents=True)
    pki = make_pki(tmp / 'pki', ['127.0.0.1'])
    hub_port = free_port()
    relay = DelayRelay('127.0.0.1', '127.0.0.1', hub_port, rtt_ms / 2).start() if rtt_ms is not None else None
    discovery = tmp / 'discovery'
    env = {'OH_VSCODE_TLS_CERT': str(pki.cert), 'OH_VSCODE_TLS_KEY': str(pki.key), 'OH_VSCODE_SPAWN_EXECUTOR': '0',
           'OH_VSCODE_HOST': '127.0.0.1', 'OH_VSCODE_PORT': str(hub_port),
           'OH_VSCODE_SERVER_URL': f'https://127.0.0.1:{relay.port if relay else hub_port}',
           'OH_VSCODE_V1_DISCOVERY_DIR': str(discovery), 'OH_VSCODE_CONNECT_TIMEOUT': '90'}
    executor = None
    try:
        with ScriptedLLM(script()) as llm, agent_server(tmp, env=env) as server:
            post, started, info = server.start_for_executor(llm, ws, discovery)
            command = find_executor()
            assert command is not None, 'no headless executor (OH_VSCODE_EXECUTOR)'
            executor = ExecutorProcess(command, url=info['url'], conversation_id=info['conversation_id'],
                                       session_api_key=info['session_api_key'], workspace=str(ws),
                                       no_change_timeout=None, ca_file=str(pki.ca))
            post.join(120)
            cid = started['cid']
            wait_finished(server, cid)
            assert llm.mismatches == [], llm.mismatches
            return step_times(server, cid)
    finally:
        if executor is not None:
            executor.stop()
            executor.remove_log()
        if relay is not None:
            relay.stop()


def main() -> int:
    root = Path(tempfile.mkdtemp(prefix='ohv1-remote-'))
    os.environ['OH_TERMINAL_PROCESS_PRIORITY'] = 'none'  # V1's bash otherwise runs under nice 10
    try:
        own = run_own(root / 'own')
        direct = run_remote(root / 'direct', None)
        ours = {rtt: run_remote(root / f'rtt{rtt}', rtt) for rtt in RTTS}
        alone = {rtt: relay_rtt(rtt) for rtt in RTTS}
    finally:
        shutil.rmtree(root, ignore_errors=True)
    base50, base95 = pct(own[1:], 0.5), pct(own[1:], 0.95)
    d50 = pct(direct[1:], 0.5)
    print(f'remote executor over TLS through a delaying relay, {STEPS} x `echo` (ms, action -> observation, agent-server stamps):')
    print(f'  V1 own tools (server side, baseline): first {own[0]:.1f}  p50 {base50:.1f}  p95 {base95:.1f}')
    print(f'  ours, executor dialling the hub directly: first {direct[0]:.1f}  p50 {d50:.1f}  p95 {pct(direct[1:], 0.95):.1f}')
    print(f'  {"RTT":>5s} {"first":>8s} {"p50":>8s} {"p95":>8s} {"added p50":>10s} {"relay alone":>12s} {"ours":>8s} {"target":>8s} {"vs V1 own p50":>14s}')
    for rtt, t in ours.items():
        p50, p95 = pct(t[1:], 0.5), pct(t[1:], 0.95)
        # What the link adds to a step: against the same tools with the executor dialling directly.
        added = p50 - d50
        # The relay's own lateness (its echo's p50 beyond the delay it was set to) is the stand-in's, not ours.
        ours_part = added - (alone[rtt] - rtt)
        verdict = 'ok' if ours_part <= rtt + 2 else 'over'
        print(f'  {rtt:5d} {t[0]:8.1f} {p50:8.1f} {p95:8.1f} {added:7.1f} ms {alone[rtt]:9.1f} ms {ours_part:5.1f} ms {rtt + 2:5d} ms {p50 / base50:13.2f}x  {verdict}')
    return 0


if __name__ == '__main__':
    sys.exit(main())
