"""Build (incrementally) and run an example binary of a workspace crate: the Rust side of the
differentials in this folder. `cargo build --message-format=json` names the executable, so
CARGO_TARGET_DIR and profiles need no guessing."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def build(crate: str, example: str) -> str:
    proc = subprocess.run(
        ['cargo', 'build', '-q', '-p', crate, '--example', example, '--message-format=json'],
        cwd=REPO, capture_output=True, text=True,
    )
    assert proc.returncode == 0, f'cargo build -p {crate} --example {example} failed:\n{proc.stderr}'
    for line in proc.stdout.splitlines():
        msg = json.loads(line)
        if msg.get('reason') == 'compiler-artifact' and msg['target']['name'] == example and msg.get('executable'):
            return msg['executable']
    raise AssertionError(f'cargo named no executable for the example {example} of {crate}')


def answers(crate: str, example: str, questions: list[str]) -> list[str]:
    """One output line per input line, checked: an answer missing is a failure, not a pass."""
    exe = build(crate, example)
    proc = subprocess.run([exe], input=''.join(q + '\n' for q in questions), capture_output=True, text=True)
    assert proc.returncode == 0, f'{exe} failed (exit {proc.returncode}):\n{proc.stderr[-4000:]}'
    # '\n' only: an answer may hold U+2028 or U+0085, which splitlines() would cut at.
    out = proc.stdout.split('\n')
    assert out.pop() == '', f'{exe}: the output does not end with a newline'
    assert len(out) == len(questions), f'{exe}: {len(out)} answers to {len(questions)} questions'
    return out
