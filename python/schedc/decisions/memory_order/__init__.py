"""Memory-aware topological orders of a kernel graph: pure Python over plain data.

Every strategy returns a topological order of all the graph's nodes; `best_order` runs them and
keeps the lowest estimated peak, never worse than program order.

The memory model is `schedc.decisions.liveness` (last-use freeing): while a node runs, the transients it
defines and every transient defined earlier that still has a user to come are alive. Nodes that
define no transient ("free" nodes: views, in-place updates, result producers, imports) never
raise the live bytes when they run, and running them as soon as they are ready only ends
lifetimes sooner, so every strategy below except program order runs them eagerly. That also
keeps the exact search small: its states are the sets of scheduled nodes that allocate.
"""

from __future__ import annotations

import heapq
from dataclasses import dataclass, field, replace

from schedc.decisions.budget import Budget, Deadline, SearchStopped
from schedc.decisions.kernel_graph import KernelGraph, sink_fills
from schedc.decisions.liveness import LastUse, MemoryProblem
from schedc.decisions.memory_order.bounds import lower_bound
from schedc.decisions.segments import members, split_at_separators

STRATEGIES = ("program", "dfs", "bfs", "greedy", "xla", "exact", "beam")


class _State:
    """Runs nodes one at a time, tracking live bytes, the peak, and which nodes are ready."""

    def __init__(self, problem: MemoryProblem):
        self.p = problem
        self.memory = LastUse(problem)
        self.waiting = [len(ps) for ps in problem.preds]
        self.ready = {v for v in range(problem.count) if self.waiting[v] == 0}
        self.order: list[int] = []

    @property
    def live(self) -> int:
        return self.memory.live

    @property
    def peak(self) -> int:
        return self.memory.peak

    def freed_by(self, v: int) -> int:
        return self.memory.freed_by(v)

    def run(self, v: int) -> None:
        self.memory.run(v)
        self.ready.discard(v)
        self.order.append(v)
        for s in self.p.succs[v]:
            self.waiting[s] -= 1
            if self.waiting[s] == 0:
                self.ready.add(s)

    def run_free_nodes(self) -> None:
        while True:
            free = [v for v in self.ready if self.p.alloc[v] == 0]
            if not free:
                return
            for v in sorted(free):
                self.run(v)


def _list_schedule(problem: MemoryProblem, choose, defer_sources: bool = False, deadline: Deadline | None = None) -> list[int] | None:
    """Runs free nodes eagerly, and otherwise the ready node `choose(state, candidates)` picks.

    With `defer_sources`, allocating nodes that read no transient (fills, first layers) wait
    until nothing else is ready, and then the one whose consumer is closest to ready runs: a
    memory-blind traversal would otherwise run every fill at the start.
    None when the deadline passes first (a heuristic takes one step per node: no work budget).
    """
    state = _State(problem)
    while len(state.order) < problem.count:
        if deadline is not None and deadline.passed():
            return None
        state.run_free_nodes()
        if not state.ready:
            continue
        candidates = state.ready
        if defer_sources:
            inner = {v for v in state.ready if problem.uses[v]}
            if inner:
                candidates = inner
            else:  # only fills are ready: the one whose consumer is closest to ready
                candidates = {min(state.ready, key=lambda v: (min((state.waiting[s] for s in problem.succs[v]), default=0), v))}
        state.run(choose(state, candidates))
    return state.order


def program_order(problem: MemoryProblem) -> list[int]:
    return list(problem.program)


def _by_readiness(problem: MemoryProblem, newest_first: bool, deadline: Deadline | None = None) -> list[int] | None:
    """Runs the node that became ready most recently (or longest ago); among nodes readied
    together, the lower index first."""
    readied: dict[int, int] = {}

    def choose(state: _State, candidates) -> int:
        for v in sorted(state.ready):
            readied.setdefault(v, len(readied))
        if newest_first:
            newest = max(readied[v] for v in candidates)
            return min(v for v in candidates if readied[v] == newest)
        return min(candidates, key=lambda v: readied[v])

    return _list_schedule(problem, choose, defer_sources=True, deadline=deadline)


def depth_first(problem: MemoryProblem, deadline: Deadline | None = None) -> list[int] | None:
    """Follows the most recently readied node: finishes one branch before starting the next."""
    return _by_readiness(problem, newest_first=True, deadline=deadline)


