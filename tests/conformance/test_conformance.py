"""One test per conformance case (cases/bash/*.json, cases/files/*.json); see README.md."""

from __future__ import annotations

import pytest

import harness
from conftest import conformance_result

CASES = harness.load_cases()


@pytest.mark.parametrize('case', [pytest.param(c, id=c.id) for c in CASES])
def test_conformance(request, case: harness.Case):
    result = conformance_result(request, case)
    if result.identical:
        return
    if case.xfail:
        pytest.xfail(f'{case.xfail}\n{result.report()}')
    pytest.fail(result.report(), pytrace=False)
