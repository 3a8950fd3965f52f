"""Differential conformance harness: OpenHands V0 reference (in-process) vs `oh-executor replay`.

See README.md for the case format. Run with the reference venv's python.
This module is importable (conftest/test modules) and is also a small CLI:

    python harness.py [--ref-only|--ours-only] [--show] CASE_ID_OR_SUBSTRING...
"""

from __future__ import annotations

import asyncio
import base64
import copy
import difflib
import json
import os
import queue
import re
import shutil
import stat
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
CASES_DIR = HERE / 'cases'

DEFAULT_TIMEOUT = 120.0  # sandbox.timeout, what the runtime client defaults
DEFAULT_NO_CHANGE_TIMEOUT = 10  # NO_CHANGE_TIMEOUT_SECONDS default of the action server
INIT_COMMAND_TIMEOUT = 300
REGEX_OK = '{REGEX_OK}'
HARNESS_KEYS = ('sleep_before', 'expect_regex')
# Only this field may be compared by regex (history-truncation line count, spec §2.5/§2.14 [N]).
ALLOWED_REGEX_FIELDS = {'extras.metadata.prefix'}
# How "ours" runs: `replay` = the `oh-executor replay` binary; `addon` = the napi addon's
# Executor.execute() with JS filesystem callbacks over node:fs (addon_replay.js);
# `socket` = the headless executor CLI registered over Socket.IO with a python-socketio server
# speaking docs/protocol.md (socket_replay.py); `hub` = a real VsCodeRuntime (embedded mode, the
# real hub.py) that spawns that executor CLI, actions through VsCodeRuntime.run/read/write/edit
# (hub_replay.py).
DRIVER = os.environ.get('CONFORMANCE_DRIVER', 'replay')
if DRIVER not in ('replay', 'addon', 'socket', 'hub'):
    raise ValueError(f'CONFORMANCE_DRIVER must be replay, addon, socket or hub, not {DRIVER!r}')


# --------------------------------------------------------------------------------------------
# Environment: one private tmux server, the same env for both sides


_ENV_LOCK = threading.Lock()
_BASE: str | None = None
RESULTS: dict[str, 'CaseResult'] = {}  # every run_case result of this process, by case id (summary line)


def base_dir() -> str:
    """Create (once) the run's temp root and pin the process environment.

    Must run before the first reference session: the private tmux server is started by the
    first BashSession and inherits os.environ at that moment; the replay processes get a copy
    of the same os.environ.
    """
    global _BASE
    with _ENV_LOCK:
        if _BASE is None:
            _BASE = tempfile.mkdtemp(prefix='ohconf-', dir='/tmp')
            tmux_dir = os.path.join(_BASE, 'tmux')
            os.makedirs(tmux_dir)
            os.environ['TMUX_TMPDIR'] = tmux_dir
            for k in ('TMUX', 'TMUX_PANE', 'NO_CHANGE_TIMEOUT_SECONDS'):
                os.environ.pop(k, None)
            os.environ['LANG'] = 'C.UTF-8'
            os.environ['LC_ALL'] = 'C.UTF-8'
            # ~/.bashrc runs `pyenv rehash`, which waits up to 60 s on a lock file that a shell killed
            # mid-rehash (a short case's tmux session) leaves behind. Both sides get the same value.
            os.environ['PYENV_REHASH_TIMEOUT'] = '1'
        return _BASE


def cleanup_base() -> None:
    global _BASE
    if _BASE and not os.environ.get('CONFORMANCE_KEEP'):
        try:
            subprocess.run(['tmux', 'kill-server'], capture_output=True, timeout=10)
        except Exception:
            pass
        shutil.rmtree(_BASE, ignore_errors=True)


def executor_binary() -> str:
    if os.environ.get('OH_EXECUTOR'):
        return os.environ['OH_EXECUTOR']
    target = os.environ.get('CARGO_TARGET_DIR') or str(REPO / 'target')
    return os.path.join(target, 'debug', 'oh-executor')


# --------------------------------------------------------------------------------------------
# Cases