def breadth_first(problem: MemoryProblem, deadline: Deadline | None = None) -> list[int] | None:
    """Runs nodes in the order they became ready: level by level."""
    return _by_readiness(problem, newest_first=False, deadline=deadline)


def greedy_peak(problem: MemoryProblem, deadline: Deadline | None = None) -> list[int] | None:
    """TorchInductor's greedy: the ready node that least raises the running peak, then the one
    that frees most."""

    def choose(state: _State, candidates) -> int:
        return min(
            candidates,
            key=lambda v: (max(0, state.live + problem.alloc[v] - state.peak), -state.freed_by(v), v),
        )

    return _list_schedule(problem, choose, deadline=deadline)


def xla_list(problem: MemoryProblem, deadline: Deadline | None = None) -> list[int] | None:
    """XLA's list scheduler: the ready node with the most bytes freed minus bytes defined."""

    def choose(state: _State, candidates) -> int:
        return min(candidates, key=lambda v: (problem.alloc[v] - state.freed_by(v), v))

    return _list_schedule(problem, choose, deadline=deadline)


# -- search over sets of scheduled nodes (Serenity's dynamic programming) ----------------------


@dataclass(eq=False)
class _Node:
    """A search state: which nodes ran and which are ready (bitmasks), live bytes now, and the
    peak so far."""

    __slots__ = ("mask", "live", "peak", "ready", "parent", "ran")
    mask: int
    live: int
    peak: int
    ready: int
    parent: "_Node | None"
    ran: tuple[int, ...]  # the nodes this state added to its parent's

    def order(self) -> list[int]:
        chunks, node = [], self
        while node is not None:
            chunks.append(node.ran)
            node = node.parent
        return [v for chunk in reversed(chunks) for v in chunk]


class _Search:
    """Search states over sets of run nodes, expanded depth first (`dive`) or layer by layer
    (`layers`); every state created is charged to `budget` (one unit each).
    What running a node frees is precomputed per node as (bytes, users) pairs: a buffer is
    freed once every node in its users' bitmask has run."""

    def __init__(self, problem: MemoryProblem, budget: Budget):
        self.p = problem
        self.budget = budget
        self.pred_mask = [sum(1 << u for u in ps) for ps in problem.preds]
        user_mask: dict[int, int] = {b: 0 for b in problem.size}
        reads: dict[int, int] = {b: 0 for b in problem.size}
        for v, vs in enumerate(problem.uses):
            for b in vs:
                user_mask[b] |= 1 << v
                reads[b] += 1
        for b, users in problem.users.items():
            if users > reads[b]:  # a later segment reads it too: never freed here, as in LastUse
                user_mask[b] |= 1 << problem.count
        self.reads = [tuple((problem.size[b], user_mask[b]) for b in vs) for vs in problem.uses]
        self.unused = [sum(problem.size[b] for b in ds if problem.users[b] == 0) for ds in problem.defines]
        self.free_mask = sum(1 << v for v in range(problem.count) if problem.alloc[v] == 0)

    def start(self) -> _Node:
        ready = sum(1 << v for v in range(self.p.count) if not self.p.preds[v])
        return self._close(_Node(0, 0, 0, ready, None, ()))

    def _run(self, state: _Node, v: int):
        """Running `v` after `state`: the nodes run, the bytes alive while it runs and after,
        and the ready nodes."""
        bit = 1 << v
        mask = state.mask | bit
        during = state.live + self.p.alloc[v]
        after = during - self.unused[v]
        for size, users in self.reads[v]:
            if users & ~mask == 0:
                after -= size
        ready = state.ready & ~bit
        for s in self.p.succs[v]:
            if self.pred_mask[s] & ~mask == 0:
                ready |= 1 << s
        return mask, during, after, ready

    def expand(self, state: _Node, v: int) -> _Node:
        self.budget.charge()
        mask, during, after, ready = self._run(state, v)
        return self._close(_Node(mask, after, max(state.peak, during), ready, state, (v,)))

    def _close(self, state: _Node) -> _Node:
        """Runs ready free nodes in place (they never raise the peak)."""
        free = state.ready & self.free_mask
        while free:
            for v in members(free):
                state.mask, _, state.live, state.ready = self._run(state, v)
                state.ran = state.ran + (v,)
            free = state.ready & self.free_mask
        return state

    def _bound(self, state: _Node) -> int:
        """A peak every completion of `state` reaches: its own, and the bytes alive while the
        next allocating node runs (one of the ready ones, on top of what is alive now)."""
        alloc = self.p.alloc
        following = min((alloc[v] for v in members(state.ready & ~self.free_mask)), default=0)
        return max(state.peak, state.live + following)

    def dive(self, target: int, dropped: list[int]) -> _Node | None:
        """A state that ran every node with a peak at most `target`, found depth first (the
        child with the lowest peak, then the fewest live bytes, first), or None when there is
        none; the bounds of the states it drops go to `dropped`. A set of nodes reached again
        with no lower peak is not expanded again, so the dive creates each state at most once
        per set, as a layer does; raises SearchStopped when the budget runs out."""
        full = (1 << self.p.count) - 1
        first = self.start()
        if first.mask == full:
            return first if first.peak <= target else None
        seen: dict[int, int] = {}  # a set of nodes run -> the lowest peak it was reached with
        stack = [self._children(first, target, seen, dropped)]
        while stack:
            if not stack[-1]:
                stack.pop()
                continue
            state = stack[-1].pop()
            if state.mask == full:
                return state
            stack.append(self._children(state, target, seen, dropped))
        return None

    def _children(self, state: _Node, target: int, seen: dict, dropped: list[int]) -> list[_Node]:
        """The children of `state` worth diving into, the most promising last."""
        kept = []
        for v in members(state.ready):
            child = self.expand(state, v)
            bound = self._bound(child)
            if bound > target:
                dropped.append(bound)
            elif seen.get(child.mask, bound + 1) > child.peak:
                seen[child.mask] = child.peak
                kept.append(child)
        kept.sort(key=lambda c: (c.peak, c.live, c.ran[0]), reverse=True)
        return kept

    def layers(self, keep):
        """Expands layer by layer (one more allocating node each); `keep` filters a layer.
        Returns the lowest-peak state that ran every node, or None when `keep` leaves a layer
        empty; raises SearchStopped when the budget runs out."""
        first = self.start()
        layer = {first.mask: first}
        full = (1 << self.p.count) - 1
        while True:
            done = [s for s in layer.values() if s.mask == full]
            if done:
                return min(done, key=lambda s: s.peak)
            successors: dict[int, _Node] = {}
            for state in layer.values():
                for v in members(state.ready):
                    child = self.expand(state, v)
                    best = successors.get(child.mask)
                    if best is None or child.peak < best.peak:
                        successors[child.mask] = child
            layer = keep(successors)
            if not layer:
                return None


