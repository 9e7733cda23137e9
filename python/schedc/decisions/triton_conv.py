"""The tiles of schedc's CUDA convolution kernel for one convolution (plain data in, plain data
out; schedc.kernels.triton_conv has the kernel).

A workgroup computes a `bm` x `bn` tile of the implicit GEMM (output pixels x output channels)
over the channels, `bk` at a time. Where the tiles are too few to fill the GPU, the channels are
split in parts (f32 partial sums, added after), as split-k does for IREE's kernels.
"""

from __future__ import annotations

from dataclasses import dataclass, replace


@dataclass(frozen=True)
class ConvSizes:
    """One convolution: an NCHW image n x c x h x w (unpadded), an FCHW filter f x c x r x s,
    an NCHW output n x f x oh x ow; `padding` rows above and columns left of the image are
    read as zeros (and any below or right of it that the output's size reaches)."""
    n: int
    c: int
    h: int
    w: int
    f: int
    r: int
    s: int
    oh: int
    ow: int
    stride: tuple[int, int] = (1, 1)
    padding: tuple[int, int] = (0, 0)
    dilation: tuple[int, int] = (1, 1)
    dtype: str = "f16"  # the image's and the filter's: f16, bf16, or f32 (multiplied in TF32)
    out_dtype: str = "f32"  # the output's: f32, or the image's type where only its cast reads it

    @property
    def work(self) -> int:
        """Multiply-adds: the product of the convolution's loop bounds."""
        return self.n * self.f * self.oh * self.ow * self.c * self.r * self.s

    @property
    def key(self) -> str:
        return (f"conv_{self.n}x{self.c}x{self.h}x{self.w}_{self.f}x{self.r}x{self.s}_s{self.stride[0]}x{self.stride[1]}"
                f"_p{self.padding[0]}x{self.padding[1]}_d{self.dilation[0]}x{self.dilation[1]}_{self.dtype}_{self.out_dtype}")


@dataclass(frozen=True)
class ConvTiles:
    bm: int  # output pixels a workgroup
    bn: int  # output channels a workgroup
    bk: int  # channels a step
    warps: int
    stages: int
    split: int = 1  # parts of the channels (f32 partial sums)



# The SMs of the GPUs the rule was fitted on (an H100 SXM has 132, an H200 too).
SMS = 132
# A rule fitted by hand on bench/fitting.py's synthetic convolutions, timed over a space of
# tiles on an H200 (bench/README.md, "schedc's convolution kernel in Triton, timed"), each tile
# shape (pixels, channels, warps, pipeline stages):
# - under 16 channels (an image's stem) the GEMM is short: STEM_TILES, 16 channels a step;
# - else WIDE_TILES while they fill FILL_TILES of the SMs;
# - where they do not, the channels are split in parts (PART_TILES) that fill them, each keeping
#   at least MIN_PART_PRODUCTS of the GEMM's depth (channels x window positions) and
#   MIN_PART_CHANNELS channels;
# - and without parts, FEW_TILES.
# (The constants are what bench/generalization.py --constants sets to judge a refit.)
STEM_TILES = (128, 32, 8, 4)
WIDE_TILES = (32, 64, 4, 3)
PART_TILES = (32, 64, 4, 3)
FEW_TILES = (32, 32, 8, 4)
FILL_TILES = 0.7
MIN_PART_PRODUCTS = 576
MIN_PART_CHANNELS = 32
MAX_PARTS = 8
# The shared memory a workgroup's pipeline may take without asking the driver for more (CUDA's
# default limit for dynamic shared memory; whether IREE's runtime raises it is not measured).
SHARED_BYTES = 48 * 1024


