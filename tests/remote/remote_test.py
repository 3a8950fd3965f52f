"""The network test's driver (run by run.sh inside the server's network namespace).

The server side here: the real V1 agent-server with our tools (REST and the scripted stand-in LLM
on this namespace's 127.0.0.1), its executors' hub on `--server-ip` with TLS (a test CA made here),
waiting for an executor started elsewhere (the discovery file). The executor side: the headless
executor in the namespace `--executor-netns`, started with `ip netns exec`, reaching the hub over
the veth pair, through `DelayRelay` (the stand-in for netem's delay), with 1 % loss each way
(nftables `numgen random`) and the link cut for 5 s mid-command (the command starts 1 s before the cut and ends 3 s into it, so
its observation is sent into the cut link).

Checks: a wrong CA, a wrong session key, and a middle box that terminates TLS (with a CA file,
and with a pin) are each refused, exit 2, before anything runs; then the conversation completes,
the command that was running during the cut ran once (its counter file has one line) and its
observation arrived once (one ObservationEvent on the agent-server).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / 'v1'))
from agent_server import agent_server, call  # noqa: E402
from pki import make_pki  # noqa: E402
from relays import DelayRelay, TlsMiddleBox  # noqa: E402

from openhands_vscode_runtime.executor_process import ExecutorProcess, find_executor  # noqa: E402
from openhands_vscode_runtime.scripted_llm import ScriptedLLM  # noqa: E402

LOSS = '''table inet oh_remote_loss {
  chain input { type filter hook input priority 0; numgen random mod 100 < 1 drop; }
  chain output { type filter hook output priority 0; numgen random mod 100 < 1 drop; }
}
'''
T0 = time.monotonic()


def say(text: str) -> None:
    print(f'[remote {time.monotonic() - T0:6.1f}s] {text}', flush=True)


def sh(*args: str) -> None:
    subprocess.run(args, check=True)


class Executors:
    """Headless executors started in the executor's namespace."""

    def __init__(self, netns: str, info: dict, ws: Path) -> None:
        command = find_executor()
        assert command is not None, 'no headless executor (OH_VSCODE_EXECUTOR)'
        self.command = ['ip', 'netns', 'exec', netns, *command]
        self.info, self.ws = info, ws

    def start(self, url: str, *, key: str | None = None, ca: Path | None = None) -> ExecutorProcess:
        return ExecutorProcess(self.command, url=url, conversation_id=self.info['conversation_id'],
                               session_api_key=key or self.info['session_api_key'], workspace=str(self.ws),
                               no_change_timeout=None, ca_file=str(ca) if ca else None)

    def refused(self, what: str, url: str, words: str, **kw) -> None:
        proc = self.start(url, **kw)
        try:
            code = proc.proc.wait(40)
            log = Path(proc.log_path).read_text(errors='replace')
            assert code == 2 and words in log, f'{what}: exit {code}\n{log}'
            say(f'refused as it must be: {what} (exit 2: {words!r})')
        finally:
            proc.stop()
            proc.remove_log()


def refused_with_pin(netns: str, info: dict, ws: Path, url: str, pin: str) -> None:
    """The pin travels as `--cert-sha256` (ExecutorProcess has no parameter for it)."""
    command = find_executor()
    key_file = ws.parent / 'key'
    key_file.write_text(info['session_api_key'])
    key_file.chmod(0o600)
    done = subprocess.run(['ip', 'netns', 'exec', netns, *command, '--url', url, '--conversation',
                           info['conversation_id'], '--workspace', str(ws), '--session-api-key-file',
                           str(key_file), '--cert-sha256', pin], capture_output=True, text=True, timeout=40)
    key_file.unlink()
    assert done.returncode == 2 and 'not the pinned' in done.stderr, done.stderr
    say('refused as it must be: a middle box, with the real certificate pinned (exit 2)')


def script(ws: Path, counter: Path) -> list[dict]:
    long = f'echo ran >> {counter}; sleep 4; echo "finished-$(wc -l < {counter})"'
    return [
        {'tool': 'terminal', 'args': {'command': 'echo warm-up', 'summary': 'warm'}},
        {'expect_in_last_observation': 'warm-up', 'tool': 'terminal', 'args': {'command': long, 'summary': 'cut'}},
        {'expect_in_last_observation': 'finished-1', 'tool': 'file_editor',
         'args': {'command': 'create', 'path': f'{ws}/after.txt', 'file_text': 'after the cut\n', 'summary': 'edit'}},
        {'expect_in_last_observation': 'File created successfully', 'tool': 'terminal',
         'args': {'command': f'wc -l < {counter}; cat {ws}/after.txt', 'summary': 'count'}},
        {'expect_in_last_observation': 'after the cut', 'tool': 'finish', 'args': {'message': 'done'}},
    ]


