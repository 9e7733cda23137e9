"""The kernel graph's liveness model, on graphs written by hand (no MLIR)."""

from __future__ import annotations

from schedc.decisions.kernel_graph import Buffer, KernelGraph, Node


def chain_and_branch() -> KernelGraph:
    """x -> a (100 B) -> c ; x -> b (10 B) -> c ; c returns. Node 0 imports x."""
    buffers = (
        Buffer(0, 4, "tensor<1xf32>", "argument"),
        Buffer(1, 100, "tensor<25xf32>", "transient"),
        Buffer(2, 10, "tensor<10xi8>", "transient"),
        Buffer(3, 4, "tensor<1xf32>", "result"),
    )
    nodes = (
        Node(0, "hal.tensor.import", "hal.tensor.import", False, (0,), (), pinned=True),
        Node(1, "flow.dispatch", "a", True, (1,), (0,)),
        Node(2, "flow.dispatch", "b", True, (2,), (0,)),
        Node(3, "flow.dispatch", "c", True, (3,), (1, 2)),
    )
    edges = frozenset({(0, 1), (0, 2), (1, 3), (2, 3)})
    return KernelGraph("f", nodes, buffers, edges)


def test_live_ranges_and_peak_follow_the_order():
    graph = chain_and_branch()
    assert graph.live_ranges() == {1: (1, 3), 2: (2, 3)}
    assert graph.live_bytes() == [0, 100, 110, 110]
    assert graph.peak_bytes() == 110
    # Running b first keeps the big tensor alive for a shorter time, not a smaller peak here.
    assert graph.live_bytes([0, 2, 1, 3]) == [0, 10, 110, 110]


def test_is_order_checks_every_edge():
    graph = chain_and_branch()
    assert graph.is_order([0, 1, 2, 3]) and graph.is_order([0, 2, 1, 3])
    assert not graph.is_order([1, 0, 2, 3])
    assert not graph.is_order([0, 1, 2])


def test_kernel_edges_skip_non_kernel_nodes():
    graph = chain_and_branch()
    assert graph.kernel_edges() == [(1, 3), (2, 3)]
    assert [k.label for k in graph.kernels] == ["a", "b", "c"]
    assert [b.id for b in graph.transient_buffers()] == [1, 2]


def test_dynamic_sizes_count_as_zero_and_are_flagged():
    graph = chain_and_branch()
    buffers = list(graph.buffers)
    buffers[2] = Buffer(2, None, "tensor<?xi8>", "transient")
    dynamic = KernelGraph("f", graph.nodes, tuple(buffers), graph.edges)
    assert dynamic.has_dynamic_sizes and dynamic.peak_bytes() == 100
