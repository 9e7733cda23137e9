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

The memory model is the one of `schedc.decisions.liveness`, with a copy's bytes counted in the step of
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


@dataclass(frozen=True)
class Effects:
    """What each decision (a column) adds to the live bytes at each step: `span` bytes on the
    steps [lo, hi) and `point` bytes on step `at`. Kept as intervals, not as a steps x columns
    matrix, so that large functions stay small in memory."""

    steps: int
    lo: np.ndarray
    hi: np.ndarray
    span: np.ndarray
    at: np.ndarray
    point: np.ndarray

    @staticmethod
    def of(steps: int, columns: list[tuple[int, int, float, int, float]]) -> "Effects":
        """From (lo, hi, span, at, point) per column."""
        lo, hi, span, at, point = ([c[i] for c in columns] for i in range(5))
        integers = np.int64
        return Effects(steps, np.array(lo, integers), np.array(hi, integers), np.array(span, float), np.array(at, integers), np.array(point, float))

    def __len__(self) -> int:
        return len(self.lo)

    def total(self, columns) -> np.ndarray:
        """The summed effect of `columns` at every step."""
        columns = np.asarray(list(columns), dtype=np.int64)
        change = np.zeros(self.steps + 1)
        np.add.at(change, self.lo[columns], self.span[columns])
        np.add.at(change, self.hi[columns], -self.span[columns])
        result = np.cumsum(change)[:-1]
        np.add.at(result, self.at[columns], self.point[columns])
        return result

    def matrix(self):
        """The steps x columns matrix, sparse (for the integer program)."""
        from scipy.sparse import coo_matrix

        lengths = np.maximum(self.hi - self.lo, 0)
        columns = np.repeat(np.arange(len(self)), lengths)
        starts = np.repeat(self.lo - np.cumsum(np.r_[0, lengths[:-1]]), lengths)
        rows = starts + np.arange(lengths.sum())
        values = np.repeat(self.span, lengths)
        rows, columns = np.r_[rows, self.at], np.r_[columns, np.arange(len(self))]
        return coo_matrix((np.r_[values, self.point], (rows, columns)), shape=(self.steps, len(self))).tocsr()


def live_effects(problem: RematProblem, copies: list[Copy]) -> tuple[np.ndarray, Effects]:
    """Live bytes at each step without copies, and what each copy changes: its buffer is free
    in its gap, and its recipe's other results are alive at its read."""
    base = np.array(problem.fixed_live, dtype=np.float64)
    for cand in problem.candidates:
        base[cand.born:cand.reads[-1] + 1] += cand.size
    columns = []
    for copy in copies:
        cand = problem.candidates[copy.candidate]
        at = cand.reads[copy.read]
        columns.append((_gap_start(cand, copy.read) + 1, at, -cand.size, at, cand.recipes[copy.recipe].extra_bytes))
    return base, Effects.of(problem.steps, columns)


def share_effects(problem: RematProblem, copies: list[Copy], shared: list[Share]) -> Effects:
    """What each share adds to the live bytes: the taker's buffer alive from the giver's step
    to the taker's read, and none of the taker's own extra bytes."""
    columns = []
    for share in shared:
        giver, taker = copies[share.giver], copies[share.taker]
        cand = problem.candidates[taker.candidate]
        start, at = problem.candidates[giver.candidate].reads[giver.read], cand.reads[taker.read]
        columns.append((start + 1, at, cand.size, at, -cand.recipes[taker.recipe].extra_bytes))
    return Effects.of(problem.steps, columns)


def evaluate(problem: RematProblem, chosen: list[Copy], shared: list[tuple[Copy, Copy]] = ()) -> int:
    """The peak of live bytes with the copies in `chosen` (and the (giver, taker) pairs in
    `shared`), under the model."""
    base, effects = live_effects(problem, chosen)
    live = base + effects.total(range(len(chosen)))
    if shared:
        index = {c: k for k, c in enumerate(chosen)}
        pairs = [Share(index[g], index[t]) for g, t in shared]
        live = live + share_effects(problem, chosen, pairs).total(range(len(pairs)))
    return int(round(live.max())) if len(live) else 0


# -- deciding --------------------------------------------------------------------------------


def plan_remat(problem: RematProblem, budget_bytes: int, limits: RematLimits = RematLimits()) -> RematPlan:
    """The copies with the least time whose peak fits `budget_bytes`; where none fits, those
    with the lowest peak reachable (then the least time at that peak)."""
    copies, conflicts = decisions(problem)
    base, effects = live_effects(problem, copies)
    original = int(base.max()) if len(base) else 0
    if original <= budget_bytes or not copies:
        return _plan(problem, [], [], [], [], base, effects, original, budget_bytes, "none")
    shared = shares(problem, copies)
    chosen, used, method = None, [], "greedy"
    if len(copies) + len(shared) <= limits.exact_limit:
        chosen, used, method = _exact(problem, copies, conflicts, shared, base, effects, budget_bytes, limits)
    if chosen is None:
        chosen, used, method = _greedy(problem, copies, conflicts, base, effects, budget_bytes, limits.objective), [], "greedy"
    return _plan(problem, copies, chosen, shared, used, base, effects, original, budget_bytes, method)


def _plan(problem, copies, chosen, shared, used, base, effects, original, budget, method) -> RematPlan:
    picked = [copies[k] for k in sorted(chosen)]
    live = base + effects.total(sorted(chosen))
    pairs = [shared[k] for k in used]
    if pairs:
        live = live + share_effects(problem, copies, pairs).total(range(len(pairs)))
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


