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
    # Which ops it runs (any ids): a copy whose ops include another copy's can also serve that
    # one (see `Share`).
    ops: frozenset = frozenset()


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
class Share:
    """A copy (the taker) that runs nothing itself: an earlier copy in its gap (the giver) ran
    all of its ops, and the taker's buffer from that run stays alive until the taker's read.
    Indices into the list of copies `decisions` returns."""

    giver: int
    taker: int


@dataclass(frozen=True)
class RematPlan:
    copies: tuple[Copy, ...]
    shares: tuple[tuple[Copy, Copy], ...]  # (giver, taker): the taker reuses the giver's run
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


def _gap_start(cand: Candidate, read: int) -> int:
    """The last step before the gap a copy at `read` frees: the previous read, or the unit."""
    return cand.reads[read - 1] if read else cand.made


def shares(problem: RematProblem, copies: list[Copy]) -> list[Share]:
    """Every pair of copies where the giver runs all the taker's ops at a step in the taker's
    gap (or at the same read, the earlier in the list giving)."""
    by_op: dict = {}
    for k, copy in enumerate(copies):
        for op in problem.candidates[copy.candidate].recipes[copy.recipe].ops:
            by_op.setdefault(op, []).append(k)
    found = []
    for b, taker in enumerate(copies):
        cand = problem.candidates[taker.candidate]
        ops = cand.recipes[taker.recipe].ops
        if not ops:
            continue
        low, at = _gap_start(cand, taker.read), cand.reads[taker.read]
        for a in by_op[next(iter(ops))]:
            giver = copies[a]
            given = problem.candidates[giver.candidate]
            step = given.reads[giver.read]
            if giver.candidate != taker.candidate and low < step <= at and (step < at or a < b) and ops <= given.recipes[giver.recipe].ops:
                found.append(Share(a, b))
    return found


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
        before, at = _gap_start(cand, copy.read), cand.reads[copy.read]
        effect[before + 1:at, k] -= cand.size
        effect[at, k] += cand.recipes[copy.recipe].extra_bytes
    return base, effect


def share_matrix(problem: RematProblem, copies: list[Copy], shared: list[Share]) -> np.ndarray:
    """What each share adds to the live bytes: the taker's buffer alive from the giver's step
    to the taker's read, and none of the taker's own extra bytes."""
    effect = np.zeros((problem.steps, len(shared)))
    for k, share in enumerate(shared):
        giver, taker = copies[share.giver], copies[share.taker]
        cand = problem.candidates[taker.candidate]
        start, at = problem.candidates[giver.candidate].reads[giver.read], cand.reads[taker.read]
        effect[start + 1:at, k] += cand.size
        effect[at, k] -= cand.recipes[taker.recipe].extra_bytes
    return effect


def evaluate(problem: RematProblem, chosen: list[Copy], shared: list[tuple[Copy, Copy]] = ()) -> int:
    """The peak of live bytes with the copies in `chosen` (and the (giver, taker) pairs in
    `shared`), under the model."""
    base, effect = live_matrix(problem, chosen)
    live = base + effect.sum(axis=1) if chosen else base
    if shared:
        index = {c: k for k, c in enumerate(chosen)}
        live = live + share_matrix(problem, chosen, [Share(index[g], index[t]) for g, t in shared]).sum(axis=1)
    return int(live.max()) if len(live) else 0


# -- deciding --------------------------------------------------------------------------------


def plan_remat(problem: RematProblem, budget_bytes: int, limits: RematLimits = RematLimits()) -> RematPlan:
    """The copies with the least time whose peak fits `budget_bytes`; where none fits, those
    with the lowest peak reachable (then the least time at that peak)."""
    copies, conflicts = decisions(problem)
    base, effect = live_matrix(problem, copies)
    original = int(base.max()) if len(base) else 0
    if original <= budget_bytes or not copies:
        return _plan(problem, [], [], [], [], base, effect, original, budget_bytes, "none")
    shared = shares(problem, copies)
    chosen, used, method = None, [], "greedy"
    if len(copies) + len(shared) <= limits.exact_limit:
        chosen, used, method = _exact(problem, copies, conflicts, shared, base, effect, budget_bytes, limits)
    if chosen is None:
        chosen, used, method = _greedy(problem, copies, conflicts, base, effect, budget_bytes, limits.objective), [], "greedy"
    return _plan(problem, copies, chosen, shared, used, base, effect, original, budget_bytes, method)


