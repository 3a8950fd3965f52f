"""The two sides of a V1 differential case, each in a fresh workspace of its own:
* the reference: openhands-tools' own `TerminalExecutor` (the backend the case names: V1's tmux
  pane pool, or its subprocess backend) and `FileEditorExecutor`, in process;
* ours: `oh-executor replay` fed `v1_terminal` / `v1_file_editor` action lines.
Each returns its observations and workspace, normalised (v1_compare)."""

from __future__ import annotations

import concurrent.futures
import json
import os
import shutil
import subprocess
import tempfile
import threading
import time

from harness_setup import _subst as subst
from harness_setup import prepare_workspace
from v1_cases import REPO, uses_terminal
from v1_compare import EDITOR_FIELDS, TERMINAL_FIELDS, normalise, tree

# A case side that has not finished after this long is reported as hung (and fails the suite).
CASE_TIMEOUT = float(os.environ.get('V1_CASE_TIMEOUT', '120'))


def executor_path() -> str:
    env = os.environ.get('OH_EXECUTOR')
    if env:
        return env
    target = os.environ.get('CARGO_TARGET_DIR', str(REPO / 'target'))
    return os.path.join(target, 'debug', 'oh-executor')


def make_workspace(root: str, tag: str, setup: dict) -> str:
    ws = tempfile.mkdtemp(prefix=f'ohv1-{tag}-', dir=root)
    prepare_workspace(ws, setup)
    return ws


def settle(terminal) -> None:
    """Race absorber for the subprocess backend (the V0 suite has one like it, spec 2.4 [N]):
    before a new command while nothing runs, wait until the screen ends with a prompt and has not
    changed for 0.5 s. Without it that backend sometimes answers a command with the previous
    prompt (empty output, exit code 0, a "previous command outputs are truncated" prefix)."""
    _wait_for_a_settled_prompt(terminal.session.terminal.read_screen)


def _wait_for_a_settled_prompt(read_screen) -> None:
    """Until the screen ends with a prompt and has not changed for 0.5 s (at most 10 s)."""
    deadline = time.monotonic() + 10
    last, since = None, time.monotonic()
    while time.monotonic() < deadline:
        cur = read_screen()
        if cur != last:
            last, since = cur, time.monotonic()
        elif cur.rstrip().endswith('###PS1END###') and time.monotonic() - since >= 0.5:
            return
        time.sleep(0.05)


def warm_pane(terminal) -> None:
    """Race absorber for the tmux pane pool: the pool creates a pane on its first checkout and
    types the first command at once, while that pane's bash may still be starting; the tty then
    echoes the typed-ahead lines of a multi-line command (a heredoc) with or without an extra
    blank line, depending on timing (`bash/multicmd/rejected_heredoc_then_command` gave two
    results in three runs). Checking a pane out, waiting until it shows a settled prompt and
    checking it back in gives the first call the pane a running conversation would have."""
    pool = terminal._pool
    pane = pool.checkout()
    try:
        _wait_for_a_settled_prompt(pane.read_screen)
    finally:
        pool.checkin(pane)


