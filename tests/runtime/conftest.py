"""Build VsCodeRuntime the way OpenHands' own tests/runtime/conftest.py builds its runtimes.

OpenHandsConfig + EventStream over a local file store + LLMRegistry, a sid `rt_<6 digits>`, the
agent's plugins, a fresh temp dir as workspace_base, `connect()`, and `close()` at the end. The
runtime runs in embedded mode and spawns the REAL headless executor
(npm/executor/bin/openhands-vscode-executor.js) unless OH_TEST_EXECUTOR=standin, which is for
developing the Python side alone.
"""

from __future__ import annotations

import os
import random
import shutil
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from pytest_shared import as_root  # noqa: E402,F401  (a fixture: pytest finds it by name)

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
STANDIN = HERE / 'standin_executor.py'

# Embedded mode always (a test process may also import the OpenHands server for server-mode tests).
os.environ['OH_VSCODE_MODE'] = 'embedded'
os.environ.setdefault('LANG', 'C.UTF-8')
if os.environ.get('OH_TEST_EXECUTOR') == 'standin':
    os.environ['OH_VSCODE_EXECUTOR'] = f'{sys.executable} {STANDIN}'

from openhands.core.config import OpenHandsConfig  # noqa: E402
from openhands.events import EventStream  # noqa: E402
from openhands.llm.llm_registry import LLMRegistry  # noqa: E402
from openhands.runtime.plugins import AgentSkillsRequirement, JupyterRequirement  # noqa: E402
from openhands.storage import get_file_store  # noqa: E402
from openhands.utils.async_utils import call_async_from_sync  # noqa: E402

from openhands_vscode_runtime import VsCodeRuntime  # noqa: E402

USING_STANDIN = os.environ.get('OH_TEST_EXECUTOR') == 'standin'
# The stand-in is for working on the Python side alone; under CI (CI set, as .ci/run does) the
# tests it skips would pass unseen, so the suite refuses to start with it.
if USING_STANDIN and os.environ.get('CI'):
    raise RuntimeError('OH_TEST_EXECUTOR=standin skips the tests that need the real executor: not under CI')
real_executor_only = pytest.mark.skipif(
    USING_STANDIN, reason='needs the real executor (BashSession semantics)'
)




def new_sid() -> str:
    return f'rt_{random.randint(100000, 999999)}'


@pytest.fixture
def temp_dir(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    path = tempfile.mkdtemp(prefix='rt_', dir=str(tmp_path_factory.getbasetemp()))
    yield path
    shutil.rmtree(path, ignore_errors=True)


def load_runtime(
    temp_dir: str,
    *,
    runtime_startup_env_vars: dict[str, str] | None = None,
    env_vars: dict[str, str] | None = None,
    sandbox_timeout: int | None = None,
    sid: str | None = None,
    connect: bool = True,
) -> tuple[VsCodeRuntime, OpenHandsConfig]:
    config = OpenHandsConfig()
    config.run_as_openhands = False
    config.sandbox.keep_runtime_alive = False
    workspace = os.path.join(temp_dir, 'workspace')
    os.makedirs(workspace, exist_ok=True)
    config.workspace_base = workspace
    config.workspace_mount_path = workspace
    config.workspace_mount_path_in_sandbox = '/workspace'
    config.file_store = 'local'
    config.file_store_path = os.path.join(temp_dir, 'file_store')
    if runtime_startup_env_vars is not None:
        config.sandbox.runtime_startup_env_vars = runtime_startup_env_vars
    if sandbox_timeout is not None:
        config.sandbox.timeout = sandbox_timeout
    sid = sid or new_sid()
    file_store = get_file_store(config.file_store, config.file_store_path)
    event_stream = EventStream(sid, file_store)
    runtime = VsCodeRuntime(
        config=config,
        event_stream=event_stream,
        llm_registry=LLMRegistry(config=OpenHandsConfig()),
        sid=sid,
        plugins=[AgentSkillsRequirement(), JupyterRequirement()],
        env_vars=env_vars,
    )
    if connect:
        call_async_from_sync(runtime.connect)
    return runtime, runtime.config


@pytest.fixture
def runtime(temp_dir: str) -> Iterator[VsCodeRuntime]:
    rt, _config = load_runtime(temp_dir)
    try:
        yield rt
    finally:
        rt.close()
