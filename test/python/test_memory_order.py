"""Ordering strategies on random DAGs (hypothesis): valid orders, never worse than program
order, the exact search equal to a brute-force optimum on small graphs, and lower bounds that
no order goes under."""

from __future__ import annotations

from hypothesis import assume, given, settings
from hypothesis import strategies as st

from schedc.decisions.kernel_graph import Buffer, KernelGraph, Node
from schedc.decisions.memory_order import HEURISTICS, MemoryProblem, OrderLimits, beam, best_order, exact, exact_search
from schedc.decisions.memory_order.bounds import cut_bound, join_bound, lower_bound, working_set_bound
from schedc.decisions.segments import reach, split_at_separators


@st.composite
def random_graphs(draw, min_nodes=1, max_nodes=9):
    """Node i defines buffer i (0 bytes for some: results, views); it reads the buffers of its
    data predecessors. Some edges are pure ordering constraints (side effects); some nodes that
    read nothing are fills."""
    count = draw(st.integers(min_nodes, max_nodes))
    buffers, nodes, edges = [], [], set()
    for i in range(count):
        size = draw(st.sampled_from([0, 1, 2, 4, 8, 16, 32, 100]))
        kind = "transient" if size else "result"
        buffers.append(Buffer(i, size, f"tensor<{size}xi8>", kind))
        data_preds = sorted(draw(st.sets(st.integers(0, i - 1), max_size=3)) if i else set())
        order_preds = sorted(draw(st.sets(st.integers(0, i - 1), max_size=1)) if i else set())
        edges.update((p, i) for p in data_preds + order_preds)
        fill = not data_preds and size > 0 and draw(st.booleans())  # allocates, reads nothing
        nodes.append(Node(i, "flow.dispatch", f"n{i}", True, (i,), tuple(data_preds), fill=fill))
    return KernelGraph("random", tuple(nodes), tuple(buffers), frozenset(edges))


def topological_orders(count: int, preds):
    """Every topological order of `count` nodes whose predecessors `preds[v]` lists."""
    placed: list[int] = []

    def extend():
        if len(placed) == count:
            yield list(placed)
            return
        for v in range(count):
            if v not in placed and all(p in placed for p in preds[v]):
                placed.append(v)
                yield from extend()
                placed.pop()

    yield from extend()


def all_orders(graph: KernelGraph):
    return topological_orders(len(graph.nodes), graph.predecessors())


@settings(max_examples=150, deadline=None)
@given(random_graphs(max_nodes=12))
def test_every_strategy_returns_a_topological_order(graph):
    problem = MemoryProblem.from_graph(graph)
    for name, strategy in HEURISTICS.items():
        assert graph.is_order(strategy(problem)), name
    assert graph.is_order(beam(problem, width=3))
    order = exact(problem)
    assert order is not None and graph.is_order(order)


@settings(max_examples=150, deadline=None)
@given(random_graphs(max_nodes=12))
def test_the_chosen_order_is_never_worse_than_program_order(graph):
    decision = best_order(graph)
    assert graph.is_order(decision.order)
    assert decision.peak == graph.peak_bytes(decision.order)
    assert decision.peak <= decision.program_peak == graph.peak_bytes()


@settings(max_examples=200, deadline=None)
@given(random_graphs(max_nodes=9))
def test_exact_search_equals_brute_force(graph):
    optimum = min(graph.peak_bytes(order) for order in all_orders(graph))
    decision = best_order(graph, "auto")
    assert decision.optimum == optimum
    assert decision.peak == optimum
    problem = MemoryProblem.from_graph(graph)
    order, bound = exact_search(problem)
    assert graph.is_order(order) and problem.peak(order) == bound == optimum


@settings(max_examples=60, deadline=None)
@given(random_graphs(max_nodes=8), st.sampled_from([1, 3, 10, 30, 200_000]))
def test_the_lower_bound_holds_wherever_the_search_stops(graph, max_states):
    """No order goes under the proven lower bound, and the gap is the chosen peak's distance
    to it; a finished search's bound is the optimum."""
    optimum = min(graph.peak_bytes(order) for order in all_orders(graph))
    decision = best_order(graph, "auto", OrderLimits(max_states=max_states))
    assert decision.lower_bound <= optimum <= decision.peak
    assert decision.gap == (decision.peak / decision.lower_bound - 1 if decision.lower_bound else 0.0)
    if decision.optimum is not None:
        assert decision.optimum == optimum == decision.lower_bound


