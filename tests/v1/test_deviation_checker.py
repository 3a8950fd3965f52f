"""The V1 differential's deviation checker (v1_deviations.check_case, load_deviations): what an
entry excuses, and that an entry nothing matches any more fails (stale)."""

import json

import pytest
from v1_deviations import DeviationError, check_case, load_deviations


def result(v1_text: str, our_text: str, step: int = 1) -> dict:
    return {'id': 'c', 'workspace': {},
            'steps': [{'step': step, 'fields': ['text'], 'v1': {'text': v1_text}, 'ours': {'text': our_text}}]}


ENTRY = {'reason': 'r', 'steps': [1], 'fields': ['text'], 'lines': {'text': [r'\\;$']}}


def test_a_difference_inside_the_listed_lines_is_excused():
    assert check_case(result('x;', 'echo x\\;\nx;'), ENTRY) == []


def test_a_differing_line_no_pattern_matches_fails():
    problems = check_case(result('x;', 'echo x\\;\ny;'), ENTRY)
    assert any('no listed pattern matches' in p for p in problems), problems


def test_a_pattern_that_matched_nothing_is_stale():
    entry = dict(ENTRY, lines={'text': [r'\\;$', r'^never$']})
    problems = check_case(result('x;', 'echo x\\;\nx;'), entry)
    assert any('stale' in p and '/^never$/' in p for p in problems), problems


def test_a_step_not_listed_fails_and_a_listed_one_that_did_not_differ_is_stale():
    assert any('lists steps [1]' in p for p in check_case(result('a', 'b', step=2), dict(ENTRY, lines={})))
    same = {'id': 'c', 'workspace': {}, 'steps': []}
    assert any('stale' in p for p in check_case(same, ENTRY))


def test_no_entry_and_a_difference_fails():
    assert check_case(result('a', 'b'), None)


RACE = {'reason': 'r', 'steps': [1], 'fields': ['text'], 'lines': {'text': ['^$']}, 'race': True}


def test_a_race_entry_excuses_its_lines_and_is_not_stale_when_the_reference_gave_ours():
    assert check_case(result('x\n\n\n\necho after', 'x\n\n\necho after'), RACE) == []
    assert check_case({'id': 'c', 'workspace': {}, 'steps': []}, RACE) == []
    # Without `race` the identical run is a stale entry.
    assert check_case({'id': 'c', 'workspace': {}, 'steps': []}, {k: v for k, v in RACE.items() if k != 'race'})


def test_a_race_entry_still_fails_on_a_line_it_does_not_list():
    problems = check_case(result('x\n\n\necho after', 'y\n\n\necho after'), RACE)
    assert any('no listed pattern matches' in p for p in problems), problems


@pytest.mark.parametrize('entry', [
    {'reason': 'r', 'fields': ['text']},  # no steps
    {'reason': 'r', 'steps': [1], 'fields': ['text'], 'race': True},  # a race without lines: the whole field
    {'reason': 'r', 'steps': [1], 'fields': ['text', 'exit_code'], 'lines': {'text': ['^$']}, 'race': True},
    {'reason': 'r', 'steps': [1], 'fields': ['text'], 'lines': {'exit_code': ['x']}},  # lines of an unlisted field
    {'reason': 'TODO: say why', 'steps': [1], 'fields': ['text']},
    {'reason': 'r', 'steps': [1], 'fields': ['text'], 'tmux': 'same'},  # the old verdict key
])
def test_malformed_entries_are_refused(tmp_path, entry):
    f = tmp_path / 'deviations.json'
    f.write_text(json.dumps({'bash/x/y': entry}))
    with pytest.raises(DeviationError):
        load_deviations(f)