@dataclass
class Case:
    group: str  # e.g. 'bash/timeouts'
    name: str
    actions: list[dict]
    setup: dict = field(default_factory=dict)
    session: dict = field(default_factory=dict)
    # True: paths, types, permission bits, bytes, link targets. 'ignore_modes': the same
    # without permission bits (only for a documented mode deviation). False: not compared.
    compare_workspace: bool | str = True
    xfail: str | None = None
    racy: str | None = None
    notes: str = ''

    @property
    def id(self) -> str:
        return f'{self.group}/{self.name}'

    @property
    def kind(self) -> str:
        return self.group.split('/')[0]

    @property
    def needs_shell(self) -> bool:
        return any(a.get('action') == 'run' for a in self.actions)

    @property
    def no_change_timeout(self) -> int:
        return int(self.session.get('no_change_timeout', DEFAULT_NO_CHANGE_TIMEOUT))

    @classmethod
    def from_dict(cls, d: dict, group: str) -> 'Case':
        known = {'name', 'actions', 'setup', 'session', 'compare_workspace', 'xfail', 'racy', 'notes'}
        unknown = set(d) - known
        if unknown:
            raise ValueError(f'{group}/{d.get("name")}: unknown case keys {sorted(unknown)}')
        if not re.fullmatch(r'[A-Za-z0-9_.-]+', d.get('name', '')):
            raise ValueError(f'{group}: bad case name {d.get("name")!r}')
        for a in d['actions']:
            for f in a.get('expect_regex', {}):
                if f not in ALLOWED_REGEX_FIELDS:
                    raise ValueError(f'{group}/{d["name"]}: expect_regex not allowed for {f}')
        return cls(
            group=group,
            name=d['name'],
            actions=d['actions'],
            setup=d.get('setup') or {},
            session=d.get('session') or {},
            compare_workspace=_compare_mode(group, d),
            xfail=d.get('xfail'),
            racy=d.get('racy'),
            notes=d.get('notes', ''),
        )


def _compare_mode(group: str, d: dict) -> bool | str:
    v = d.get('compare_workspace', True)
    if v not in (True, False, 'ignore_modes'):
        raise ValueError(f'{group}/{d.get("name")}: compare_workspace must be true, false or "ignore_modes"')
    return v


def _without_modes(snap: dict | None) -> dict | None:
    if snap is None:
        return None
    return {k: {f: v for f, v in e.items() if f != 'mode'} for k, e in snap.items()}


def load_cases(root: Path = CASES_DIR) -> list[Case]:
    cases: list[Case] = []
    seen: set[str] = set()
    for path in sorted(root.glob('*/*.json')):
        group = f'{path.parent.name}/{path.stem}'
        data = json.loads(path.read_text(encoding='utf-8'))
        for d in data:
            c = Case.from_dict(d, group)
            if c.id in seen:
                raise ValueError(f'duplicate case id {c.id}')
            seen.add(c.id)
            cases.append(c)
    return cases


def _subst(value: Any, ws: str) -> Any:
    if isinstance(value, str):
        return value.replace('{WS}', ws)
    if isinstance(value, list):
        return [_subst(v, ws) for v in value]
    if isinstance(value, dict):
        return {k: _subst(v, ws) for k, v in value.items()}
    return value


def prepare_workspace(ws: str, setup: dict) -> None:
    for d in setup.get('dirs', []):
        os.makedirs(os.path.join(ws, d), exist_ok=True)
    for rel, content in setup.get('files', {}).items():
        p = os.path.join(ws, rel)
        os.makedirs(os.path.dirname(p), exist_ok=True)
        with open(p, 'wb') as f:
            f.write(_subst(content, ws).encode('utf-8'))
    for rel, b64 in setup.get('files_b64', {}).items():
        p = os.path.join(ws, rel)
        os.makedirs(os.path.dirname(p), exist_ok=True)
        with open(p, 'wb') as f:
            f.write(base64.b64decode(b64))
    for rel, target in setup.get('symlinks', {}).items():
        p = os.path.join(ws, rel)
        os.makedirs(os.path.dirname(p), exist_ok=True)
        os.symlink(_subst(target, ws), p)
    for rel, mode in setup.get('modes', {}).items():
        os.chmod(os.path.join(ws, rel), int(mode, 8))


def snapshot_workspace(ws: str) -> dict:
    """Paths, types, permission bits, contents (text or base64) and link targets."""
    snap: dict[str, Any] = {}
    for dirpath, dirnames, filenames in os.walk(ws):
        dirnames.sort()
        for name in sorted(dirnames) + sorted(filenames):
            p = os.path.join(dirpath, name)
            rel = os.path.relpath(p, ws)
            st = os.lstat(p)
            mode = oct(stat.S_IMODE(st.st_mode))
            if stat.S_ISLNK(st.st_mode):
                snap[rel] = {'type': 'symlink', 'target': os.readlink(p).replace(ws, '{WS}')}
            elif stat.S_ISDIR(st.st_mode):
                snap[rel] = {'type': 'dir', 'mode': mode}
            elif stat.S_ISREG(st.st_mode):
                with open(p, 'rb') as f:
                    data = f.read()
                try:
                    content: Any = data.decode('utf-8').replace(ws, '{WS}')
                except UnicodeDecodeError:
                    content = {'base64': base64.b64encode(data).decode()}
                snap[rel] = {'type': 'file', 'mode': mode, 'content': content}
            else:
                snap[rel] = {'type': 'other', 'mode': mode}
    return snap


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
            # inherit (a copy of os.environ can race with pytest setting PYTEST_CURRENT_TEST in
            # another thread: KeyError)
            env=None,
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