# Whether the kernel reads an NHWC image (transposed where IREE makes it, in the same dispatch)
# and an RSCF filter (transposed once, at load), its loads a step's channels side by side, or
# the NCHW image and FCHW filter as torch lays them out (pixels side by side, loaded one by one).
# NHWC: the rule's choice with it against without, replayed f16 held-out models in one call on
# an H100 (twenty-fifth session, ms): ResNet-18 0.302 -> 0.227, ResNet-50 1.753 -> 1.575,
# SqueezeNet 0.220 -> 0.218, MobileNetV2 0.339 -> 0.336 (no convolution taken); never slower.
CHANNELS_LAST = True


# Whether an unsplit kernel runs the elementwise ops after its convolution (a bias, a batch
# norm, a residual sum, an activation: schedc.ir.triton_conv.epilogue_chain) before its store,
# instead of leaving them to a dispatch of IREE's that reads its f32 result again
# (`triton-conv{epilogues=true}` turns this and SERIAL_SUM on whatever they say). Held-out f16
# models replayed on an H100, on against off in one process (twenty-seventh session, ms):
# SqueezeNet 0.205 -> 0.174, MobileNetV2 0.313 -> 0.307, ResNet-50 0.446 -> 0.450, ResNet-18 0.207 ->
# 0.208, ConvNeXt and ShuffleNetV2 unchanged; every output as close to the model in f64 as before.
EPILOGUES = True
# Whether a split kernel sums its parts itself (the last of a tile's workgroups to finish adds
# them, then runs the epilogue: schedc.kernels.triton_conv._SERIAL_SOURCE), instead of writing them
# for a sum of IREE's after it. Only with EPILOGUES.
SERIAL_SUM = True


# Which convolutions the kernel takes: on the fitting set, timed layer by layer on an H200 against
# IREE's kernels as schedc configures them (f16), the Triton kernel was faster on 11 of the 13
# with a window of more than one position and 16 or more channels (at most 1.04x slower on the
# other 2), slower on 9 of the 13 1x1 ones (up to 2.04x), and on its two 3-channel stems 1.25x
# slower (7x7) and 0.98x (3x3). bf16 follows the same rule, not timed apart; f32 in TF32 takes
# every convolution (`takes_every_f32`).
MIN_CHANNELS = 16
# A 1x1 convolution the kernel takes all the same (0: none): at least DEEP_1X1_CHANNELS input
# channels over at most DEEP_1X1_PIXELS output pixels. From the fitting set channels last (H100,
# twenty-fifth session): the kernel beat IREE's on its two 1x1s of 480 and 1200 channels over 144
# and 64 pixels (13.3 against 16.8 us, 14.0 against 24.6), tied at 400 channels and lost on the
# rest. Judged on held-out f16 models replayed on an H100, on against off in one call (twenty-sixth
# session, ms): ResNet-50 0.658 -> 0.495 (reduce-overhead 0.581), MobileNetV2 0.334 -> 0.322,
# SqueezeNet 0.221 -> 0.218 (its classifier), ResNet-18 0.259 -> 0.245 (no 1x1 taken: noise).
DEEP_1X1_CHANNELS = 480
DEEP_1X1_PIXELS = 196


def left_to_iree(sizes: ConvSizes) -> str | None:
    """Why IREE's kernel keeps this convolution, or None where the Triton kernel takes it."""
    if sizes.r * sizes.s == 1 and not deep_1x1(sizes):
        return "a 1x1 convolution (a matmul): IREE's kernel was as fast or faster on most of the fitting set's"
    if sizes.c < MIN_CHANNELS:
        return f"under {MIN_CHANNELS} channels (an image's stem): IREE's kernel was faster on the fitting set's"
    return None


def takes_every_f32(sizes: ConvSizes) -> bool:
    """An f32 convolution (taken in TF32, `--tf32`) goes to the kernel whatever its window and
    channels: the rule weighs the kernel against IREE's f16 tensor-core kernels, and an f32 one
    of IREE's is FP32 on the SIMT cores. Every f32 convolution in the kernel against none, held-out
    models replayed on an H100 (twenty-sixth session, ms): ResNet-50 0.702 against 1.789, ResNet-18
    0.313 against 0.616, SqueezeNet 0.324 against 0.464."""
    return sizes.dtype == "f32"


