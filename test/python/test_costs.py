"""The roofline cost model: FLOPs and bytes of matmul, convolution, reduction and elementwise
kernels read from their dispatch bodies (and from IREE's dispatch names when the body is not in
the module), and the time a target's peaks give them."""

from __future__ import annotations

import pytest
from iree.compiler import ir

import schedc
from schedc.ir.costs import PEAKS, KernelCost, dispatch_cost, node_cost
from schedc.ir.iree import body_ops, executable_bodies, function_name, function_ops, is_dispatch
from schedc.ir.mlirio import parse_module

KERNELS = """
func.func @matmul(%a: tensor<4x16xf32>, %b: tensor<16x8xf32>) -> tensor<4x8xf32> {
  %zero = arith.constant 0.0 : f32
  %init = tensor.empty() : tensor<4x8xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%init : tensor<4x8xf32>) -> tensor<4x8xf32>
  %r = linalg.matmul ins(%a, %b : tensor<4x16xf32>, tensor<16x8xf32>) outs(%acc : tensor<4x8xf32>) -> tensor<4x8xf32>
  return %r : tensor<4x8xf32>
}
func.func @conv(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32> {
  %zero = arith.constant 0.0 : f32
  %init = tensor.empty() : tensor<1x4x6x6xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%init : tensor<1x4x6x6xf32>) -> tensor<1x4x6x6xf32>
  %r = linalg.conv_2d_nchw_fchw ins(%x, %w : tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) outs(%acc : tensor<1x4x6x6xf32>) -> tensor<1x4x6x6xf32>
  return %r : tensor<1x4x6x6xf32>
}
func.func @reduction(%x: tensor<32x64xf32>) -> tensor<32xf32> {
  %zero = arith.constant 0.0 : f32
  %init = tensor.empty() : tensor<32xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%init : tensor<32xf32>) -> tensor<32xf32>
  %r = linalg.reduce ins(%x : tensor<32x64xf32>) outs(%acc : tensor<32xf32>) dimensions = [1]
    (%in: f32, %out: f32) {
      %s = arith.addf %in, %out : f32
      linalg.yield %s : f32
    }
  return %r : tensor<32xf32>
}
func.func @elementwise(%x: tensor<16x16xf16>, %y: tensor<16x16xf16>) -> tensor<16x16xf16> {
  %r = arith.addf %x, %y : tensor<16x16xf16>
  %s = arith.mulf %r, %x : tensor<16x16xf16>
  return %s : tensor<16x16xf16>
}
"""


@pytest.fixture(scope="session")
def dispatches():
    """function name -> its one flow.dispatch; the module's executable bodies; the module
    (which must outlive its ops)."""
    module = parse_module(schedc.compile(KERNELS, emit="flow", passes="", tuning=False), "kernels.mlir", ir.Context())
    bodies = executable_bodies(module)
    found = {}
    for func in function_ops(module):
        ops = [op for op in body_ops(func) if is_dispatch(op)]
        if ops:
            (found[function_name(func)],) = ops
    return found, bodies, module


@pytest.mark.parametrize(
    "function, flops, moved, dtype",
    [
        ("matmul", 2 * 4 * 8 * 16, 4 * (4 * 16 + 16 * 8 + 4 * 8), "f32"),  # a multiply and an add per MAC
        ("conv", 2 * (4 * 6 * 6) * (3 * 3 * 3), 4 * (3 * 8 * 8 + 4 * 3 * 3 * 3 + 4 * 6 * 6), "f32"),
        ("reduction", 32 * 64, 4 * (32 * 64 + 32), "f32"),  # one add per element read
        ("elementwise", 2 * 16 * 16, 2 * 3 * 16 * 16, "f16"),  # addf and mulf, fused; f16 operands
    ],
)
def test_flops_and_bytes_come_from_the_dispatch_body(dispatches, function, flops, moved, dtype):
    found, bodies, _ = dispatches
    assert node_cost(found[function], bodies) == KernelCost(flops, moved, dtype)


@pytest.mark.parametrize(
    "function, flops",
    [("matmul", 2 * 4 * 8 * 16), ("conv", 2 * 4 * 6 * 6 * 3 * 3 * 3), ("reduction", 32 * 64), ("elementwise", 256)],
)
def test_without_the_body_the_dispatch_name_gives_the_flops(dispatches, function, flops):
    found, _, _ = dispatches
    assert dispatch_cost(found[function], {}).flops == flops  # IREE names the loop ranges


def test_views_and_non_kernels_cost_nothing():
    module = parse_module(
        """util.func public @f(%x: tensor<4x4xf32>) -> tensor<16xf32> {
          %y = flow.tensor.reshape %x : tensor<4x4xf32> -> tensor<16xf32>
          util.return %y : tensor<16xf32>
        }""", "views.mlir", ir.Context())
    (reshape,) = body_ops(function_ops(module)[0])
    assert node_cost(reshape, {}) == KernelCost(0.0, 0.0)
    assert KernelCost(0.0, 0.0).seconds(PEAKS["cuda"]) == 0.0


def test_time_is_launch_overhead_plus_the_slower_of_compute_and_memory():
    cuda = PEAKS["cuda"]
    compute_bound = KernelCost(cuda.flops["f32"], 1.0)
    assert compute_bound.seconds(cuda) == pytest.approx(cuda.launch_s + 1.0)
    memory_bound = KernelCost(1.0, cuda.bandwidth * 2)
    assert memory_bound.seconds(cuda) == pytest.approx(cuda.launch_s + 2.0)
    f16 = KernelCost(cuda.flops["f16"], 1.0, "f16")
    assert f16.seconds(cuda) == pytest.approx(cuda.launch_s + 1.0)  # tensor-core rate for f16
