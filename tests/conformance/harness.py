"""Differential conformance harness: OpenHands V0 reference (in-process) vs `oh-executor replay`.

See README.md for the case format. Run with the reference venv's python.
This module is importable (conftest/test modules) and is also a small CLI:

    python harness.py [--ref-only|--ours-only] [--show] CASE_ID_OR_SUBSTRING...
"""

from __future__ import annotations

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
from harness_compare import Normaliser, _walk_strings, apply_regex, obs_diff, pretty  # noqa: F401
from harness_setup import (  # noqa: F401
    DRIVER, HERE, REPO, Case, _without_modes, base_dir, cleanup_base, load_cases,
    pin_env, prepare_workspace, snapshot_workspace,
)
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

    @property
    def workspace_identical(self) -> bool:
        if self.case.compare_workspace is False:
            return True
        if self.case.compare_workspace == 'ignore_modes':
            return _without_modes(self.ref_ws) == _without_modes(self.ours_ws) and not self.mode_problems
        return self.ref_ws == self.ours_ws

    @property
    def mode_problems(self) -> list[str]:
        """For an `ignore_modes` case, where the reference's modes are not the oracle: every path
        of ours that existed after the setup must still have its setup mode (write/insert/undo keep
        a file's mode), and a path the actions created must have a new path's mode under the
        umask (0666 or 0777 less the umask: what `create` gives, whatever edits followed)."""
        if self.case.compare_workspace != 'ignore_modes' or self.ours_ws is None or self.setup_ws is None:
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
        result.setup_ws = snapshot_workspace(ws_ours)
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
                if ours_cls is None and DRIVER == 'hub':
                    side = HubSide(ws_ours, case.no_change_timeout, os.path.join(case_dir, 'ours.stderr'))
                elif ours_cls is None:
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
        stop_hub_workers()
        cleanup_base()
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
