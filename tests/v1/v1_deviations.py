"""The V1 differential's known deviations (deviations.json, in the format of
tests/conformance/deviation_list.py, which V0's list shares): loading and checking the entries,
judging a case's result against its entry, rewriting the list from a run for review, and the
generated list in docs/v1.md.

An entry (README.md) names exactly what may differ: the `steps` (always), the `fields` of those
steps, for a text field optionally the `lines` (regular expressions, `re.search`) that may differ
within it, and the `workspace` paths. Anything else that differs fails the suite, and so does any
listed item (field, step, line pattern, path) that nothing in the run matched: a stale entry."""

from __future__ import annotations

import json
import re
from pathlib import Path

from v1_cases import REPO, SUBPROCESS_ONLY, load_cases, uses_terminal  # first: puts tests/conformance on the path

from deviation_list import changed_lines, check_entries, path_listed, write_entries  # noqa: E402
from v1_compare import KNOWN_FIELDS, NEVER_EXCUSED, field_value, identical  # noqa: E402

DEVIATIONS_FILE = Path(__file__).with_name('deviations.json')
DOCS = REPO / 'docs' / 'v1.md'
USER_PASSES = ('root', 'non-root')
REWRITE_TODO = 'TODO: say why (written by --rewrite-deviations)'
LINE_FIELDS = ('text', 'command', 'old_content', 'new_content', 'metadata.prefix', 'metadata.suffix')


class DeviationError(Exception):
    pass


def load_deviations(path: Path = DEVIATIONS_FILE) -> dict[str, dict]:
    """deviations.json, checked (deviation_list.py: the format V0's list shares): an entry is keyed
    by case id (every user pass) or by `case id@root` / `case id@non-root` (that pass only, in place
    of the plain entry)."""
    data = json.loads(path.read_text())
    problems = check_entries(data, name='deviations.json', known_fields=KNOWN_FIELDS, line_fields=LINE_FIELDS,
                             passes=USER_PASSES, allow_race=True)
    if problems:
        raise DeviationError('\n'.join(problems))
    return data


def check_case(r: dict, entry: dict | None) -> list[str]:
    """What in one case's result the deviation entry does not excuse, and what it lists that
    did not differ (stale). Empty: the case is as expected."""
    problems = []
    for never in ('hung', 'crashed'):
        if r.get(never):
            problems.append(f'{never}: {r[never]}')
    if r.get('step_count'):
        problems.append(f'V1 gave {r["step_count"][0]} observations, ours {r["step_count"][1]}')
    if problems:
        return problems
    if entry is None:
        if not identical(r):
            parts = [f'step {s["step"]}: {", ".join(s["fields"])}' for s in r['steps']]
            if r['workspace']:
                parts.append(f'workspace: {", ".join(r["workspace"])}')
            problems.append('differs (no deviation listed): ' + '; '.join(parts))
        return problems
    fields, steps, paths = set(entry.get('fields', [])), entry.get('steps') or [], set(entry.get('workspace', []))
    lines = {f: [re.compile(p) for p in pats] for f, pats in entry.get('lines', {}).items()}
    seen_fields, seen_steps, seen_patterns = set(), set(), set()
    for s in r['steps']:
        f = set(s['fields'])
        if 'unexpected_reply' in f:
            problems.append(f'step {s["step"]}: unexpected reply from ours: {json.dumps(s["ours"])[:300]}')
            continue
        if s['step'] not in steps:
            problems.append(f'step {s["step"]} differs ({", ".join(sorted(f))}) but the deviation lists steps {steps}')
            continue
        if f - fields:
            problems.append(f'step {s["step"]}: {", ".join(sorted(f - fields))} differ(s), not listed')
        for name in f & fields & set(lines):
            for line in changed_lines(field_value(s['v1'], name), field_value(s['ours'], name)):
                hit = [p.pattern for p in lines[name] if p.search(line)]
                if not hit:
                    problems.append(f'step {s["step"]}: {name} differs in a line no listed pattern matches: {line[:200]!r}')
                seen_patterns |= {(name, p) for p in hit}
        if f & fields:
            seen_steps.add(s['step'])
        seen_fields |= f & fields
    extra_paths = {p for p in r['workspace'] if not path_listed(p, paths)}
    if extra_paths:
        problems.append(f'workspace differs in {", ".join(sorted(extra_paths))}, not listed')
    stale = sorted(fields - seen_fields) + [f'step {n}' for n in steps if n not in seen_steps and fields] + \
        [f'{name} line /{p}/' for name, pats in entry.get('lines', {}).items() for p in pats
         if (name, p) not in seen_patterns] + [f'workspace {p}' for p in sorted(paths) if not any(path_listed(w, [p]) for w in r['workspace'])]
    if stale and not entry.get('race'):
        problems.append(f'stale deviation: {", ".join(stale)} listed but identical (remove from deviations.json)')
    return problems