def _plan(problem, copies, chosen, shared, used, base, effect, original, budget, method) -> RematPlan:
    picked = [copies[k] for k in sorted(chosen)]
    live = base + (effect[:, sorted(chosen)].sum(axis=1) if chosen else 0)
    pairs = [shared[k] for k in used]
    if pairs:
        live = live + share_matrix(problem, copies, pairs).sum(axis=1)
    peak = int(round(live.max())) if len(live) else 0
    takers = {s.taker for s in pairs}
    recipes = [problem.candidates[copies[k].candidate].recipes[copies[k].recipe] for k in sorted(chosen) if k not in takers]
    return RematPlan(
        copies=tuple(picked),
        shares=tuple((copies[s.giver], copies[s.taker]) for s in pairs),
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


def _exact(problem, copies, conflicts, shared, base, effect, budget, limits):
    """The least time within the budget; where no plan fits it, the lowest peak first, then
    the least time at that peak. Columns: one 0/1 per copy, one per share (a share needs its
    giver and its taker; a taker has one giver at most and gives to none). None when HiGHS
    stops at its node limit without a plan."""
    from scipy.optimize import Bounds, LinearConstraint, milp

    n, m = len(copies), len(shared)
    effect = np.hstack([effect, share_matrix(problem, copies, shared)])
    rows = [t for t in range(effect.shape[0]) if effect[t].any()]
    untouched_peak = max((base[t] for t in set(range(len(base))) - set(rows)), default=0.0)
    logic = []  # rows of (coefficients over the n + m columns, upper bound)
    for a, b in conflicts:
        logic.append(({a: 1, b: 1}, 1))
    for k, share in enumerate(shared):
        logic.append(({n + k: 1, share.giver: -1}, 0))
    taken: dict[int, list[int]] = {}
    for k, share in enumerate(shared):
        taken.setdefault(share.taker, []).append(n + k)
    for taker, columns in taken.items():
        logic.append(({**{c: 1 for c in columns}, taker: -1}, 0))
    for k, share in enumerate(shared):
        if share.giver in taken:
            logic.append(({n + k: 1, **{c: 1 for c in taken[share.giver]}}, 1))
    matrix = np.zeros((len(logic), n + m))
    for r, (coefficients, _) in enumerate(logic):
        for column, value in coefficients.items():
            matrix[r, column] = value
    upper_logic = np.array([bound for _, bound in logic], dtype=float)
    options = {"node_limit": limits.max_nodes, "presolve": True}

    def solve(cost, live_rows, bound, extra_columns=0):
        constraints = [LinearConstraint(live_rows, -np.inf, bound)]
        if logic:
            constraints.append(LinearConstraint(np.hstack([matrix, np.zeros((len(logic), extra_columns))]), -np.inf, upper_logic))
        integrality = np.r_[np.ones(n + m), np.zeros(extra_columns)]
        upper = np.r_[np.ones(n + m), np.full(extra_columns, np.inf)]
        return milp(cost, constraints=constraints, integrality=integrality, bounds=Bounds(0, upper), options=options)

    limited = False
    costs = _costs(problem, copies, limits.objective)
    # A share saves the taker's run (less its per-copy tie-breaker, so sharing never pays alone).
    share_costs = np.array([-(costs[s.taker] - 1e-9) for s in shared])

    def least_time(target):
        nonlocal limited
        result = solve(np.r_[costs, share_costs], effect[rows], target - base[rows])
        limited |= result.status == 1
        if result.x is None:
            return None, []
        return [k for k in range(n) if result.x[k] > 0.5], [k for k in range(m) if result.x[n + k] > 0.5]

    chosen, used = least_time(budget)
    if chosen is None and not limited:  # infeasible: find the lowest peak (one more column)
        cost = np.r_[np.zeros(n + m), 1.0]
        result = solve(cost, np.hstack([effect[rows], -np.ones((len(rows), 1))]), -base[rows], extra_columns=1)
        limited |= result.status == 1
        if result.x is not None:
            chosen, used = least_time(max(int(np.ceil(result.fun - 1e-6)), int(untouched_peak)))
    return chosen, used, "exact-limited" if limited else "exact"


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
