"""Fixtures that more than one Python suite uses (tests/runtime and tests/v1 run in different venvs,
so this is plain code on a path, not an installed package). A conftest imports what it needs:

    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from pytest_shared import as_root  # noqa: F401  (a fixture: pytest finds it by name)
"""

from __future__ import annotations

import os

import pytest


@pytest.fixture
def as_root() -> None:
    """For a test that hands a folder to another user, which needs root. Skipped elsewhere; under CI
    (CI set, as .ci/run does; it runs as root) a non-root run fails: a skip there would hide it."""
    if os.getuid() == 0:
        return
    if os.environ.get('CI'):
        pytest.fail('this test needs root and CI runs as root: not skipped under CI')
    pytest.skip('handing a folder to another user needs root')