def least_alive_while_running(problem: MemoryProblem, v: int) -> int:
    """The fewest bytes alive while `v` runs, over every set of nodes that may run before it
    (every subset closed under predecessors, holding v's ancestors and none of its
    descendants), by enumeration."""
    _, ancestors, descendants = reach(problem)
    definer = {b: u for u in range(problem.count) for b in problem.defines[u]}
    readers = {b: [w for w in range(problem.count) if b in problem.uses[w]] for b in problem.size}
    least = None
    for before in range(1 << problem.count):
        if before & ancestors[v] != ancestors[v] or before & (descendants[v] | 1 << v):
            continue
        if any(before >> x & 1 and not all(before >> p & 1 for p in problem.preds[x]) for x in range(problem.count)):
            continue
        alive = problem.alloc[v] + sum(size for b, size in problem.size.items()
                                       if b in definer and before >> definer[b] & 1 and any(not before >> w & 1 for w in readers[b]))
        least = alive if least is None else min(least, alive)
    return least


@settings(max_examples=200, deadline=None)
@given(random_graphs(max_nodes=9))
def test_the_cut_bound_is_each_nodes_least_working_set_and_no_order_goes_under_it(graph):
    """The minimum cut finds, for every node that allocates, the set of nodes run before it
    that leaves the fewest bytes alive; the highest of those is at most the brute-force
    optimum, and at least the working-set bound."""
    problem = MemoryProblem.from_graph(graph)
    optimum = min(graph.peak_bytes(order) for order in all_orders(graph))
    least = [least_alive_while_running(problem, v) for v in range(problem.count) if problem.alloc[v] > 0]
    bound = cut_bound(problem)
    assert bound == max(least + [working_set_bound(problem)])
    assert working_set_bound(problem) <= bound <= optimum
    # An order's live bytes only pick which nodes to cut first: the bound is the same.
    assert cut_bound(problem, HEURISTICS["dfs"](problem)) == bound


@settings(max_examples=200, deadline=None)
@given(random_graphs(max_nodes=9))
def test_no_order_goes_under_the_join_bound(graph):
    """Whichever predecessor of a join runs last, the bytes its cut leaves alive with the other
    predecessors run before it are alive in every order: the bound is at most the brute-force
    optimum, and the searches' bound is the higher of the two."""
    problem = MemoryProblem.from_graph(graph)
    optimum = min(graph.peak_bytes(order) for order in all_orders(graph))
    assert join_bound(problem) <= optimum
    assert lower_bound(problem) == max(cut_bound(problem), join_bound(problem)) <= optimum


def test_the_join_bound_proves_a_fan_optimal_where_no_single_cut_does():
    """x -> 40 one-kernel branches -> a join: while the last branch runs, x and the other 39
    outputs are alive whichever it is (41 buffers). Each node's cut alone allows 40: the exact
    search spent its whole budget failing to find an order one buffer lower."""
    graph = wide_graph(branches=40, depth=1)
    problem = MemoryProblem.from_graph(graph)
    assert cut_bound(problem) < join_bound(problem) == lower_bound(problem) == graph.peak_bytes()
    decision = best_order(graph)
    assert decision.searches == {"exact": "bound"}
    assert decision.optimum == decision.peak == decision.lower_bound == graph.peak_bytes()


def test_the_cut_bound_counts_a_branch_that_ran_before_or_its_input():
    """x (4 B) feeds a (2 B) and b (1 B); c (8 B) reads b; the output reads a and c. While c
    runs, either a ran (its 2 B wait for the output) or x's 4 B wait for a: at least 11 B, the
    optimum. The working-set bound sees only b's and c's bytes there (10 B at the output)."""
    sizes, reads = [4, 2, 1, 8, 0], [(), (0,), (0,), (2,), (1, 3)]
    buffers = tuple(Buffer(i, size, "t", "transient" if size else "result") for i, size in enumerate(sizes))
    nodes = tuple(Node(i, "flow.dispatch", f"n{i}", True, (i,), r) for i, r in enumerate(reads))
    graph = KernelGraph("branch", nodes, buffers, frozenset((u, v) for v, r in enumerate(reads) for u in r))
    problem = MemoryProblem.from_graph(graph)
    assert (working_set_bound(problem), cut_bound(problem)) == (10, 11)
    decision = best_order(graph)
    assert decision.optimum == decision.peak == decision.lower_bound == 11
    assert decision.searches == {"exact": "bound"}


