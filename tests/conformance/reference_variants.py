"""The rule for a reference that does not always answer the same (the one definition, used by the V0
conformance harness and the V1 differential).

Some replies of the real reference depend on timing it does not control: whether bash reaped a
background job before the next prompt (the `[1]+ Terminated` notice), how the tty's echo of
typed-ahead heredoc lines interleaves with readline. Such a difference is not ours to fix, and
retrying both sides until they agree would hide a real difference of ours. The rule:

* ours runs ONCE; its result is what is judged;
* the reference's first result is compared; on a difference, the reference alone runs the whole
  case again, up to `MAX_REFERENCE_RUNS` runs in all, and every result it produced is kept;
* ours passes only if it equals one of the reference's own results; the case is then reported by
  name as "the reference varied" with the number of distinct results it gave;
* a reference that gave the same result every time is deterministic there, and ours fails.

A caller that keeps reference results across drivers (`reference_store.py`) passes the results it
already has and how many runs produced them, so the bound holds per case and per run.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

# Eight runs. Measured (tests/v1/README.md): V1's tmux reference gives the reply ours gives in 6 of
# 10 runs of `bash/multicmd/rejected_heredoc_then_command`; with 3 runs it was missing from all of
# them in 0.4^3 = 6 % of the suite's runs (red for nothing), with 8 in 0.4^8 = 0.07 %. The bound
# costs nothing while ours agrees (the reference then runs once) and seven extra reference runs of
# one case when ours really differs; a reply of ours that the reference gives rarely (1 in 20)
# still fails 2 runs in 3. That case's distribution turned out to depend on the machine's load
# (idle, 28 Nov: ours' reply 1 in 10, and CI failed on it), so the blank lines it varies in are
# listed as a `race` deviation (deviation_list.py) instead of trusting this bound.
MAX_REFERENCE_RUNS = 8


@dataclass
class Judgement:
    identical: bool  # ours equals one of the reference's results
    variants: list[Any] = field(default_factory=list)  # the reference's distinct results, first first
    runs: int = 0  # how many times the reference ran this case (this call and earlier ones)
    matched: int | None = None  # index into variants of the one ours equals

    @property
    def reference_varied(self) -> bool:
        """Ours passed on a result that is not the reference's first one: the case is named."""
        return self.identical and (self.matched or 0) > 0


def judge(
    ours: Any,
    known: list[Any],
    runs: int,
    run_reference: Callable[[], Any],
    equal: Callable[[Any, Any], bool],
    key: Callable[[Any], str],
    max_runs: int | None = None,
) -> Judgement:
    """Judge `ours` against the reference's results `known` (from `runs` runs; may be empty, then the
    reference runs first). `equal(ref, ours)` decides a match; `key(ref)` tells two reference results
    apart (distinct keys are distinct variants)."""
    bound = max_runs if max_runs is not None else MAX_REFERENCE_RUNS
    variants = list(known)
    seen = {key(v) for v in variants}
    for i, v in enumerate(variants):
        if equal(v, ours):
            return Judgement(True, variants, runs, i)
    while runs < max(1, bound):
        result = run_reference()
        runs += 1
        k = key(result)
        if k in seen:
            continue
        seen.add(k)
        variants.append(result)
        if equal(result, ours):
            return Judgement(True, variants, runs, len(variants) - 1)
    return Judgement(False, variants, runs, None)
