"""`oh-executor replay` through the shipped Python side: a real `VsCodeRuntime` (embedded mode:
the real `hub.py` on the runtime's own Socket.IO server) that spawns the headless executor CLI
(npm/executor/bin/openhands-vscode-executor.js: the napi addon with its JS filesystem callbacks),
which registers over Socket.IO like VS Code does. Each action goes through what the agent loop
calls, `VsCodeRuntime.run/read/write/edit` (the reference side calls the same methods of
`ActionExecutor`), and the observation comes back as `event_to_dict`, the delegated id as its
cause. Same interface as `oh-executor replay`: action JSON lines on stdin, one observation line
on stdout each. Selected by `tests/conformance/run.sh --driver hub` (CONFORMANCE_DRIVER=hub).

    python tests/conformance/hub_replay.py --workspace WS --no-change-timeout N
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
CLI = REPO / 'npm/executor/bin/openhands-vscode-executor.js'

os.environ['OH_VSCODE_MODE'] = 'embedded'
os.environ.setdefault('OH_VSCODE_EXECUTOR', str(CLI))
os.environ.setdefault('LOG_LEVEL', 'ERROR')
os.environ.setdefault('OPENHANDS_SUPPRESS_BANNER', '1')


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument('--workspace', required=True)
    ap.add_argument('--no-change-timeout', default='10')
    a = ap.parse_args()

    from openhands.core.config import OpenHandsConfig
    from openhands.events import EventStream
    from openhands.events.serialization import event_from_dict, event_to_dict
    from openhands.llm.llm_registry import LLMRegistry
    from openhands.storage import get_file_store
    from openhands.utils.async_utils import call_async_from_sync

    from openhands_vscode_runtime import VsCodeRuntime

    config = OpenHandsConfig()
    config.workspace_base = a.workspace
    config.runtime = 'vscode'
    config.sandbox.runtime_startup_env_vars['NO_CHANGE_TIMEOUT_SECONDS'] = a.no_change_timeout
    store = tempfile.mkdtemp(prefix='ohconf-hub-store-')
    sid = f'conformance_{os.getpid()}'
    rt = VsCodeRuntime(config=config, event_stream=EventStream(sid, get_file_store('local', store)),
                       llm_registry=LLMRegistry(config), sid=sid, headless_mode=True)
    out = sys.stdout
    sys.stdout = sys.stderr  # anything OpenHands prints must not mix with the observation lines
    try:
        call_async_from_sync(rt.connect)
        for line in sys.stdin:
            if not line.strip():
                continue
            d = json.loads(line)
            action_id = d.pop('id', None)
            kind = d.get('action')
            action = event_from_dict(d)
            obs = getattr(rt, kind)(action)
            if action_id is not None:
                obs._cause = action_id  # type: ignore[attr-defined]
            out.write(json.dumps(event_to_dict(obs)) + '\n')
            out.flush()
    finally:
        rt.close()
        shutil.rmtree(store, ignore_errors=True)
    return 0


if __name__ == '__main__':
    sys.exit(main())