def deep_1x1(sizes: ConvSizes) -> bool:
    """A 1x1 convolution deep and small enough that the kernel takes it (DEEP_1X1_CHANNELS)."""
    return 0 < DEEP_1X1_CHANNELS <= sizes.c and sizes.n * sizes.oh * sizes.ow <= DEEP_1X1_PIXELS


def shared_bytes(tiles: ConvTiles, element_bytes: int = 2) -> int:
    """What the kernel's pipeline stages of A (bm x bk) and B (bk x bn) tiles take."""
    return (tiles.bm * tiles.bk + tiles.bk * tiles.bn) * element_bytes * tiles.stages


def _step(channels: int) -> int:
    """Channels a step: the widest of 16, 32 and 64 the channels fill (16 at least)."""
    return 64 if channels >= 64 else 32 if channels >= 32 else 16


def conv_tiles(sizes: ConvSizes) -> ConvTiles:
    tiles = _tiles(sizes)
    element_bytes = 4 if sizes.dtype == "f32" else 2
    while shared_bytes(tiles, element_bytes) > SHARED_BYTES and tiles.bk > 16:  # f32's tiles take twice the bytes
        tiles = replace(tiles, bk=tiles.bk // 2)
    return tiles


def _tiles(sizes: ConvSizes) -> ConvTiles:
    rows = sizes.n * sizes.oh * sizes.ow
    if sizes.c < 16:
        return ConvTiles(*STEM_TILES[:2], 16, *STEM_TILES[2:])
    bm, bn, _, _ = WIDE_TILES
    tiles = -(-rows // bm) * -(-sizes.f // bn)
    if tiles >= FILL_TILES * SMS:
        return ConvTiles(bm, bn, _step(sizes.c), *WIDE_TILES[2:])
    depth = sizes.c * sizes.r * sizes.s
    split = 1
    while (split < MAX_PARTS and tiles * split * 2 <= SMS and depth // (split * 2) >= MIN_PART_PRODUCTS
           and sizes.c // (split * 2) >= MIN_PART_CHANNELS):
        split *= 2
    if split > 1:
        return ConvTiles(*PART_TILES[:2], _step(sizes.c // split), *PART_TILES[2:], split=split)
    return ConvTiles(*FEW_TILES[:2], _step(sizes.c), *FEW_TILES[2:])


def grid(sizes: ConvSizes, tiles: ConvTiles) -> tuple[int, int, int]:
    """The kernel's workgroups: the output's tiles (x), the parts of the channels (y)."""
    rows = -(-(sizes.n * sizes.oh * sizes.ow) // tiles.bm)
    columns = -(-sizes.f // tiles.bn)
    return (rows * columns, tiles.split, 1)


def kernel_constants(sizes: ConvSizes, tiles: ConvTiles, channels_last: bool = False, out_channels_last: bool = False) -> dict[str, int]:
    """The kernel's compile-time constants, by the names schedc.kernels.triton_conv's
    `conv2d` gives them; `channels_last`: it reads an NHWC image and an RSCF filter;
    `out_channels_last`: it writes an NHWC output (a kernel that sums its parts itself, or
    has none)."""
    constants = dict(N=sizes.n, C=sizes.c, H=sizes.h, W=sizes.w, F=sizes.f, R=sizes.r, S=sizes.s, OH=sizes.oh, OW=sizes.ow,
                     SH=sizes.stride[0], SW=sizes.stride[1], PH=sizes.padding[0], PW=sizes.padding[1],
                     DH=sizes.dilation[0], DW=sizes.dilation[1], SPLIT=tiles.split, BM=tiles.bm, BN=tiles.bn, BK=tiles.bk, GROUP=8)
    return constants | ({"NHWC": 1} if channels_last else {}) | ({"OUT_NHWC": 1} if out_channels_last else {})
