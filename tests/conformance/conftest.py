"""Runs the selected conformance cases in a small thread pool, reports the summary line."""

from __future__ import annotations

import json
import os
import sys
from concurrent.futures import Future, ThreadPoolExecutor

import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import harness  # noqa: E402
import harness_sides  # noqa: E402


def _keep_environ_still(item, when):  # noqa: ARG001 - pytest's signature
    """pytest writes `PYTEST_CURRENT_TEST` into os.environ at every phase of every test, from the
    main thread, while the pool threads start the reference side's tmux through libtmux, which
    passes no env of its own: a child that reads the parent's `environ` while it is reallocated
    fails execve with EFAULT (`bash/basic/while_loop` did, once in two whole hub runs).
    `pinned_env()` covers the processes the harness starts itself; this covers libtmux's."""


import _pytest.runner  # noqa: E402

_pytest.runner._update_current_test_var = _keep_environ_still

ARTIFACTS = os.environ.get('CONFORMANCE_ARTIFACTS') or str(harness.REPO / 'tests' / 'artifacts' / 'conformance')
_pool: ThreadPoolExecutor | None = None
_futures: dict[str, Future] = {}
def _submit_all(session: pytest.Session) -> None:
    global _pool
    if _pool is not None:
        return
    harness.base_dir()  # pin the environment before anything starts tmux
    # The reference's import sets environment variables (and moves the `environ` array): here, in
    # the main thread, before any case starts a process, not in the first worker while the
    # others start theirs (harness_setup.pinned_env).
    harness._ref()
    harness.pin_env()
    workers = int(os.environ.get('CONFORMANCE_WORKERS', '3'))
    if harness.DRIVER == 'hub':
        harness.start_hub_workers(max(1, workers), harness.base_dir())
    _pool = ThreadPoolExecutor(max_workers=max(1, workers), thread_name_prefix='conformance')
    cases = []
    for item in session.items:
        case = getattr(item, 'callspec', None) and item.callspec.params.get('case')
        if isinstance(case, harness.Case) and case.id not in {c.id for c in cases}:
            cases.append(case)
    # longest first (bash cases that sleep or time out), so the pool drains evenly
    for case in sorted(cases, key=_estimate, reverse=True):
        _futures[case.id] = _pool.submit(harness.run_case, case)


def _estimate(case: harness.Case) -> float:
    if not case.needs_shell:
        return 0.1 * len(case.actions)
    est = 3.0
    for a in case.actions:
        est += float(a.get('sleep_before') or 0) + 0.5
        cmd = str(a.get('args', {}).get('command', ''))
        if 'sleep' in cmd or cmd == '' or a.get('args', {}).get('is_input'):
            est += min(float(a.get('timeout') or case.no_change_timeout), case.no_change_timeout + 0.0)
    return est


def conformance_result(request: pytest.FixtureRequest, case: harness.Case) -> harness.CaseResult:
    _submit_all(request.session)
    fut = _futures.get(case.id)
    if fut is None:  # not pre-submitted (e.g. unusual collection): run inline
        return harness.run_case(case)
    return fut.result()


def write_report(case_id: str, text: str) -> str:
    os.makedirs(ARTIFACTS, exist_ok=True)
    path = os.path.join(ARTIFACTS, case_id.replace('/', '__') + '.txt')
    with open(path, 'w', encoding='utf-8') as f:
        f.write(text + '\n')
    return path


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    results = list(harness.RESULTS.values())
    if not results:
        return
    os.makedirs(ARTIFACTS, exist_ok=True)
    with open(os.path.join(ARTIFACTS, 'summary.json'), 'w') as f:
        json.dump(
            {
                r.case.id: {
                    'identical': r.identical,
                    'seconds': round(r.seconds, 1),
                    'steps': [s.identical for s in r.steps],
                    'workspace_identical': r.workspace_identical,
                    'error': r.error,
                    'reference_runs': r.reference_runs,
                    'reference_variants': r.reference_variants,
                    'reference_from_store': r.reference_from_store,
                }
                for r in sorted(results, key=lambda r: r.case.id)
            },
            f,
            indent=1,
        )
    tot = {'bash': [0, 0], 'files': [0, 0]}
    for r in results:
        t = tot.setdefault(r.case.kind, [0, 0])
        t[0] += r.identical
        t[1] += 1
    n = sum(v[0] for v in tot.values())
    m = sum(v[1] for v in tot.values())
    line = f'conformance ({harness.DRIVER}): {n}/{m} identical (bash {tot["bash"][0]}/{tot["bash"][1]}, files {tot["files"][0]}/{tot["files"][1]})'
    if harness.DRIVER == 'hub':
        # The processes that served the cases (each imports OpenHands once, then one runtime per case).
        line += f'; {harness_sides.HUB_STARTS} hub worker processes'
    # The reference's timing-dependent replies (reference_variants.py): named, with their count.
    varied = sorted(r.case.id for r in results if r.reference_varied)
    line += f'; reference runs {sum(r.reference_runs for r in results)} for {len(results)} cases'
    stored = sum(r.reference_from_store for r in results)
    if stored:
        line += f' ({stored} taken from this run\'s store)'
    line += f'; the reference varied and ours equals one of its results: {len(varied)}'
    if varied:
        line += ' (' + ', '.join(varied) + ')'
    terminalreporter.write_sep('=', 'conformance summary')
    terminalreporter.write_line(line)
    summary_file = os.environ.get('CONFORMANCE_SUMMARY_FILE')
    if summary_file:
        with open(summary_file, 'w') as f:
            f.write(line + '\n')


def pytest_sessionfinish(session, exitstatus):
    if _pool is not None:
        _pool.shutdown(wait=True, cancel_futures=True)
    harness.stop_hub_workers()  # the hub driver's long-lived processes log into the base dir
    harness.cleanup_base()
