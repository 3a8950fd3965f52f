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
# A few cases race with the kernel on *both* sides (how the tty's echo of typed-ahead heredoc
# lines interleaves with readline's redisplay, on the reference too). Such a case carries
# `"racy": "<why>"` in its case file AND is listed in DEVIATIONS.md (checked by
# test_racy_cases_are_listed); only then is a differing first run repeated once, both sides
# afresh. Every other case gets exactly one run: a case that differs fails, even if it would
# have been identical on a second try. Cases that needed the second run are named in the summary
# line and their first report is kept.
RETRIES = int(os.environ.get('CONFORMANCE_RETRIES', '1'))
RETRIED: dict[str, str] = {}  # case id -> path of the first run's report


def _run_with_retry(case: harness.Case) -> harness.CaseResult:
    result = harness.run_case(case)
    if not case.racy:
        return result
    for _ in range(RETRIES):
        if result.identical or case.xfail:
            break
        RETRIED[case.id] = write_report(case.id + '.first-run', result.report())
        result = harness.run_case(case)
    return result


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
        _futures[case.id] = _pool.submit(_run_with_retry, case)


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
        return _run_with_retry(case)
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
                    'xfail': r.case.xfail,
                    'seconds': round(r.seconds, 1),
                    'steps': [s.identical for s in r.steps],
                    'workspace_identical': r.workspace_identical,
                    'error': r.error,
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
    retried = sorted(RETRIED)
    if retried:
        passed_on_retry = [c for c in retried if harness.RESULTS[c].identical]
        line += f'; {len(passed_on_retry)} identical only on a second run: {", ".join(passed_on_retry) or "-"}'
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
