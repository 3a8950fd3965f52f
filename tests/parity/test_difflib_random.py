"""Random differential of crates/oh-difflib against Python: 13,500 seeded cases generated at test
time by the generators of `crates/oh-difflib/tests/gen_cases.py` (a seed of their own, so none
repeats the committed fixture), answered by the reference venv (openhands_aci's `get_diff`,
CPython's `difflib`) and by the crate through `examples/diff_answers.rs`; every answer must be
identical.

Generated, not committed: the cases take about 12 s to make and would be ~10 MB as a fixture, and
answers made at test time come from the pinned reference itself. The committed fixture
(`crates/oh-difflib/tests/fixtures/cases.json`, 2,550 cases) keeps `cargo test` checking without
Python. `OH_DIFFLIB_SEED=N` runs another seed by hand."""

from __future__ import annotations

import json
import os
import random
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, '..', '..', 'crates', 'oh-difflib', 'tests'))

import gen_cases  # noqa: E402
import rust_example  # noqa: E402

SEED = int(os.environ.get('OH_DIFFLIB_SEED', '20261127'))
GET_DIFF, UNIFIED, OPCODES = 10_000, 1_500, 2_000


def _questions_and_answers(rng: random.Random) -> tuple[list[str], list, list[str]]:
    questions, expected, names = [], [], []
    for n, case in enumerate(gen_cases.gen_get_diff_cases(rng, GET_DIFF)):
        new = case['new'] if 'new' in case else gen_cases.apply_edits(case['old'], case['edits'])
        questions.append({'get_diff': [case['old'], new, case['path']]})
        expected.append({'fast': case['expected'], 'generic': case['expected']})
        names.append(f'get_diff/{n}')
    for n, case in enumerate(gen_cases.gen_unified_cases(rng, UNIFIED)):
        questions.append({'unified': [case['a'], case['b'], case['kw']]})
        expected.append(case['expected'])
        names.append(f'unified/{n}')
    for n, case in enumerate(gen_cases.gen_opcode_cases(rng, OPCODES)):
        questions.append({'opcodes': [case['a'], case['b'], case['autojunk'], case['n']]})
        expected.append({'blocks': case['blocks'], 'opcodes': case['opcodes'], 'grouped': case['grouped'],
                         'ratio': float(case['ratio'])})
        names.append(f'opcodes/{n}')
    return [json.dumps(q, ensure_ascii=False) for q in questions], expected, names


def test_difflib_random_cases():
    # gen_cases falls back to an inline copy of get_diff without openhands_aci: not here.
    assert gen_cases.aci_get_diff is not None, 'openhands_aci is not importable: run with the V0 venv'
    questions, expected, names = _questions_and_answers(random.Random(SEED))
    assert len(questions) == GET_DIFF + UNIFIED + OPCODES
    answers = rust_example.answers('oh-difflib', 'diff_answers', questions)
    wrong = [(name, q, json.loads(a), e) for name, q, a, e in zip(names, questions, answers, expected)
             if json.loads(a) != e]
    shown = '\n'.join(f'{name}: {q[:300]}\n  want {e!r:.300}\n  got  {a!r:.300}' for name, q, a, e in wrong[:5])
    assert not wrong, f'{len(wrong)} of {len(questions)} differ (seed {SEED}):\n{shown}'
    print(f'difflib random (seed {SEED}): {len(questions)}/{len(questions)} identical '
          f'({GET_DIFF} get_diff, {UNIFIED} unified_diff, {OPCODES} SequenceMatcher)')
