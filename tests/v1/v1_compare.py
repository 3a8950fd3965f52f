"""Normalising and comparing the two sides of a V1 differential case.

Normalisation is the V0 suite's (harness_compare.Normaliser: the workspace path, pids as
`{PID1}`..., the editor history directory), plus the workspace's own name where a clipped view
cut its path (`{WS_NAME}`). File permission bits are not compared (V1's editor leaves every file
it writes 0600; docs/v1.md)."""

from __future__ import annotations

import os
from pathlib import Path

from harness_compare import Normaliser

TERMINAL_FIELDS = ('text', 'is_error', 'command', 'exit_code', 'timeout', 'metadata')
EDITOR_FIELDS = ('text', 'is_error', 'command', 'path', 'prev_exist', 'old_content', 'new_content')
METADATA_KEYS = ('exit_code', 'pid', 'username', 'hostname', 'working_dir', 'py_interpreter_path', 'prefix', 'suffix')
# What a deviation may name: an observation field, a metadata key as `metadata.KEY`, or
# `exception` (V1's action model refused the arguments: no observation at all).
KNOWN_FIELDS = (set(TERMINAL_FIELDS + EDITOR_FIELDS) - {'metadata'}) | {f'metadata.{k}' for k in METADATA_KEYS} \
    | {'exception'}
# A hung or crashed side, an unexpected reply from ours and a different number of observations can
# never be excused by a deviation.
NEVER_EXCUSED = ('hung', 'crashed', 'step_count')


def normalise(obs: list[dict], ws: str) -> list[dict]:
    norm = Normaliser(ws)
    for o in obs:  # first every pid, so that a pid printed before its metadata names it is replaced too
        norm({'extras': o})
    name = os.path.basename(ws)
    out = []
    for o in obs:
        fixed = norm({'extras': o})['extras']
        out.append(_replace_strings(fixed, name, '{WS_NAME}'))
    return out


def _replace_strings(v, old: str, new: str):
    if isinstance(v, str):
        return v.replace(old, new)
    if isinstance(v, dict):
        return {k: _replace_strings(x, old, new) for k, x in v.items()}
    if isinstance(v, list):
        return [_replace_strings(x, old, new) for x in v]
    return v


def tree(ws: str) -> dict:
    """Paths, kinds, contents and link targets (not harness_setup.snapshot_workspace: the
    non-root pass meets files it cannot read, which must not end the snapshot)."""
    out = {}
    for root, dirs, files in os.walk(ws):
        for name in dirs + files:
            full = os.path.join(root, name)
            rel = os.path.relpath(full, ws)
            if os.path.islink(full):
                out[rel] = ['link', os.readlink(full)]
            elif os.path.isdir(full):
                out[rel] = ['dir']
            else:
                try:
                    out[rel] = ['file', Path(full).read_bytes().hex()]
                except PermissionError:
                    out[rel] = ['file', 'unreadable']
    return out


def field_value(o: dict, field: str):
    if field.startswith('metadata.'):
        return (o.get('metadata') or {}).get(field.partition('.')[2])
    return o.get(field)


def differing_fields(a: dict, b: dict) -> list[str]:
    """The names of what differs between two observations of one step (KNOWN_FIELDS, or
    `unexpected_reply`, which no deviation can excuse)."""
    if 'unexpected_reply' in a or 'unexpected_reply' in b:
        return ['unexpected_reply']
    if 'exception' in a or 'exception' in b:
        return ['exception'] if a != b else []
    out = []
    for k in sorted(set(a) | set(b)):
        if k == 'metadata':
            ma, mb = a.get(k) or {}, b.get(k) or {}
            out += [f'metadata.{m}' for m in sorted(set(ma) | set(mb)) if ma.get(m) != mb.get(m)]
        elif a.get(k) != b.get(k):
            out.append(k)
    return out


def compare(cid: str, ref: dict, ours: dict) -> dict:
    """One case's differences, step by step (empty lists when identical). `ref` and `ours` are
    v1_sides.run_sides results."""
    result: dict = {'id': cid, 'steps': [], 'workspace': {}}
    for side, name in ((ref, 'reference'), (ours, 'ours')):
        for never in ('hung', 'crashed'):
            if side.get(never):
                result[never] = side[never]
    if 'hung' in result or 'crashed' in result:
        return result
    r, o = ref['obs'], ours['obs']
    # V1's exit code of every step (-1: the command was still running).
    result['v1_exit_codes'] = [x.get('exit_code') for x in r]
    for i, (a, b) in enumerate(zip(r, o), 1):
        fields = differing_fields(a, b)
        if fields:
            result['steps'].append({'step': i, 'fields': fields, 'v1': a, 'ours': b})
    if len(r) != len(o):
        result['step_count'] = [len(r), len(o)]
    tr, to = ref['tree'], ours['tree']
    result['workspace'] = {k: [tr.get(k), to.get(k)] for k in sorted(set(tr) | set(to)) if tr.get(k) != to.get(k)}
    return result


def identical(r: dict) -> bool:
    return not (r['steps'] or r['workspace'] or any(r.get(k) for k in NEVER_EXCUSED))