def rewrite_deviations(results_path: Path, path: Path = DEVIATIONS_FILE) -> None:
    """Rewrite the steps/fields/workspace of deviations.json from a run's results: reasons and
    line patterns are kept (a pattern that no longer applies fails the next run as stale), an entry
    that no longer differs is dropped, a new one gets a TODO reason that the suite refuses until a
    maintainer replaces it. Review the diff before committing."""
    run = json.loads(results_path.read_text())
    old = json.loads(path.read_text())
    new: dict[str, dict] = {}
    per_user: dict[str, dict[str, dict]] = {}
    for user in USER_PASSES:
        for r in run['passes'].get(user, []):
            if identical(r) or any(r.get(k) for k in NEVER_EXCUSED):
                continue
            e: dict = {}
            if r['steps']:
                e['steps'] = sorted({s['step'] for s in r['steps']})
                e['fields'] = sorted({f for s in r['steps'] for f in s['fields']})
            if r['workspace']:
                e['workspace'] = sorted(r['workspace'])
            per_user.setdefault(r['id'], {})[user] = e
    ran = {user: {r['id'] for r in run['passes'].get(user, [])} for user in USER_PASSES}
    for cid, by_user in per_user.items():
        both = all(cid in ran[u] for u in USER_PASSES)
        if both and by_user.get('root') == by_user.get('non-root'):
            keys = {cid: by_user['root']}
        elif not both:  # only one pass ran the case: keep the plain key
            keys = {cid: e for e in by_user.values()}
        else:
            keys = {f'{cid}@{u}': e for u, e in by_user.items()}
        for key, e in keys.items():
            before = old.get(key) or old.get(key.partition('@')[0]) or {}
            kept_lines = {f: p for f, p in before.get('lines', {}).items() if f in e.get('fields', [])}
            new[key] = {'reason': before.get('reason', REWRITE_TODO), **e, **({'lines': kept_lines} if kept_lines else {})}
            if before.get('race'):
                new[key]['race'] = True
    for key, e in old.items():
        # Entries of cases (or passes) this run did not cover are kept as they are, and so are the
        # reference races (a run may not show the race).
        cid, _, user = key.partition('@')
        if e.get('race') or not any(cid in ran[u] for u in ([user] if user else USER_PASSES)):
            new.setdefault(key, e)
    write_deviations(dict(sorted(new.items())), path)


def write_deviations(data: dict, path: Path = DEVIATIONS_FILE) -> None:
    write_entries(data, path)


DOCS_BEGIN = '<!-- deviations: generated from tests/v1/deviations.json by `tests/v1/diff_v1.py --docs-table`; the suite checks it -->'
DOCS_END = '<!-- end of deviations -->'


def docs_table(deviations: dict) -> str:
    """The deviations grouped by reason, for docs/v1.md."""
    cases = dict(load_cases([]))
    groups: dict[str, list[str]] = {}
    for key, e in deviations.items():
        cid, _, user = key.partition('@')
        what = ', '.join(f'`{f}`' for f in e.get('fields', []))
        for f, pats in e.get('lines', {}).items():
            what += f' (`{f}` only in lines matching ' + ', '.join(f'`/{p}/`' for p in pats) + ')'
        if e.get('steps') and e.get('fields'):
            what += f' (step{"s" if len(e["steps"]) > 1 else ""} {", ".join(map(str, e["steps"]))})'
        if e.get('workspace'):
            what += (', ' if what else '') + 'workspace ' + ', '.join(f'`{p}`' for p in e['workspace'])
        case = cases.get(cid)
        ref = ('V1 subprocess backend' if cid in SUBPROCESS_ONLY else 'V1 tmux') \
            if case and uses_terminal(case) else 'no terminal step'
        who = f', {user} only' if user else ''
        if e.get('race'):
            what += '; a reference race (the entry is not stale when the reference gives ours\' result)'
        groups.setdefault(e['reason'], []).append(f'`{cid}`{who}: {what}; {ref}')
    out = [DOCS_BEGIN, '']
    for reason, items in groups.items():
        out.append(f'* {reason}')
        out += [f'  * {i}' for i in items]
    out += ['', DOCS_END]
    return '\n'.join(out)


def docs_in_sync(deviations: dict) -> str | None:
    text = DOCS.read_text()
    if DOCS_BEGIN not in text or DOCS_END not in text:
        return f'{DOCS} lacks the generated deviation list (markers {DOCS_BEGIN!r} ... {DOCS_END!r})'
    block = text[text.index(DOCS_BEGIN):text.index(DOCS_END) + len(DOCS_END)]
    if block != docs_table(deviations):
        return f'{DOCS}: the deviation list differs from deviations.json (tests/v1/diff_v1.py --docs-table --write-docs)'
    return None


def write_docs(deviations: dict) -> None:
    text = DOCS.read_text()
    block = text[text.index(DOCS_BEGIN):text.index(DOCS_END) + len(DOCS_END)]
    DOCS.write_text(text.replace(block, docs_table(deviations)))