# --------------------------------------------------------------------------------------------
# Normalisation and comparison


def _walk_strings(value: Any, fn) -> Any:
    if isinstance(value, str):
        return fn(value)
    if isinstance(value, list):
        return [_walk_strings(v, fn) for v in value]
    if isinstance(value, dict):
        return {k: _walk_strings(v, fn) for k, v in value.items()}
    return value


def _get_field(d: dict, dotted: str) -> tuple[bool, Any]:
    cur: Any = d
    for part in dotted.split('.'):
        if not isinstance(cur, dict) or part not in cur:
            return False, None
        cur = cur[part]
    return True, cur


def _set_field(d: dict, dotted: str, value: Any) -> None:
    parts = dotted.split('.')
    cur = d
    for part in parts[:-1]:
        cur = cur[part]
    cur[parts[-1]] = value


class Normaliser:
    """Per side and per case: workspace path, pids (stable tokens), editor history dir."""

    def __init__(self, ws: str):
        self.ws = ws
        self.pids: dict[int, str] = {}

    def __call__(self, obs: dict) -> dict:
        obs = copy.deepcopy(obs)
        md = obs.get('extras', {}).get('metadata') if isinstance(obs.get('extras'), dict) else None
        if isinstance(md, dict) and isinstance(md.get('pid'), int) and md['pid'] != -1:
            pid = md['pid']
            if pid not in self.pids:
                self.pids[pid] = f'{{PID{len(self.pids) + 1}}}'
            md['pid'] = self.pids[pid]
        pid_re = re.compile(r'\b(' + '|'.join(str(p) for p in self.pids) + r')\b') if self.pids else None

        def fix(s: str) -> str:
            s = s.replace(self.ws, '{WS}')
            s = re.sub(r'/tmp/oh_editor_history_[A-Za-z0-9_]+', '{EDITOR_HISTORY}', s)
            if pid_re is not None:
                s = pid_re.sub(lambda mm: self.pids[int(mm.group(1))], s)
            return s

        return _walk_strings(obs, fix)


def apply_regex(ref: dict, ours: dict, regexes: dict[str, str]) -> list[str]:
    """Check regex fields on both sides, then blank them. Returns problems."""
    problems = []
    for dotted, rx in regexes.items():
        for side, obs in (('reference', ref), ('ours', ours)):
            ok, val = _get_field(obs, dotted)
            if not ok:
                problems.append(f'{side}: field {dotted} missing')
                continue
            if not isinstance(val, str) or not re.fullmatch(rx, val, flags=re.S):
                problems.append(f'{side}: field {dotted} = {val!r} does not match /{rx}/')
                continue
            _set_field(obs, dotted, REGEX_OK)
    return problems


def pretty(obs: Any) -> str:
    return json.dumps(obs, indent=2, ensure_ascii=False)


def obs_diff(ref: dict, ours: dict) -> str:
    out = []
    a, b = pretty(ref).splitlines(), pretty(ours).splitlines()
    out.extend(difflib.unified_diff(a, b, 'reference', 'ours', lineterm='', n=3))
    rc, oc = ref.get('content'), ours.get('content')
    if isinstance(rc, str) and isinstance(oc, str) and rc != oc:
        out.append('--- content (reference vs ours), raw lines:')
        out.extend(
            difflib.unified_diff(
                [repr(x) for x in rc.split('\n')],
                [repr(x) for x in oc.split('\n')],
                'reference.content',
                'ours.content',
                lineterm='',
                n=2,
            )
        )
    if json.loads(json.dumps(ref)) == json.loads(json.dumps(ours)) and json.dumps(ref) != json.dumps(ours):
        out.append('(values equal, KEY ORDER differs)')
        out.append('reference keys: ' + _key_order(ref))
        out.append('ours keys:      ' + _key_order(ours))
    return '\n'.join(out)


def _key_order(d: Any, prefix: str = '') -> str:
    if not isinstance(d, dict):
        return ''
    parts = []
    for k, v in d.items():
        parts.append(prefix + k)
        if isinstance(v, dict):
            parts.append('{' + _key_order(v) + '}')
    return ' '.join(parts)


