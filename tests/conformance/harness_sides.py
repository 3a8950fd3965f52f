"""Conformance harness, the two sides: the OpenHands V0 reference in-process (`RefSide`) and
ours (`OursSide`: `oh-executor replay`, or the addon/socket/hub drivers).

Part of `harness.py` (which re-exports these names).
"""
from __future__ import annotations

import asyncio
import copy
import json
import os
import queue
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

from harness_setup import DEFAULT_TIMEOUT, DRIVER, HARNESS_KEYS, HERE, _subst, executor_binary, pinned_env

# --------------------------------------------------------------------------------------------
# Reference side

_REF_IMPORT_LOCK = threading.Lock()
_ref_mods: dict[str, Any] = {}


def _ref():
    """Import the reference lazily (takes ~15 s the first time)."""
    with _REF_IMPORT_LOCK:
        if not _ref_mods:
            import logging
            import warnings

            warnings.filterwarnings('ignore')
            os.environ.setdefault('LOG_LEVEL', 'ERROR')
            from openhands.events.observation import CmdOutputObservation, ErrorObservation
            from openhands.events.serialization import event_from_dict, event_to_dict
            from openhands.runtime import action_execution_server as server
            from openhands.runtime.utils.bash import BashSession
            from openhands_aci.editor.editor import OHEditor

            logging.getLogger('openhands').setLevel(logging.CRITICAL)
            _ref_mods.update(
                event_from_dict=event_from_dict,
                event_to_dict=event_to_dict,
                ActionExecutor=server.ActionExecutor,
                BashSession=BashSession,
                OHEditor=OHEditor,
                CmdOutputObservation=CmdOutputObservation,
                ErrorObservation=ErrorObservation,
            )
        return _ref_mods


def canonical_action(raw: dict, ws: str, action_id: int) -> dict:
    """The exact JSON object both sides receive: event_to_dict(event_from_dict(raw)) + id."""
    m = _ref()
    a = {k: v for k, v in copy.deepcopy(raw).items() if k not in HARNESS_KEYS}
    if 'timeout' not in a:
        a['timeout'] = DEFAULT_TIMEOUT
    elif a['timeout'] is None:
        del a['timeout']
    a = _subst(a, ws)
    try:
        d = json.loads(json.dumps(m['event_to_dict'](m['event_from_dict'](copy.deepcopy(a)))))
    except Exception:
        d = a  # not parseable by the reference: send as written (reference reports the error)
    return {'id': action_id, **d}


def settle(session, limit: float = 60.0) -> None:
    """Wait until the reference pane is idle at a prompt (ends with ###PS1END###, unchanged for 0.3 s).

    Absorbs the [N] race of spec §2.4 (an instant "completed" with empty content and a
    "last 1 lines" prefix when the shell is still starting: ~/.bashrc, load). A real server has
    seconds between start-up and the first action; the harness makes that explicit.
    """
    deadline = time.monotonic() + limit
    prev = None
    while time.monotonic() < deadline:
        cur = session._get_pane_content()
        if cur == prev and cur.rstrip().endswith('###PS1END###'):
            return
        prev = cur
        time.sleep(0.3)


def harden(session) -> None:
    """After sending keys, wait (at most 0.5 s) until the pane shows them.

    BashSession polls once immediately after `send_keys`; if tmux has not echoed the keys yet, the
    pane still ends with the previous prompt and the command "completes" at once with empty
    content and a "last 1 lines" prefix (spec §2.4 [N], clause 7.2). Seen on ~3 % of actions on a
    loaded machine. The wait only delays the first poll; the clocks start before the keys are sent,
    exactly as in the reference.
    """
    pane = session.pane
    original = pane.send_keys

    def send_keys(*args, **kwargs):
        before = session._get_pane_content()
        out = original(*args, **kwargs)
        deadline = time.monotonic() + 0.5
        while time.monotonic() < deadline:
            if session._get_pane_content() != before:
                break
            time.sleep(0.01)
        return out

    pane.send_keys = send_keys


class _CwdOnly:
    def __init__(self, cwd: str):
        self.cwd = os.path.abspath(cwd)

    def close(self) -> None:
        pass