def run_reference(case: dict, ws: str, start: threading.Barrier | None, backend: str | None) -> list[dict]:
    from openhands.tools.file_editor.definition import FileEditorAction
    from openhands.tools.file_editor.impl import FileEditorExecutor
    from openhands.tools.terminal.definition import TerminalAction
    from openhands.tools.terminal.impl import TerminalExecutor
    from openhands.tools.terminal.terminal.terminal_session import TerminalCommandStatus

    terminal = None
    if uses_terminal(case):
        if backend == 'tmux':
            # V1's own choice (terminal_type=None): the tmux pane pool when tmux is installed.
            terminal = TerminalExecutor(working_dir=ws, no_change_timeout_seconds=case['nct'])
            if not terminal.is_pooled:
                raise RuntimeError('V1 did not pick its tmux pane pool (is tmux installed?)')
            warm_pane(terminal)
        else:
            terminal = TerminalExecutor(working_dir=ws, no_change_timeout_seconds=case['nct'],
                                        terminal_type='subprocess')
            settle(terminal)
    editor = FileEditorExecutor(workspace_root=ws)
    out = []
    try:
        if start is not None:
            start.wait()
        for step in case['actions']:
            time.sleep(step['sleep_before'])
            args = subst(step['args'], ws)
            try:
                if step['tool'] == 'terminal':
                    if (backend == 'subprocess' and not args.get('is_input')
                            and terminal.session.prev_status in (None, TerminalCommandStatus.COMPLETED)):
                        settle(terminal)
                    o = terminal(TerminalAction(**args))
                    out.append({'text': o.text, 'is_error': o.is_error, 'command': o.command, 'exit_code': o.exit_code,
                                'timeout': o.timeout, 'metadata': o.metadata.model_dump()})
                else:
                    o = editor(FileEditorAction(**args))
                    out.append({'text': o.text, 'is_error': o.is_error, 'command': o.command, 'path': o.path,
                                'prev_exist': o.prev_exist, 'old_content': o.old_content, 'new_content': o.new_content})
            except Exception as e:  # a validation error or a crash: V1's conversation reports it as an error
                out.append({'exception': type(e).__name__})
    finally:
        if terminal is not None:
            terminal.close()
        # V1's editor keeps its undo history in a temp folder of its own and never removes it.
        shutil.rmtree(editor.editor._history_manager.cache.directory, ignore_errors=True)
    return out


def run_ours(case: dict, ws: str, start: threading.Barrier | None) -> list[dict]:
    proc = subprocess.Popen([executor_path(), 'replay', '--workspace', ws, '--no-change-timeout', str(case['nct'])],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, cwd=ws)
    out = []
    try:
        if start is not None:
            start.wait()
        for i, step in enumerate(case['actions'], 1):
            time.sleep(step['sleep_before'])
            line = {'id': i, 'action': f'v1_{step["tool"]}', 'args': subst(step['args'], ws)}
            proc.stdin.write(json.dumps(line) + '\n')
            proc.stdin.flush()
            reply = json.loads(proc.stdout.readline())
            ex = reply.get('extras', {})
            if reply.get('observation') not in ('v1_terminal', 'v1_file_editor'):
                out.append({'unexpected_reply': reply})
                continue
            fields = TERMINAL_FIELDS if step['tool'] == 'terminal' else EDITOR_FIELDS
            out.append({k: (reply['content'] if k == 'text' else ex.get(k)) for k in fields})
    finally:
        proc.stdin.close()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
    return out


def run_sides(case: dict, root: str, sides: dict) -> dict:
    """Run the named sides ({name: callable(case, ws, barrier)}) together, each in a workspace of
    its own, started at once. Per side: {'obs', 'tree'} normalised, or {'hung'} / {'crashed'}."""
    wss = {name: make_workspace(root, name[0], case['setup']) for name in sides}
    start = threading.Barrier(len(sides))
    pool = concurrent.futures.ThreadPoolExecutor(len(sides))
    futures = {name: pool.submit(fn, case, wss[name], start) for name, fn in sides.items()}
    done, pending = concurrent.futures.wait(list(futures.values()), timeout=CASE_TIMEOUT)
    pool.shutdown(wait=False)
    out = {}
    for name, f in futures.items():
        if f in pending:
            # A hung side's barrier may hold the other: both are reported.
            out[name] = {'hung': f'{name} did not finish within {CASE_TIMEOUT} s'}
        elif f.exception() is not None:
            out[name] = {'crashed': f'{name}: {f.exception()!r}'}
        else:
            out[name] = {'obs': normalise(f.result(), wss[name]),
                         'tree': tree(wss[name]) if case['compare_workspace'] else {}}
    return out
