"""remat's decision code (schedc.decisions.remat) on problems made by hand and at random."""

from __future__ import annotations

import itertools

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from schedc.decisions.remat import Candidate, Copy, Recipe, RematLimits, RematProblem, budget_bytes, decisions, evaluate, parse_budget, plan_remat


def recipe(*inputs, seconds=1e-5, extra=0, kernels=1):
    return Recipe(inputs=tuple(inputs), extra_bytes=extra, seconds=seconds, flops=seconds * 1e9, kernels=kernels)


def long_lived() -> RematProblem:
    """Buffer 0 (100 B) made at step 0, read at 1 and 8; a fixed 80 B at step 5; buffer 1
    (50 B) made from buffer 0 at step 2, read at 3 and 6."""
    a = Candidate(buffer=0, size=100, born=0, made=0, reads=(1, 8), recipes=(recipe(),))
    b = Candidate(buffer=1, size=50, born=2, made=2, reads=(3, 6), recipes=(recipe(0, seconds=2e-5),))
    return RematProblem(steps=10, fixed_live=(0,) * 5 + (80,) + (0,) * 4, candidates=(a, b), spans={0: (0, 8), 1: (2, 6)})


def test_the_cheapest_copy_that_fits_the_budget_is_chosen():
    problem = long_lived()
    plan = plan_remat(problem, 150)
    assert plan.original_peak_bytes == 230
    assert plan.copies == (Copy(0, 1, 0),)  # buffer 0 again before step 8: frees steps 2-7
    assert plan.peak_bytes == 130 == evaluate(problem, list(plan.copies))
    assert plan.feasible and plan.method == "exact"


def test_a_copy_needs_its_inputs_alive_where_it_runs():
    problem = long_lived()
    copies, conflicts = decisions(problem)
    # Buffer 1's copy at step 6 reads buffer 0, which buffer 0's copy at step 8 frees there.
    first = copies.index(Copy(0, 1, 0))
    second = copies.index(Copy(1, 1, 0))
    assert (second, first) in conflicts or (first, second) in conflicts


def test_an_unreachable_budget_gives_the_lowest_peak_and_says_so():
    plan = plan_remat(long_lived(), 10)
    assert not plan.feasible
    assert plan.peak_bytes == 130  # both copies together are not allowed
    assert plan.budget_bytes == 10


def test_nothing_is_recomputed_when_the_peak_fits():
    plan = plan_remat(long_lived(), 230)
    assert plan.copies == () and plan.method == "none" and plan.seconds == 0


def test_a_first_read_copy_frees_the_buffer_from_its_unit_on():
    # Made at step 0 as one of a kernel's results, read only at step 5: a copy before step 5
    # frees steps 1-4 (the original still runs for its other results).
    only = Candidate(buffer=0, size=64, born=0, made=0, reads=(5,), recipes=(recipe(extra=0),))
    problem = RematProblem(steps=6, fixed_live=(0, 0, 10, 0, 0, 0), candidates=(only,), spans={0: (0, 5)})
    plan = plan_remat(problem, 64)
    assert plan.copies == (Copy(0, 0, 0),) and plan.peak_bytes == 64


def test_a_deeper_recipe_is_used_where_the_plain_one_lacks_an_input():
    # Buffer 0's own recipe reads buffer 5, dead after step 1; the deeper one reads nothing
    # transient but takes two kernels.
    cand = Candidate(buffer=0, size=100, born=1, made=1, reads=(2, 9), recipes=(recipe(5), recipe(seconds=3e-5, extra=20, kernels=2)))
    problem = RematProblem(steps=10, fixed_live=(0,) * 5 + (50,) + (0,) * 4, candidates=(cand,), spans={5: (0, 1), 0: (1, 9)})
    plan = plan_remat(problem, 120)
    assert plan.copies == (Copy(0, 1, 1),) and plan.kernels == 2 and plan.peak_bytes == 120


def brute_force(problem: RematProblem, budget: int):
    """The least time over every allowed set of copies whose peak fits, or None."""
    copies, conflicts = decisions(problem)
    excluded = {frozenset(pair) for pair in conflicts}
    best = None
    for count in range(len(copies) + 1):
        for chosen in itertools.combinations(range(len(copies)), count):
            if any(frozenset(pair) in excluded for pair in itertools.combinations(chosen, 2)):
                continue
            picked = [copies[k] for k in chosen]
            if evaluate(problem, picked) > budget:
                continue
            cost = sum(problem.candidates[c.candidate].recipes[c.recipe].seconds for c in picked)
            best = cost if best is None else min(best, cost)
    return best


@st.composite
def problems(draw):
    steps = draw(st.integers(6, 12))
    candidates, spans = [], {}
    for buffer in range(draw(st.integers(1, 3))):
        born = draw(st.integers(0, steps - 3))
        reads = sorted(draw(st.sets(st.integers(born + 1, steps - 1), min_size=1, max_size=3)))
        inputs = tuple(b for b in range(buffer) if draw(st.booleans()))
        seconds = draw(st.sampled_from([1e-6, 2e-6, 5e-6]))
        candidates.append(Candidate(buffer, draw(st.integers(1, 64)), born, born, tuple(reads), (Recipe(inputs, 0, seconds, 1.0, 1),)))
        spans[buffer] = (born, reads[-1])
    fixed = tuple(draw(st.lists(st.integers(0, 32), min_size=steps, max_size=steps)))
    return RematProblem(steps, fixed, tuple(candidates), spans)