# --------------------------------------------------------------------------------------------
# Running a case


@dataclass
class Step:
    index: int
    action: dict  # the line sent (reference workspace)
    ref: dict | None = None
    ours: dict | None = None
    ref_norm: dict | None = None
    ours_norm: dict | None = None
    ref_seconds: float = 0.0
    ours_seconds: float = 0.0
    problems: list[str] = field(default_factory=list)

    @property
    def identical(self) -> bool:
        return (
            not self.problems
            and self.ref_norm is not None
            and self.ours_norm is not None
            and json.dumps(self.ref_norm, ensure_ascii=False) == json.dumps(self.ours_norm, ensure_ascii=False)
        )


@dataclass
class CaseResult:
    case: Case
    steps: list[Step] = field(default_factory=list)
    ref_ws: dict | None = None
    ours_ws: dict | None = None
    error: str | None = None
    seconds: float = 0.0

    @property
    def workspace_identical(self) -> bool:
        if self.case.compare_workspace is False:
            return True
        if self.case.compare_workspace == 'ignore_modes':
            return _without_modes(self.ref_ws) == _without_modes(self.ours_ws)
        return self.ref_ws == self.ours_ws

    @property
    def identical(self) -> bool:
        return (
            self.error is None
            and len(self.steps) == len(self.case.actions)
            and all(s.identical for s in self.steps)
            and self.workspace_identical
        )

    def report(self, show_all: bool = False) -> str:
        out = [f'case {self.case.id}: {"IDENTICAL" if self.identical else "DIFFERENT"} ({self.seconds:.1f} s)']
        if self.case.notes:
            out.append(f'  notes: {self.case.notes}')
        if self.error:
            out.append(f'  ERROR: {self.error}')
        for s in self.steps:
            cmd = s.action.get('args', {}).get('command', s.action.get('args', {}).get('path', ''))
            head = (
                f'--- action {s.index} ({s.action.get("action")} {cmd!r}, timeout={s.action.get("timeout")}) '
                f'ref {s.ref_seconds:.1f}s ours {s.ours_seconds:.1f}s: '
                f'{"identical" if s.identical else "DIFFERENT"}'
            )
            if s.identical and not show_all:
                out.append(head)
                continue
            out.append(head)
            out.append('    sent: ' + json.dumps(s.action, ensure_ascii=False))
            for p in s.problems:
                out.append('    ' + p)
            if show_all or not s.identical:
                if s.ref_norm is not None and s.ours_norm is not None and not s.identical:
                    out.append(obs_diff(s.ref_norm, s.ours_norm))
                if show_all:
                    out.append('reference: ' + pretty(s.ref_norm))
                    out.append('ours:      ' + pretty(s.ours_norm))
        if self.case.compare_workspace and self.ref_ws is not None and self.ours_ws is not None and not self.workspace_identical:
            out.append('--- final workspace differs:')
            out.extend(
                difflib.unified_diff(pretty(self.ref_ws).splitlines(), pretty(self.ours_ws).splitlines(), 'reference', 'ours', lineterm='')
            )
        return '\n'.join(out)


def _wait_budget(line: dict, nct: int) -> float:
    t = line.get('timeout')
    if isinstance(t, (int, float)) and t:
        return float(t) + 60.0
    return float(nct) + 120.0


