import os

import pytest

os.environ.setdefault('LITELLM_LOCAL_MODEL_COST_MAP', 'True')


@pytest.fixture
def as_root() -> None:
    """For a test that hands a folder to another user, which needs root. Skipped elsewhere; under CI
    (CI set, as .ci/run does; it runs as root) a non-root run fails: a skip there would hide it."""
    if os.getuid() == 0:
        return
    if os.environ.get('CI'):
        pytest.fail('this test needs root and CI runs as root: not skipped under CI')
    pytest.skip('handing a folder to another user needs root')
