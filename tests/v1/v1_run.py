"""The V1 differential's run: its passes, what fails the suite, the summary (diff_v1.py's CLI
calls `orchestrate`)."""

from __future__ import annotations

import json
import os
import pwd
import sys
import time
from pathlib import Path

from v1_cases import NOT_COMPARED, SUBPROCESS_ONLY, load_cases, uses_terminal
from v1_compare import identical
from deviation_list import entry_for
from v1_deviations import check_case, docs_in_sync


def orchestrate(args, deviations: dict, version: str, run_pass, test_user: str) -> int:
    passes = [p for p in args.passes.split(',') if p]
    if set(passes) - {'root', 'non-root'}:
        print(f'unknown pass in {passes}; choose from root, non-root')
        return 2
    failures: list[tuple[str, str]] = []
    notes: list[str] = []
    docs_problem = docs_in_sync(deviations)
    if docs_problem:
        failures.append(('docs/v1.md', docs_problem))
    cases = load_cases(args.selectors)
    if args.oldest_sample:
        from v1_oldest import sample_ids
        ids, problem = sample_ids(Path(args.oldest_sample))
        if problem:
            failures.append(('oldest sample', problem))
        missing = ids - {cid for cid, _ in cases}
        if missing:
            failures.append(('oldest sample', f'oldest_sample.json names cases that do not exist or map: {sorted(missing)}'))
        cases = [(cid, c) for cid, c in cases if cid in ids]
        notes.append(f'oldest release: the {len(cases)} cases of oldest_sample.json (v1_oldest.py)')
    elif not args.selectors:
        # An entry for a case that no longer exists (or no longer maps onto V1) is stale too.
        known = {cid for cid, _ in cases}
        for key in deviations:
            if key.partition('@')[0] not in known:
                failures.append((key, 'stale deviation: no such mapped case (remove it from deviations.json)'))
        for cid in SUBPROCESS_ONLY:
            if cid not in known:
                failures.append((cid, 'v1_cases.SUBPROCESS_ONLY names a case that does not exist or map'))
    os.makedirs(args.report, exist_ok=True)
    am_root = os.geteuid() == 0
    user = None
    if 'root' in passes and not am_root:
        failures.append(('root pass', 'cannot run: this process is not root (the root pass compares every '
                         'terminal case; run tests/v1/run.sh as root)'))
        passes.remove('root')
    if 'non-root' in passes and am_root:
        try:
            user = pwd.getpwnam(test_user)
        except KeyError:
            failures.append(('non-root pass', f'cannot run: no user {test_user!r}: run scripts/setup-test-user.sh '
                             '(tests/v1/run.sh does)'))
            passes.remove('non-root')
    run: dict = {'v1_version': version, 'passes': {}, 'timings': {}, 'ran': {}}
    t_all = time.time()
    for name in passes:
        t0 = time.time()
        ids = [cid for cid, _ in cases]
        if name == 'non-root' and args.non_root_cases == 'editor':
            # Privilege changes how files are written (V1: a temporary file renamed over the
            # target; ours: in place), which only the file editor does itself; a terminal
            # command runs in the same bash as the same user on both sides (README.md).
            ids = [cid for cid, case in cases if not uses_terminal(case)]
            if ids:
                    notes.append(f'non-root pass: the {len(ids)} cases without a terminal step (--non-root-cases all: every case)')
        run['passes'][name] = run_pass(name, ids, args.j, user if name == 'non-root' else None) if ids else []
        run['timings'][name] = round(time.time() - t0)
        run['ran'][name] = ids
        for r in run['passes'][name]:
            hit = entry_for(deviations, r['id'], name)
            for problem in check_case(r, hit[1] if hit else None):
                failures.append((f'{r["id"]} [{name}, V1 {version} {r.get("backend") or "editor"}]', problem))
        print(f'v1 differential, {name} pass: {len(ids)} cases ({run["timings"][name]} s)', flush=True)
    cases_by_id = dict(cases)
    terminal_selected = sum(1 for _, c in cases if uses_terminal(c))
    terminal_compared = {r['id'] for results in run['passes'].values() for r in results
                         if uses_terminal(cases_by_id[r['id']]) and not (r.get('hung') or r.get('crashed'))}
    if not terminal_compared and (terminal_selected or not args.selectors):
        failures.append(('terminal', f'no terminal case was compared ({terminal_selected} selected)'))
    if not cases:
        failures.append(('cases', 'no case selected'))
    run['failures'] = [{'where': w, 'problem': p} for w, p in failures]
    results_path = Path(args.report, 'results.json')
    results_path.write_text(json.dumps(run, indent=1))
    for where, problem in failures:
        print(f'FAIL {where}: {problem}')
    for note in notes:
        print(f'NOTE {note}')
    print_summary(run, len(terminal_compared))
    if any('deviation' in p or 'differs' in p for _, p in failures):
        print(f'To rewrite deviations.json from this run for review (reasons kept, never run by the suite): '
              f'{sys.executable} {Path(__file__).with_name("diff_v1.py")} --rewrite-deviations {results_path}')
    print(f'v1 differential (openhands-tools {version}): {len(failures)} failures, {len(NOT_COMPARED)} not compared, '
          f'{time.time() - t_all:.0f} s')
    sys.stdout.flush()
    return 1 if failures else 0


def print_summary(run: dict, terminal_compared: int) -> None:
    for name, results in run['passes'].items():
        same = sum(identical(r) for r in results)
        backends = {b: sum(1 for r in results if r.get('backend') == b) for b in ('tmux', 'subprocess')}
        print(f'  {name}: {same}/{len(results)} identical, {len(results) - same} differ (each only in what its '
              f'deviation lists, or reported above); terminal reference: tmux {backends["tmux"]}, '
              f'subprocess {backends["subprocess"]}')
    print(f'  terminal cases compared: {terminal_compared}')
    varied = [(name, r) for name, results in run['passes'].items() for r in results if r.get('reference_varied')]
    print(f'  the reference varied (ours equals one of its results, reference_variants.judge): {len(varied)}')
    for name, r in varied:
        print(f'    {r["id"]} [{name}]: {r["reference_variants"]} distinct reference results in '
              f'{r["reference_runs"]} runs')
    for cid, reason in NOT_COMPARED.items():
        print(f'  not compared: {cid}: {reason}')
    for cid, why in SUBPROCESS_ONLY.items():
        print(f'  against V1 subprocess, not tmux: {cid}: {why}')
