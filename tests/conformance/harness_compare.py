"""Conformance harness, comparison: normalising observations, the listed deviations, readable diffs.

Part of `harness.py` (which re-exports these names).
"""
from __future__ import annotations

import copy
import difflib
import json
import re
from typing import Any

from deviation_list import unexcused_lines

# --------------------------------------------------------------------------------------------
# Normalisation and comparison


def _walk_strings(value: Any, fn) -> Any:
    if isinstance(value, str):
        return fn(value)
    if isinstance(value, list):
        return [_walk_strings(v, fn) for v in value]
    if isinstance(value, dict):
        return {k: _walk_strings(v, fn) for k, v in value.items()}
    return value


def _get_field(d: dict, dotted: str) -> tuple[bool, Any]:
    cur: Any = d
    for part in dotted.split('.'):
        if not isinstance(cur, dict) or part not in cur:
            return False, None
        cur = cur[part]
    return True, cur


def _set_field(d: dict, dotted: str, value: Any) -> None:
    parts = dotted.split('.')
    cur = d
    for part in parts[:-1]:
        cur = cur[part]
    cur[parts[-1]] = value


_RUN_ROOT = re.compile(r'(/tmp/ohconf-)[a-z0-9_]{1,8}')


class Normaliser:
    """Per side and per case: workspace path, pids (stable tokens), editor history dir."""

    def __init__(self, ws: str):
        self.ws = ws
        self.pids: dict[int, str] = {}

    def __call__(self, obs: dict) -> dict:
        obs = copy.deepcopy(obs)
        md = obs.get('extras', {}).get('metadata') if isinstance(obs.get('extras'), dict) else None
        if isinstance(md, dict) and isinstance(md.get('pid'), int) and md['pid'] != -1:
            pid = md['pid']
            if pid not in self.pids:
                self.pids[pid] = f'{{PID{len(self.pids) + 1}}}'
            md['pid'] = self.pids[pid]
        pid_re = re.compile(r'\b(' + '|'.join(str(p) for p in self.pids) + r')\b') if self.pids else None

        def fix(s: str) -> str:
            s = s.replace(self.ws, '{WS}')
            # A workspace path cut short (a truncated listing) keeps the run's random temp root,
            # which differs between the drivers that share the run's reference results.
            s = _RUN_ROOT.sub(r'\1{RUN}', s)
            s = re.sub(r'/tmp/oh_editor_history_[A-Za-z0-9_]+', '{EDITOR_HISTORY}', s)
            if pid_re is not None:
                s = pid_re.sub(lambda mm: self.pids[int(mm.group(1))], s)
            return s

        return _walk_strings(obs, fix)


def excuse_fields(ref: dict, ours: dict, entry: dict, step: int) -> list[str]:
    """Apply a deviation entry (deviations.json) to one step: a listed field of a listed step that
    differs is made equal to the reference's (so the byte comparison passes) when every changed
    line matches one of its `lines` patterns, or in full when it has none. Returns what the entry
    does not excuse; any other difference is left for the comparison to fail."""
    if step not in entry.get('steps', []):
        return []
    problems = []
    for dotted in entry.get('fields', []):
        ok_r, rv = _get_field(ref, dotted)
        ok_o, ov = _get_field(ours, dotted)
        if not (ok_r and ok_o) or rv == ov:
            continue
        patterns = entry.get('lines', {}).get(dotted)
        left = unexcused_lines(rv, ov, patterns)[0] if patterns else []
        if left:
            problems.append(f'{dotted} differs in a line no listed pattern matches: {left[0][:200]!r}')
            continue
        _set_field(ours, dotted, copy.deepcopy(rv))
    return problems


def pretty(obs: Any) -> str:
    return json.dumps(obs, indent=2, ensure_ascii=False)


def obs_diff(ref: dict, ours: dict) -> str:
    out = []
    a, b = pretty(ref).splitlines(), pretty(ours).splitlines()
    out.extend(difflib.unified_diff(a, b, 'reference', 'ours', lineterm='', n=3))
    rc, oc = ref.get('content'), ours.get('content')
    if isinstance(rc, str) and isinstance(oc, str) and rc != oc:
        out.append('--- content (reference vs ours), raw lines:')
        out.extend(
            difflib.unified_diff(
                [repr(x) for x in rc.split('\n')],
                [repr(x) for x in oc.split('\n')],
                'reference.content',
                'ours.content',
                lineterm='',
                n=2,
            )
        )
    if json.loads(json.dumps(ref)) == json.loads(json.dumps(ours)) and json.dumps(ref) != json.dumps(ours):
        out.append('(values equal, KEY ORDER differs)')
        out.append('reference keys: ' + _key_order(ref))
        out.append('ours keys:      ' + _key_order(ours))
    return '\n'.join(out)


def _key_order(d: Any, prefix: str = '') -> str:
    if not isinstance(d, dict):
        return ''
    parts = []
    for k, v in d.items():
        parts.append(prefix + k)
        if isinstance(v, dict):
            parts.append('{' + _key_order(v) + '}')
    return ' '.join(parts)