def exact_search(problem: MemoryProblem, upper_bound: int | None = None, max_states: int = 200_000,
                 deadline: Deadline | None = None, floor: int | None = None, budget: Budget | None = None,
                 round_states: int | None = None) -> tuple[list[int] | None, int]:
    """(the lowest-peak order found under `upper_bound`, or None where none was; a proven lower
    bound on every order's peak). The order is the optimum where its peak is the bound; with
    no `upper_bound`, program order's peak is the first.

    Rounds of a depth-first search over sets of scheduled nodes (`_Search.dive`), each with a
    target peak: states whose bound (`_Search._bound`) passes the target are dropped, and two
    partial orders that ran the same set leave the same tensors alive, so only the one with
    the lower peak is explored. A round that finds an order lowers the upper end to its peak;
    one that does not has proven the optimum above the target, at least the least bound it
    dropped. The first round aims at the lower bound (`floor`, else `bounds.lower_bound`), where a
    depth-first search finds an order at once if there is one; the next bisect what is left.
    Every round's states count against `max_states` (or `budget`); where the budget runs out,
    the best order and the last failed round's bound stand. With `round_states`, a round that
    creates more states gives up without proving anything and the next aims higher: a search
    that improves an order on a graph too large to prove."""
    budget = budget or Budget(max_states, deadline)
    search = _Search(problem, budget)
    low = lower_bound(problem) if floor is None else floor
    best: list[int] | None = None
    if upper_bound is None:
        best = list(problem.program)
        upper_bound = problem.peak(best) + 1  # program order itself is a candidate
    target = untried = low  # the lowest target no round has given up on
    while untried < upper_bound:
        dropped: list[int] = []
        if round_states is not None:
            search.budget = Budget(min(round_states, budget.work - budget.spent), budget.deadline)
        try:
            found = search.dive(target, dropped)
        except SearchStopped:
            if round_states is None:
                return best, low
            budget.spent += search.budget.spent
            if budget.spent >= budget.work or (budget.deadline is not None and budget.deadline.passed()):
                return best, low
            untried = target + 1
        else:
            if round_states is not None:
                budget.spent += search.budget.spent
            if found is None:
                low = min(dropped)
                untried = max(untried, low)
            else:
                best = found.order()
                upper_bound = problem.peak(best)
        target = untried + (upper_bound - untried) // 2
    return best, low


