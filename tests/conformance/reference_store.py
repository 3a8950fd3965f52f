"""Reference results kept for the length of one run, so that the reference runs once per case and
not once per driver (tests/README.md, "The reference runs once per case").

`make test` points `CONFORMANCE_REFERENCE_STORE` at a folder of its run; the first conformance
driver (replay) runs each case on both sides and leaves the reference's normalised result there; the
drivers after it (addon, hub, the cross targets) run only ours and compare with it. Every result is
filed under a key made of everything that can change it: the case's own text, the reference's
versions (openhands-ai, openhands-aci), bash's and tmux's versions, whether the run is root, the
harness code that drives the reference, and the workspace path's length (a long path wraps
differently). A key that is missing is run live; nothing is kept between runs, so a drift of the
reference can never hide behind an old result. Without the variable, every driver runs the reference
itself, as before.

Several results per key are the reference's own variants (reference_variants.py): a later driver that
differs from all of them lets the reference run again, up to the same bound per case and per run.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import subprocess
import tempfile
import threading
from importlib import metadata
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
# The harness files whose code decides what the reference is asked and how its replies are read.
_HARNESS_FILES = ('harness.py', 'harness_sides.py', 'harness_setup.py', 'harness_compare.py')
_LOCK = threading.Lock()


def _first_line(argv: list[str]) -> str:
    try:
        out = subprocess.run(argv, capture_output=True, text=True, timeout=10).stdout
    except (OSError, subprocess.TimeoutExpired) as e:
        return f'unavailable: {e}'
    return out.splitlines()[0] if out else ''


@functools.lru_cache(maxsize=1)
def environment() -> dict[str, str]:
    """What the reference's replies depend on, besides the case."""
    code = hashlib.sha256()
    for name in _HARNESS_FILES:
        code.update((HERE / name).read_bytes())
    return {
        'openhands-ai': metadata.version('openhands-ai'),
        'openhands-aci': metadata.version('openhands-aci'),
        'bash': _first_line(['bash', '--version']),
        'tmux': _first_line(['tmux', '-V']),
        'root': str(os.geteuid() == 0),
        'harness': code.hexdigest()[:16],
    }


def case_key(case_dict: dict, ws_length: int) -> str:
    text = json.dumps({'case': case_dict, 'env': environment(), 'ws_length': ws_length}, sort_keys=True)
    return hashlib.sha256(text.encode()).hexdigest()[:24]


class RunStore:
    """One folder, one JSON file per case key: {case, key, runs, variants}."""

    def __init__(self, folder: str):
        self.folder = Path(folder)
        self.folder.mkdir(parents=True, exist_ok=True)

    def _path(self, case_id: str, key: str) -> Path:
        return self.folder / (case_id.replace('/', '__') + '.' + key + '.json')

    def load(self, case_id: str, key: str) -> tuple[list[Any], int]:
        p = self._path(case_id, key)
        if not p.exists():
            return [], 0
        d = json.loads(p.read_text(encoding='utf-8'))
        return d['variants'], int(d['runs'])

    def save(self, case_id: str, key: str, variants: list[Any], runs: int) -> None:
        p = self._path(case_id, key)
        body = json.dumps({'case': case_id, 'key': key, 'env': environment(), 'runs': runs, 'variants': variants})
        with _LOCK:
            fd, tmp = tempfile.mkstemp(dir=self.folder, prefix='.tmp-')
            with os.fdopen(fd, 'w', encoding='utf-8') as f:
                f.write(body)
            os.replace(tmp, p)  # a reader sees the old or the new file, never half of one


def open_store() -> RunStore | None:
    folder = os.environ.get('CONFORMANCE_REFERENCE_STORE')
    return RunStore(folder) if folder else None