def test_a_segment_under_another_segments_bound_is_not_searched():
    """A wide fan of branches (which 3,000 states do not search through) and then one large
    kernel: the large kernel's bytes bound the graph's peak, the fan's heuristic order stays
    under it, so no search runs and the order is proven optimal."""
    fan = wide_graph(branches=60, depth=3)
    join = len(fan.nodes) - 1
    big = Buffer(join + 1, 100_000, "t", "transient")
    nodes = fan.nodes + (Node(join + 1, "flow.dispatch", "big", True, (join + 1,), ()),
                         Node(join + 2, "flow.dispatch", "out", True, (join + 2,), (join + 1,)))
    buffers = fan.buffers + (big, Buffer(join + 2, 0, "t", "result"))
    graph = KernelGraph("fan_then_big", nodes, buffers, fan.edges | {(join, join + 1), (join + 1, join + 2)})
    decision = best_order(graph, "auto", OrderLimits(max_states=3000))
    assert decision.segments > 1
    assert decision.searches == {"exact": "bound"}
    assert decision.optimum == decision.peak == decision.lower_bound == graph.peak_bytes(decision.order)
    alone = best_order(fan, "auto", OrderLimits(max_states=3000))
    assert "max-states" in alone.searches.values()  # the fan alone is not proven in that budget


@settings(max_examples=50, deadline=None)
@given(random_graphs(min_nodes=6, max_nodes=12))
def test_searches_stop_on_their_state_budget_and_the_heuristics_remain(graph):
    assume(sum(1 for b in graph.buffers if b.size) >= 2)  # at least two layers to search
    decision = best_order(graph, "auto", OrderLimits(max_states=1))
    # Unknown, or proven by the lower bound: a heuristic's order reached it.
    assert decision.optimum is None or decision.optimum == decision.peak == decision.lower_bound
    # The beam runs only where the optimum is still unknown.
    if decision.segments == 1:
        assert decision.searches == ({"exact": "max-states", "beam": "max-states"} if decision.optimum is None else {"exact": "bound"})
    else:  # each segment searched under the budget: a small one may finish within it
        stopped = set(decision.searches["exact"].split("+"))
        assert stopped <= {"finished", "bound", "max-states"}
        assert decision.optimum is not None or "max-states" in stopped
    assert "beam" not in decision.peaks and decision.peak <= decision.program_peak
    assert not decision.deadline_fired


@settings(max_examples=50, deadline=None)
@given(random_graphs(min_nodes=6, max_nodes=12))
def test_beam_takes_over_above_the_exact_limit(graph):
    """Above the exact limit the beam runs, unless the lower bound already proves a heuristic's
    order optimal; the search then only improves the best order, and an optimum is claimed only
    where an order reaches the bound."""
    assume(any(b.size for b in graph.buffers))
    decision = best_order(graph, "auto", OrderLimits(exact_limit=0))
    if "beam" in decision.searches:
        assert decision.searches["beam"] == "finished" and "beam" in decision.peaks
    else:
        assert decision.searches == {"exact": "bound"}
    if decision.optimum is not None:
        assert decision.optimum == decision.peak == decision.lower_bound
    assert decision.peak <= decision.program_peak


@settings(max_examples=100, deadline=None)
@given(random_graphs(max_nodes=8), st.sampled_from([1, 2, 5, 50]))
def test_rounds_that_give_up_prove_nothing(graph, round_states):
    """A search whose rounds stop after `round_states` states keeps a valid order and a bound
    no order goes under."""
    problem = MemoryProblem.from_graph(graph)
    optimum = min(graph.peak_bytes(order) for order in all_orders(graph))
    order, bound = exact_search(problem, None, 10_000, round_states=round_states)
    assert graph.is_order(order) and bound <= optimum <= problem.peak(order)


def test_a_wide_graph_is_decided_by_work_not_time():
    """Many parallel branches: the decision is the same with any time limit that does not fire,
    and a limit that fires is reported."""
    graph = wide_graph(branches=60, depth=3)
    first = best_order(graph, "auto", OrderLimits(max_states=3000))
    second = best_order(graph, "auto", OrderLimits(max_states=3000, time_limit_s=1000.0))
    assert (first.order, first.searches) == (second.order, second.searches)
    assert not first.deadline_fired and first.peak <= first.program_peak
    cut = best_order(graph, "auto", OrderLimits(max_states=10**9, time_limit_s=0.05))
    assert cut.deadline_fired and cut.peak <= cut.program_peak
    assert "deadline" in cut.searches.values()