def exact(problem: MemoryProblem, upper_bound: int | None = None, max_states: int = 200_000, deadline: Deadline | None = None):
    """The best order the exact search found, or None (see `exact_search`)."""
    return exact_search(problem, upper_bound, max_states, deadline)[0]


def beam(problem: MemoryProblem, width: int = 16, max_states: int | None = None, deadline: Deadline | None = None,
         budget: Budget | None = None) -> list[int] | None:
    """The same search keeping only the `width` best states of each layer (by peak, then live);
    None when it would create more than `max_states` states (or the deadline passes)."""
    search = _Search(problem, budget or Budget(max_states if max_states is not None else 1 << 62, deadline))

    def keep(layer: dict):
        return dict(heapq.nsmallest(width, layer.items(), key=lambda item: (item[1].peak, item[1].live, item[0])))

    try:
        return search.layers(keep).order()
    except SearchStopped:
        return None


def beam_states(problem: MemoryProblem, order: list[int]) -> int:
    """About how many states a beam of width 1 creates: the allocating nodes ready at each of
    its steps, estimated along `order` (a heuristic's order)."""
    state = _State(problem)
    total = 0
    for v in order:
        if problem.alloc[v] > 0:
            total += sum(1 for u in state.ready if problem.alloc[u] > 0)
        state.run(v)
    return max(total, 1)


# -- choosing ------------------------------------------------------------------------------


@dataclass(frozen=True)
class OrderLimits:
    """What bounds the search; the result depends on these, never on the machine's speed."""

    exact_limit: int = 160  # the exact search runs when at most this many nodes allocate
    max_states: int = 3_000_000  # states the exact search may create
    time_limit_s: float = 60.0  # a safety net for one function's whole search, in seconds
    beam_width: int = 0  # 0: the widest beam (up to 16) that fits in beam_states
    beam_states: int | None = None  # states the beam may create (None: max_states)

    @property
    def beam_budget(self) -> int:
        return self.max_states if self.beam_states is None else self.beam_states


@dataclass(frozen=True)
class OrderDecision:
    order: list[int]
    strategy: str
    peak: int
    program_peak: int
    optimum: int | None  # the exact optimum, where the search finished
    peaks: dict  # strategy -> peak, for every strategy that ran
    # Why the searches that ran stopped: {"exact": "finished" | "bound" | "max-states" |
    # "deadline", ...}; "bound": the lower bound reached a heuristic's or the beam's peak,
    # proving it optimal (the exact search then does not run, or stops).
    searches: dict = field(default_factory=dict)
    deadline_fired: bool = False  # the time limit cut a search short: the order may vary by run
    # A peak no order of the graph goes under (the optimum, where the search finished): what
    # the exact search's failed rounds proved, or `bounds.lower_bound`.
    lower_bound: int = 0
    segments: int = 1  # the parts between separators, ordered one by one

    @property
    def gap(self) -> float:
        """How far the chosen peak may be above the optimum: peak / lower bound - 1."""
        return self.peak / self.lower_bound - 1 if self.lower_bound else 0.0


HEURISTICS = {
    "program": program_order,
    "dfs": depth_first,
    "bfs": breadth_first,
    "greedy": greedy_peak,
    "xla": xla_list,
}