def run_case(case: Case, ref: bool = True, ours: bool = True, ours_cls: type | None = None) -> CaseResult:
    """Run a case on both sides (concurrently) and compare."""
    base = base_dir()
    t0 = time.monotonic()
    result = CaseResult(case=case)
    safe = re.sub(r'[^A-Za-z0-9_.-]', '_', case.id)[:60]
    case_dir = tempfile.mkdtemp(prefix=f'{safe}-', dir=base)
    ws_ref = tempfile.mkdtemp(prefix='ohc-r-', dir=case_dir)
    ws_ours = tempfile.mkdtemp(prefix='ohc-o-', dir=case_dir)
    assert len(ws_ref) == len(ws_ours)
    try:
        prepare_workspace(ws_ref, case.setup)
        prepare_workspace(ws_ours, case.setup)
        raw_actions = case.actions
        lines_ref = [canonical_action(a, ws_ref, i + 1) for i, a in enumerate(raw_actions)]
        lines_ours = [canonical_action(a, ws_ours, i + 1) for i, a in enumerate(raw_actions)]
        steps = [Step(index=i + 1, action=_walk_strings(lines_ref[i], lambda s: s.replace(ws_ref, '{WS}'))) for i in range(len(raw_actions))]
        errors: list[str] = []

        def run_ref():
            if not ref:
                return
            side = None
            try:
                side = RefSide(ws_ref, case.no_change_timeout, needs_shell=case.needs_shell)
                for i, a in enumerate(raw_actions):
                    if a.get('sleep_before'):
                        time.sleep(float(a['sleep_before']))
                    t = time.monotonic()
                    steps[i].ref = side.execute(lines_ref[i])
                    steps[i].ref_seconds = time.monotonic() - t
            except Exception as e:
                import traceback

                errors.append(f'reference crashed: {e!r}\n{traceback.format_exc()}')
            finally:
                if side is not None:
                    side.close()
                result.ref_ws = snapshot_workspace(ws_ref)

        def run_ours():
            if not ours:
                return
            side = None
            try:
                if ours_cls is None:
                    side = OursSide(ws_ours, case.no_change_timeout, os.path.join(case_dir, 'ours.stderr'))
                else:
                    side = ours_cls(ws_ours, case.no_change_timeout, os.path.join(case_dir, 'ours.stderr'), case.needs_shell)
                for i, a in enumerate(raw_actions):
                    if a.get('sleep_before'):
                        time.sleep(float(a['sleep_before']))
                    t = time.monotonic()
                    steps[i].ours = side.execute(lines_ours[i], _wait_budget(lines_ours[i], case.no_change_timeout))
                    steps[i].ours_seconds = time.monotonic() - t
                    if '__ours_error__' in steps[i].ours:
                        break
            except Exception as e:
                errors.append(f'ours: {e}')
            finally:
                if side is not None:
                    side.close()
                result.ours_ws = snapshot_workspace(ws_ours)

        th = threading.Thread(target=run_ours, daemon=True)
        th.start()
        run_ref()
        th.join()

        n_ref, n_ours = Normaliser(ws_ref), Normaliser(ws_ours)
        for i, s in enumerate(steps):
            if s.ref is not None:
                s.ref_norm = n_ref(s.ref)
            if s.ours is not None:
                s.ours_norm = n_ours(s.ours)
            regexes = raw_actions[i].get('expect_regex') or {}
            if regexes and s.ref_norm is not None and s.ours_norm is not None:
                s.problems.extend(apply_regex(s.ref_norm, s.ours_norm, regexes))
            if s.ref is None and ref:
                s.problems.append('reference produced no observation')
            if s.ours is None and ours:
                s.problems.append('ours produced no observation')
        result.steps = steps
        if errors:
            result.error = '\n'.join(errors)
    finally:
        result.seconds = time.monotonic() - t0
        RESULTS[case.id] = result
        if not os.environ.get('CONFORMANCE_KEEP'):
            shutil.rmtree(case_dir, ignore_errors=True)
    return result


# --------------------------------------------------------------------------------------------
# CLI


def main(argv: list[str]) -> int:
    import argparse

    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument('selectors', nargs='*', help='case ids or substrings (default: all)')
    p.add_argument('--ref-only', action='store_true')
    p.add_argument('--ours-only', action='store_true')
    p.add_argument('--show', action='store_true', help='print every observation')
    p.add_argument('--list', action='store_true')
    p.add_argument('--ref-vs-ref', action='store_true', help='compare the reference with itself (flakiness check)')
    p.add_argument('-j', '--jobs', type=int, default=1, help='cases in parallel')
    args = p.parse_args(argv)
    cases = load_cases()
    if args.selectors:
        cases = [c for c in cases if any(s == c.id or s in c.id for s in args.selectors)]
    if args.list:
        for c in cases:
            print(c.id)
        return 0
    ok = 0
    from concurrent.futures import ThreadPoolExecutor

    base_dir()
    pool = ThreadPoolExecutor(max_workers=max(1, args.jobs))
    futs = [
        pool.submit(run_case, c, not args.ours_only, not args.ref_only, RefAsOurs if args.ref_vs_ref else None)
        for c in cases
    ]
    try:
        for c, f in zip(cases, futs):
            r = f.result()
            if args.ref_only or args.ours_only:
                print(f'== {c.id} ({r.seconds:.1f} s)' + (f' ERROR {r.error}' if r.error else ''))
                for s in r.steps:
                    print(f'-- {s.index}: ' + json.dumps(s.action, ensure_ascii=False))
                    print(pretty(s.ref_norm if args.ref_only else s.ours_norm))
                continue
            ok += r.identical
            print(r.report(show_all=args.show))
        if not (args.ref_only or args.ours_only):
            print(f'{ok}/{len(cases)} identical')
    finally:
        cleanup_base()
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
