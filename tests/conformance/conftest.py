"""Runs the selected conformance cases in a small thread pool, reports the summary line."""

from __future__ import annotations

import os
import sys
from concurrent.futures import Future, ThreadPoolExecutor

import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import harness  # noqa: E402

_pool: ThreadPoolExecutor | None = None
_futures: dict[str, Future] = {}


def _submit_all(session: pytest.Session) -> None:
    global _pool
    if _pool is not None:
        return
    harness.base_dir()  # pin the environment before anything starts tmux
    workers = int(os.environ.get('CONFORMANCE_WORKERS', '3'))
    _pool = ThreadPoolExecutor(max_workers=max(1, workers), thread_name_prefix='conformance')
    reporter = session.config.pluginmanager.get_plugin('terminalreporter')
    for item in session.items:
        case = getattr(item, 'callspec', None) and item.callspec.params.get('case')
        if isinstance(case, harness.Case) and case.id not in _futures:
            _futures[case.id] = _pool.submit(harness.run_case, case)


def conformance_result(request: pytest.FixtureRequest, case: harness.Case) -> harness.CaseResult:
    _submit_all(request.session)
    fut = _futures.get(case.id)
    if fut is None:  # not pre-submitted (e.g. unusual collection): run inline
        return harness.run_case(case)
    return fut.result()


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    results = list(harness.RESULTS.values())
    if not results:
        return
    tot = {'bash': [0, 0], 'files': [0, 0]}
    for r in results:
        t = tot.setdefault(r.case.kind, [0, 0])
        t[0] += r.identical
        t[1] += 1
    n = sum(v[0] for v in tot.values())
    m = sum(v[1] for v in tot.values())
    line = f'conformance: {n}/{m} identical (bash {tot["bash"][0]}/{tot["bash"][1]}, files {tot["files"][0]}/{tot["files"][1]})'
    terminalreporter.write_sep('=', 'conformance summary')
    terminalreporter.write_line(line)
    summary_file = os.environ.get('CONFORMANCE_SUMMARY_FILE')
    if summary_file:
        with open(summary_file, 'w') as f:
            f.write(line + '\n')


def pytest_sessionfinish(session, exitstatus):
    if _pool is not None:
        _pool.shutdown(wait=True, cancel_futures=True)
    harness.cleanup_base()
