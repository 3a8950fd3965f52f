#!/usr/bin/env python3
"""Checks that openhands-runtime-py/v1-lock.txt (scripts/lock-v1.sh) still describes the package's
`[v1]` environment: each core dependency and each `[v1]` requirement is pinned there, at a version
its specifier allows, and the V1 packages at the newest supported release (V1_NEWEST). A change to
pyproject.toml or to V1_NEWEST without a new lock fails `make check`.

    scripts/check-v1-lock.py
"""

import re
import sys
import tomllib
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def version_key(v: str) -> tuple:
    return tuple(int(p) if p.isdigit() else p for p in re.split(r'[.+-]', v))


def allows(spec: str, version: str) -> bool:
    """The specifiers pyproject.toml uses: comma-separated >=, <, ==."""
    for clause in filter(None, (c.strip() for c in spec.split(','))):
        op, bound = re.match(r'(>=|<=|==|<|>)\s*(\S+)', clause).groups()
        a, b = version_key(version), version_key(bound)
        if not {'>=': a >= b, '<=': a <= b, '==': a == b, '<': a < b, '>': a > b}[op]:
            return False
    return True


def main() -> int:
    project = tomllib.load(open(REPO / 'openhands-runtime-py/pyproject.toml', 'rb'))['project']
    newest = re.search(r'^V1_NEWEST=(\S+)', (REPO / 'scripts/venv-lib.sh').read_text(), re.M).group(1)
    pins = {}
    for line in (REPO / 'openhands-runtime-py/v1-lock.txt').read_text().splitlines():
        m = re.match(r'([A-Za-z0-9_.-]+)==(\S+)', line)
        if m:
            pins[m.group(1).lower().replace('_', '-')] = m.group(2)
    problems = []
    v1 = project['optional-dependencies']['v1']
    for req in [*project['dependencies'], *v1]:
        name, spec = re.match(r'([A-Za-z0-9_.-]+)\s*(.*)', req).groups()
        pinned = pins.get(name.lower().replace('_', '-'))
        if pinned is None:
            problems.append(f'{name} is not in the lock')
        elif not allows(spec, pinned):
            problems.append(f'{name}=={pinned} in the lock, but pyproject.toml asks {spec}')
        elif req in v1 and pinned != newest:
            problems.append(f'{name}=={pinned} in the lock, but the newest supported release is {newest}')
    if problems:
        print('check-v1-lock: FAIL (refresh it with scripts/lock-v1.sh):\n  ' + '\n  '.join(problems))
        return 1
    print(f'check-v1-lock: {len(pins)} pins, the [v1] packages at {newest}')
    return 0


if __name__ == '__main__':
    sys.exit(main())
