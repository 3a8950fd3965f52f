#!/usr/bin/env python3
"""Differential fuzzing of crates/oh-bashlex against the reference (openhands-ai 1.6.0, bashlex 0.18).

    CARGO_TARGET_DIR=/tmp/tgt-bashlex cargo build -p oh-bashlex --example bashlex_cli
    $VENV/bin/python tests/bashlex-corpus/fuzz.py grammar SEED N     # structured bash-like commands
    $VENV/bin/python tests/bashlex-corpus/fuzz.py tokens SEED N      # random token soup
    $VENV/bin/python tests/bashlex-corpus/fuzz.py mutate SEED N      # mutated corpus inputs
    $VENV/bin/python tests/bashlex-corpus/fuzz.py exhaustive ALPHABET MAXLEN

Prints mismatches (reference vs Rust) and a summary; mismatching inputs go to /tmp/bashlex-fuzz-bad.json
(add them to inputs.py once understood). CLI binary: $BASHLEX_CLI or /tmp/tgt-bashlex/debug/examples/bashlex_cli.
"""
import itertools
import json
import logging
import os
import random
import signal
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
logging.disable(logging.CRITICAL)

from openhands.runtime.utils.bash import escape_bash_special_chars, split_bash_commands  # noqa: E402

CLI = os.environ.get('BASHLEX_CLI', '/tmp/tgt-bashlex/debug/examples/bashlex_cli')

WORDS = ['echo', 'ls', 'a', 'x\\;y', '"q;r"', "'s|t'", '$x', '${y:-z}', '$(ls)', '`pwd`', '\\;', '\\|', '\\>', 'a\\&b', '{}',
         '~/d', 'é', '2>&1', '>out', '<in', '>>log', 'x=1', '$(echo $(date))', '"$(a; b)"', '<(ls)', '>(cat)',
         '$(cat <<E\nq\nE\n)', '$(a\nb)', '-n', '"a\nb"', '$((1))', "a'$(b)'c", '\\\n']
TOKENS = ['a', ' ', '\n', '"', "'", '`', '$', '(', ')', '{', '}', '[', ']', '\\', ';', '&', '|', '<', '>', '#', '-', '=', '~',
          '\t', '1', 'EOF', '<<', 'case', 'in', 'esac', 'do', 'if', 'for', 'then', 'fi', 'done', ';;', '$(', '${', "$'", '$"']


def g_simple(r):
    return ' '.join(r.choice(WORDS) for _ in range(r.randint(1, 4)))


def g_cmd(r, d):
    k = r.random()
    if d > 2 or k < 0.45:
        return g_simple(r)
    if k < 0.52:
        return '{ ' + g_list(r, d + 1) + '; }'
    if k < 0.59:
        return '(' + g_list(r, d + 1) + ')'
    if k < 0.66:
        return 'if ' + g_list(r, d + 1) + '; then ' + g_list(r, d + 1) + r.choice(['; fi', '\nfi', '; else ' + g_simple(r) + '; fi'])
    if k < 0.73:
        return 'for i in ' + g_simple(r) + r.choice(['; do ', '\ndo\n']) + g_list(r, d + 1) + r.choice(['; done', '\ndone'])
    if k < 0.80:
        return 'while ' + g_list(r, d + 1) + r.choice(['; do ', '\ndo ']) + g_list(r, d + 1) + '; done'
    if k < 0.86:
        return 'f() { ' + g_list(r, d + 1) + '; }'
    if k < 0.93:
        return ('cat <<' + r.choice(['EOF', '-EOF', 'EOF >f', 'EOF | ' + g_simple(r)]) + '\n'
                + r.choice(['x', '\ty;', 'a\\;b', '$(q)', '']) + '\n' + r.choice(['EOF', '\tEOF', 'EOF ']))
    return '! ' + g_simple(r)


def g_pipe(r, d):
    return r.choice([' | ', ' |& ', ' |\n']).join(g_cmd(r, d) for _ in range(r.randint(1, 2)))


def g_list(r, d=0):
    out = g_pipe(r, d)
    for _ in range(r.randint(0, 2)):
        out += r.choice(['; ', ' && ', ' || ', ' & ', '\n', ' &&\n', '\n\n', ' # c\n']) + g_pipe(r, d)
    return out


def gen_inputs(argv):
    mode = argv[1]
    if mode == 'exhaustive':
        alpha, maxlen = list(argv[2]), int(argv[3])
        return [''.join(p) for n in range(1, maxlen + 1) for p in itertools.product(alpha, repeat=n)]
    r, n = random.Random(int(argv[2])), int(argv[3])
    if mode == 'grammar':
        return [g_list(r) + (r.choice([';', '\n', ' &', '  ', '\n# end', '\\']) if r.random() < 0.3 else '') for _ in range(n)]
    if mode == 'tokens':
        return [''.join(r.choice(TOKENS) for _ in range(r.randint(1, 14))) for _ in range(n)]
    if mode == 'mutate':
        from inputs import INPUTS
        out = []
        for _ in range(n):
            chars = list(r.choice(INPUTS))
            for _ in range(r.randint(1, 3)):
                pos = r.randint(0, len(chars))
                if r.random() < 0.5:
                    chars[pos:pos] = list(r.choice(TOKENS + WORDS))
                else:
                    del chars[pos:pos + r.randint(1, 3)]
            out.append(''.join(chars))
        return out
    raise SystemExit(__doc__)


class Timeout(Exception):
    pass


def _alarm(*_):
    raise Timeout()


def reference(s):
    row = {'input': s}
    for key, fn in (('split', split_bash_commands), ('escape', escape_bash_special_chars)):
        try:
            row[key] = fn(s)
        except Timeout:
            raise
        except BaseException as e:
            row[key + '_error'] = type(e).__name__
    return row


def main():
    signal.signal(signal.SIGALRM, _alarm)
    inputs, refs, slow = [], [], []
    for s in gen_inputs(sys.argv):
        signal.alarm(10)
        try:
            refs.append(reference(s))
            inputs.append(s)
        except Timeout:
            slow.append(s)
        finally:
            signal.alarm(0)
    p = subprocess.run([CLI], input=''.join(json.dumps(s) + '\n' for s in inputs), capture_output=True, text=True)
    if p.returncode != 0:
        print('CLI failed:', p.stderr[-3000:])
    got = [json.loads(line) for line in p.stdout.split('\n') if line]  # not splitlines(): U+2028
    bad = [(r, g) for r, g in zip(refs, got) if r != g]
    for r, g in bad[:10]:
        print('REFERENCE', json.dumps(r, ensure_ascii=False))
        print('     RUST', json.dumps(g, ensure_ascii=False))
    with open('/tmp/bashlex-fuzz-bad.json', 'w') as f:
        json.dump([r['input'] for r, _ in bad], f)
    for s in slow[:5]:
        print('REFERENCE TIMEOUT', json.dumps(s, ensure_ascii=False))
    print(f'{len(got)}/{len(inputs)} compared, {len(bad)} mismatches, {len(slow)} reference timeouts (>10 s, skipped)')


if __name__ == '__main__':
    main()
