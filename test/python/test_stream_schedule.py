"""Concurrent schedules on random DAGs (hypothesis): valid orders and waves, the memory budget
kept whenever it can be, and the list scheduler within Graham's bound."""

from __future__ import annotations

from hypothesis import assume, given, settings
from hypothesis import strategies as st

from schedc.decisions.kernel_graph import Buffer, KernelGraph, Node
from schedc.decisions.stream_schedule import critical_paths, is_serial, list_schedule, schedule, timed_ancestors, wave_peak
from test_memory_order import random_graphs


@st.composite
def timed_graphs(draw):
    graph = draw(random_graphs(min_nodes=2, max_nodes=14))
    seconds = [draw(st.sampled_from([0.0, 1.0, 2.0, 5.0, 10.0])) for _ in graph.nodes]
    return graph, seconds


def waves_respect_edges(graph: KernelGraph, waves) -> bool:
    wave_of = {n: w for w, wave in enumerate(waves) for n in wave}
    preds = graph.predecessors()
    return all(wave_of[a] < wave_of[n] for n in wave_of for a in timed_ancestors(preds, set(wave_of), n))


@settings(max_examples=200, deadline=None)
@given(timed_graphs(), st.sampled_from(["min-memory", "balanced", "max-concurrency"]), st.integers(1, 6))
def test_schedules_are_valid(graph_and_seconds, mode, streams):
    graph, seconds = graph_and_seconds
    plan = schedule(graph, seconds, mode, streams, max_wave=4)
    assert graph.is_order(list(plan.order))
    assert waves_respect_edges(graph, plan.waves)
    assert all(1 <= len(w) <= min(streams, 4) for w in plan.waves)
    timed = {n for n, s in enumerate(seconds) if s > 0}
    assert sorted(n for w in plan.waves for n in w) == sorted(timed)
    if is_serial(plan):  # one kernel at a time in the memory-aware order: that order's peak
        assert plan.order == tuple(schedule(graph, seconds, "min-memory").order)
        assert plan.peak_bytes == graph.peak_bytes(list(plan.order))
    else:
        assert plan.peak_bytes == wave_peak(graph, [list(w) for w in plan.waves], list(plan.order))


@settings(max_examples=200, deadline=None)
@given(timed_graphs(), st.integers(1, 6), st.floats(1.0, 2.0))
def test_the_budget_holds_when_it_can(graph_and_seconds, streams, factor):
    graph, seconds = graph_and_seconds
    serial = schedule(graph, seconds, "min-memory")
    budget = int(serial.peak_bytes * factor)
    plan = schedule(graph, seconds, "balanced", streams, budget=budget)
    assert plan.peak_bytes <= budget


@settings(max_examples=300, deadline=None)
@given(timed_graphs(), st.integers(1, 8))
def test_list_schedule_is_within_grahams_bound(graph_and_seconds, streams):
    graph, seconds = graph_and_seconds
    work = sum(seconds)
    assume(work > 0)
    slots = list_schedule(graph, seconds, streams)
    makespan = max(s.end for s in slots)
    critical = max(critical_paths(graph, seconds))
    assert makespan <= work / streams + (1 - 1 / streams) * critical + 1e-9
    # Every timed node once, never two at a time on one stream, never before its inputs.
    assert sorted(s.node for s in slots) == sorted(n for n, s in enumerate(seconds) if s > 0)
    by_stream: dict[int, list] = {}
    for s in slots:
        by_stream.setdefault(s.stream, []).append(s)
    for runs in by_stream.values():
        runs.sort(key=lambda s: s.start)
        assert all(a.end <= b.start + 1e-9 for a, b in zip(runs, runs[1:]))
    end = {s.node: s.end for s in slots}
    start = {s.node: s.start for s in slots}
    preds = graph.predecessors()
    for n in start:
        assert all(end.get(p, 0.0) <= start[n] + 1e-9 for p in preds[n])


def test_a_fill_that_waits_on_a_kernel_is_not_deferred_to_its_consumer():
    """Regression: a fill ordered after a kernel (a side effect between them) once ran with
    its consumer, and the consumer then started while the kernel still ran."""
    buffers = (
        Buffer(0, 4, "tensor<1xf32>", "result"),
        Buffer(1, 64, "tensor<16xf32>", "transient"),
        Buffer(2, 4, "tensor<1xf32>", "result"),
    )
    nodes = (
        Node(0, "flow.dispatch", "kernel", True, (0,), ()),
        Node(1, "flow.tensor.splat", "flow.tensor.splat", True, (1,), (), fill=True),
        Node(2, "flow.dispatch", "consumer", True, (2,), (1,)),
    )
    graph = KernelGraph("f", nodes, buffers, frozenset({(0, 1), (1, 2)}))
    slots = {s.node: s for s in list_schedule(graph, [1.0, 0.0, 1.0], streams=2)}
    assert slots[2].start >= slots[0].end
    plan = schedule(graph, [1.0, 0.0, 1.0], "max-concurrency", streams=2)
    assert [list(w) for w in plan.waves] == [[0], [2]]
