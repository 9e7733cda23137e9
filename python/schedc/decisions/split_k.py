"""How many parts a GPU convolution's reduction is split into (split-K), as plain data.

At batch 1 a deep convolution has few outputs and a long reduction: ResNet-18's 3x3
convolution of 512 channels at 7x7 has 25,088 outputs, each a sum of 4,608 products. Its
implicit GEMM then runs as a few dozen workgroups on the H200's 132 SMs, each looping over the
whole reduction. Split into G parts over its input channels, the same convolution is a grouped
one of G times the outputs (G partial sums for each, in the accumulator's type: f32 for f16
inputs), whose workgroups fill the GPU, and a sum over the parts, into which IREE fuses the
bias and the elementwise ops after it. cuDNN splits such convolutions the same way.

`split_parts` decides G from the shape alone: the smallest power of two that brings the
outputs up to SPLIT_OUTPUTS, at most MAX_PARTS, each part keeping whole tensor-core steps of
input channels. Only convolutions like those measured are split: with a window (a 1x1
convolution is a matmul, which split-K was not measured on), at least MIN_OUT_CHANNELS output
channels and MIN_WORK multiply-adds.
"""

from __future__ import annotations

from schedc.decisions.cpu_config import OpShape

# Fitted on bench/split_k.py's synthetic convolutions (its FIT shapes), never on a held-out
# model: with them the pick was 1.009x the fastest part count measured (geometric mean), and on
# ResNet-18's convolutions, not fitted on, 1.011x (bench/README.md, "Split-K").
SPLIT_OUTPUTS = 256 * 1024
MAX_PARTS = 16
# A part's input channels: a whole number of the tensor cores' K steps (16 for f16/bf16).
PART_CHANNELS = 16
# The fewest output channels split: the fewest measured (bench/split_k.py). With fewer, an f32
# implicit GEMM is not chosen (kernel_config.IGEMM_MIN_CHANNELS_F32): a split one would run
# IREE's direct code for grouped convolutions, which was never measured.
MIN_OUT_CHANNELS = 64
# ... and the least work split: under the fewest multiply-adds measured (46.1 M, 320 -> 640
# channels at 5x5), a convolution keeps its one dispatch (and a tuned database entry its match).
MIN_WORK = 40 * 2**20
SPLIT_DTYPES = ("f16", "bf16", "f32")


def can_split(shape: OpShape, parts: int) -> bool:
    """Whether `shape` can be split into `parts` parts over its input channels. Never an f16 or
    bf16 1x1 convolution: split, it is a batch of contractions in the operand order IREE 3.13's
    tensor-core code computes wrongly (mma-operands corrects the unsplit one only); on an H200
    all 14 measured came out 0.7-1.0 off (bench/split_k.py --shapes pointwise, E7)."""
    if shape.kind != "conv" or shape.groups != 1 or shape.dtype not in SPLIT_DTYPES or parts < 2:
        return False
    if shape.kh * shape.kw == 1 and shape.dtype != "f32":
        return False
    return shape.cin % parts == 0 and (shape.cin // parts) % PART_CHANNELS == 0


def like_measured(shape: OpShape) -> bool:
    """Whether `shape` is of the kind the rule was measured on (a window, MIN_OUT_CHANNELS
    output channels, MIN_WORK multiply-adds): the rule splits no other. (f32 1x1 convolutions
    were measured too, and not taken: split, eight synthetic ones ran up to 3.8x faster, but
    MobileNetV2's held-out projections up to 1.5x slower, bench/README.md "Split-K".)"""
    return shape.kh * shape.kw > 1 and shape.cout >= MIN_OUT_CHANNELS and shape.work >= MIN_WORK


def split_parts(shape: OpShape, split_outputs: int = SPLIT_OUTPUTS, max_parts: int = MAX_PARTS) -> int:
    """The parts `shape`'s reduction is split into (1: not split); the constants are
    parameters for bench/split_k.py's fit."""
    if not like_measured(shape):
        return 1
    oh, ow = shape.out_hw
    outputs = shape.batch * shape.cout * oh * ow
    parts = 1
    while parts * 2 <= max_parts and outputs * parts < split_outputs and can_split(shape, parts * 2):
        parts *= 2
    return parts
