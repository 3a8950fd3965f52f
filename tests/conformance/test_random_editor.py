"""Seeded random differential test of the file actions: OHEditor through ActionExecutor vs one
long-lived `oh-executor replay`.

Random files and a random sequence of `read` (default and oh_aci with view ranges), `write`
(with line ranges) and `edit` (view, create, str_replace, insert, undo_edit) actions are sent to
both sides step by step; every observation (normalised as in the harness) and the bytes of the
touched file must be identical after every step.

    RANDOM_EDITOR_SEED=123 RANDOM_EDITOR_OPS=3000 \
      $HOME/.cache/openhands-vscode-runtime/venv/bin/python -m pytest tests/conformance/test_random_editor.py -q

File modes are not compared (`insert` leaves the reference's file at 0600, spec §4.13 [F]).
The reference runs with the workspace as its process cwd, so its binary pre-check of a read with a
relative path looks at the file the read opens, as ours does (spec §3.1 [F]).
A step may differ only when the reference misdetects the file's encoding (charset_normalizer,
spec §4.12 [N]), and then only in the decoded text (`content`, `extras.old_content`,
`new_content`, `diff`); the number of such steps is asserted under a bound. A fixed seed
(`test_random_editor_fixed_seed`) runs beside the random one.
Content is UTF-8 with sparse non-ASCII characters, CR/CRLF line ends and tabs; legacy encodings
are out of scope (spec §4.12 [N]).
"""

from __future__ import annotations

import json
import os
import random
import shutil
import sys
import tempfile

import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import harness  # noqa: E402

NAMES = ['a.py', 'b.txt', 'notes.md', 'sub/c.txt', 'sub/deeper/d.py', 'new1.txt', 'sub/new2.txt', 'missing_dir/x.txt']
WORDS = ['def', 'return', 'x', 'y = 1', 'foo(bar)', '  ', '\t', 'class A:', 'import os', '#', 'é', 'naïve', '日本', '✓', '.*', '`q`', "'s'"]


class _Cwd:
    def __init__(self, cwd: str):
        self.cwd = cwd


class RefFiles:
    """The action execution server's file half, in-process, without a shell."""

    def __init__(self, ws: str):
        m = harness._ref()
        self.m = m
        ex = m['ActionExecutor'].__new__(m['ActionExecutor'])
        ex.bash_session = _Cwd(ws)
        ex.file_editor = m['OHEditor'](workspace_root=ws)
        ex.user_id = os.getuid()
        ex.username = None
        self.ex = ex
        self.ws = ws
        import asyncio

        self.loop = asyncio.new_event_loop()

    def execute(self, line: dict) -> dict:
        d = json.loads(json.dumps(line))
        action_id = d.pop('id', None)
        action = self.m['event_from_dict'](d)
        # The server's binary pre-check of a read takes the path as given, so a relative path is
        # checked against the server's own process cwd, not the file the read opens (spec §3.1
        # [F]); ours checks the file it reads (crates/oh-files/README.md). With the workspace as
        # this process's cwd while the reference runs, both check the same file.
        here = os.getcwd()
        os.chdir(self.ws)
        try:
            obs = self.loop.run_until_complete(getattr(self.ex, d['action'])(action))
        except Exception as e:
            return {'__reference_http_500__': f'Internal server error: {e}'}
        finally:
            os.chdir(here)
        obs._cause = action_id
        return json.loads(json.dumps(self.m['event_to_dict'](obs)))

    def close(self) -> None:
        self.loop.close()


def misdetected(path: str) -> bool:
    """True when the reference's EncodingManager would not read this UTF-8 file as UTF-8:
    charset_normalizer picks a legacy code page for some short texts (spec §4.12 [N])."""
    import charset_normalizer

    try:
        with open(path, 'rb') as f:
            data = f.read(1024 * 1024)
    except OSError:
        return False
    r = charset_normalizer.detect(data)
    if not r or not r.get('confidence') or r['confidence'] <= 0.9:
        return False
    return (r['encoding'] or '').lower().replace('_', '-') not in ('utf-8', 'ascii', 'utf-8-sig')


DECODED_FIELDS = ('old_content', 'new_content', 'diff')


def mask_decoded(obs: dict) -> dict:
    """The observation with only the text decoded from the file replaced by a marker."""
    o = json.loads(json.dumps(obs))
    if 'content' in o:
        o['content'] = '{DECODED}'
    extras = o.get('extras')
    if isinstance(extras, dict):
        for k in DECODED_FIELDS:
            if isinstance(extras.get(k), str):
                extras[k] = '{DECODED}'
    return o


