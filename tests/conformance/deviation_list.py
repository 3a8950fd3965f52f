"""The one format of a differential's known deviations, shared by the V0 conformance suite
(tests/conformance/deviations.json) and the V1 differential (tests/v1/deviations.json).

An entry is keyed by case id (a suite with user passes also accepts `case id@pass`, that pass
only) and names exactly what may differ:

* `reason`: why (a maintainer's words; never a TODO);
* `steps` (1-based) and `fields` (dotted names the suite knows) of those steps;
* `lines` (optional): for a text field, the regular expressions (`re.search`) that every line a
  line diff marks as changed must match; without it the listed field may differ in full;
* `workspace` (optional): relative paths of the final workspace that may differ; a path ending in
  `/` stands for everything under it;
* `modes` (optional, `true`; only where the suite allows it): the final workspace's permission
  bits are not judged by the reference; the suite judges them against the case instead;
* `race` (optional, `true`; only where the suite allows it, and only with `lines`): the listed
  lines are where the reference itself answers differently from run to run (the reason gives the
  measurement). Its changed lines are excused like any listed line, but the entry is not stale
  when a run of the reference happens to give ours' result.

Everything else that differs fails the case."""

from __future__ import annotations

import difflib
import json
import re
from pathlib import Path

ENTRY_KEYS = {'reason', 'fields', 'steps', 'lines', 'workspace', 'modes', 'race'}


def check_entries(data: dict, *, name: str, known_fields: set[str], line_fields: tuple[str, ...],
                  passes: tuple[str, ...] = (), allow_modes: bool = False,
                  allow_race: bool = False) -> list[str]:
    """What is wrong with the entries of a deviation file (empty: nothing)."""
    problems = []
    for key, e in data.items():
        user = key.partition('@')[2]
        where = f'{name} {key}'
        if user and user not in passes:
            problems.append(f'{where}: unknown pass {user!r}' + (f' (one of {", ".join(passes)})' if passes else ''))
        if not isinstance(e, dict):
            problems.append(f'{where}: must be an object with "reason", "steps" and "fields"')
            continue
        allowed = ENTRY_KEYS - ({'modes'} if not allow_modes else set()) - ({'race'} if not allow_race else set())
        unknown = set(e) - allowed
        if unknown:
            problems.append(f'{where}: unknown keys {sorted(unknown)}')
        reason = e.get('reason')
        if not isinstance(reason, str) or not reason.strip() or reason.startswith('TODO'):
            problems.append(f'{where}: needs a reason (a maintainer writes it; the suite never accepts a TODO)')
        fields = e.get('fields', [])
        if not isinstance(fields, list) or not all(f in known_fields for f in fields):
            problems.append(f'{where}: fields must be a list of {sorted(known_fields)}')
        if not fields and not e.get('workspace') and not e.get('modes'):
            problems.append(f'{where}: names no fields, workspace paths or modes')
        if 'modes' in e and e['modes'] is not True:
            problems.append(f'{where}: modes must be true (or absent)')
        if 'race' in e and (e['race'] is not True or not isinstance(e.get('lines'), dict)
                            or set(e['lines']) != set(fields) or e.get('workspace')):
            problems.append(f'{where}: race must be true (or absent), with lines for every listed field and no '
                            f'workspace paths')
        steps = e.get('steps')
        if fields and not (isinstance(steps, list) and steps and all(isinstance(s, int) and s > 0 for s in steps)):
            problems.append(f'{where}: steps must be a non-empty list of step numbers (1-based)')
        lines = e.get('lines', {})
        if not isinstance(lines, dict):
            problems.append(f'{where}: lines must map a field to a list of patterns')
            lines = {}
        for f, pats in lines.items():
            if f not in line_fields or f not in fields:
                problems.append(f'{where}: lines names {f!r}, which must be one of the listed fields of {line_fields}')
            if not (isinstance(pats, list) and pats and all(isinstance(p, str) for p in pats)):
                problems.append(f'{where}: lines[{f!r}] must be a non-empty list of patterns')
                continue
            for p in pats:
                try:
                    re.compile(p)
                except re.error as err:
                    problems.append(f'{where}: lines[{f!r}]: bad pattern {p!r}: {err}')
        ws = e.get('workspace', [])
        if not (isinstance(ws, list) and all(isinstance(p, str) and p and not p.startswith('/') for p in ws)):
            problems.append(f'{where}: workspace must be a list of relative paths')
    return problems


def entry_for(deviations: dict, cid: str, user: str = '') -> tuple[str, dict] | None:
    """The entry of a case in a pass (`cid@user` first, then `cid`), with its key."""
    for key in ((f'{cid}@{user}',) if user else ()) + (cid,):
        if key in deviations:
            return key, deviations[key]
    return None


def changed_lines(a, b) -> list[str]:
    """The lines of two values (strings split at `\\n`) that a line diff marks as removed or added."""
    la = a.split('\n') if isinstance(a, str) else [json.dumps(a)]
    lb = b.split('\n') if isinstance(b, str) else [json.dumps(b)]
    return [d[2:] for d in difflib.ndiff(la, lb) if d[:2] in ('- ', '+ ')]


def unexcused_lines(a, b, patterns: list[str]) -> tuple[list[str], set[str]]:
    """The changed lines between `a` and `b` that no pattern matches, and the patterns that
    matched a changed line."""
    compiled = [re.compile(p) for p in patterns]
    left, hit = [], set()
    for line in changed_lines(a, b):
        matched = [p.pattern for p in compiled if p.search(line)]
        if not matched:
            left.append(line)
        hit.update(matched)
    return left, hit


def path_listed(path: str, listed) -> bool:
    """Whether a workspace path is one the entry lists (exactly, or under a listed `dir/`)."""
    return any(path == p or (p.endswith('/') and path.startswith(p)) for p in listed)


def write_entries(data: dict, path: Path) -> None:
    """One entry a line: a change to one case is a one-line diff."""
    lines = [f' {json.dumps(k)}: {json.dumps(v, ensure_ascii=False)}' for k, v in data.items()]
    path.write_text('{\n' + ',\n'.join(lines) + '\n}\n')
