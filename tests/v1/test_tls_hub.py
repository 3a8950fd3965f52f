"""End to end over TLS: the real V1 agent-server with our tools serves its executors' hub with a
certificate signed by a test CA (`OH_VSCODE_TLS_CERT` / `OH_VSCODE_TLS_KEY`), waits for an executor
started elsewhere (`OH_VSCODE_SPAWN_EXECUTOR=0`, the discovery file), and the headless executor
(OH_VSCODE_EXECUTOR, built by run.sh) serves the conversation over wss with `--ca-file`. An
executor given another CA is refused before it sends anything (exit 2, EAUTH). The LLM is the
scripted stand-in (`scripted_llm`) on 127.0.0.1.
"""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path

from agent_server import agent_server
from pki import make_pki

from openhands_vscode_runtime.executor_process import ExecutorProcess, find_executor
from openhands_vscode_runtime.scripted_llm import ScriptedLLM


def discovered(discovery: Path, timeout: float = 60) -> dict:
    deadline = time.monotonic() + timeout
    while not (files := list(discovery.glob('*.json')) if discovery.is_dir() else []):
        assert time.monotonic() < deadline, 'no discovery file'
        time.sleep(0.1)
    return json.loads(files[0].read_text())


def executor(info: dict, ws: Path, ca: Path) -> ExecutorProcess:
    command = find_executor()
    assert command is not None, 'no headless executor (OH_VSCODE_EXECUTOR)'
    return ExecutorProcess(command, url=info['url'], conversation_id=info['conversation_id'],
                           session_api_key=info['session_api_key'], workspace=str(ws),
                           no_change_timeout=None, ca_file=str(ca))


def test_a_conversation_served_over_tls_with_a_test_ca(tmp_path: Path) -> None:
    pki = make_pki(tmp_path / 'pki', ['127.0.0.1'])
    ws = tmp_path / 'ws'
    ws.mkdir()
    discovery = tmp_path / 'discovery'
    env = {'OH_VSCODE_TLS_CERT': str(pki.cert), 'OH_VSCODE_TLS_KEY': str(pki.key), 'OH_VSCODE_SPAWN_EXECUTOR': '0',
           'OH_VSCODE_V1_DISCOVERY_DIR': str(discovery), 'OH_VSCODE_CONNECT_TIMEOUT': '90'}
    steps = [
        {'tool': 'terminal', 'args': {'command': 'echo over-tls > tls.txt && cat tls.txt', 'summary': 'write'}},
        {'expect_in_last_observation': 'over-tls', 'tool': 'file_editor',
         'args': {'command': 'view', 'path': f'{ws}/tls.txt', 'summary': 'view'}},
        {'expect_in_last_observation': 'over-tls', 'tool': 'finish', 'args': {'message': 'done'}},
    ]
    with ScriptedLLM(steps) as llm, agent_server(tmp_path, env=env) as server:
        # The POST returns once the tools exist, which in attach mode is once an executor registered.
        started: dict = {}
        post = threading.Thread(target=lambda: started.update(cid=server.start_conversation(llm, ws)), daemon=True)
        post.start()
        info = discovered(discovery)
        assert info['url'].startswith('https://127.0.0.1:'), info['url']
        # The wrong CA: refused at the TLS handshake, nothing sent, never retried.
        wrong = executor(info, ws, pki.other_ca)
        try:
            assert wrong.proc.wait(30) == 2, Path(wrong.log_path).read_text()
            log = Path(wrong.log_path).read_text(errors='replace')
            assert 'EAUTH' in log and 'its TLS certificate was not accepted' in log, log
        finally:
            wrong.stop()
            wrong.remove_log()
        right = executor(info, ws, pki.ca)
        try:
            post.join(60)
            cid = started['cid']
            deadline = time.monotonic() + 120
            while (status := server.status(cid)) not in ('finished', 'error', 'stuck'):
                assert time.monotonic() < deadline, f'conversation still {status}'
                assert right.proc.poll() is None, Path(right.log_path).read_text()
                time.sleep(0.5)
            assert status == 'finished', (status, Path(right.log_path).read_text())
            assert llm.mismatches == [], llm.mismatches
            assert (ws / 'tls.txt').read_text() == 'over-tls\n'
        finally:
            right.stop()
            right.remove_log()


def test_a_certificate_without_its_key_is_refused_not_served_as_plain_http() -> None:
    import pytest

    from openhands_vscode_runtime.settings import RuntimeSettings

    with pytest.raises(ValueError, match='go together'):
        RuntimeSettings.from_env({'OH_VSCODE_TLS_CERT': '/cert.pem'})
    settings = RuntimeSettings.from_env({'OH_VSCODE_TLS_CERT': '/c.pem', 'OH_VSCODE_TLS_KEY': '/k.pem'})
    assert (settings.tls_cert, settings.tls_key, settings.tls_ca) == ('/c.pem', '/k.pem', None)
