"""Differential conformance harness: OpenHands V0 reference (in-process) vs `oh-executor replay`.

See README.md for the case format. Run with the reference venv's python.
This module is importable (conftest/test modules) and is also a small CLI:

    python harness.py [--ref-only|--ours-only] [--show] CASE_ID_OR_SUBSTRING...
"""

from __future__ import annotations

import copy
import difflib
import json
import os
import re
import shutil
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field

# The harness is split by concern; these names are its API (tests and replay drivers use them).
from harness_compare import Normaliser, _walk_strings, excuse_fields, obs_diff, pretty  # noqa: F401
from harness_setup import (  # noqa: F401
    DRIVER, HERE, REPO, Case, _without_modes, _without_paths, sample, base_dir, cleanup_base, load_cases,
    load_deviations,
    pin_env, prepare_workspace, snapshot_workspace,
)
import reference_store
import reference_variants
from harness_sides import (  # noqa: F401
    HubSide, OursSide, RefAsOurs, RefSide, _ref, canonical_action, start_hub_workers, stop_hub_workers,
)

RESULTS: dict[str, 'CaseResult'] = {}  # every run_case result of this process, by case id (summary line)


# --------------------------------------------------------------------------------------------
# Running a case


def _umask() -> int:
    """This process's umask, read without changing it (os.umask would, for every thread)."""
    with open('/proc/self/status') as f:
        for line in f:
            if line.startswith('Umask:'):
                return int(line.split()[1], 8)
    raise RuntimeError('no Umask line in /proc/self/status')


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
    setup_ws: dict | None = None  # our workspace right after the case's setup, before any action
    error: str | None = None
    seconds: float = 0.0
    # How the reference's result was had (reference_variants.judge, reference_store).
    reference_variants: int = 1  # distinct results the reference gave this case in this run
    reference_runs: int = 1
    reference_varied: bool = False  # ours equals a result of the reference other than its first
    reference_from_store: bool = False  # an earlier driver of this run ran the reference

    @property
    def workspace_identical(self) -> bool:
        """The final workspaces are equal but for the paths the case's deviation lists (and, with
        its `modes`, permission bits, which `mode_problems` judges against the case instead)."""
        listed = self.case.deviation.get('workspace', [])
        ref, ours = _without_paths(self.ref_ws, listed), _without_paths(self.ours_ws, listed)
        if self.case.deviation.get('modes'):
            return _without_modes(ref) == _without_modes(ours) and not self.mode_problems
        return ref == ours

    @property
    def mode_problems(self) -> list[str]:
        """For a case whose deviation lists `modes` (the reference's are not the oracle): every path
        of ours that existed after the setup must still have its setup mode (write/insert/undo keep
        a file's mode), and a path the actions created must have a new path's mode under the
        umask (0666 or 0777 less the umask: what `create` gives, whatever edits followed)."""
        if not self.case.deviation.get('modes') or self.ours_ws is None or self.setup_ws is None:
            return []
        problems = []
        for rel, entry in sorted(self.ours_ws.items()):
            if 'mode' not in entry:
                continue
            before = self.setup_ws.get(rel)
            if before is not None and 'mode' in before:
                want, source = before['mode'], 'the mode the setup gave it'
            else:
                full = 0o777 if entry['type'] == 'dir' else 0o666
                want, source = oct(full & ~_umask()), 'a new path under the umask'
            if entry['mode'] != want:
                problems.append(f'{rel}: ours has mode {entry["mode"]}, expected {want} ({source})')
        return problems

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
        for p in self.mode_problems:
            out.append(f'--- mode not kept: {p}')
        if self.ref_ws is not None and self.ours_ws is not None and not self.workspace_identical:
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


@dataclass
class SideRun:
    """One side's run of a case: its normalised observations (None where it gave none), times,
    final workspace and what went wrong. A reference SideRun is what the run's store keeps."""

    steps: list[dict | None]
    seconds: list[float]
    ws: dict | None
    error: str | None = None

    def to_json(self) -> dict:
        return {'steps': self.steps, 'seconds': self.seconds, 'ws': self.ws, 'error': self.error}

    @classmethod
    def from_json(cls, d: dict) -> 'SideRun':
        return cls(d['steps'], d['seconds'], d['ws'], d['error'])

    def key(self) -> str:
        """Tells two reference results apart (times excluded)."""
        return json.dumps([self.steps, self.ws, self.error], ensure_ascii=False, sort_keys=False)


def _case_dir(case: Case) -> str:
    safe = re.sub(r'[^A-Za-z0-9_.-]', '_', case.id)[:60]
    return tempfile.mkdtemp(prefix=f'{safe}-', dir=base_dir())


def _drive(case: Case, side_factory, ws: str, execute) -> SideRun:
    """Send the case's actions to one side, one at a time, and normalise what comes back."""
    lines = [canonical_action(a, ws, i + 1) for i, a in enumerate(case.actions)]
    raw: list[dict | None] = [None] * len(lines)
    secs = [0.0] * len(lines)
    error = None
    side = None
    try:
        side = side_factory()
        for i, a in enumerate(case.actions):
            if a.get('sleep_before'):
                time.sleep(float(a['sleep_before']))
            t = time.monotonic()
            raw[i] = execute(side, lines[i])
            secs[i] = time.monotonic() - t
            if '__ours_error__' in raw[i]:
                break
    except Exception as e:
        import traceback

        error = f'{e!r}\n{traceback.format_exc()}'
    finally:
        if side is not None:
            side.close()
    n = Normaliser(ws)
    return SideRun([None if r is None else n(r) for r in raw], secs, snapshot_workspace(ws), error)


