"""One test per conformance case (cases/bash/*.json, cases/files/*.json); see README.md."""

from __future__ import annotations

import json
import os

import pytest

import harness
from conftest import conformance_result, write_report

ALL_CASES = harness.load_cases()
# `run.sh --sample` (CONFORMANCE_SAMPLE=1): harness_setup.sample's fixed selection.
CASES = harness.sample(ALL_CASES) if os.environ.get('CONFORMANCE_SAMPLE') == '1' else ALL_CASES
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


def _deviation_rows(section: str) -> list[list[str]]:
    """The rows of a DEVIATIONS.md table section whose first column names a case in backticks,
    as their backticked values (case id first)."""
    text = (harness.HERE / 'DEVIATIONS.md').read_text(encoding='utf-8')
    start = text.index(section)
    rest = text[start + len(section):]
    end = rest.find('\n## ')
    body = rest if end < 0 else rest[:end]
    return [[cell.strip().strip('`') for cell in line.split('|')[1:-1]] for line in body.splitlines() if line.startswith('| `')]


def _deviation_case_ids(section: str) -> set[str]:
    """Case ids named in backticks in the first column of a DEVIATIONS.md table section."""
    return {row[0] for row in _deviation_rows(section)}


def test_xfail_cases_are_listed():
    xfail = {c.id for c in ALL_CASES if c.xfail}
    listed = _deviation_case_ids('## xfail cases')
    assert xfail == listed, f'xfail not listed: {sorted(xfail - listed)}; listed but not xfail: {sorted(listed - xfail)}'


def test_workspace_exceptions_are_listed():
    """Every case not compared on its whole final workspace is listed, with its value."""
    cases = {c.id: json.dumps(c.compare_workspace) for c in ALL_CASES if c.compare_workspace is not True}
    listed = {row[0]: row[1] for row in _deviation_rows('## Workspace comparison exceptions (`compare_workspace`)')}
    assert cases == listed, f'in the case files: {cases}; in DEVIATIONS.md: {listed}'


def test_regex_fields_are_listed():
    """Every `expect_regex` field of a case is listed in DEVIATIONS.md (case and field)."""
    used = {(c.id, f) for c in ALL_CASES for a in c.actions for f in a.get('expect_regex', {})}
    rows = _deviation_rows('## Regex-compared fields (`expect_regex`)')
    fields = {}
    for row in rows:
        # "same" in the field column repeats the row above.
        fields[row[0]] = fields[rows[rows.index(row) - 1][0]] if row[1] == 'same' else row[1]
    listed = set(fields.items())
    assert used == listed, f'used but not listed: {sorted(used - listed)}; listed but not used: {sorted(listed - used)}'


if harness.DRIVER == 'hub':

    def test_hub_workers_serve_many_cases():
        """The hub driver's cases run on the pool's long-lived workers (OpenHands imported once
        each): only a worker dropped for getting out of step is ever replaced. Runs after the
        cases (file order)."""
        import harness_sides

        workers = max(1, int(os.environ.get('CONFORMANCE_WORKERS', '3')))
        bound = workers + harness_sides.HUB_DROPPED
        assert harness_sides.HUB_STARTS <= bound, (
            f'{harness_sides.HUB_STARTS} hub worker processes for {len(harness.RESULTS)} cases '
            f'({workers} workers, {harness_sides.HUB_DROPPED} dropped): a worker per case again?'
        )

