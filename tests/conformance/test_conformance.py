"""One test per conformance case (cases/bash/*.json, cases/files/*.json); see README.md."""

from __future__ import annotations

import os

import pytest

import harness
from conftest import conformance_result, write_report

CASES = harness.load_cases()
MAX_LINES = int(os.environ.get('CONFORMANCE_MAX_LINES', '80'))


@pytest.mark.parametrize('case', [pytest.param(c, id=c.id) for c in CASES])
def test_conformance(request, case: harness.Case):
    result = conformance_result(request, case)
    if result.identical:
        return
    report = result.report()
    path = write_report(case.id, report)
    lines = report.splitlines()
    if len(lines) > MAX_LINES:
        report = '\n'.join(lines[:MAX_LINES]) + f'\n... ({len(lines) - MAX_LINES} more lines)'
    report += f'\nfull report: {path}'
    if case.xfail:
        pytest.xfail(f'{case.xfail}\n{report}')
    pytest.fail(report, pytrace=False)