def run_reference(case: Case, case_dir: str | None = None) -> SideRun:
    """The reference alone on a fresh workspace (same path length as every other side's)."""
    own = case_dir is None
    case_dir = case_dir or _case_dir(case)
    ws = tempfile.mkdtemp(prefix='ohc-r-', dir=case_dir)
    try:
        prepare_workspace(ws, case.setup)
        run = _drive(case, lambda: RefSide(ws, case.no_change_timeout, needs_shell=case.needs_shell), ws,
                     lambda side, line: side.execute(line))
        if run.error:
            run.error = 'reference crashed: ' + run.error
        return run
    finally:
        if own and not os.environ.get('CONFORMANCE_KEEP'):
            shutil.rmtree(case_dir, ignore_errors=True)


def _run_ours(case: Case, case_dir: str, ours_cls: type | None) -> tuple[SideRun, dict]:
    ws = tempfile.mkdtemp(prefix='ohc-o-', dir=case_dir)
    prepare_workspace(ws, case.setup)
    setup_ws = snapshot_workspace(ws)
    stderr = os.path.join(case_dir, 'ours.stderr')

    def factory():
        if ours_cls is None and DRIVER == 'hub':
            return HubSide(ws, case.no_change_timeout, stderr)
        if ours_cls is None:
            return OursSide(ws, case.no_change_timeout, stderr)
        return ours_cls(ws, case.no_change_timeout, stderr, case.needs_shell)

    def execute(side, line):
        return side.execute(line, _wait_budget(line, case.no_change_timeout))

    run = _drive(case, factory, ws, execute)
    if run.error:
        run.error = 'ours: ' + run.error.splitlines()[0]
    return run, setup_ws


def compare(case: Case, ref: SideRun | None, ours: SideRun | None, setup_ws: dict | None = None) -> CaseResult:
    """One CaseResult from a reference result and ours (either may be absent: --ref-only/--ours-only)."""
    result = CaseResult(case=case, setup_ws=setup_ws)
    result.ref_ws = ref.ws if ref else None
    result.ours_ws = ours.ws if ours else None
    result.error = '\n'.join(e for e in (ref and ref.error, ours and ours.error) if e) or None
    for i, a in enumerate(case.actions):
        s = Step(index=i + 1, action=canonical_action(a, '{WS}', i + 1))
        if ref is not None:
            s.ref_norm = copy.deepcopy(ref.steps[i])
            s.ref_seconds = ref.seconds[i]
            if s.ref_norm is None:
                s.problems.append('reference produced no observation')
        if ours is not None:
            s.ours_norm = copy.deepcopy(ours.steps[i])
            s.ours_seconds = ours.seconds[i]
            if s.ours_norm is None:
                s.problems.append('ours produced no observation')
        if case.deviation and s.ref_norm is not None and s.ours_norm is not None:
            s.problems.extend(excuse_fields(s.ref_norm, s.ours_norm, case.deviation, i + 1))
        result.steps.append(s)
    return result


def run_case(case: Case, ref: bool = True, ours: bool = True, ours_cls: type | None = None) -> CaseResult:
    """Run a case and judge ours against the reference (reference_variants.judge: ours once; the
    reference's results from this run's store, or live, up to its bound on a difference)."""
    t0 = time.monotonic()
    store = reference_store.open_store() if (ref and ours and ours_cls is None) else None
    # The workspace path's length (base + the case's folder + ohc-o-XXXXXXXX) follows from the base's.
    key = reference_store.case_key({'id': case.id, **case.raw}, len(base_dir())) if store else ''
    known, runs = store.load(case.id, key) if store else ([], 0)
    case_dir = _case_dir(case)
    try:
        ours_run: SideRun | None = None
        setup_ws = None
        first_ref: SideRun | None = None

        def run_ours_thread():
            nonlocal ours_run, setup_ws
            ours_run, setup_ws = _run_ours(case, case_dir, ours_cls)

        th = threading.Thread(target=run_ours_thread, daemon=True)
        if ours:
            th.start()
        if ref and not known:  # first run of this case in the run: both sides at once, as always
            first_ref = run_reference(case, case_dir)
        if ours:
            th.join()
        if not (ref and ours):
            result = compare(case, first_ref, ours_run, setup_ws)
        else:
            variants = [SideRun.from_json(v) for v in known]
            if first_ref is not None:
                variants.append(first_ref)
                runs += 1
            verdict = reference_variants.judge(
                ours_run, variants, runs, lambda: run_reference(case),
                equal=lambda r, o: compare(case, r, o, setup_ws).identical, key=SideRun.key,
                # --ref-vs-ref measures the reference against itself: its raw difference is the answer.
                max_runs=1 if ours_cls is RefAsOurs else None,
            )
            chosen = verdict.variants[verdict.matched if verdict.matched is not None else 0]
            result = compare(case, chosen, ours_run, setup_ws)
            result.reference_variants = len(verdict.variants)
            result.reference_runs = verdict.runs
            result.reference_varied = verdict.reference_varied
            result.reference_from_store = bool(known)
            if store:
                store.save(case.id, key, [v.to_json() for v in verdict.variants], verdict.runs)
    finally:
        if not os.environ.get('CONFORMANCE_KEEP'):
            shutil.rmtree(case_dir, ignore_errors=True)
    result.seconds = time.monotonic() - t0
    RESULTS[case.id] = result
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
        stop_hub_workers()
        cleanup_base()
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
