"""shared-concat: the chains of concatenations one buffer holds (plain data), and a dense block
compiled for the host CPU with it, against torch and against the default pipeline."""

from __future__ import annotations

import re

import numpy as np
import torch
from torch import nn

import schedc
from schedc.compiler.driver import compile_with_options
from schedc.decisions.shared_concat import Concatenation, chains, contiguous, copied_bytes
from schedc.options import CompileOptions


def _cat(channels: list[int], pieces: tuple[int, ...], batch: int = 1) -> Concatenation:
    return Concatenation(dim=1, shape=(batch, sum(channels[p] for p in pieces), 8, 8), pieces=pieces)


def test_a_dense_block_s_concatenations_are_one_chain_and_unrelated_ones_none():
    widths = [24, 12, 12, 12, 12]
    block = [_cat(widths, (0, 1)), _cat(widths, (0, 1, 2)), _cat(widths, (0, 1, 2, 3)), _cat(widths, (0, 1, 2, 3, 4))]
    assert chains(block) == [[0, 1, 2, 3]]
    assert copied_bytes(block, [0, 1, 2, 3], 4) == (36 + 48 + 60) * 64 * 4  # the three the buffer replaces
    # a concatenation that does not begin with the chain's pieces, in order, stays out of it
    assert chains([_cat(widths, (0, 1)), _cat(widths, (1, 0, 2)), _cat(widths, (0, 1, 2))]) == [[0, 2]]
    # two blocks: two chains
    assert chains(block[:2] + [_cat(widths, (3, 4)), _cat(widths, (3, 4, 2))]) == [[0, 1], [2, 3]]
    # along another dimension, or with a batch of two (slices not contiguous), or alone: none
    assert chains([Concatenation(2, (1, 36, 16, 8), (0, 1)), Concatenation(1, (1, 48, 8, 8), (0, 1, 2))]) == []
    assert chains([_cat(widths, (0, 1), batch=2), _cat(widths, (0, 1, 2), batch=2)]) == []
    assert chains(block[:1]) == []
    assert not contiguous((1, -1, 8, 8), 1) and contiguous((1, 36, 8, 8), 1) and not contiguous((2, 36, 8, 8), 1)


class DenseBlock(nn.Module):
    """Three layers of DenseNet-BC's block: each reads the concatenation of all earlier outputs."""

    def __init__(self, channels: int = 8, growth: int = 4):
        super().__init__()
        self.layers = nn.ModuleList()
        for i in range(3):
            c = channels + i * growth
            self.layers.append(nn.Sequential(nn.BatchNorm2d(c), nn.ReLU(), nn.Conv2d(c, 2 * growth, 1, bias=False),
                                             nn.BatchNorm2d(2 * growth), nn.ReLU(), nn.Conv2d(2 * growth, growth, 3, padding=1, bias=False)))

    def forward(self, x):
        features = [x]
        for layer in self.layers:
            features.append(layer(torch.cat(features, 1)))
        return torch.cat(features, 1)


def _updates(result) -> int:
    """The module's copies into other tensors (IREE's `flow.tensor.update`s)."""
    text = result.output if isinstance(result.output, str) else result.output.decode()
    return len(re.findall(r"flow\.tensor\.update ", text))


def test_a_dense_block_on_the_cpu_matches_torch_and_copies_each_piece_once(tmp_path):
    torch.manual_seed(0)
    model = DenseBlock().eval()
    for m in model.modules():
        if isinstance(m, nn.BatchNorm2d):
            m.running_mean.uniform_(-0.1, 0.1)
            m.running_var.uniform_(0.5, 1.5)
    image = torch.randn(1, 8, 12, 12)
    with torch.no_grad():
        reference = model(image).numpy()
    mlir = schedc.import_torch(model, image)
    passes = "shared-concat,memory-order,arena-plan"
    shared = compile_with_options(mlir, CompileOptions(target="llvm-cpu", emit="flow", passes=passes))
    apart = compile_with_options(mlir, CompileOptions(target="llvm-cpu", emit="flow"))  # named only: not in the default
    (record,) = shared.records["shared-concat"].values()
    assert record["chains"] == [3] and record["concatenations"] == 3
    assert record["copied_bytes_saved"] == (12 + 16) * 12 * 12 * 4
    assert not apart.records.get("shared-concat")
    # the block's four pieces each go into the buffer once; apart, 2 + 3 + 4 copies into the three concatenations
    assert _updates(shared) == 4 and _updates(apart) == 9
    path = tmp_path / "m.vmfb"
    path.write_bytes(schedc.compile(mlir, target="llvm-cpu", passes=passes))
    output = np.asarray(schedc.load(str(path)).forward(image.numpy()))
    assert np.abs(output - reference).max() / np.abs(reference).max() <= 1e-5
