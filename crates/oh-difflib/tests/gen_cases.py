#!/usr/bin/env python3
"""Generate the differential fixture for oh-difflib: tests/fixtures/cases.json.

Expected outputs come from the real Python implementation: `openhands_aci.utils.diff.get_diff`
when openhands-aci is importable (run it with the reference venv's python), otherwise an inline
copy of that function over the standard `difflib` (identical in CPython 3.9-3.13).

    ~/.cache/openhands-vscode-runtime/venv/bin/python crates/oh-difflib/tests/gen_cases.py

Cases are seeded, so re-running regenerates the same file. To keep the fixture small, most
`get_diff` cases store `new` as edits on `old.split('\\n')`: a list of `[i1, i2, lines]`
(non-overlapping, ascending); the new line list is the old one with `old[i1:i2]` replaced by
`lines`, and `new = '\\n'.join(...)`.

Sections:
  get_diff  - {"path", "old", "new" | "edits", "expected"}
  unified   - difflib.unified_diff on line lists with n / names / dates / lineterm
  opcodes   - SequenceMatcher over characters: matching blocks, opcodes, grouped opcodes
"""

import difflib
import json
import os
import random
import sys

try:
    from openhands_aci.utils.diff import get_diff as aci_get_diff
except Exception:  # pragma: no cover - fallback when the venv is not used
    aci_get_diff = None


def ref_get_diff(old, new, path):
    diff = list(
        difflib.unified_diff(old.split('\n'), new.split('\n'), fromfile=path, tofile=path, n=0)
    )
    return '\n'.join(map(lambda x: x.rstrip(), diff))


def get_diff(old, new, path):
    out = ref_get_diff(old, new, path)
    if aci_get_diff is not None:
        real = aci_get_diff(old, new, path)
        assert real == out
        return real
    return out


# Vocabularies: many repeats, blank lines, whitespace-only and trailing-whitespace lines, CR,
# unicode (including characters Python's rstrip removes: NBSP, em space, U+001C, U+0085, U+2028).
CODE = [
    '', '', '', '    ', '\t', '}', '{', '    }', 'fi', 'end', 'pass', '    pass',
    'def f():', '    return 1', '    return x', 'x = 1', 'x = 2', 'y = x + 1', 'print(x)',
    'if x:', 'else:', '    else:', '# comment', '#', 'import os', 'import sys',
    'return None  ', 'a = b ', 'foo\t', 'bar\r', '\r', 'baz \r', ' lead', '  lead2',
]
UNI = [
    'é', '日本語', 'naïve ', 'x\u00a0', '\u2003', 'tab\u3000', 'sep\x1c', 'nel\x85', 'ls\u2028',
    '\u00a0', 'z\x0b', 'ff\x0c', 'emoji 🎉', '🎉', 'ß', 'Ω≈ç√', 'a\u200b', '\u202f', 'x\x1f y',
]
LETTERS = 'abcdefghijklmnopqrstuvwxyz'


def rand_line(rng, style):
    if style == 'tiny':
        return rng.choice(['', 'a', 'b', 'c', 'a ', ' ', 'b\r'])
    if style == 'code':
        return rng.choice(CODE)
    if style == 'uni':
        return rng.choice(UNI + CODE[:8])
    if style == 'unique':
        return ''.join(rng.choice(LETTERS) for _ in range(rng.randint(1, 6)))
    # mixed: mostly repeats, sometimes fresh
    r = rng.random()
    if r < 0.5:
        return rng.choice(CODE)
    if r < 0.6:
        return rng.choice(UNI)
    return ''.join(rng.choice('abc') for _ in range(rng.randint(0, 3)))


def rand_lines(rng, n, style, vocab=None):
    if vocab is not None:
        return [rng.choice(vocab) for _ in range(n)]
    return [rand_line(rng, style) for _ in range(n)]


def make_edits(rng, old_lines, style, vocab):
    """Random non-overlapping edits, ascending."""
    n = len(old_lines)
    k = rng.choice([1, 1, 2, 2, 3, 4, 7])
    points = sorted(rng.randint(0, n) for _ in range(k))
    edits = []
    last = 0
    for p in points:
        if p < last:
            continue
        i1 = p
        i2 = min(n, i1 + rng.choice([0, 0, 1, 1, 2, 3, 5, 8]))
        kind = rng.random()
        if kind < 0.15 and n:
            # copy a block of the old text (creates repeated runs)
            s = rng.randint(0, n - 1)
            repl = old_lines[s:s + rng.randint(1, 12)]
        elif kind < 0.25:
            repl = [line + rng.choice([' ', '  ', '\t', 'X', '\r']) for line in old_lines[i1:i2]]
        else:
            repl = rand_lines(rng, rng.choice([0, 0, 1, 1, 2, 3, 5]), style, vocab)
        if i1 == i2 and not repl:
            repl = rand_lines(rng, 1, style, vocab)
        edits.append([i1, i2, repl])
        last = i2 + 1
    return edits


def apply_edits(old, edits):
    lines = old.split('\n')
    for i1, i2, repl in reversed(edits):
        lines[i1:i2] = repl
    return '\n'.join(lines)


PATHS = ['/workspace/a.py', 'file', '', '/workspace/sp ace.txt', '/w/trailing ', '/w/ünï.txt',
         'rel/path.md', '/workspace/n.txt']


SPEC_EXAMPLES = [
    # behaviour spec 3.7
    ('/workspace/f.py', '', 'def f():\n    return 1\n\nprint(f())\n'),
    ('/workspace/n.txt', '', 'x\ny'),
    # behaviour spec 4.10, Example 9: insert glue, then undo
    ('/workspace/n.txt', 'x\ny', 'x\nyNEW\n'),
    ('/workspace/n.txt', 'x\nyNEW\n', 'x\ny'),
    ('/workspace/n.txt', 'a\n', 'a\n'),
]


