"""strided-slices: which strided reads of a contraction become a strided slice
(schedc.decisions.strided_slices), what the slice computes, and what a cuda compile makes of it."""

from __future__ import annotations

import re

import numpy as np
import pytest
import torch

from schedc.decisions.kernel_config import map_terms
from schedc.decisions.strided_slices import slice_strides


def _strides(text: str, reduction: bool = True):
    return slice_strides(map_terms(text), reduction)


def test_a_strided_1x1_convolution_s_image_is_sliced():
    assert _strides("affine_map<(d0, d1, d2, d3) -> (d3, d1 * 2, d2 * 2)>") == (1, 2, 2)
    assert _strides("affine_map<(d0, d1, d2, d3, d4) -> (d0, d4, d2 * 3, d3)>") == (1, 1, 3, 1)


@pytest.mark.parametrize("text, reduction, why", [
    ("affine_map<(d0, d1, d2, d3) -> (d3, d1, d2)>", True, "no stride: nothing to slice"),
    ("affine_map<(d0, d1, d2, d3, d4, d5) -> (d3, d1 * 2 + d4, d2 * 2 + d5)>", True, "a window (a sum): a convolution, not a stride"),
    ("affine_map<(d0, d1, d2) -> (d0, d1 * 2, d2 * 2)>", False, "no reduction: a strided copy, not a contraction"),
    ("affine_map<(d0, d1, d2, d3) -> (d3, d1 * 2, d1 * 2)>", True, "a loop read twice (a diagonal): no slice reads it"),
    ("affine_map<(d0, d1, d2, d3) -> (d3, 2, d2)>", True, "a constant index"),
])
def test_what_is_left_alone(text, reduction, why):
    assert _strides(text, reduction) is None, why


SHORTCUT = """
func.func @shortcut(%x: tensor<8x6x6xf32>, %w: tensor<16x8xf32>) -> tensor<16x3x3xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<16x3x3xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<16x3x3xf32>) -> tensor<16x3x3xf32>
  %c = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d3)>, affine_map<(d0, d1, d2, d3) -> (d3, d1 * 2, d2 * 2)>,
                                        affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>],
                       iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%w, %x : tensor<16x8xf32>, tensor<8x6x6xf32>) outs(%z : tensor<16x3x3xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %m = arith.mulf %a, %b : f32
    %s = arith.addf %o, %m : f32
    linalg.yield %s : f32
  } -> tensor<16x3x3xf32>
  return %c : tensor<16x3x3xf32>
}
"""


def test_the_sliced_contraction_computes_the_strided_one_and_iree_loads_the_slice_strided():
    import schedc

    rng = np.random.default_rng(0)
    x, w = rng.standard_normal((8, 6, 6), dtype=np.float32), rng.standard_normal((16, 8), dtype=np.float32)
    expected = np.einsum("ok,khw->ohw", w, x[:, ::2, ::2])
    passes = "strided-slices,memory-order,arena-plan"  # named: on llvm-cpu it is not implicit
    out = schedc.load(schedc.compile(SHORTCUT, target="llvm-cpu", passes=passes)).shortcut(x, w)
    np.testing.assert_allclose(np.asarray(out), expected, rtol=1e-5, atol=1e-5)
    flow = schedc.compile(SHORTCUT, target="llvm-cpu", passes=passes, emit="flow")
    assert "d1 * 2, d2 * 2" not in flow
    assert re.search(r"dispatch\.tensor\.load %\w+, offsets = \[0, 0, 0\], sizes = \[8, 3, 3\], strides = \[1, 2, 2\]", flow)


class _Bottleneck(torch.nn.Module):
    """A ResNet-50 bottleneck that downsamples: its shortcut a 1x1 convolution of stride 2 over
    the block's input, which IREE's global optimization leaves as a contraction with a strided
    indexing map."""

    def __init__(self):
        super().__init__()
        self.stem = torch.nn.Conv2d(3, 16, 1)
        self.a, self.b, self.c = torch.nn.Conv2d(16, 8, 1), torch.nn.Conv2d(8, 8, 3, stride=2, padding=1), torch.nn.Conv2d(8, 32, 1)
        self.shortcut = torch.nn.Conv2d(16, 32, 1, stride=2)

    def forward(self, x):
        y = torch.relu(self.stem(x))
        return torch.relu(self.c(torch.relu(self.b(torch.relu(self.a(y))))) + self.shortcut(y))


def test_a_cuda_compile_reads_the_shortcut_s_image_through_a_strided_load_and_gives_it_tensor_cores():
    import schedc
    from schedc.compiler.driver import compile_with_options
    from schedc.options import CompileOptions

    torch.manual_seed(0)
    mlir = schedc.import_torch(_Bottleneck().eval().half(), torch.randn(1, 3, 16, 16).half())
    without = compile_with_options(mlir, CompileOptions(target="cuda", emit="flow", passes="strided-slices{enabled=false},memory-order,arena-plan"))
    assert "d1 * 2, d2 * 2)" in without.output  # IREE's strided map
    assert "MMA" not in _shortcut_config(without)  # SIMT tiles: no tensor-core config takes a strided map
    result = compile_with_options(mlir, CompileOptions(target="cuda", emit="flow"))
    flow = result.output
    assert "d1 * 2, d2 * 2)" not in flow
    assert re.search(r"sizes = \[16, 8, 8\], strides = \[1, 2, 2\]", flow)
    assert result.records["strided-slices"] == {"forward$async": {"strided_reads_sliced": 1}}
    assert "NV_MMA_SYNC" in _shortcut_config(result)  # tensor cores


def _shortcut_config(result) -> str:
    (config,) = [k["config"] for k in result.records["kernel-config"]["module"]["kernels"] if k["signature"] == "matmul_like 32x8x8x16 f16"]
    return config