def observations(server, cid: str) -> list[str]:
    items, page = [], None
    while True:
        query = 'kind=ObservationEvent&limit=100' + (f'&page_id={page}' if page else '')
        got = call('GET', f'{server.base}/api/conversations/{cid}/events/search?{query}', server.key)
        items += [json.dumps(i) for i in got.get('items', [])]
        page = got.get('next_page_id')
        if not page:
            return items


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument('--server-ip', required=True)
    ap.add_argument('--executor-netns', required=True)
    ap.add_argument('--executor-link', required=True, help="the veth end in the executor's namespace")
    ap.add_argument('--work', required=True)
    ap.add_argument('--one-way-ms', type=float, default=25)
    ap.add_argument('--cut-seconds', type=float, default=5)
    ap.add_argument('--heartbeat', type=float, default=None,
                    help="the hub's Engine.IO ping interval and timeout (s): below half the cut, both "
                         'ends drop the connection during it and the executor reconnects')
    args = ap.parse_args()
    work = Path(args.work)
    exe_ns = args.executor_netns
    pki = make_pki(work / 'pki', [args.server_ip])
    ws, counter, discovery = work / 'ws', work / 'ws' / 'counter', work / 'discovery'
    ws.mkdir()
    env = {'OH_VSCODE_HOST': args.server_ip, 'OH_VSCODE_TLS_CERT': str(pki.cert), 'OH_VSCODE_TLS_KEY': str(pki.key),
           'OH_VSCODE_SPAWN_EXECUTOR': '0', 'OH_VSCODE_V1_DISCOVERY_DIR': str(discovery),
           'OH_VSCODE_CONNECT_TIMEOUT': '300'}
    if args.heartbeat:
        env |= {'OH_VSCODE_PING_INTERVAL': str(args.heartbeat), 'OH_VSCODE_PING_TIMEOUT': str(args.heartbeat)}
    with ScriptedLLM(script(ws, counter)) as llm, agent_server(work, env=env) as server:
        post, started, info = server.start_for_executor(llm, ws, discovery)
        hub = info['url']
        assert hub.startswith(f'https://{args.server_ip}:'), hub
        hub_port = int(hub.rsplit(':', 1)[1])
        say(f'agent-server up; its hub serves TLS at {hub}')
        delay = DelayRelay(args.server_ip, args.server_ip, hub_port, args.one_way_ms).start()
        box = TlsMiddleBox(args.server_ip, args.server_ip, hub_port, str(pki.other_cert), str(pki.other_key)).start()
        executors = Executors(exe_ns, info, ws)
        try:
            executors.refused('a wrong CA file', hub, 'its TLS certificate was not accepted', ca=pki.other_ca)
            executors.refused('a wrong session key', hub, 'could not prove it holds the session key',
                              ca=pki.ca, key='not-the-key-' + info['session_api_key'][:4])
            box_url = f'https://{args.server_ip}:{box.port}'
            executors.refused('a middle box that terminates TLS', box_url, 'its TLS certificate was not accepted',
                              ca=pki.ca)
            pin = subprocess.run(['openssl', 'x509', '-noout', '-fingerprint', '-sha256', '-in', str(pki.cert)],
                                 capture_output=True, text=True, check=True).stdout.strip()
            refused_with_pin(exe_ns, info, ws, box_url, pin)
            assert box.forwarded == 0, f'the middle box passed {box.forwarded} bytes on'
            assert not counter.exists(), 'a refused executor ran something'

            sh('ip', 'netns', 'exec', exe_ns, 'nft', '-f', str(write(work / 'loss.nft', LOSS)))
            say(f'1 % loss each way (nftables), {2 * args.one_way_ms:g} ms more round trip (DelayRelay)')
            url = f'https://{args.server_ip}:{delay.port}'
            real = executors.start(url, ca=pki.ca)
            try:
                deadline = time.monotonic() + 120
                while not counter.exists():
                    assert time.monotonic() < deadline, Path(real.log_path).read_text()
                    assert real.proc.poll() is None, Path(real.log_path).read_text()
                    time.sleep(0.05)
                time.sleep(1)
                say(f'the long command is running: cutting the link for {args.cut_seconds:g} s')
                sh('ip', '-n', exe_ns, 'link', 'set', args.executor_link, 'down')
                time.sleep(args.cut_seconds)
                sh('ip', '-n', exe_ns, 'link', 'set', args.executor_link, 'up')
                say('link restored')
                post.join(60)
                cid = started['cid']
                deadline = time.monotonic() + 240
                while (status := server.status(cid)) not in ('finished', 'error', 'stuck'):
                    assert time.monotonic() < deadline, f'conversation still {status}'
                    time.sleep(0.5)
                log = Path(real.log_path).read_text(errors='replace')
                assert status == 'finished', (status, log)
                assert llm.mismatches == [], llm.mismatches
                runs = counter.read_text().splitlines()
                assert runs == ['ran'], f'the command ran {len(runs)} times'
                seen = [o for o in observations(server, cid) if 'finished-1' in o]
                assert len(seen) == 1, f'{len(seen)} observations of the command'
                reconnects = log.count('connection lost')
                if args.heartbeat and 2 * args.heartbeat < args.cut_seconds:
                    assert reconnects >= 1, f'the cut did not end the connection:\n{log}'
                say(f'conversation finished; the command ran once, its observation arrived once '
                    f"(executor log: {reconnects} x 'connection lost')")
            finally:
                real.stop()
                real.remove_log()
        finally:
            delay.stop()
            box.stop()
    say('PASS')
    return 0


def write(path: Path, text: str) -> Path:
    path.write_text(text)
    return path


if __name__ == '__main__':
    sys.exit(main())
