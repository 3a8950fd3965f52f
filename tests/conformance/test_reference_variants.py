"""The rule for a reference whose reply depends on timing (reference_variants.judge), on plain values:
what passes, what fails, and that the reference's runs stay within their bound."""

from __future__ import annotations

import itertools

import reference_variants


def _judge(ours, known, runs, reference_outputs, max_runs=3):
    produced = iter(reference_outputs)
    calls = []

    def run_reference():
        calls.append(1)
        return next(produced)

    verdict = reference_variants.judge(ours, known, runs, run_reference, equal=lambda r, o: r == o, key=str, max_runs=max_runs)
    return verdict, len(calls)


def test_equal_to_the_first_result_runs_the_reference_once():
    verdict, calls = _judge('a', [], 0, ['a'])
    assert (verdict.identical, verdict.reference_varied, calls, verdict.runs) == (True, False, 1, 1)


def test_a_difference_the_reference_never_gives_fails_after_the_bound():
    verdict, calls = _judge('b', [], 0, itertools.repeat('a'))
    assert not verdict.identical
    assert calls == 3 and verdict.runs == 3
    assert verdict.variants == ['a']  # one distinct result: the reference is deterministic here


def test_ours_equal_to_a_later_result_of_the_reference_passes_and_is_named():
    verdict, calls = _judge('b', [], 0, ['a', 'b'])
    assert verdict.identical and verdict.reference_varied
    assert calls == 2 and verdict.variants == ['a', 'b'] and verdict.matched == 1


def test_ours_is_never_run_again():
    # judge has no way to run ours: it takes ours' one result. A differing ours stays differing
    # whatever the reference gives, unless it equals one of the reference's results.
    verdict, _ = _judge('c', [], 0, ['a', 'b', 'a'])
    assert not verdict.identical and verdict.variants == ['a', 'b']


def test_results_of_earlier_drivers_count_against_the_bound():
    verdict, calls = _judge('b', ['a'], 3, itertools.repeat('b'))
    assert not verdict.identical and calls == 0  # the run's three reference runs are spent
    verdict, calls = _judge('b', ['a'], 1, ['a', 'b'])
    assert verdict.identical and calls == 2 and verdict.runs == 3


def test_a_known_result_is_matched_without_running_the_reference():
    verdict, calls = _judge('b', ['a', 'b'], 2, [])
    assert verdict.identical and verdict.matched == 1 and calls == 0