class RefSide:
    """One reference 'action execution server' (in-process) for one case."""

    def __init__(self, ws: str, no_change_timeout: int, needs_shell: bool = True):
        m = _ref()
        self.m = m
        self.ws = ws
        self.nct = no_change_timeout
        self.loop = asyncio.new_event_loop()
        ex = m['ActionExecutor'].__new__(m['ActionExecutor'])
        ex._initial_cwd = ws
        ex.username = None
        ex.user_id = os.getuid()
        ex.max_memory_gb = None
        ex.plugins = {}
        ex.lock = None
        ex.file_editor = m['OHEditor'](workspace_root=ws)
        self.static_sessions: list = []

        def create_session(cwd: str | None = None):
            # = ActionExecutor._create_bash_session with NO_CHANGE_TIMEOUT_SECONDS=nct
            s = m['BashSession'](work_dir=cwd or ws, username=None, no_change_timeout_seconds=self.nct)
            s.initialize()
            settle(s)
            harden(s)
            self.static_sessions.append(s)
            return s

        ex._create_bash_session = create_session
        self.ex = ex
        if not needs_shell:
            # Cases without `run` actions: the file actions only read `bash_session.cwd`, which is
            # the workspace for a fresh session (spec §0.3.2: "anything with .cwd").
            ex.bash_session = _CwdOnly(ws)
            return
        ex.bash_session = m['BashSession'](work_dir=ws, username=None, no_change_timeout_seconds=self.nct)
        ex.bash_session.initialize()
        settle(ex.bash_session)
        harden(ex.bash_session)
        self.loop.run_until_complete(ex._init_bash_commands())
        settle(ex.bash_session)

    def execute(self, line: dict) -> dict:
        m = self.m
        d = copy.deepcopy(line)
        action_id = d.pop('id', None)
        try:
            action = m['event_from_dict'](d)
        except Exception as e:  # the server would answer HTTP 500
            return {'__reference_http_500__': f'Internal server error: {e}'}
        kind = d.get('action')
        if kind not in ('run', 'read', 'write', 'edit'):
            return {'__reference_http_500__': f'action {kind!r} not in scope'}
        try:
            obs = self.loop.run_until_complete(getattr(self.ex, kind)(action))
        except Exception as e:
            return {'__reference_http_500__': f'Internal server error: {e}'}
        if action_id is not None:
            obs._cause = action_id
        return json.loads(json.dumps(m['event_to_dict'](obs)))

    def close(self) -> None:
        for s in [self.ex.bash_session, *self.static_sessions]:
            try:
                s.close()
            except Exception:
                pass
        self.loop.close()


# --------------------------------------------------------------------------------------------
# Our side


class RefAsOurs:
    """A second reference standing in for oh-executor (`--ref-vs-ref`: checks a case is deterministic)."""

    def __init__(self, ws: str, no_change_timeout: int, stderr_path: str, needs_shell: bool = True):
        self.side = RefSide(ws, no_change_timeout, needs_shell)

    def execute(self, line: dict, wait: float) -> dict:
        return self.side.execute(line)

    def close(self) -> None:
        self.side.close()


