"""One test per conformance case (cases/bash/*.json, cases/files/*.json); see README.md."""

from __future__ import annotations

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
    pytest.fail(report, pytrace=False)


def test_deviations_name_real_cases_and_steps():
    """deviations.json (checked for its format when the cases load) names cases that exist and
    steps each case has."""
    by_id = {c.id: c for c in ALL_CASES}
    deviations = harness.load_deviations()
    unknown = sorted(set(deviations) - set(by_id))
    assert not unknown, f'deviations.json names cases that do not exist: {unknown}'
    for cid, e in deviations.items():
        n = len(by_id[cid].actions)
        assert all(1 <= s <= n for s in e.get('steps', [])), f'{cid}: steps {e["steps"]}, the case has {n}'


def test_a_deviation_excuses_only_its_lines_fields_and_steps():
    """excuse_fields: a listed field differing only in lines its patterns match is excused; a line
    they do not match, an unlisted field or an unlisted step is not (the comparison fails it)."""
    entry = {'reason': 'r', 'steps': [1], 'fields': ['extras.metadata.prefix'],
             'lines': {'extras.metadata.prefix': [r'^kept \d+ lines$']}}

    def obs(prefix, content='same'):
        return {'content': content, 'extras': {'metadata': {'prefix': prefix}}}

    ref, ours = obs('kept 10 lines\n'), obs('kept 12 lines\n')
    assert harness.excuse_fields(ref, ours, entry, 1) == [] and ours == ref
    ref, ours = obs('kept 10 lines\nA'), obs('kept 12 lines\nB')
    assert harness.excuse_fields(ref, ours, entry, 1) and ours != ref
    ref, ours = obs('kept 10 lines'), obs('kept 12 lines')
    assert harness.excuse_fields(ref, ours, entry, 2) == [] and ours != ref  # step 2: not listed
    ref, ours = obs('x', content='a'), obs('x', content='b')
    harness.excuse_fields(ref, ours, entry, 1)
    assert ours != ref  # content: not listed


def test_workspace_deviations_excuse_only_listed_paths_and_modes():
    """A listed `dir/` leaves out only what is under it; `modes` only the permission bits."""
    case = harness.Case(group='g', name='n', actions=[], deviation={'reason': 'r', 'workspace': ['repo/.git/']})
    r = harness.CaseResult(case=case, ref_ws={'repo/.git/index': {'content': 'a'}, 'f': {'content': 'x'}},
                           ours_ws={'repo/.git/index': {'content': 'b'}, 'f': {'content': 'x'}})
    assert r.workspace_identical
    r.ours_ws['f'] = {'content': 'y'}
    assert not r.workspace_identical
    case.deviation = {'reason': 'r', 'modes': True}
    r = harness.CaseResult(case=case, setup_ws={'f': {'type': 'file', 'mode': '0o644'}},
                           ref_ws={'f': {'type': 'file', 'mode': '0o600', 'content': 'x'}},
                           ours_ws={'f': {'type': 'file', 'mode': '0o644', 'content': 'x'}})
    assert r.workspace_identical
    r.ours_ws['f']['mode'] = '0o600'  # not the mode the setup gave it
    assert not r.workspace_identical


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

