#!/usr/bin/env python3
"""Generate corpus.jsonl: expected outputs of OpenHands' split_bash_commands /
escape_bash_special_chars (openhands-ai 1.6.0, bashlex 0.18) for every input.

Run with the reference venv python:
    $VENV/bin/python tests/bashlex-corpus/generate.py

Inputs: inputs.py (INPUTS, a Python list; easiest for control characters)
plus the lines of inputs.txt where the two-character sequence \\n stands for a newline.
Each output line: {"input", "split" | "split_error", "escape" | "escape_error"}.
*_error holds the exception class name when the reference itself raises, or "InfiniteLoop"
when it did not return within 20 s (bashlex loops forever on some `${` words).
"""
import json
import os
import signal
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

from openhands.runtime.utils.bash import escape_bash_special_chars, split_bash_commands  # noqa: E402


def load_inputs():
    from inputs import INPUTS

    out = list(INPUTS)
    txt = os.path.join(HERE, 'inputs.txt')
    if os.path.exists(txt):
        with open(txt, encoding='utf-8') as f:
            for line in f:
                line = line.rstrip('\n')
                if line.startswith('#!') or not line:
                    continue
                out.append(line.replace('\\n', '\n'))
    seen, uniq = set(), []
    for s in out:
        if s not in seen:
            seen.add(s)
            uniq.append(s)
    return uniq


class InfiniteLoop(Exception):
    pass


def _alarm(*_):
    raise InfiniteLoop()


def call(row, key, fn, s):
    signal.alarm(20)
    try:
        row[key] = fn(s)
    except InfiniteLoop:
        row[key + '_error'] = 'InfiniteLoop'
    except BaseException as e:  # the reference itself raises
        row[key + '_error'] = type(e).__name__
    finally:
        signal.alarm(0)


def main():
    import logging

    logging.disable(logging.CRITICAL)
    signal.signal(signal.SIGALRM, _alarm)
    rows = []
    for s in load_inputs():
        row = {'input': s}
        call(row, 'split', split_bash_commands, s)
        call(row, 'escape', escape_bash_special_chars, s)
        rows.append(row)
    with open(os.path.join(HERE, 'corpus.jsonl'), 'w', encoding='utf-8') as f:
        for row in rows:
            f.write(json.dumps(row, ensure_ascii=False) + '\n')
    print(f'wrote {len(rows)} cases')


if __name__ == '__main__':
    main()
