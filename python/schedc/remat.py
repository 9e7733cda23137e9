"""Which tensors to recompute, and where, so a function's live bytes stay under a budget.

Pure Python over plain data (`RematProblem`); `passes/remat.py` builds the problem from IR and
applies the plan. The kernels' order is fixed (memory-order has chosen it). A candidate is a
transient buffer and the ops that make it (its "unit": a dispatch, and the fill, views and
in-place updates that build the same buffer). It is made at step `born` and read at steps
`reads`. Recomputing it at a read means running a copy of its unit just before that reader;
the copy serves that read and every later one up to the next copy, so the bytes between the
previous read (or the unit, for the first read) and that one are free:

    born     r0          r1               r2
     |=======|===========|================|      stored: alive from born to r2
     |=======|           |================|      recomputed at r1: free between r0 and r1

(the copy at r1 lives on to r2). A copy runs one of the candidate's recipes: its unit alone,
or its unit after the units of inputs that are dead by then (`Recipe`). Each transient input a
recipe reads must be alive at that step (stored, or a live copy of its own); the recipe's other
results (a dispatch's other outputs, the remade inputs) are alive during that step only.

The memory model is the one of `schedc.liveness`, with a copy's bytes counted in the step of
its reader (an upper bound of the step the copy runs in). The plan with the least recompute
time whose peak is within the budget comes from an integer program, solved exactly by HiGHS
(through SciPy) up to `exact_limit` decisions and a bounded number of branch-and-bound nodes,
so the plan does not depend on the machine's load; above the limit, or when HiGHS stops
without a plan, a greedy heuristic decides.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np


@dataclass(frozen=True)
class Recipe:
    """One way to make a copy of a candidate: its own ops, or those ops after copies of the
    ops that made some of its inputs (when those inputs are no longer alive at the read)."""

    inputs: tuple[int, ...]  # transient buffers it reads
    extra_bytes: int  # bytes of its other results and temporary inputs (alive only while it runs)
    seconds: float  # its time (measured kernel times where known, else the cost model)
    flops: float
    kernels: int  # kernels it runs


@dataclass(frozen=True)
class Candidate:
    buffer: int  # the buffer's id in the kernel graph
    size: int  # bytes
    born: int  # step of the first op of its unit
    made: int  # step of the last op of its unit
    reads: tuple[int, ...]  # steps of the ops that read it, ascending; all after its unit
    recipes: tuple[Recipe, ...]


@dataclass(frozen=True)
class RematProblem:
    steps: int
    # Bytes alive at each step from transient buffers that are not candidates.
    fixed_live: tuple[int, ...]
    candidates: tuple[Candidate, ...]
    # [first, last] step of every transient buffer (candidates too): whether an input is there.
    spans: dict[int, tuple[int, int]] = field(default_factory=dict)


@dataclass(frozen=True)
class Copy:
    candidate: int  # index into RematProblem.candidates
    read: int  # index into that candidate's reads: the copy runs just before that read
    recipe: int = 0  # index into that candidate's recipes


@dataclass(frozen=True)
class RematPlan:
    copies: tuple[Copy, ...]
    peak_bytes: int  # under the model, with the copies
    original_peak_bytes: int  # the same without copies
    budget_bytes: int  # what the plan had to reach
    feasible: bool  # whether peak_bytes <= budget_bytes (else the lowest peak found)
    seconds: float  # the copies' total time
    flops: float
    kernels: int
    method: str  # "exact", "exact-limited" (HiGHS stopped at its node limit), "greedy" or "none"


@dataclass(frozen=True)
class RematLimits:
    exact_limit: int = 2000  # decisions above which the integer program is not tried
    max_nodes: int = 2000  # branch-and-bound nodes HiGHS may explore
    objective: str = "time"  # what a plan minimises: the copies' "time" or their "flops"


# -- the model: which copies are allowed, and the live bytes they give ---------------------


def decisions(problem: RematProblem) -> tuple[list[Copy], list[tuple[int, int]]]:
    """Every copy the model allows, and pairs of copies (indices into the first list) that
    exclude each other: two recipes for the same read, or a copy that needs an input alive at
    a step where that input's own copy would have freed it."""
    copies: list[Copy] = []
    at_read: dict[tuple[int, int], list[int]] = {}
    by_buffer = {c.buffer: i for i, c in enumerate(problem.candidates)}
    for ci, cand in enumerate(problem.candidates):
        for j in range(len(cand.reads)):
            for r, recipe in enumerate(cand.recipes):
                if all(_input_may_live(problem, by_buffer, a, cand.reads[j]) for a in recipe.inputs):
                    at_read.setdefault((ci, j), []).append(len(copies))
                    copies.append(Copy(ci, j, r))
    conflicts = [(a, b) for same in at_read.values() for i, a in enumerate(same) for b in same[i + 1:]]
    for k, copy in enumerate(copies):
        cand = problem.candidates[copy.candidate]
        step = cand.reads[copy.read]
        for a in cand.recipes[copy.recipe].inputs:
            if a not in by_buffer:
                continue
            ai = by_buffer[a]
            j = _gap_before(problem.candidates[ai], step)
            conflicts.extend((k, other) for other in at_read.get((ai, j), ()))
    return copies, conflicts


