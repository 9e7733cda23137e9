"""padded-producers: which padded tensors their producer writes into the padded buffer
(schedc.decisions.padded_producers), and what that leaves of IREE's padding copies."""

from __future__ import annotations

import re
from dataclasses import replace

import pytest
import torch

from schedc.decisions.padded_producers import PaddedConcatenation, PaddedSource, concatenation_qualifies, qualifies

RESIDUAL = PaddedSource(shape=(64, 56, 56), low=(0, 1, 1), high=(0, 1, 1), produced_by_kernel=True, pads=1,
                        other_readers=("elementwise",))


def test_a_residual_block_s_input_is_written_padded():
    assert qualifies(RESIDUAL)
    assert qualifies(replace(RESIDUAL, other_readers=("elementwise", "linalg", "slice")))


@pytest.mark.parametrize("change, why", [
    ({"other_readers": ()}, "the pad alone reads it: IREE writes it padded itself"),
    ({"pads": 2}, "two pads: only one can own the buffer"),
    ({"produced_by_kernel": False}, "a function argument or a reshape: no dispatch to store into the padded buffer"),
    ({"other_readers": ("elementwise", "tensor.collapse_shape")}, "a reshape of the slice would be copied out"),
    ({"other_readers": ("output",)}, "an op writing into it needs it whole"),
    ({"other_readers": ("dynamic slice",)}, "a slice at dynamic offsets"),
    ({"other_readers": ("permuted elementwise",)}, "a transposing sum: IREE would no longer fuse it into its producer"),
    ({"other_readers": ("hal.tensor.barrier",)}, "a function result"),
    ({"shape": (1, 64, 56, 56), "low": (0, 0, 1, 1), "high": (0, 0, 1, 1)}, "an unpadded unit dimension"),
    ({"shape": (64, -1, 56)}, "a dynamic size"),
    ({"low": (0, 0, 0), "high": (0, 0, 0)}, "no padding"),
])
def test_what_is_left_to_iree(change, why):
    assert not qualifies(replace(RESIDUAL, **change)), why


# A SqueezeNet fire's output, 64 + 64 channels at 55x55, that a max pool (ceil mode) pads
FIRE = PaddedConcatenation(shape=(128, 55, 55), low=(0, 0, 0), high=(0, 2, 2),
                           pieces=(((0, 0, 0), (64, 55, 55)), ((64, 0, 0), (64, 55, 55))),
                           into_empty=True, pieces_fit=True, read_once=True)


def test_a_concatenation_a_pool_pads_is_written_padded():
    assert concatenation_qualifies(FIRE)
    three = replace(FIRE, pieces=(((0, 0, 0), (32, 55, 55)), ((32, 0, 0), (32, 55, 55)), ((64, 0, 0), (64, 55, 55))))
    assert concatenation_qualifies(three)


@pytest.mark.parametrize("change, why", [
    ({"pieces": (((0, 0, 0), (64, 55, 55)),)}, "one piece: the pad's source is a plain insert"),
    ({"pieces": (((0, 0, 0), (64, 55, 55)), ((32, 0, 0), (96, 55, 55)))}, "overlapping pieces: the later wins"),
    ({"pieces": (((0, 0, 0), (64, 55, 55)), ((64, 0, 0), (32, 55, 55)))}, "a gap: the empty's contents are read"),
    ({"pieces": (((0, 0, 0), (64, 55, 55)), ((100, 0, 0), (64, 55, 55)))}, "a piece past the end"),
    ({"into_empty": False}, "inserts into a tensor with contents"),
    ({"pieces_fit": False}, "a reshape that merges sized dimensions"),
    ({"read_once": False}, "the concatenation is read by another op too"),
    ({"high": (0, 0, 0)}, "no padding"),
    ({"shape": (128, -1, 55)}, "a dynamic size"),
])
def test_which_concatenations_stay(change, why):
    assert not concatenation_qualifies(replace(FIRE, **change)), why


class _Block(torch.nn.Module):
    """A ResNet basic block after a stem: its input read by the padded 3x3 convolution and by
    the residual sum; a SqueezeNet fire's squeeze output read by a 1x1 and a padded 3x3, and its
    concatenated expansions read by a max pool that pads."""

    def __init__(self):
        super().__init__()
        self.stem = torch.nn.Conv2d(3, 8, 1)
        self.a = torch.nn.Conv2d(8, 8, 3, padding=1)
        self.b = torch.nn.Conv2d(8, 8, 3, padding=1)
        self.squeeze = torch.nn.Conv2d(8, 4, 1)
        self.e1 = torch.nn.Conv2d(4, 8, 1)
        self.e3 = torch.nn.Conv2d(4, 8, 3, padding=1)

    def forward(self, x):
        y = torch.relu(self.stem(x))
        y = torch.relu(self.b(torch.relu(self.a(y))) + y)
        s = torch.relu(self.squeeze(y))
        fire = torch.relu(torch.cat([self.e1(s), self.e3(s)], 1))
        return torch.nn.functional.max_pool2d(fire, 3, 2, ceil_mode=True)


def _copies(flow: str) -> int:
    return len(re.findall(r"flow\.dispatch @\S*slow_memcpy", flow))


def test_a_cuda_compile_writes_the_padded_buffers_in_their_producers():
    import schedc

    torch.manual_seed(0)
    mlir = schedc.import_torch(_Block().eval(), torch.randn(1, 3, 12, 12))
    result = schedc.compile(mlir, target="cuda", emit="flow")
    without = schedc.compile(mlir, target="cuda", emit="flow", passes="padded-producers{enabled=false},memory-order,arena-plan")
    # the block's input beside the residual sum, the squeeze output beside the 1x1, the fire's
    # concatenation into the pool's padded buffer
    assert _copies(without) == 3
    assert _copies(result) == 1  # the second half of the concatenation
    schedc.compile(mlir, target="cuda")  # and IREE generates code for the dispatches that store into the padded buffers