@settings(max_examples=150, deadline=None)
@given(problems(), st.floats(0.3, 1.0))
def test_the_exact_plan_is_the_cheapest_that_fits(problem, fraction):
    original = evaluate(problem, [])
    budget = int(original * fraction)
    plan = plan_remat(problem, budget)
    assert plan.peak_bytes == evaluate(problem, list(plan.copies))
    cheapest = brute_force(problem, budget)
    if cheapest is None:
        assert not plan.feasible or plan.original_peak_bytes <= budget
    else:
        assert plan.feasible
        assert plan.seconds == pytest.approx(cheapest, abs=1e-12)


@settings(max_examples=100, deadline=None)
@given(problems(), st.floats(0.3, 1.0))
def test_the_greedy_plan_is_valid_and_never_raises_the_peak(problem, fraction):
    budget = int(evaluate(problem, []) * fraction)
    plan = plan_remat(problem, budget, RematLimits(exact_limit=0))
    copies, conflicts = decisions(problem)
    chosen = {copies.index(c) for c in plan.copies}
    assert not any(a in chosen and b in chosen for a, b in conflicts)
    assert plan.peak_bytes == evaluate(problem, list(plan.copies)) <= plan.original_peak_bytes
    assert plan.method in ("greedy", "none")


def test_the_plan_is_the_same_every_time():
    problem = long_lived()
    assert len({plan_remat(problem, 150) for _ in range(5)}) == 1


@pytest.mark.parametrize("text,expected", [
    ("0.6", ("fraction", 0.6)), ("60%", ("fraction", 0.6)), ("1.0", ("fraction", 1.0)), ("1500000", ("bytes", 1500000)),
])
def test_budgets_are_bytes_or_fractions(text, expected):
    assert parse_budget(text) == expected


@pytest.mark.parametrize("text", ["0", "1.5", "-3", "lots", "", "nan", "150%"])
def test_bad_budgets_are_refused(text):
    with pytest.raises(ValueError, match="memory-budget must be"):
        parse_budget(text)


def test_a_fraction_is_of_the_peak_without_recomputation():
    assert budget_bytes(("fraction", 0.5), 1000) == 500
    assert budget_bytes(("bytes", 700.0), 1000) == 700


def test_one_run_serves_two_buffers_of_the_same_kernel():
    # Buffers 0 and 1 are both results of kernel 7 (made at step 0), read at step 1 and again
    # at 6 and 7; 150 B more are alive at step 3. Both must be freed there: a copy of kernel 7
    # before step 6 remakes both, so buffer 1's copy before step 7 runs nothing (a share).
    run = Recipe(inputs=(), extra_bytes=100, seconds=1e-5, flops=1e4, kernels=1, ops=frozenset({7}))
    a = Candidate(buffer=0, size=100, born=0, made=0, reads=(1, 6), recipes=(run,))
    b = Candidate(buffer=1, size=100, born=0, made=0, reads=(1, 7), recipes=(run,))
    problem = RematProblem(steps=8, fixed_live=(0, 0, 0, 150, 0, 0, 0, 0), candidates=(a, b), spans={0: (0, 6), 1: (0, 7)})
    plan = plan_remat(problem, 200)
    assert set(plan.copies) == {Copy(0, 1, 0), Copy(1, 1, 0)}
    assert plan.shares == ((Copy(0, 1, 0), Copy(1, 1, 0)),)
    assert plan.seconds == pytest.approx(1e-5) and plan.kernels == 1
    assert plan.peak_bytes == 200 == evaluate(problem, list(plan.copies), list(plan.shares))


@settings(max_examples=100, deadline=None)
@given(st.lists(st.integers(0, 100), min_size=1, max_size=30), st.data())
def test_interval_effects_match_their_dense_matrix(live, data):
    from schedc.decisions.remat import Effects, _peaks_after

    steps = len(live)
    columns = []
    for _ in range(data.draw(st.integers(1, 6))):
        at = data.draw(st.integers(0, steps - 1))
        lo = data.draw(st.integers(0, at))
        columns.append((lo, at, data.draw(st.integers(-50, 50)), at, data.draw(st.integers(-50, 50))))
    effects = Effects.of(steps, columns)
    dense = effects.matrix().toarray()
    for k, (lo, hi, span, at, point) in enumerate(columns):
        expected = [0.0] * steps
        for t in range(lo, hi):
            expected[t] += span
        expected[at] += point
        assert list(dense[:, k]) == expected
        assert list(effects.total([k])) == expected
    values = [float(v) for v in live]
    import numpy as np

    peaks = _peaks_after(np.array(values), effects.lo, effects.hi, effects.span, effects.at, effects.point)
    assert list(peaks) == [max(v + d for v, d in zip(values, dense[:, k])) for k in range(len(columns))]