def wide_graph(branches: int, depth: int) -> KernelGraph:
    """x -> `branches` chains of `depth` kernels, each defining a transient -> one join."""
    nodes, buffers, edges = [], [Buffer(0, 8, "t", "transient")], []
    nodes.append(Node(0, "flow.dispatch", "x", True, (0,), ()))
    tails = []
    for b in range(branches):
        previous = 0
        for d in range(depth):
            v = len(nodes)
            buffers.append(Buffer(v, 64 * (1 + (b * 7 + d) % 5), "t", "transient"))
            nodes.append(Node(v, "flow.dispatch", f"k{b}_{d}", True, (v,), (previous,)))
            edges.append((previous, v))
            previous = v
        tails.append(previous)
    join = len(nodes)
    buffers.append(Buffer(join, 0, "t", "result"))
    nodes.append(Node(join, "flow.dispatch", "join", True, (join,), tuple(tails)))
    edges += [(t, join) for t in tails]
    return KernelGraph("wide", tuple(nodes), tuple(buffers), frozenset(edges))


def test_two_branches_are_finished_one_at_a_time():
    """x -> a1 (big) -> a2 ; x -> b1 (big) -> b2 ; join. Program order interleaves the branches."""
    sizes = {0: 1, 1: 100, 2: 1, 3: 100, 4: 1, 5: 0}
    buffers = tuple(Buffer(i, s, "t", "transient" if s else "result") for i, s in sizes.items())
    deps = {1: (0,), 3: (0,), 2: (1,), 4: (3,), 5: (2, 4)}
    program = [0, 1, 3, 2, 4, 5]
    nodes = tuple(Node(i, "flow.dispatch", f"n{i}", True, (i,), deps.get(i, ())) for i in range(6))
    edges = frozenset((p, i) for i, ps in deps.items() for p in ps)
    # Relabel so that node indices follow the interleaved program order.
    position = {old: new for new, old in enumerate(program)}
    nodes = tuple(
        Node(position[n.index], n.op, n.label, True, (position[n.index],), tuple(position[u] for u in n.uses))
        for n in sorted(nodes, key=lambda n: position[n.index])
    )
    buffers = tuple(Buffer(position[b.id], b.size, b.type, b.kind) for b in sorted(buffers, key=lambda b: position[b.id]))
    edges = frozenset((position[a], position[b]) for a, b in edges)
    graph = KernelGraph("branches", nodes, buffers, edges)
    assert graph.peak_bytes() == 201  # both big tensors alive together
    decision = best_order(graph)
    assert decision.peak == decision.optimum == 102
    assert decision.strategy != "program"


def test_a_stopped_search_reports_its_lower_bound_and_gap(imported):
    """Where the exact search runs out of states, the summary and the report say how far from
    the optimum the order may be."""
    from schedc.compiler.driver import compile_with_options
    from schedc.options import CompileOptions
    from schedc.report.build import summary_lines

    result = compile_with_options(imported("staged_branches")[2], CompileOptions(passes="memory-order{max-states=3}", emit="flow", report=True))
    order = result.report["functions"]["forward"]["memory-order"]
    assert order["optimum_bytes"] is None and 0 < order["lower_bound_bytes"] < order["peak_bytes"]
    line = next(line for line in summary_lines(result.report) if line.startswith("@forward"))
    gap = order["peak_bytes"] / order["lower_bound_bytes"] - 1
    assert f"(optimum unknown: at least {order['lower_bound_bytes']:,} B, a gap of at most {gap:.1%})" in line
    finished = compile_with_options(imported("staged_branches")[2], CompileOptions(passes="memory-order", emit="flow", report=True))
    order = finished.report["functions"]["forward"]["memory-order"]
    assert order["optimum_bytes"] == order["lower_bound_bytes"] <= order["peak_bytes"]


# -- segments: separators cut the search ------------------------------------------------------


def chain_of_cells(cells: int, branches: int) -> KernelGraph:
    """`cells` cells in a chain, each a fan of `branches` two-kernel branches joined by one
    kernel (every join is a separator); each branch's second kernel also reads a fill of its
    own, which reads nothing: the fills could run at any time before their readers."""
    nodes, buffers, edges = [Node(0, "flow.dispatch", "x", True, (0,), ())], [Buffer(0, 8, "t", "transient")], []

    def add(label: str, size: int, reads: tuple, fill: bool = False) -> int:
        v = len(nodes)
        buffers.append(Buffer(v, size, "t", "transient" if size else "result"))
        nodes.append(Node(v, "flow.dispatch", label, True, (v,), reads, fill=fill))
        edges.extend((u, v) for u in reads)
        return v

    join = 0
    for c in range(cells):
        tails = []
        for b in range(branches):
            fill = add(f"c{c}b{b}fill", 16, (), fill=True)
            first = add(f"c{c}b{b}k0", 16 * (1 + (b * 5 + c) % 7), (join,))
            tails.append(add(f"c{c}b{b}k1", 16 * (1 + (b * 5 + 3 + c) % 7), (first, fill)))
        join = add(f"join{c}", 8 if c < cells - 1 else 0, tuple(tails))
    return KernelGraph("cells", tuple(nodes), tuple(buffers), frozenset(edges))


