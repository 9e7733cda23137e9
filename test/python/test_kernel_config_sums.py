"""The sums of split-k's parts (schedc.decisions.kernel_config.sums): which dispatches are one,
the coalesced config they get, and the cuda compile that writes it."""

from __future__ import annotations

import pytest
import torch
from torch import nn

import schedc
from schedc.compiler.driver import compile_with_options
from schedc.decisions.kernel_config import KernelSignature, heuristic_config
from schedc.decisions.kernel_config.sums import SUM_THREADS, parts_sum_config, parts_sum_form
from schedc.options import CompileOptions


def _affine(count: int, results) -> str:
    dims = ", ".join(f"d{i}" for i in range(count))
    return f"affine_map<({dims}) -> ({', '.join(f'd{i}' for i in results)})>"


def _sum(outputs: tuple[int, ...], parts: int, reads=None) -> KernelSignature:
    """A sum over a leading loop of `parts`: loops (outputs..., g), input [g, outputs...]."""
    k = len(outputs)
    reads = reads if reads is not None else [k, *range(k)]
    return KernelSignature(
        key="k", kind="reduction", root="linalg.generic", loops=(*outputs, parts),
        iterators=("parallel",) * k + ("reduction",), indexing_maps=(_affine(k + 1, reads), _affine(k + 1, range(k))),
        operand_shapes=((parts, *outputs), outputs), element_type="f32", fused=("linalg.fill", "linalg.generic"))


@pytest.mark.parametrize("outputs, parts, workgroup", [
    ((512, 7, 7), 16, (4, 7, 7)),  # ResNet-18's deepest: 196 threads along 4 channels' 49 pixels
    ((64, 56, 56), 2, (1, 4, 56)),  # 224 threads: four whole rows
    ((128, 28, 28), 4, (1, 7, 28)),
    ((256, 14, 14), 8, (1, 14, 14)),
    ((64, 256), 16, (1, 256)),  # a split matmul's: a row of 256 columns
    ((197, 768), 4, (1, 256)),  # part of a longer row
])
def test_consecutive_threads_take_consecutive_outputs_and_sum_their_parts_serially(outputs, parts, workgroup):
    config = parts_sum_config(_sum(outputs, parts))
    assert config.workgroup == (*workgroup, 0) and config.reduction == (0,) * len(outputs) + (parts,)
    assert set(config.thread[:-1]) == {1} and config.workgroup_size <= SUM_THREADS
    assert all(extent % tile == 0 for extent, tile in zip(outputs, workgroup))  # whole tiles only
    assert heuristic_config(_sum(outputs, parts)) == config


def test_only_a_sum_over_a_short_leading_loop_is_one():
    assert parts_sum_form(_sum((64, 56, 56), 2))
    assert not parts_sum_form(_sum((64, 56, 56), 2, reads=[0, 1, 2, 3]))  # the reduced loop innermost: a row reduction
    assert not parts_sum_form(_sum((64, 256), 1024))  # a long reduction is not a sum of parts
    assert parts_sum_config(_sum((64, 256), 1024)) is None
    assert parts_sum_config(_sum((4, 1009), 4)) is None  # no whole tile of a prime row past 256 fills a subgroup


def test_the_cuda_compile_gives_a_split_convolution_s_sum_its_config(monkeypatch):
    from schedc.decisions import triton_conv as rule

    torch.manual_seed(0)
    model = nn.Sequential(nn.Conv2d(512, 512, 3, padding=1), nn.BatchNorm2d(512), nn.ReLU()).eval().half()
    mlir = schedc.import_torch(model, torch.randn(1, 512, 7, 7, dtype=torch.float16))
    # split-k's 16 parts (the Triton kernel, which would take the convolution in 8, off)
    result = compile_with_options(mlir, CompileOptions(target="cuda", passes="triton-conv{enabled=false},memory-order,arena-plan"))
    (sum_,) = [k for k in result.records["kernel-config"]["module"]["kernels"] if k["kind"] == "reduction"]
    # (IREE collapses the plane here: no padded consumer reads it by rows)
    assert sum_["signature"] == "reduction 512x49x16 f32" and sum_["source"] == "heuristic"
    assert sum_["config"] == "wg 4x49 k 16 th 1x1"
    monkeypatch.setattr(rule, "EPILOGUES", True)
    monkeypatch.setattr(rule, "SERIAL_SUM", True)
    result = compile_with_options(mlir, CompileOptions(target="cuda"))  # the Triton kernel sums its 8 parts itself
    assert not [k for k in result.records["kernel-config"]["module"]["kernels"] if k["kind"] == "reduction"]
    monkeypatch.setattr(rule, "SERIAL_SUM", False)  # its 8 parts summed after it: that sum is configured too
    result = compile_with_options(mlir, CompileOptions(target="cuda"))
    (sum_,) = [k for k in result.records["kernel-config"]["module"]["kernels"] if k["kind"] == "reduction"]
    assert sum_["signature"] == "reduction 512x49x8 f32" and sum_["source"] == "heuristic"