def _input_may_live(problem: RematProblem, by_buffer: dict, buffer: int, step: int) -> bool:
    if buffer in by_buffer:
        cand = problem.candidates[by_buffer[buffer]]
        return cand.born <= step <= cand.reads[-1]
    first, last = problem.spans.get(buffer, (step + 1, step))
    return first <= step <= last


def _gap_before(cand: Candidate, step: int) -> int | None:
    """The read j whose copy would free `step` (the gap after the previous read, or after the
    unit for j = 0), if `step` lies in one."""
    before = cand.made
    for j, read in enumerate(cand.reads):
        if before < step < read:
            return j
        before = read
    return None


def live_matrix(problem: RematProblem, copies: list[Copy]) -> tuple[np.ndarray, np.ndarray]:
    """Live bytes at each step as `base + effect @ chosen` (chosen: 0/1 per copy)."""
    base = np.array(problem.fixed_live, dtype=np.float64)
    effect = np.zeros((problem.steps, len(copies)))
    for cand in problem.candidates:
        base[cand.born:cand.reads[-1] + 1] += cand.size
    for k, copy in enumerate(copies):
        cand = problem.candidates[copy.candidate]
        before = cand.reads[copy.read - 1] if copy.read else cand.made
        at = cand.reads[copy.read]
        effect[before + 1:at, k] -= cand.size
        effect[at, k] += cand.recipes[copy.recipe].extra_bytes
    return base, effect


def evaluate(problem: RematProblem, chosen: list[Copy]) -> int:
    """The peak of live bytes with the copies in `chosen`, under the model."""
    base, effect = live_matrix(problem, chosen)
    live = base + effect.sum(axis=1) if chosen else base
    return int(live.max()) if len(live) else 0


# -- deciding --------------------------------------------------------------------------------


def plan_remat(problem: RematProblem, budget_bytes: int, limits: RematLimits = RematLimits()) -> RematPlan:
    """The copies with the least time whose peak fits `budget_bytes`; where none fits, those
    with the lowest peak reachable (then the least time at that peak)."""
    copies, conflicts = decisions(problem)
    base, effect = live_matrix(problem, copies)
    original = int(base.max()) if len(base) else 0
    if original <= budget_bytes or not copies:
        return _plan(problem, [], [], base, effect, original, budget_bytes, "none")
    chosen, method = None, "greedy"
    if len(copies) <= limits.exact_limit:
        chosen, method = _exact(problem, copies, conflicts, base, effect, budget_bytes, limits)
    if chosen is None:
        chosen, method = _greedy(problem, copies, conflicts, base, effect, budget_bytes, limits.objective), "greedy"
    return _plan(problem, copies, chosen, base, effect, original, budget_bytes, method)


def _plan(problem, copies, chosen, base, effect, original, budget, method) -> RematPlan:
    picked = [copies[k] for k in sorted(chosen)]
    live = base + (effect[:, sorted(chosen)].sum(axis=1) if chosen else 0)
    peak = int(round(live.max())) if len(live) else 0
    recipes = [problem.candidates[c.candidate].recipes[c.recipe] for c in picked]
    return RematPlan(
        copies=tuple(picked),
        peak_bytes=peak,
        original_peak_bytes=original,
        budget_bytes=budget,
        feasible=peak <= budget,
        seconds=sum(r.seconds for r in recipes),
        flops=sum(r.flops for r in recipes),
        kernels=sum(r.kernels for r in recipes),
        method=method,
    )


def _costs(problem: RematProblem, copies: list[Copy], objective: str = "time") -> np.ndarray:
    # A copy costs its time (or FLOPs, in units of a 1 TFLOP/s machine); a tiny cost per copy
    # makes free copies (fills, views) happen only where they help.
    def cost(recipe: Recipe) -> float:
        return recipe.seconds if objective == "time" else recipe.flops * 1e-12

    return np.array([cost(problem.candidates[c.candidate].recipes[c.recipe]) + 1e-9 for c in copies])