def gen_get_diff_cases(rng, count):
    cases = [{'path': p, 'old': o, 'new': n, 'expected': get_diff(o, n, p)}
             for p, o, n in SPEC_EXAMPLES]
    sizes = [0, 1, 2, 3, 5, 8, 12, 20, 30, 50, 80, 120, 199, 200, 201, 250, 320, 420, 480]
    weights = [3, 4, 4, 5, 6, 7, 8, 8, 8, 7, 5, 4, 2, 2, 2, 2, 2, 1, 1]
    styles = ['tiny', 'code', 'uni', 'unique', 'mixed']
    while len(cases) < count:
        n = rng.choices(sizes, weights)[0]
        if n > 40:
            n += rng.randint(-3, 3)
            n = max(n, 0)
        style = rng.choice(styles)
        vocab = None
        if rng.random() < 0.4:
            # a vocabulary whose size puts counts around the autojunk threshold
            vsize = rng.choice([2, 3, 5, 8, 20, 40, 60, 100])
            vocab = rand_lines(rng, vsize, 'unique' if style == 'unique' else 'mixed')
        lines = rand_lines(rng, n, style, vocab)
        old = '\n'.join(lines)
        r = rng.random()
        if r < 0.4:
            old += '\n'
        elif r < 0.45 and style != 'tiny':
            old = old.replace('\n', '\r\n') + '\r\n'
        path = rng.choice(PATHS)
        special = rng.random()
        if special < 0.03:
            case = {'path': path, 'old': '', 'new': old or 'x'}
        elif special < 0.05:
            case = {'path': path, 'old': old, 'new': ''}
        elif special < 0.07:
            case = {'path': path, 'old': old, 'new': old}
        elif special < 0.09:
            new = old.replace('\r\n', '\n') if '\r\n' in old else old.replace('\n', '\r\n')
            case = {'path': path, 'old': old, 'new': new}
        elif special < 0.11:
            new = old + 'tail' if rng.random() < 0.5 else old.rstrip('\n')
            case = {'path': path, 'old': old, 'new': new}
        else:
            edits = make_edits(rng, old.split('\n'), style, vocab)
            case = {'path': path, 'old': old, 'edits': edits}
        new = case['new'] if 'new' in case else apply_edits(case['old'], case['edits'])
        case['expected'] = get_diff(case['old'], new, path)
        cases.append(case)
    return cases


def gen_unified_cases(rng, count):
    cases = []
    for _ in range(count):
        n = rng.choice([0, 3, 10, 30, 30, 60, 210])
        style = rng.choice(['tiny', 'code', 'mixed'])
        a = rand_lines(rng, n, style)
        if rng.random() < 0.5:
            a = [line + '\n' for line in a]
        b = apply_edits('\n'.join(a), make_edits(rng, '\n'.join(a).split('\n'), style, None)).split('\n') if a else rand_lines(rng, 3, style)
        ctx = rng.choice([0, 1, 2, 3, 5])
        kw = {'fromfile': rng.choice(['a', '', 'x y']), 'tofile': rng.choice(['b', '']), 'n': ctx}
        if rng.random() < 0.3:
            kw['fromfiledate'] = rng.choice(['', '2024-01-01'])
            kw['tofiledate'] = rng.choice(['', 'today'])
        if rng.random() < 0.3:
            kw['lineterm'] = rng.choice(['', '\r\n'])
        expected = list(difflib.unified_diff(a, b, **kw))
        cases.append({'a': a, 'b': b, 'kw': kw, 'expected': expected})
    return cases


def gen_opcode_cases(rng, count):
    cases = []
    for _ in range(count):
        n = rng.choice([0, 1, 5, 20, 60, 199, 200, 230, 300])
        alpha = rng.choice(['ab', 'abc', 'abcdefgh', LETTERS, 'aaaaab'])
        a = ''.join(rng.choice(alpha) for _ in range(n))
        b = list(a)
        for _ in range(rng.randint(0, 8)):
            p = rng.randint(0, len(b))
            b[p:p + rng.randint(0, 4)] = [rng.choice(alpha) for _ in range(rng.randint(0, 4))]
        b = ''.join(b)
        autojunk = rng.random() < 0.8
        sm = difflib.SequenceMatcher(None, a, b, autojunk=autojunk)
        ctx = rng.choice([0, 1, 3])
        cases.append({
            'a': a, 'b': b, 'autojunk': autojunk, 'n': ctx,
            'blocks': [list(m) for m in sm.get_matching_blocks()],
            'opcodes': [list(o) for o in sm.get_opcodes()],
            'grouped': [[list(o) for o in g] for g in sm.get_grouped_opcodes(ctx)],
            'ratio': repr(sm.ratio()),
        })
    return cases


def main():
    rng = random.Random(20260522)
    out = {
        'generator': 'gen_cases.py',
        'python': sys.version.split()[0],
        'openhands_aci': aci_get_diff is not None,
        'get_diff': gen_get_diff_cases(rng, 2100),
        'unified': gen_unified_cases(rng, 150),
        'opcodes': gen_opcode_cases(rng, 300),
    }
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), 'fixtures', 'cases.json')
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, 'w', encoding='utf-8') as f:
        json.dump(out, f, ensure_ascii=False, separators=(',', ':'))
        f.write('\n')
    print(f'wrote {path}: {os.path.getsize(path)} bytes, '
          f"{len(out['get_diff'])} get_diff, {len(out['unified'])} unified, "
          f"{len(out['opcodes'])} opcodes cases")


if __name__ == '__main__':
    main()
