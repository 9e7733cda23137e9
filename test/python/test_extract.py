"""The kernel graph built from flow-phase IR: what ops nested in regions use."""

from __future__ import annotations

from iree.compiler import ir

from schedc.ir.extract import build_kernel_graph
from schedc.ir.iree import function_ops
from schedc.ir.mlirio import parse_module

CAPTURES = """
util.func public @captures(%arg0: tensor<4xf32>, %cond: i1) -> tensor<4xf32> {
  %a = flow.dispatch @ex::@a(%arg0) : (tensor<4xf32>) -> tensor<4xf32>
  %r = scf.if %cond -> tensor<4xf32> {
    %inner = flow.dispatch @ex::@b(%a) : (tensor<4xf32>) -> tensor<4xf32>
    scf.yield %inner : tensor<4xf32>
  } else {
    scf.yield %a : tensor<4xf32>
  }
  util.return %r : tensor<4xf32>
}
"""


def test_a_region_uses_only_the_values_it_captures():
    """Regression: values defined inside a nested region were counted as uses of the op that
    holds the region, and got buffers of their own."""
    module = parse_module(CAPTURES, "captures.mlir", ir.Context())
    graph = build_kernel_graph(function_ops(module)[0])
    a, branch = graph.nodes[0], graph.nodes[1]
    assert branch.op == "scf.if"
    assert branch.uses == a.defines  # %a from outside; not %inner, defined inside
    assert [b.type for b in graph.buffers] == ["tensor<4xf32>"] * 3  # %arg0, %a, %r
    assert (0, 1) in graph.edges