def _exact(problem, copies, conflicts, base, effect, budget, limits):
    """The least time within the budget; where no plan fits it, the lowest peak first, then
    the least time at that peak. None when HiGHS stops at its node limit without a plan."""
    from scipy.optimize import Bounds, LinearConstraint, milp

    n = len(copies)
    rows = [t for t in range(effect.shape[0]) if effect[t].any()]
    untouched_peak = max((base[t] for t in set(range(len(base))) - set(rows)), default=0.0)
    exclusive = np.zeros((len(conflicts), n))
    for r, (a, b) in enumerate(conflicts):
        exclusive[r, a] = exclusive[r, b] = 1
    options = {"node_limit": limits.max_nodes, "presolve": True}

    def solve(cost, live_rows, bound, extra_columns=0):
        pad = np.zeros((len(conflicts), extra_columns))
        constraints = [LinearConstraint(live_rows, -np.inf, bound)]
        if conflicts:
            constraints.append(LinearConstraint(np.hstack([exclusive, pad]), -np.inf, 1))
        integrality = np.r_[np.ones(n), np.zeros(extra_columns)]
        upper = np.r_[np.ones(n), np.full(extra_columns, np.inf)]
        return milp(cost, constraints=constraints, integrality=integrality, bounds=Bounds(0, upper), options=options)

    limited = False

    def least_time(target):
        nonlocal limited
        result = solve(_costs(problem, copies, limits.objective), effect[rows], target - base[rows])
        limited |= result.status == 1
        return None if result.x is None else [k for k in range(n) if result.x[k] > 0.5]

    chosen = least_time(budget)
    if chosen is None and not limited:  # infeasible: find the lowest peak (one more column)
        cost = np.r_[np.zeros(n), 1.0]
        result = solve(cost, np.hstack([effect[rows], -np.ones((len(rows), 1))]), -base[rows], extra_columns=1)
        limited |= result.status == 1
        if result.x is not None:
            chosen = least_time(max(int(np.ceil(result.fun - 1e-6)), int(untouched_peak)))
    return chosen, "exact-limited" if limited else "exact"


def _greedy(problem, copies, conflicts, base, effect, budget, objective="time") -> list[int]:
    """Adds, one at a time, the copy that lowers the peak most per second of recompute time
    (or, where no single copy lowers it, that frees the most bytes at the peak's steps without
    raising it), until the peak fits or no copy helps. One pass per copy at most."""
    costs = _costs(problem, copies, objective)
    excluded_by: dict[int, list[int]] = {}
    for a, b in conflicts:
        excluded_by.setdefault(a, []).append(b)
        excluded_by.setdefault(b, []).append(a)
    live = base.copy()
    available = np.ones(len(copies), dtype=bool)
    chosen: list[int] = []
    while available.any() and live.max() > budget:
        peak = live.max()
        at_peak = live >= peak - 0.5
        freed_at_peak = -effect[at_peak].sum(axis=0)
        # Only a copy that frees bytes at a step of the peak can lower it.
        relevant = np.flatnonzero(available & (freed_at_peak > 0))
        if not len(relevant):
            break
        new_peak = (live[:, None] + effect[:, relevant]).max(axis=0)
        lowered = np.maximum(peak - new_peak, 0)
        helps = new_peak <= peak
        if not helps.any():
            break
        freed = freed_at_peak[relevant]
        score = np.where(helps, (lowered * (1 + freed.max()) + freed) / costs[relevant], -np.inf)
        best = int(relevant[np.argmax(score)])
        chosen.append(best)
        live = live + effect[:, best]
        available[best] = False
        for other in excluded_by.get(best, ()):
            available[other] = False
    return chosen


# -- budgets ---------------------------------------------------------------------------------


def parse_budget(text: str) -> tuple[str, float]:
    """A budget as the user writes it: bytes (`1500000`), or a fraction of the peak without
    recomputation (`0.6`, `60%`). Returns ("bytes", n) or ("fraction", f)."""
    text = text.strip()
    kind = "fraction" if text.endswith("%") or not text.isdigit() else "bytes"
    try:
        value = float(text[:-1]) / 100 if text.endswith("%") else float(text)
    except ValueError:
        value = float("nan")
    if not value > 0 or (kind == "fraction" and value > 1):
        raise ValueError(f"memory-budget must be bytes (1500000) or a fraction of the peak in (0, 1] (0.6 or 60%), got '{text}'")
    return kind, value


def budget_bytes(budget: tuple[str, float], original_peak: int) -> int:
    kind, value = budget
    return int(value) if kind == "bytes" else int(original_peak * value)
