#!/usr/bin/env python3
"""Times the reference editor on the operations of `crates/oh-files/benches/editor.rs`.

Two columns: `OHEditor` called directly (openhands-aci 0.3.3), and the action execution server's
`ActionExecutor.read/edit` (editor + wrapper + `get_diff`), which is what `FileActions` does.
Output: one `name direct_median direct_min server_median server_min` line (ms) per operation,
then `peak_rss_kb N`. Env: EDITOR_BENCH_ITERS (default 15).
Run with the reference venv: $HOME/.cache/openhands-vscode-runtime/venv/bin/python
"""
import asyncio
import logging
import os
import resource
import statistics
import sys
import tempfile
import time
import warnings

warnings.filterwarnings('ignore')
os.environ.setdefault('LOG_LEVEL', 'ERROR')
logging.disable(logging.CRITICAL)

from openhands.events.action import FileEditAction, FileReadAction  # noqa: E402
from openhands.events.action.files import FileEditSource, FileReadSource  # noqa: E402
from openhands.runtime.action_execution_server import ActionExecutor  # noqa: E402
from openhands_aci.editor.editor import OHEditor  # noqa: E402

logging.disable(logging.CRITICAL)
ITERS = int(os.environ.get('EDITOR_BENCH_ITERS', '15'))


class _Cwd:
    def __init__(self, cwd):
        self.cwd = cwd


def make_file(d):
    path = os.path.join(d, 'big.py')
    with open(path, 'w') as f:
        for i in range(100_000):
            f.write(f'value_{i:06} = compute_something(alpha, beta, gamma) + {i:06}\n')
    return path


def timed(times, name, fn):
    t = time.perf_counter()
    r = fn()
    times.setdefault(name, []).append((time.perf_counter() - t) * 1e3)
    return r


def bench_direct(d, path):
    ed = OHEditor(workspace_root=d)
    times = {}
    for i in range(ITERS):
        timed(times, 'view', lambda: ed(command='view', path=path))
        timed(times, 'view_range', lambda: ed(command='view', path=path, view_range=[50000, 50100]))
        timed(times, 'str_replace', lambda: ed(command='str_replace', path=path, old_str='value_099990 = compute_something(alpha',
                                               new_str=f'value_099990 = compute_something(ALPHA{i}'))
        timed(times, 'undo', lambda: ed(command='undo_edit', path=path))
        timed(times, 'insert', lambda: ed(command='insert', path=path, insert_line=50000,
                                          new_str=f'inserted_line_{i} = 1\ninserted_again = 2'))
        ed(command='undo_edit', path=path)
    return times


def bench_server(d, path):
    ex = ActionExecutor.__new__(ActionExecutor)
    ex.bash_session = _Cwd(d)
    ex.file_editor = OHEditor(workspace_root=d)
    ex.user_id = os.getuid()
    loop = asyncio.new_event_loop()
    run = loop.run_until_complete
    times = {}

    def edit(**kw):
        obs = run(ex.edit(FileEditAction(path=path, impl_source=FileEditSource.OH_ACI, **kw)))
        assert not obs.content.startswith('ERROR'), obs.content[:300]

    def read(**kw):
        obs = run(ex.read(FileReadAction(path=path, impl_source=FileReadSource.OH_ACI, **kw)))
        assert not obs.content.startswith('ERROR'), obs.content[:300]

    for i in range(ITERS):
        timed(times, 'view', lambda: read())
        timed(times, 'view_range', lambda: read(view_range=[50000, 50100]))
        timed(times, 'str_replace', lambda: edit(command='str_replace', old_str='value_099990 = compute_something(alpha',
                                                 new_str=f'value_099990 = compute_something(ALPHA{i}'))
        timed(times, 'undo', lambda: edit(command='undo_edit'))
        timed(times, 'insert', lambda: edit(command='insert', insert_line=50000, new_str=f'inserted_line_{i} = 1\ninserted_again = 2'))
        edit(command='undo_edit')
    loop.close()
    return times


def main():
    with tempfile.TemporaryDirectory(prefix='oh-editor-ref-') as d:
        path = make_file(d)
        print(f'file: {path}, {os.path.getsize(path)} bytes, {ITERS} iterations', file=sys.stderr)
        direct = bench_direct(d, path)
        server = bench_server(d, path)
    for name in ['view', 'view_range', 'str_replace', 'insert', 'undo']:
        a, b = direct[name], server[name]
        print(f'{name} {statistics.median(a):.3f} {min(a):.3f} {statistics.median(b):.3f} {min(b):.3f}')
    print(f'peak_rss_kb {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss}')


if __name__ == '__main__':
    main()
