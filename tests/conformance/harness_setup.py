"""Conformance harness, set-up: configuration, the run's environment, cases and workspaces.

Part of `harness.py` (which re-exports these names); see README.md for the case format.
"""
from __future__ import annotations

import base64
import json
import os
import re
import shutil
import stat
import subprocess
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
HARNESS_KEYS = ('sleep_before',)
# The known deviations (deviation_list.py's format, which the V1 differential's list shares).
DEVIATIONS_FILE = HERE / 'deviations.json'
# The one field a deviation may name (the history-truncation line count, spec §2.5/§2.14 [N]);
# every other difference of an observation fails its case.
DEVIATION_FIELDS = {'extras.metadata.prefix'}
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
_PINNED_ENV: dict[str, str] | None = None


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


def pin_env() -> None:
    """Take the snapshot `pinned_env()` returns (once). The pytest run takes it in its main thread
    after `base_dir()` and the reference's import (which sets variables of its own, as the
    reference's tmux server sees them), before any case starts."""
    global _PINNED_ENV
    base_dir()  # TMUX_TMPDIR first: the keeper below must start the run's private server
    with _ENV_LOCK:
        if _PINNED_ENV is None:
            _PINNED_ENV = dict(os.environ)
            _start_tmux_keeper(_PINNED_ENV)


def _start_tmux_keeper(env: dict[str, str]) -> None:
    """Start the reference's private tmux server (TMUX_TMPDIR) with one session that never ends,
    in the pinned environment (the one the first BashSession would have started it with).

    tmux exits when its last session is gone. Cases run in parallel, each closing its sessions:
    the next case's `new-session` could reach a server on its way out and fail with "server
    exited unexpectedly" (the reference "crashed" once in a full run; three workers creating and
    killing sessions on one socket hit it 3 times in 180 without this session, 0 with it)."""
    subprocess.run(
        ['tmux', 'new-session', '-d', '-s', 'ohconf-keeper', 'sleep 2147483647'],
        env=env, check=True, capture_output=True, timeout=30,
    )
    # tmux runs the command through $SHELL (else the login shell): a shell that cannot run it
    # (nologin) ends the session at once, and every case would then fail on its own. Wait until
    # the pane runs `sleep` (or the session is gone).
    deadline = time.monotonic() + 10
    while True:
        probe = subprocess.run(['tmux', 'list-panes', '-t', 'ohconf-keeper', '-F', '#{pane_current_command}'],
                               env=env, capture_output=True, text=True, timeout=30)
        if probe.returncode == 0 and probe.stdout.strip() == 'sleep':
            return
        if probe.returncode != 0 or time.monotonic() > deadline:
            raise RuntimeError(f'the private tmux server lost its keeper session (SHELL={env.get("SHELL")!r}; tmux '
                               f'runs a session through it, else the login shell): {probe.stderr.strip() or probe.stdout}')
        time.sleep(0.05)


def pinned_env() -> dict[str, str]:
    """The environment for the processes the harness starts (see `pin_env`).

    Not `env=None`: a child started by vfork reads the parent's live `environ` in execve, and a
    thread that adds a variable meanwhile (pytest's main thread, or an import in another worker
    that sets one) can move that array: execve then fails with EFAULT ("[Errno 14] Bad address",
    seen once in CI). An explicit env is copied into the child's own envp first. Not
    `dict(os.environ)` in a pool thread either: iterating it while the main thread changes it
    raises KeyError."""
    pin_env()
    assert _PINNED_ENV is not None
    return dict(_PINNED_ENV)


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
    notes: str = ''
    # Its entry in deviations.json ({} when none): the fields of which steps, the workspace paths
    # and whether the permission bits may differ from the reference's.
    deviation: dict = field(default_factory=dict)
    raw: dict = field(default_factory=dict, repr=False)  # the case as written (the reference store's key)

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
        known = {'name', 'actions', 'setup', 'session', 'notes'}
        unknown = set(d) - known
        if unknown:
            raise ValueError(f'{group}/{d.get("name")}: unknown case keys {sorted(unknown)} (a deviation is '
                             'listed in deviations.json, never in a case)')
        if not re.fullmatch(r'[A-Za-z0-9_.-]+', d.get('name', '')):
            raise ValueError(f'{group}: bad case name {d.get("name")!r}')
        for a in d['actions']:
            if 'expect_regex' in a:
                raise ValueError(f'{group}/{d["name"]}: expect_regex is gone: list the field in deviations.json')
        return cls(
            group=group,
            name=d['name'],
            actions=d['actions'],
            setup=d.get('setup') or {},
            session=d.get('session') or {},
            notes=d.get('notes', ''),
            raw=d,
        )


def _without_paths(snap: dict | None, listed: list[str]) -> dict | None:
    """A workspace snapshot without the paths a deviation lists (`dir/`: everything under it)."""
    if snap is None or not listed:
        return snap
    from deviation_list import path_listed

    return {k: v for k, v in snap.items() if not path_listed(k, listed)}


def _without_modes(snap: dict | None) -> dict | None:
    if snap is None:
        return None
    return {k: {f: v for f, v in e.items() if f != 'mode'} for k, e in snap.items()}


def load_deviations(path: Path = DEVIATIONS_FILE) -> dict[str, dict]:
    """deviations.json, checked (deviation_list.py says what an entry may name)."""
    from deviation_list import check_entries

    data = json.loads(path.read_text(encoding='utf-8'))
    problems = check_entries(data, name=path.name, known_fields=DEVIATION_FIELDS,
                             line_fields=tuple(sorted(DEVIATION_FIELDS)), allow_modes=True)
    if problems:
        raise ValueError('\n'.join(problems))
    return data


def load_cases(root: Path = CASES_DIR) -> list[Case]:
    cases: list[Case] = []
    seen: set[str] = set()
    deviations = load_deviations()
    for path in sorted(root.glob('*/*.json')):
        group = f'{path.parent.name}/{path.stem}'
        data = json.loads(path.read_text(encoding='utf-8'))
        for d in data:
            c = Case.from_dict(d, group)
            if c.id in seen:
                raise ValueError(f'duplicate case id {c.id}')
            seen.add(c.id)
            c.deviation = deviations.get(c.id, {})
            cases.append(c)
    return cases


def sample(cases: list[Case]) -> list[Case]:
    """The representative sample (`run.sh --sample`, `make quick`, the addon driver): every file case
    (they exercise the file callbacks of each driver) and, of each bash group (a behaviour class:
    basic, background, escaping, interactive, misc, multicmd, rendering, timeouts, tmux_quirks), the
    cases at its start, middle and end in file order: a fixed rule, so nobody picks the easy ones."""
    out = [c for c in cases if c.kind != 'bash']
    groups: dict[str, list[Case]] = {}
    for c in cases:
        if c.kind == 'bash':
            groups.setdefault(c.group, []).append(c)
    for members in groups.values():
        n = len(members)
        for i in sorted({0, n // 2, n - 1}):
            out.append(members[i])
    return out


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