class OursSide:
    """One `oh-executor replay` process for one case."""

    def __init__(self, ws: str, no_change_timeout: int, stderr_path: str):
        binary = executor_binary()
        if DRIVER == 'replay' and not os.path.exists(binary):
            raise FileNotFoundError(f'oh-executor binary not found at {binary} (build it or set OH_EXECUTOR)')
        self.stderr_file = open(stderr_path, 'wb')
        self.stderr_path = stderr_path
        if DRIVER == 'socket':
            argv = [sys.executable, str(HERE / 'socket_replay.py')]
        elif DRIVER == 'hub':
            argv = [sys.executable, str(HERE / 'hub_replay.py')]
        elif DRIVER == 'addon':
            argv = ['node', str(HERE / 'addon_replay.js')]
        else:
            argv = [binary, 'replay']
        self.proc = subprocess.Popen(
            argv + ['--workspace', ws, '--no-change-timeout', str(no_change_timeout)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self.stderr_file,
            # the reference "server process" is this process: same cwd (matters only for the
            # [F] relative-path binary check of spec §3.1)
            cwd=os.getcwd(),
            env=pinned_env(),
        )
        self.lines: queue.Queue = queue.Queue()
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for raw in self.proc.stdout:
            self.lines.put(raw.decode('utf-8', errors='replace'))
        self.lines.put(None)

    def execute(self, line: dict, wait: float) -> dict:
        assert self.proc.stdin is not None
        try:
            self.proc.stdin.write((json.dumps(line) + '\n').encode('utf-8'))
            self.proc.stdin.flush()
        except (BrokenPipeError, OSError) as e:
            return {'__ours_error__': f'could not write to oh-executor: {e}; stderr: {self.stderr_tail()}'}
        try:
            out = self.lines.get(timeout=wait)
        except queue.Empty:
            return {'__ours_error__': f'no reply within {wait:.0f} s'}
        if out is None:
            return {'__ours_error__': f'oh-executor exited (rc={self.proc.poll()}); stderr: {self.stderr_tail()}'}
        try:
            return json.loads(out)
        except json.JSONDecodeError as e:
            return {'__ours_error__': f'invalid JSON line ({e}): {out[:2000]!r}'}

    def stderr_tail(self, n: int = 2000) -> str:
        try:
            self.stderr_file.flush()
            return Path(self.stderr_path).read_text(errors='replace')[-n:]
        except Exception:
            return ''

    def close(self) -> None:
        try:
            if self.proc.stdin:
                self.proc.stdin.close()
            self.proc.wait(timeout=15)
        except Exception:
            self.proc.kill()
            self.proc.wait()
        self.stderr_file.close()


class _HubWorker:
    """One `hub_replay.py --serve` process: OpenHands imported once, then one VsCodeRuntime per
    case. Lent to one case at a time (HubSide), from the run's pool of idle workers."""

    def __init__(self, log_path: str):
        self.log_path = log_path
        self.stderr_file = open(log_path, 'ab')
        self.proc = subprocess.Popen(
            [sys.executable, str(HERE / 'hub_replay.py'), '--serve'],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self.stderr_file,
            cwd=os.getcwd(), env=pinned_env(),
        )
        self.lines: queue.Queue = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for raw in self.proc.stdout:
            self.lines.put(raw.decode('utf-8', errors='replace'))
        self.lines.put(None)

    def send(self, d: dict) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write((json.dumps(d) + '\n').encode('utf-8'))
        self.proc.stdin.flush()

    def stop(self) -> None:
        try:
            if self.proc.stdin:
                self.proc.stdin.close()
            self.proc.wait(timeout=30)
        except Exception:
            self.proc.kill()
            self.proc.wait()
        self.stderr_file.close()


# The run's `--serve` processes: every one started (stopped at the end) and those idle between
# cases. A pool, not one per thread: run_case drives our side from a new thread per case, so a
# thread-local worker was never found again and every case paid a process start and OpenHands'
# import (~15 s; the whole set took some 20 minutes).
_HUB_LOCK = threading.Lock()
_HUB_ALL: list[_HubWorker] = []
_HUB_IDLE: list[_HubWorker] = []
HUB_STARTS = 0  # worker processes started in this run (the pool reuses them across cases)
HUB_DROPPED = 0  # workers stopped for getting out of step (each is replaced by a new one)


def _new_hub_worker(log_dir: str) -> _HubWorker:
    global HUB_STARTS
    with _HUB_LOCK:
        HUB_STARTS += 1
        worker = _HubWorker(os.path.join(log_dir, f'hub-worker-{HUB_STARTS}.log'))
        _HUB_ALL.append(worker)
    return worker


def start_hub_workers(n: int, log_dir: str) -> None:
    """Start `n` idle workers now (conftest, before the cases), so their imports of OpenHands
    overlap the reference's instead of delaying the first cases."""
    workers = [_new_hub_worker(log_dir) for _ in range(n)]
    with _HUB_LOCK:
        _HUB_IDLE.extend(workers)


def _take_hub_worker(log_dir: str) -> _HubWorker:
    with _HUB_LOCK:
        while _HUB_IDLE:
            worker = _HUB_IDLE.pop()
            if worker.proc.poll() is None:
                return worker
    return _new_hub_worker(log_dir)


def _drop_hub_worker(worker: _HubWorker) -> None:
    global HUB_DROPPED
    with _HUB_LOCK:
        HUB_DROPPED += 1
        if worker in _HUB_ALL:
            _HUB_ALL.remove(worker)
    worker.stop()


def stop_hub_workers() -> None:
    """Ends every `--serve` process this run started (conftest, at the end of the session)."""
    while True:
        with _HUB_LOCK:
            if not _HUB_ALL:
                break
            worker = _HUB_ALL.pop()
            _HUB_IDLE.clear()
        worker.stop()


class HubSide(OursSide):
    """The `hub` driver: a case on an idle long-lived `hub_replay.py --serve` process (a fresh
    VsCodeRuntime, workspace and executor per case; OpenHands is imported once per worker, not
    once per case). The worker goes back to the pool when the case closed cleanly; one that
    misbehaves (no reply, no close) is stopped and never lent again."""

    def __init__(self, ws: str, no_change_timeout: int, stderr_path: str, needs_shell: bool = True):
        worker = _take_hub_worker(os.path.dirname(os.path.dirname(stderr_path)))
        self.worker = worker
        self.proc = worker.proc
        self.lines = worker.lines
        self.stderr_path = worker.log_path
        self.stderr_file = worker.stderr_file
        self.healthy = True
        worker.send({'__case__': {'workspace': ws, 'no_change_timeout': no_change_timeout}})

    def execute(self, line: dict, wait: float) -> dict:
        out = super().execute(line, wait)
        if '__ours_error__' in out:
            self.healthy = False
        return out

    def close(self) -> None:
        try:
            if self.healthy:
                self.worker.send({'__end__': True})
                if json.loads(self.lines.get(timeout=60) or 'null') == {'__closed__': True}:
                    with _HUB_LOCK:
                        _HUB_IDLE.append(self.worker)
                    return
        except Exception:
            pass
        # Out of step with its input: never lend it to another case.
        _drop_hub_worker(self.worker)