def rand_line(rng: random.Random) -> str:
    n = rng.choice([0, 1, 2, 3, 5, 8])
    return ' '.join(rng.choice(WORDS) if rng.random() < 0.5 else f'w{rng.randrange(30)}' for _ in range(n))


def rand_text(rng: random.Random, max_lines: int = 30) -> str:
    lines = [rand_line(rng) for _ in range(rng.randrange(max_lines + 1))]
    eol = rng.choices(['\n', '\r\n', '\r'], weights=[90, 7, 3])[0]
    text = eol.join(lines)
    if rng.random() < 0.7:
        text += eol
    return text


def rand_range(rng: random.Random, n: int) -> list:
    a = rng.randint(-1, n + 2)
    b = rng.choice([-1, a, a + rng.randint(-2, 10), n, n + 1])
    return [a, b]


def current_text(ws: str, rel: str) -> str:
    try:
        with open(os.path.join(ws, rel), encoding='utf-8', newline='') as f:
            return f.read()
    except Exception:
        return ''


def rand_action(rng: random.Random, ws_ref: str) -> dict:
    rel = rng.choice(NAMES)
    path = '{WS}/' + rel
    text = current_text(ws_ref, rel)
    nlines = text.count('\n') + 1
    kind = rng.choices(
        ['view', 'view_range', 'create', 'str_replace', 'insert', 'undo', 'read', 'write', 'edit_view', 'view_dir'],
        weights=[8, 12, 8, 25, 15, 12, 8, 8, 2, 2],
    )[0]
    if kind == 'view':
        return {'action': 'read', 'args': {'path': path, 'impl_source': 'oh_aci'}}
    if kind == 'view_range':
        return {'action': 'read', 'args': {'path': path, 'impl_source': 'oh_aci', 'view_range': rand_range(rng, nlines)}}
    if kind == 'edit_view':
        return {'action': 'edit', 'args': {'command': 'view', 'path': path}}
    if kind == 'view_dir':
        return {'action': 'read', 'args': {'path': rng.choice(['{WS}', '{WS}/sub', '{WS}/sub/']), 'impl_source': 'oh_aci'}}
    if kind == 'create':
        big = rng.random() < 0.05  # sometimes past the 16,000-character truncation
        return {'action': 'edit', 'args': {'command': 'create', 'path': path, 'file_text': rand_text(rng, 2500 if big else 30)}}
    if kind == 'str_replace':
        if text and rng.random() < 0.75:
            i = rng.randrange(len(text))
            j = min(len(text), i + rng.randint(1, 40))
            old = text[i:j]
            if rng.random() < 0.2:
                old = ' \n' + old + '  '
        else:
            old = rng.choice([rand_line(rng), '', ' ', 'zzz'])
        args = {'command': 'str_replace', 'path': path, 'old_str': old}
        r = rng.random()
        if r < 0.8:
            args['new_str'] = rand_text(rng, 3) if rng.random() < 0.5 else rand_line(rng)
        elif r < 0.9:
            args['new_str'] = old
        return {'action': 'edit', 'args': args}
    if kind == 'insert':
        line = rng.choice([rng.randint(-1, nlines + 1), 0, nlines, nlines - 1])
        if rng.random() < 0.1:
            line = str(line)
        return {'action': 'edit', 'args': {'command': 'insert', 'path': path, 'insert_line': line, 'new_str': rand_text(rng, 4).rstrip('\n')}}
    if kind == 'undo':
        return {'action': 'edit', 'args': {'command': 'undo_edit', 'path': path}}
    if kind == 'read':
        args = {'path': rng.choice([path, rel])}
        if rng.random() < 0.6:
            args['start'] = rng.randint(-2, nlines + 2)
            args['end'] = rng.choice([-1, rng.randint(-2, nlines + 3)])
        return {'action': 'read', 'args': args}
    # write
    args = {'path': rng.choice([path, rel]), 'content': rand_text(rng, 6)}
    if rng.random() < 0.5:
        args['start'] = rng.randint(-2, nlines + 1)
        args['end'] = rng.choice([-1, rng.randint(-2, nlines + 2)])
    return {'action': 'write', 'args': args}


def setup_ws(ws: str, rng: random.Random) -> None:
    os.makedirs(os.path.join(ws, 'sub', 'deeper'))
    os.makedirs(os.path.join(ws, 'sub', '.hidden'))
    for rel in ['a.py', 'b.txt', 'sub/c.txt', 'notes.md', 'sub/deeper/d.py', '.env']:
        with open(os.path.join(ws, rel), 'w', encoding='utf-8', newline='') as f:
            f.write(rand_text(rng, 60))