def _beam_width(problem: MemoryProblem, limits: OrderLimits, order: list[int]) -> int:
    """The widest beam, up to 16, whose estimated states fit in the beam's budget; 0 if none fits."""
    if limits.beam_width > 0:
        return limits.beam_width
    return min(16, limits.beam_budget // beam_states(problem, order))


def best_order(graph: KernelGraph, strategy: str = "auto", limits: OrderLimits = OrderLimits()) -> OrderDecision:
    """Runs `strategy` (or, for "auto", all of them) and keeps the lowest peak; ties keep the
    earlier strategy, program order first.

    For the searches ("auto", "exact", "beam"), a graph with separators (`schedc.decisions.segments`)
    is ordered segment by segment, each under the whole `limits`: the graph's optimum is the
    highest of the segments' optima, and each search is as small as its segment.

    The searches are bounded by `limits.max_states`, so the decision is the same on any machine;
    `limits.time_limit_s` only stops a search that runs far longer than its work budget allows
    for, and the decision then says so (`deadline_fired`)."""
    if strategy != "auto" and strategy not in STRATEGIES:
        raise ValueError(f"unknown strategy '{strategy}'; valid: auto, {', '.join(STRATEGIES)}")
    deadline = Deadline(limits.time_limit_s)
    problem = MemoryProblem.from_graph(graph)
    segments = split_at_separators(problem) if strategy in ("auto", "exact", "beam") else []
    if len(segments) <= 1:
        decision, orders = _best_order(problem, strategy, limits, deadline, lambda order: sink_fills(graph, order))
        assert all(graph.is_order(order) for order in orders.values()), "a strategy returned an invalid order"
        return decision
    # Every segment's bound is one for the graph: a segment whose order reaches the highest
    # needs no search (a RandWire stage whose own optimum is below the other stage's).
    floor = max(lower_bound(segment.problem, deadline=deadline) for segment in segments)
    # The segments' searches share the budget, smallest segment first: each gets an equal part
    # of what is left, and what a segment does not use passes on to the larger ones, so a
    # graph's work stays within `limits` however it is cut.
    parts: list = [None] * len(segments)
    exact_left, beam_left = limits.max_states, limits.beam_budget
    by_size = sorted(range(len(segments)), key=lambda i: (sum(1 for a in segments[i].problem.alloc if a > 0), i))
    for k, i in enumerate(by_size):
        budgets = (Budget(exact_left // (len(segments) - k), deadline), Budget(beam_left // (len(segments) - k), deadline))
        share = replace(limits, max_states=budgets[0].work, beam_states=budgets[1].work)
        parts[i] = _best_order(segments[i].problem, strategy, share, deadline, budgets=budgets, floor=floor)
        exact_left -= min(budgets[0].spent, budgets[0].work)
        beam_left -= min(budgets[1].spent, budgets[1].work)
    order = sink_fills(graph, [v for segment, (d, _) in zip(segments, parts) for v in segment.graph_order(d.order)])
    assert graph.is_order(order), "the segments' orders do not make an order of the graph"
    program = sink_fills(graph, list(problem.program))
    peaks = {"program": problem.peak(program)}
    peak = problem.peak(order)
    decisions = [d for d, _ in parts]
    strategy_names = "+".join(dict.fromkeys(d.strategy for d in decisions))
    if peak >= peaks["program"]:  # never worse than the order the user wrote, which wins ties
        order, peak, strategy_names = program, peaks["program"], "program"
    for name in dict.fromkeys(name for _, orders in parts for name in orders):
        if name != "program":  # its orders, joined (the chosen one where it did not run)
            joined = [v for segment, (d, orders) in zip(segments, parts) for v in segment.graph_order(orders.get(name, d.order))]
            peaks[name] = problem.peak(sink_fills(graph, joined))
    known = [d.optimum for d in decisions if d.optimum is not None]
    unknown = [d.peak for d in decisions if d.optimum is None]
    # The graph's optimum is the highest segment optimum: known when the known ones reach the
    # peaks of the segments whose optimum is not.
    optimum = max(known) if known and all(p <= max(known) for p in unknown) else None
    bound = optimum if optimum is not None else max(max(d.lower_bound for d in decisions), floor)
    searches: dict[str, str] = {}
    for d in decisions:
        for name, how in d.searches.items():
            searches[name] = "+".join(sorted(set(searches.get(name, how).split("+")) | {how}))
    return OrderDecision(order, strategy_names, peak, peaks["program"], optimum, peaks, searches, deadline.fired,
                         min(bound, peak), len(segments))


def _best_order(problem: MemoryProblem, strategy: str, limits: OrderLimits, deadline: Deadline, finish=list,
                budgets: tuple[Budget, Budget] | None = None, floor: int | None = None) -> tuple[OrderDecision, dict]:
    """`best_order` on one problem (`finish`: what turns a strategy's order into the one that
    runs; `budgets`: the exact search's and the beam's, to read what they spent); also each
    strategy's order.

    `floor`: a peak the whole graph cannot go under, at least this problem's `lower_bound` (the
    highest segment's); None: this problem's. An order at or under it is as good as this
    problem's optimum for the graph, so the searches stop there, and `optimum` is then that
    order's peak."""
    exact_budget, beam_budget = budgets or (Budget(limits.max_states, deadline), Budget(limits.beam_budget, deadline))
    peaks: dict[str, int] = {}
    orders: dict[str, list[int]] = {}
    searches: dict[str, str] = {}

    def consider(name: str, order: list[int] | None) -> None:
        if order is None:
            return
        order = finish(order)
        orders[name] = order
        peaks[name] = problem.peak(order)

    def stopped(name: str, order) -> str:
        return "finished" if order is not None else ("deadline" if deadline.fired else "max-states")

    consider("program", program_order(problem))
    names = list(HEURISTICS) if strategy == "auto" else [strategy]
    for name in names:
        if name in HEURISTICS and name != "program":
            consider(name, HEURISTICS[name](problem, deadline))
    optimum = None
    bound = floor or 0
    allocating = sum(1 for a in problem.alloc if a > 0)
    searching = strategy in ("auto", "exact")

    def proven() -> bool:
        """Whether the lower bound reached a known order's peak: that order is optimal."""
        nonlocal optimum
        if searching and min(peaks.values()) <= bound:
            searches["exact"] = "bound"
            optimum = min(peaks.values())
        return optimum is not None

    if allocating == 0 and strategy in ("auto", "exact", "beam"):
        optimum = peaks["program"]  # nothing allocates: no order to search for
    elif floor is None:
        best_so_far = min(orders, key=lambda name: (peaks[name], list(orders).index(name)))
        bound = lower_bound(problem, orders[best_so_far], peaks[best_so_far], deadline)
    # The beam before the exact search: it often reaches the bound, which ends the search.
    if optimum is None and not proven() and (strategy == "beam" or searching):
        best_so_far = min(orders, key=lambda name: (peaks[name], list(orders).index(name)))
        width = 0 if deadline.passed() else _beam_width(problem, limits, orders[best_so_far])
        if deadline.passed():
            searches["beam"] = "deadline"
        elif width < 1:
            searches["beam"] = "max-states"  # even a beam of width 1 would pass the budget
        else:
            order = beam(problem, width, limits.beam_budget, deadline, beam_budget)
            searches["beam"] = stopped("beam", order)
            consider("beam", order)
    # Too large to prove, the search may still improve the best order: in rounds of a tenth of
    # the beam's states, where one round can dive to the end (a beam of width 1's states).
    share = Budget(max(0, min(limits.beam_budget, exact_budget.work - exact_budget.spent)), deadline)
    best_so_far = min(orders, key=lambda name: (peaks[name], list(orders).index(name)))
    improving = allocating > limits.exact_limit and share.work // 10 >= beam_states(problem, orders[best_so_far])
    if optimum is None and not proven() and searching and (allocating <= limits.exact_limit or improving):
        if deadline.passed():
            searches["exact"] = "deadline"  # the heuristics used up the time: no search starts
        else:
            best_known = min(peaks.values())
            if not improving:
                order, bound = exact_search(problem, best_known, limits.max_states, deadline, bound, exact_budget)
            else:
                order, bound = exact_search(problem, best_known, share.work, deadline, bound, share, share.work // 10)
                exact_budget.spent += share.spent
            consider("exact", order)
            if order is not None and peaks["exact"] <= bound:
                searches["exact"], optimum = "finished", peaks["exact"]
            elif not proven():  # the search's rounds may have raised the bound to a known peak
                searches["exact"] = "deadline" if deadline.fired else "max-states"
    candidates = [strategy] if strategy in orders else []
    if strategy == "auto" or not candidates:
        candidates = list(orders)
    chosen = min(candidates, key=lambda name: (peaks[name], list(orders).index(name)))
    if peaks[chosen] > peaks["program"]:
        chosen = "program"  # never worse than the order the user wrote
    if optimum is not None:
        bound = optimum
    decision = OrderDecision(orders[chosen], chosen, peaks[chosen], peaks["program"], optimum, peaks, searches, deadline.fired, min(bound, peaks[chosen]))
    return decision, orders
