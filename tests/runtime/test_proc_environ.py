"""The executor's key cannot be read through /proc by the agent (docs/security.md, "/proc").

The agent's bash reads every process its user owns: `/proc/$PPID/environ` (the executor's initial
environment, kept by the kernel for the process's whole life, whatever the process later unsets)
and every ancestor's environ and cmdline. The runtime hands the key to the executor it spawns on a
pipe (`--session-api-key-fd`), so it is in none of them. Run with the executor `find_executor`
picks (the repository's Node CLI) and with `OH_VSCODE_EXECUTOR` set to the native binary."""

from __future__ import annotations

import base64
import os
from pathlib import Path

from conftest import load_runtime, real_executor_only

from openhands.events.action import CmdRunAction

# As the agent: from its own shell up to pid 1, each process's environ and cmdline, base64 (they
# hold NUL bytes), into a file of the workspace (a command's output could be cut short).
WALK = (
    'p=$$; while [ -n "$p" ] && [ "$p" -gt 1 ]; do '
    'printf "%s %s %s\\n" "$p" "$(base64 -w0 < /proc/$p/environ 2>/dev/null || echo -)" '
    '"$(base64 -w0 < /proc/$p/cmdline 2>/dev/null || echo -)"; '
    "p=$(awk '/^PPid:/{print $2}' /proc/$p/status); done > walk.txt; wc -l < walk.txt"
)


def _decode(field: str) -> bytes | None:
    return None if field == '-' else base64.b64decode(field)


def read_walk(path: Path) -> list[tuple[int, bytes | None, bytes | None]]:
    rows = []
    for line in path.read_text().split('\n'):
        if line.strip():
            pid, environ, cmdline = line.split(' ')
            rows.append((int(pid), _decode(environ), _decode(cmdline)))
    return rows


@real_executor_only
def test_the_agent_finds_the_executor_key_in_no_ancestors_proc_environ_or_cmdline(temp_dir, monkeypatch):
    monkeypatch.setenv('OH_TEST_PLAIN_SETTING', 'plain-visible-8888')
    rt, config = load_runtime(temp_dir)
    try:
        key = rt.session_api_key
        assert key
        executor_pid = rt.executor_process.pid
        obs = rt.run_action(CmdRunAction(WALK))
        assert obs.exit_code == 0, obs
        walk = read_walk(Path(config.workspace_base) / 'walk.txt')
    finally:
        rt.close()
    pids = [pid for pid, _, _ in walk]
    # The walk did read the executor (the bash's parent) and this process, the one that spawned it.
    assert pids[1] == executor_pid, pids
    assert os.getpid() in pids, pids
    assert b'OH_TEST_PLAIN_SETTING=plain-visible-8888' in walk[1][1], "the walk did not read the executor's environ"
    for pid, environ, cmdline in walk:
        # (another user's process up the chain, if any, is not readable: `-`)
        for what, data in (('environ', environ), ('cmdline', cmdline)):
            assert data is None or key.encode() not in data, f'the executor key is in /proc/{pid}/{what}'