def _exact(problem, copies, conflicts, shared, base, effects, budget, limits):
    """The least time within the budget; where no plan fits it, the lowest peak first, then
    the least time at that peak. Columns: one 0/1 per copy, one per share (a share needs its
    giver and its taker; a taker has one giver at most and gives to none). None when HiGHS
    stops at its node limit without a plan."""
    from scipy.optimize import Bounds, LinearConstraint, milp

    from scipy.sparse import csr_matrix, hstack

    n, m = len(copies), len(shared)
    effect = hstack([effects.matrix(), share_effects(problem, copies, shared).matrix()]).tocsr()
    effect.eliminate_zeros()
    rows = np.unique(effect.nonzero()[0])
    untouched_peak = max((base[t] for t in set(range(len(base))) - set(rows.tolist())), default=0.0)
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
    entries = [(r, column, value) for r, (coefficients, _) in enumerate(logic) for column, value in coefficients.items()]
    rows_, columns_, values_ = zip(*entries) if entries else ((), (), ())
    matrix = csr_matrix((values_, (rows_, columns_)), shape=(len(logic), n + m))
    upper_logic = np.array([bound for _, bound in logic], dtype=float)
    options = {"node_limit": limits.max_nodes, "presolve": True}

    def solve(cost, live_rows, bound, extra_columns=0):
        constraints = [LinearConstraint(live_rows, -np.inf, bound)]
        if logic:
            constraints.append(LinearConstraint(hstack([csr_matrix(matrix), csr_matrix((len(logic), extra_columns))]).tocsr(), -np.inf, upper_logic))
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
        result = solve(cost, hstack([effect[rows], csr_matrix(-np.ones((len(rows), 1)))]).tocsr(), -base[rows], extra_columns=1)
        limited |= result.status == 1
        if result.x is not None:
            chosen, used = least_time(max(int(np.ceil(result.fun - 1e-6)), int(untouched_peak)))
    return chosen, used, "exact-limited" if limited else "exact"


def _greedy(problem, copies, conflicts, base, effects, budget, objective="time") -> list[int]:
    """Adds, one at a time, the copy that lowers the peak most per second of recompute time
    (or, where no single copy lowers it, that frees the most bytes at the peak's steps without
    raising it), until the peak fits or no copy helps. One pass per copy at most; each pass
    reads every copy's interval against prefix and range maxima of the live bytes."""
    costs = _costs(problem, copies, objective)
    excluded_by: dict[int, list[int]] = {}
    for a, b in conflicts:
        excluded_by.setdefault(a, []).append(b)
        excluded_by.setdefault(b, []).append(a)
    live = base.copy()
    available = np.ones(len(copies), dtype=bool)
    chosen: list[int] = []
    lo, hi, span, at, point = effects.lo, effects.hi, effects.span, effects.at, effects.point
    while available.any() and live.max() > budget:
        peak = live.max()
        at_peak = live >= peak - 0.5
        peak_count = np.r_[0, np.cumsum(at_peak)]
        # Bytes each copy frees at the peak's steps (span is negative: bytes freed).
        freed_at_peak = -span * (peak_count[hi] - peak_count[np.minimum(lo, hi)]) - point * at_peak[at]
        relevant = np.flatnonzero(available & (freed_at_peak > 0))
        if not len(relevant):
            break
        new_peak = _peaks_after(live, lo[relevant], hi[relevant], span[relevant], at[relevant], point[relevant])
        lowered = np.maximum(peak - new_peak, 0)
        helps = new_peak <= peak
        if not helps.any():
            break
        freed = freed_at_peak[relevant]
        score = np.where(helps, (lowered * (1 + freed.max()) + freed) / costs[relevant], -np.inf)
        best = int(relevant[np.argmax(score)])
        chosen.append(best)
        live = live + effects.total([best])
        available[best] = False
        for other in excluded_by.get(best, ()):
            available[other] = False
    return chosen


def _peaks_after(live, lo, hi, span, at, point) -> np.ndarray:
    """The peak of `live` after each column's change alone (the span [lo, hi) ends where the
    point `at` is: hi == at for copies)."""
    steps = len(live)
    before = np.r_[-np.inf, np.maximum.accumulate(live)]  # before[i] = max(live[:i])
    after = np.r_[np.maximum.accumulate(live[::-1])[::-1], -np.inf]  # after[i] = max(live[i:])
    inside = _range_max(live, lo, hi) + span
    outside = np.maximum(before[np.minimum(lo, at)], after[np.minimum(at + 1, steps)])
    return np.maximum.reduce([outside, inside, live[at] + point])


def _range_max(values: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    """max(values[lo:hi]) for each pair (-inf where empty), from a sparse table."""
    table = [values]
    width = 1
    while 2 * width <= len(values):
        previous = table[-1]
        table.append(np.maximum(previous[:-width], previous[width:]))
        width *= 2
    length = hi - lo
    result = np.full(len(lo), -np.inf)
    ok = length > 0
    level = np.zeros(len(lo), dtype=np.int64)
    level[ok] = np.floor(np.log2(length[ok])).astype(np.int64)
    for k in np.unique(level[ok]):
        pick = ok & (level == k)
        row = table[k]
        result[pick] = np.maximum(row[lo[pick]], row[hi[pick] - (1 << k)])
    return result


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