def run_random(seed: int, ops: int) -> None:
    base = harness.base_dir()
    d = tempfile.mkdtemp(prefix='random-editor-', dir=base)
    ws_ref = tempfile.mkdtemp(prefix='ohc-r-', dir=d)
    ws_ours = tempfile.mkdtemp(prefix='ohc-o-', dir=d)
    assert len(ws_ref) == len(ws_ours)
    setup_ws(ws_ref, random.Random(seed))
    setup_ws(ws_ours, random.Random(seed))
    rng = random.Random(seed + 1)
    ref = RefFiles(ws_ref)
    ours = harness.OursSide(ws_ours, 10, os.path.join(d, 'ours.stderr'))
    n_ref, n_ours = harness.Normaliser(ws_ref), harness.Normaliser(ws_ours)
    history: list[str] = []
    skipped = known = 0
    try:
        for k in range(1, ops + 1):
            raw = rand_action(rng, ws_ref)
            target = raw['args']['path'].replace('{WS}', ws_ref)
            if not target.startswith('/'):
                target = os.path.join(ws_ref, target)
            if misdetected(target):
                # Out of scope (spec §4.12 [N]): replace the file, on both sides, by ASCII text.
                skipped += 1
                fresh = rand_text(rng).encode('ascii', errors='ignore')
                for ws in (ws_ref, ws_ours):
                    with open(target.replace(ws_ref, ws), 'wb') as f:
                        f.write(fresh)
            line_ref = harness.canonical_action(raw, ws_ref, k)
            line_ours = harness.canonical_action(raw, ws_ours, k)
            history.append(json.dumps(raw, ensure_ascii=False))
            a = n_ref(ref.execute(line_ref))
            b = n_ours(ours.execute(line_ours, 60.0))
            ja, jb = json.dumps(a, ensure_ascii=False), json.dumps(b, ensure_ascii=False)
            problem = None
            if ja != jb and misdetected(target):
                # The reference re-read its own UTF-8 output in a legacy code page: only the
                # decoded text may differ; every other field (kind, paths, flags, messages'
                # shape, key order) must still be identical.
                ma, mb = mask_decoded(a), mask_decoded(b)
                if json.dumps(ma, ensure_ascii=False) == json.dumps(mb, ensure_ascii=False):
                    known += 1
                else:
                    problem = 'observations differ beyond the decoded text:\n' + harness.obs_diff(ma, mb)
            elif ja != jb:
                problem = 'observations differ:\n' + harness.obs_diff(a, b)
            if not problem:
                for rel in NAMES:
                    pa, pb = os.path.join(ws_ref, rel), os.path.join(ws_ours, rel)
                    ea, eb = os.path.exists(pa), os.path.exists(pb)
                    if ea != eb or (ea and open(pa, 'rb').read() != open(pb, 'rb').read()):
                        problem = f'file {rel} differs after the action'
                        break
            if problem:
                recent = '\n'.join(history[-8:])
                pytest.fail(f'seed={seed} (RANDOM_EDITOR_SEED={seed} to reproduce), step {k}/{ops}: {problem}\n'
                            f'last actions:\n{recent}', pytrace=False)
        print(f'random editor test: seed={seed}: {ops} actions compared, {skipped} files reset and '
              f'{known} observations tolerated because of charset_normalizer misdetection')
        # Forgiven steps are rare by construction (misdetected files are reset before the step);
        # many would mean the mask hides a real difference.
        bound = max(3, ops // 50)
        assert known <= bound, f'seed={seed}: {known} forgiven steps (bound {bound})'
    finally:
        ref.close()
        ours.close()
        if not os.environ.get('CONFORMANCE_KEEP'):
            shutil.rmtree(d, ignore_errors=True)


FIXED_SEED = 20261124


def test_random_editor_fixed_seed():
    """The same sequence every run: a regression shows up the same way each time."""
    run_random(FIXED_SEED, int(os.environ.get('RANDOM_EDITOR_FIXED_OPS', '500')))


def test_random_editor_sequence():
    seed = int(os.environ.get('RANDOM_EDITOR_SEED') or random.SystemRandom().randrange(1 << 31))
    ops = int(os.environ.get('RANDOM_EDITOR_OPS', '1000'))
    print(f'random editor test: seed={seed} ops={ops}')
    run_random(seed, ops)


if __name__ == '__main__':
    s = int(os.environ.get('RANDOM_EDITOR_SEED') or random.SystemRandom().randrange(1 << 31))
    n = int(os.environ.get('RANDOM_EDITOR_OPS', '1000'))
    print(f'seed={s} ops={n}')
    run_random(s, n)
    print('ok')
