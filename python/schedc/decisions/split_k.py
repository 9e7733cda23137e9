"""How many parts a GPU convolution's reduction is split into (split-K), as plain data.

At batch 1 a deep convolution has few outputs and a long reduction: ResNet-18's 3x3
convolution of 512 channels at 7x7 has 25,088 outputs, each a sum of 4,608 products. Its
implicit GEMM then runs as a few dozen workgroups on the H200's 132 SMs, each looping over the
whole reduction. Split into G parts over its input channels, the same convolution is a grouped
one of G times the outputs (G partial sums for each, in the accumulator's type: f32 for f16
inputs), whose workgroups fill the GPU, and a sum over the parts, into which IREE fuses the
bias and the elementwise ops after it. cuDNN splits such convolutions the same way.

A weight gradient is a convolution whose window is the forward output's plane (8x8 to 32x32)
and whose output the 3x3 filter, summed over the batch too: the CNN training step's
128 -> 128 one has 147,456 outputs, each a sum of 4 x 8 x 8 products, its first layer's 864,
each a sum of 4 x 32 x 32, and IREE gives each thread one whole sum. `window_parts` splits
such a convolution over its window's rows instead (it has too few input channels, the batch,
to split over): part g sums rows g*R..g*R+R-1.

`split_parts` decides G from the shape alone: the smallest power of two that brings the
outputs up to SPLIT_OUTPUTS, at most MAX_PARTS, each part keeping whole tensor-core steps of
input channels. Only convolutions like those measured are split:
- with a window: at least MIN_OUT_CHANNELS output channels and MIN_WORK multiply-adds;
- 1x1 in f16 (a bottleneck's projection: few pixels, many input channels), up to
  POINTWISE_SPLIT_OUTPUTS, of stride 1, at least POINTWISE_MIN_CHANNELS input channels,
  MIN_OUT_CHANNELS output channels and POINTWISE_MIN_WORK multiply-adds (`pointwise_f16`,
  split-k's `pointwise` option, on by default). Until the fifteenth session a whole held-out
  MobileNetV2 came out wrong with them split (1.0 off the model in f64, against 0.36 whole):
  one part's config stepped past its 48 input channels (kernel_config's K steps of a batched
  contraction now divide its K), and split it is as close to f64 as whole. (f32 1x1
  convolutions stay whole: split, MobileNetV2's held-out projections ran up to 1.5x slower.)

A matmul (a Linear layer: rows x K times K x N) is a 1x1 convolution over its rows, and an f16
one is split by the same rule with its own constants, fitted on synthetic Linear layers
(`matmul_parts`, split-k's `matmuls` option, on by default): a transformer's MLP down
projection at batch 1 (49-197 rows, K 688-1,536, N 192-384) whole ran 2.0-3.4x cuBLAS's time
(eighteenth session). Batch matmuls (attention's) stay whole.
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
# f16 1x1 convolutions, fitted on bench/split_k.py's FIT_POINTWISE (synthetic: 384-1536
# input channels at 4x4-12x12): with these the pick was the fastest part count measured on all
# eight, and within 1.05x of it on the six held-out ones (MobileNetV2's and SqueezeNet's), where
# whole they ran up to 3.7x slower (bench/README.md, "f16 1x1 projections split").
POINTWISE_SPLIT_OUTPUTS = 128 * 1024
POINTWISE_MIN_CHANNELS = 256  # the fewest measured: 384
POINTWISE_MIN_WORK = 3 * 2**20  # under the fewest measured: 3.5 M (768 -> 128 at 6x6)
POINTWISE_DTYPES = ("f16",)  # bf16 ones were never measured split
# f16 matmuls (Linear layers), fitted on bench/split_k.py's FIT_MATMUL (14 synthetic ones, K
# 256-4,096, 16-256 rows; H100): parts double while the outputs stay under MATMUL_SPLIT_OUTPUTS,
# from a K of MATMUL_MIN_K. With them the pick was 1.015x the fastest part count measured
# (geometric mean; the pointwise constants: 1.162x, whole: 1.426x), and on nine held-out Linear
# layers (GPT-2's, ViT's, ConvNeXt's), not fitted on, 1.020x (whole: 1.203x). Every K of 256 or
# 384 ran fastest whole.
MATMUL_SPLIT_OUTPUTS = 512 * 1024
MATMUL_MIN_K = 768
# Only matmuls whose rows fill whole tensor-core tiles (16 rows) are split: a held-out ViT f16
# came out NaN with its 197-row down projections in 8 or 16 parts (H100), though the same split
# is right on the CPU, the same layer alone is right on the GPU, and ConvNeXt's 196- and 49-row
# ones were right in the model. Until the cause is known, padded rows keep the matmul whole.
MATMUL_ROW_TILE = 16


# A weight gradient: its window has more positions than its output plane (a forward
# convolution's window is smaller than its output, but at a 1x1 or 2x2 output).
WINDOW_OVER_OUTPUT = 4
# A part's window rows: at least two. With one, IREE folds the row loop away and gives the
# parts of the training step's 32 -> 64 weight gradient a VectorDistribute config that its CUDA
# code generation then fails to lower (IREE 3.13, its own config).
MIN_PART_ROWS = 2


def window_parts(shape: OpShape, split_outputs: int = 0) -> int:
    """The parts a weight gradient's window rows are split into (1: not split, or not a weight
    gradient): the smallest power of two dividing the rows that brings the outputs up to
    SPLIT_OUTPUTS, each part at least MIN_PART_ROWS rows."""
    if shape.kind != "conv" or shape.groups != 1 or shape.dtype not in SPLIT_DTYPES:
        return 1
    oh, ow = shape.out_hw
    if shape.kh * shape.kw < WINDOW_OVER_OUTPUT * oh * ow:
        return 1
    outputs = shape.batch * shape.cout * oh * ow
    parts = 1
    while outputs * parts < (split_outputs or SPLIT_OUTPUTS) and shape.kh % (parts * 2 * MIN_PART_ROWS) == 0:
        parts *= 2
    return parts


def can_split(shape: OpShape, parts: int) -> bool:
    """Whether `shape` can be split into `parts` parts over its input channels. (An f16 1x1
    convolution split is a batch of contractions whose inputs mma-operands puts in the order
    IREE's tensor-core code computes right, as for the unsplit one.)"""
    if shape.kind != "conv" or shape.groups != 1 or shape.dtype not in SPLIT_DTYPES or parts < 2:
        return False
    return shape.cin % parts == 0 and (shape.cin // parts) % PART_CHANNELS == 0


def as_pointwise(shape: OpShape) -> OpShape | None:
    """A matmul (not batched) as the 1x1 convolution over its rows it is: M pixels, K input
    channels, N output channels. None for any other op."""
    if shape.kind != "matmul" or shape.batch != 1:
        return None
    return OpShape("conv", shape.dtype, cin=shape.k, cout=shape.n, h=shape.m, w=1)


def matmul_parts(shape: OpShape, parts: int = 0, split_outputs: int = 0) -> int:
    """The parts a matmul's reduction is split into (1: not split): `parts` where its K
    divides into that many whole tensor-core steps, else (0) the f16 1x1 convolutions' rule
    (`split_parts` with `pointwise_f16`) for the 1x1 convolution it is, with its own
    constants: from a K of MATMUL_MIN_K, up to MATMUL_SPLIT_OUTPUTS outputs (`split_outputs`:
    a parameter for bench/split_k.py's fit), rows in whole MATMUL_ROW_TILEs."""
    pointwise_shape = as_pointwise(shape)
    if pointwise_shape is None:
        return 1
    if parts:
        return parts if can_split(pointwise_shape, parts) else 1
    if shape.k < MATMUL_MIN_K or shape.m % MATMUL_ROW_TILE:
        return 1
    return split_parts(pointwise_shape, split_outputs or MATMUL_SPLIT_OUTPUTS, pointwise_f16=True)


def pointwise(shape: OpShape) -> bool:
    return shape.kh * shape.kw == 1


def like_measured(shape: OpShape, pointwise_f16: bool = False) -> bool:
    """Whether `shape` is of a kind the rule was measured on (see the module docstring): the
    rule splits no other. 1x1 convolutions only with `pointwise_f16`."""
    if shape.cout < MIN_OUT_CHANNELS:
        return False
    if not pointwise(shape):
        return shape.work >= MIN_WORK
    return (pointwise_f16 and shape.dtype in POINTWISE_DTYPES and shape.stride == (1, 1) and shape.cin >= POINTWISE_MIN_CHANNELS
            and shape.work >= POINTWISE_MIN_WORK)


def split_parts(shape: OpShape, split_outputs: int = 0, max_parts: int = MAX_PARTS, pointwise_f16: bool = False) -> int:
    """The parts `shape`'s reduction is split into (1: not split); the constants are
    parameters for bench/split_k.py's fit (0: SPLIT_OUTPUTS, or POINTWISE_SPLIT_OUTPUTS)."""
    if not like_measured(shape, pointwise_f16):
        return 1
    split_outputs = split_outputs or (POINTWISE_SPLIT_OUTPUTS if pointwise(shape) else SPLIT_OUTPUTS)
    oh, ow = shape.out_hw
    outputs = shape.batch * shape.cout * oh * ow
    parts = 1
    while parts * 2 <= max_parts and outputs * parts < split_outputs and can_split(shape, parts * 2):
        parts *= 2
    return parts


WINDOW_ROWS, INPUT_CHANNELS = "window rows", "input channels"


def choose_split(shape: OpShape, parts: int = 0, rows: int = 0, window: bool = True, pointwise_f16: bool = False,
                 chosen: bool = True) -> tuple[int, str]:
    """How split-k splits `shape`: (parts, WINDOW_ROWS or INPUT_CHANNELS), or (1, "") for not.
    Forced counts first, on any target: `rows` splits each weight gradient whose window rows
    divide into that many, `parts` each convolution whose input channels do. Else, where splits
    are `chosen` (cuda, where they were measured): a weight gradient over its window rows
    (`window_parts`, unless not `window`), any other convolution by `split_parts`."""
    rows_parts = window_parts(shape)
    weight_gradient = rows_parts > 1
    if rows and weight_gradient:
        return (rows, WINDOW_ROWS) if shape.kh % rows == 0 else (1, "")
    if parts:
        return (parts, INPUT_CHANNELS) if can_split(shape, parts) else (1, "")
    if not chosen:
        return 1, ""
    if weight_gradient:
        return (rows_parts, WINDOW_ROWS) if window else (1, "")
    count = split_parts(shape, pointwise_f16=pointwise_f16)
    return (count, INPUT_CHANNELS) if count > 1 and can_split(shape, count) else (1, "")