def test_a_chain_of_cells_is_searched_cell_by_cell():
    """Ten cells of four branches, each branch with a fill: the whole graph's search must try
    every set of fills run early, and does not reach the optimum in 100,000 states (though the
    join bound proves it); cell by cell, each fill is searched only with its own cell and the
    optimum is proven within them."""
    graph = chain_of_cells(cells=10, branches=4)
    limits = OrderLimits(max_states=100_000)
    decision = best_order(graph, "auto", limits)
    assert decision.segments == 10  # each cell up to its join (x and the fills with their readers)
    assert decision.optimum == decision.peak == decision.lower_bound
    assert graph.is_order(decision.order) and decision.peak == graph.peak_bytes(decision.order)
    problem = MemoryProblem.from_graph(graph)
    whole, bound = exact_search(problem, None, limits.max_states)
    assert bound <= decision.optimum < problem.peak(whole)  # the same budget on the whole graph does not finish


@settings(max_examples=100, deadline=None)
@given(random_graphs(max_nodes=9))
def test_segments_order_each_part_and_keep_the_graphs_optimum(graph):
    problem = MemoryProblem.from_graph(graph)
    segments = split_at_separators(problem)
    assert sorted(v for s in segments for v in s.nodes) == list(range(problem.count))
    joined = [v for s in segments for v in s.graph_order(list(s.problem.program))]
    assert graph.is_order(joined)
    # The peak of the joined order is the highest of the segments' peaks.
    assert problem.peak(joined) == max(s.problem.peak(s.problem.program) for s in segments)


def problem_orders(problem: MemoryProblem):
    """Every topological order of a memory problem."""
    return topological_orders(problem.count, problem.preds)


@settings(max_examples=100, deadline=None)
@given(random_graphs(max_nodes=9))
def test_the_search_finds_each_segments_optimum(graph):
    """A segment keeps a buffer that a later segment reads alive to its end: the search counts
    it as the segment's peak does, and proves the segment's brute-force optimum."""
    for segment in split_at_separators(MemoryProblem.from_graph(graph)):
        problem = segment.problem
        order, bound = exact_search(problem)
        assert problem.peak(order) == bound == min(problem.peak(o) for o in problem_orders(problem))


def test_a_tensor_a_later_segment_reads_stays_alive_in_the_search():
    """x (8 B) is read by a1 and a2 and, after the separator b, by c: while b runs, x is alive
    (14 B in all). The search counts it so, and proves that peak optimal segment by segment."""
    sizes, reads = [8, 1, 1, 4, 0], [(), (0,), (0,), (1, 2), (3, 0)]
    buffers = tuple(Buffer(i, size, "t", "transient" if size else "result") for i, size in enumerate(sizes))
    nodes = tuple(Node(i, "flow.dispatch", f"n{i}", True, (i,), r) for i, r in enumerate(reads))
    graph = KernelGraph("skip", nodes, buffers, frozenset((u, v) for v, r in enumerate(reads) for u in r))
    for segment in split_at_separators(MemoryProblem.from_graph(graph)):
        order, bound = exact_search(segment.problem)
        assert segment.problem.peak(order) == bound
    decision = best_order(graph)
    assert decision.optimum == decision.peak == decision.lower_bound == graph.peak_bytes() == 14



def test_a_node_that_only_follows_a_weight_does_not_pull_it_ahead_of_its_reader():
    """w (1 B) is read by d, after the separator b; s has no bytes and only an order edge from
    w. s may run last, so w waits for the second segment: a (1 B) is freed by c first, and the
    peak is 1 B, not 2."""
    sizes, reads = [1, 0, 0, 1, 0, 0], [(), (0,), (0, 1), (), (3,), ()]
    buffers = tuple(Buffer(i, size, "t", "transient" if size else "result") for i, size in enumerate(sizes))
    nodes = tuple(Node(i, "flow.dispatch", f"n{i}", True, (i,), r) for i, r in enumerate(reads))
    edges = frozenset({(u, v) for v, r in enumerate(reads) for u in r} | {(1, 4), (3, 5)})
    graph = KernelGraph("weight-and-sink", nodes, buffers, edges)
    assert len(split_at_separators(MemoryProblem.from_graph(graph))) == 2
    decision = best_order(graph)
    assert decision.optimum == decision.peak == min(graph.peak_bytes(order) for order in all_orders(graph)) == 1
