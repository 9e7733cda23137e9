"""A synthetic sweep over the shape space of kernel configs, for fitting the heuristic's cost
model: convolution windows (1, 3, 5, 7), strides, channel counts and spatial sizes, depthwise
convolutions, max and average pooling, and matmul M/N/K and batch matmuls, in f32 and f16. None of these shapes is a
held-out model's (bench/heldout.py), which the fit is judged on.

Each factory returns (model, example_inputs): one layer per shape, each on an input of its
own, so every layer is one dispatch that `schedc tune prepare` can measure alone.

    python bench/sweep.py import DIR [--dtypes f32,f16]   # each sweep model as DIR/NAME.DTYPE.mlir
    python bench/sweep.py prepare TUNE_DIR MODEL.mlir... [--candidates N] [--grid-picks]   # tune prepare
                                         # that also measures every config the fits' grids could pick
    python bench/sweep.py fit TUNE_DIR   # fit the GPU cost model on tune prepare + bench results
    python bench/sweep.py fit-mma TUNE_DIR...   # the tensor-core model's constants per class (f16, bf16)
    python bench/sweep.py judge-mma TUNE_DIR... # the tensor-core model's picks on other folders, per class
    python bench/sweep.py fit-matvec TUNE_DIR...   # kernel_config.matvec's table from the matvecs' measurements
    python bench/sweep.py judge TUNE_DIR # the current picks (f32 implicit GEMMs, rows-form 1x1
                                         # convolutions) on a tune folder, e.g. a held-out one
    python bench/sweep.py cpu [DB.json] [--models a,b --add] [--modes m,n --keys mode/layout,...]  # measure every shape (or these
                                         # models', merged in) on this CPU in each mode and
                                         # layout: the built-in CPU database (default path)
    python bench/sweep.py cpu-loo [DB.json]  # cpu-config's layout choice on the database's window
                                         # convolutions, each left out and estimated from the rest
"""

from __future__ import annotations

import math
import sys

import torch
from torch import nn

# (in channels, out channels, output size, window, stride)
CONVS = [
    (16, 32, 56, 3, 1), (32, 32, 28, 3, 1), (64, 64, 14, 3, 1), (128, 128, 7, 3, 1), (24, 48, 30, 3, 2),
    (48, 96, 15, 3, 1), (32, 64, 40, 5, 1), (16, 16, 60, 7, 1), (3, 32, 96, 3, 2), (96, 96, 20, 1, 1),
    (64, 256, 12, 1, 1), (256, 64, 24, 1, 1), (40, 120, 33, 1, 1), (120, 40, 17, 3, 1), (8, 64, 112, 3, 1),
]
# Wider window convolutions (48-384 channels at 10-60 pixels, strides 1-2), for the implicit
# GEMM's estimate; none is a held-out model's:
# (in channels, out channels, output size, window, stride)
WIDE_CONVS = [
    (48, 48, 60, 3, 1), (96, 96, 30, 3, 1), (160, 160, 20, 3, 1), (320, 320, 10, 3, 1), (80, 160, 24, 3, 2),
    (192, 384, 12, 3, 1), (256, 128, 18, 3, 1), (3, 48, 120, 5, 2), (96, 192, 15, 3, 2), (40, 80, 45, 3, 1),
    (384, 384, 5, 3, 1), (24, 96, 36, 5, 1),
]
# More for CPUs, where the layout choice turns on spatial size and window:
# (in channels, out channels, output size, window, stride)
CPU_CONVS = [
    (32, 32, 60, 3, 1), (64, 64, 30, 3, 1), (128, 128, 15, 3, 1), (256, 256, 9, 3, 1), (16, 48, 100, 3, 1),
    (48, 96, 50, 3, 2), (96, 192, 25, 3, 2), (3, 48, 100, 7, 2), (3, 24, 110, 3, 2), (24, 96, 50, 1, 1),
    (96, 24, 50, 1, 1), (160, 320, 12, 1, 1), (320, 80, 20, 1, 1), (192, 768, 10, 1, 1), (48, 48, 30, 5, 1),
]
# Deep window convolutions, 192-512 channels at 4-16 pixels, at strides 1 and 2 (the deep layers
# of ResNets and VGGs, UNets' bottlenecks), where the database held one (256 -> 256 at 9x9) and
# the NHWC kernel's estimate for them read shallower neighbours; none is a held-out model's:
# (in channels, out channels, output size, window, stride)
CPU_DEEP_CONVS = [
    (384, 384, 8, 3, 1), (448, 448, 6, 3, 1), (320, 320, 12, 3, 1), (192, 192, 16, 3, 1),
    (384, 512, 5, 3, 1), (512, 448, 4, 3, 1), (192, 384, 10, 3, 2), (320, 640, 6, 3, 2),
]
# Window convolutions of 16-128 channels at 20-80 pixels, for the CPU estimate of im2col against
# IREE's direct code where few entries stood (ResNet-18's 64-channel convolutions at 56x56 were
# estimated from 32-channel ones, and wrongly); none is a held-out model's:
# (in channels, out channels, output size, window, stride)
CPU_WIDE_CONVS = [
    (48, 48, 60, 3, 1), (64, 64, 44, 3, 1), (80, 80, 36, 3, 1), (96, 96, 24, 3, 1), (64, 96, 40, 3, 1),
    (40, 80, 48, 3, 1), (96, 128, 20, 3, 1), (24, 24, 80, 3, 1), (64, 16, 36, 3, 1), (96, 24, 28, 3, 1),
    (48, 24, 36, 5, 1), (64, 32, 28, 5, 1),
]
# transposed (a decoder's upsampling, stride 2): (in channels, out channels, input size, window)
TRANSPOSED = [(96, 48, 10, 2), (48, 24, 20, 2), (160, 80, 8, 2), (24, 12, 40, 2), (64, 64, 12, 3)]
# depthwise: (channels, output size, window, stride)
DEPTHWISE = [(24, 100, 3, 1), (64, 60, 3, 1), (120, 40, 3, 2), (160, 30, 3, 1), (320, 16, 3, 1), (480, 9, 3, 1),
             (40, 50, 5, 1), (64, 40, 7, 1), (160, 20, 7, 1), (320, 10, 7, 1), (72, 33, 3, 2)]
# More depthwise windows of 5x5 and 7x7, where cpu-config weighs NCHW against NHWC: (channels,
# output size, window, stride); none is a held-out model's.
WIDE_DEPTHWISE = [(32, 72, 7, 1), (128, 30, 7, 1), (256, 16, 5, 1), (24, 90, 5, 1)]
# pooling: (kind, channels, input size, window, stride, padding, ceil_mode)
POOLS = [("max", 32, 120, 3, 2, 0, True), ("max", 96, 60, 3, 2, 0, False), ("max", 192, 30, 3, 2, 1, False),
         ("max", 384, 15, 3, 2, 0, True), ("max", 48, 100, 2, 2, 0, False), ("avg", 64, 40, 3, 1, 1, False),
         ("avg", 128, 28, 2, 2, 0, False)]
# an inverted residual's expansion: a 1x1 convolution whose output a padded 3x3 depthwise one
# reads, so IREE keeps its rows and columns as loops (M x rows x columns x K):
# (in channels, out channels, size)
EXPANSIONS = [(16, 96, 40), (24, 144, 20), (40, 240, 10), (64, 384, 16), (32, 128, 36), (80, 480, 8), (48, 48, 24)]
# (M, N, K); batch matmuls (B, M, N, K)
MATMULS = [(1, 512, 2048), (8, 1000, 512), (64, 384, 384), (128, 128, 1024), (256, 1024, 256), (32, 3072, 768),
           (100, 200, 300), (512, 64, 512), (16, 4096, 1024)]
BATCH_MATMULS = [(8, 128, 128, 64), (12, 64, 64, 64), (4, 256, 32, 256)]
# Rows that are no multiple of 32 (token counts such as a ViT's class token plus patches), and
# the attention products over them; none of these is a held-out model's shape.
ODD_MATMULS = [(50, 512, 256), (145, 384, 384), (300, 1024, 256), (300, 256, 1024), (77, 768, 768), (145, 1536, 384)]
ODD_BATCH_MATMULS = [(6, 145, 145, 64), (6, 145, 64, 145), (4, 50, 50, 64)]

# Matrix-vector products (batch 1): (N, K) of `x @ W` with W stored K x N (a Conv1D, addmm),
# of nn.Linear (W stored N x K), and batched ones as attention over a cache for one token
# (heads, positions, head width): P @ V reads V as positions x width (K x N), q @ K^T reads K as
# positions x width (N x K). Some matrices are larger than the H200's 50 MB L2, as a decode
# step's weights together are. None is a held-out model's shape.
MATVECS_KN = [(4096, 1024), (1024, 4096), (1536, 512), (2560, 640), (16384, 4096)]
MATVECS_NK = [(4096, 1024), (1000, 2048), (1536, 512), (32000, 1024)]
MATVEC_ATTENTION = [(16, 1024, 64), (8, 256, 128), (32, 2048, 128)]
# Few outputs and a long K (a model's down projection, attention over a long cache), K x N:
# (N, K); (heads, positions, width)
NARROW_MATVECS_KN = [(512, 2048), (640, 4096), (384, 1536), (1024, 8192)]
NARROW_ATTENTION = [(8, 2048, 64), (4, 4096, 96)]


class Layers(nn.Module):
    """Independent layers, one per input."""

    def __init__(self, layers):
        super().__init__()
        self.layers = nn.ModuleList(layers)

    def forward(self, *inputs):
        return tuple(layer(x) for layer, x in zip(self.layers, inputs))


class BatchMatmul(nn.Module):
    def __init__(self, b: int, n: int, k: int):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(b, k, n) / k**0.5)

    def forward(self, x):
        return torch.bmm(x, self.weight)


def _conv_input(cin: int, size: int, window: int, stride: int):
    return torch.randn(1, cin, (size - 1) * stride + window, (size - 1) * stride + window)


def _conv_layers(shapes):
    """Convolutions of (in channels, out channels, output size, window, stride) shapes."""
    return [nn.Conv2d(cin, cout, window, stride) for cin, cout, _, window, stride in shapes]


def _conv_inputs(shapes):
    return tuple(_conv_input(cin, size, window, stride) for cin, _, size, window, stride in shapes)


def _depthwise_layers(shapes):
    """Depthwise convolutions of (channels, output size, window, stride) shapes."""
    return [nn.Conv2d(c, c, window, stride, groups=c) for c, _, window, stride in shapes]


def _depthwise_inputs(shapes):
    return tuple(_conv_input(c, size, window, stride) for c, size, window, stride in shapes)


def convs():
    torch.manual_seed(0)
    layers = _conv_layers(CONVS)
    return Layers(layers).eval(), _conv_inputs(CONVS)


def wide_convs():
    torch.manual_seed(0)
    layers = _conv_layers(WIDE_CONVS)
    return Layers(layers).eval(), _conv_inputs(WIDE_CONVS)


def cpu_convs():
    torch.manual_seed(0)
    layers = _conv_layers(CPU_CONVS) + _depthwise_layers(DEPTHWISE)
    layers += [nn.ConvTranspose2d(cin, cout, window, 2) for cin, cout, _, window in TRANSPOSED]
    inputs = _conv_inputs(CPU_CONVS) + _depthwise_inputs(DEPTHWISE)
    inputs += tuple(torch.randn(1, cin, size, size) for cin, _, size, _ in TRANSPOSED)
    return Layers(layers).eval(), inputs


def cpu_wide_convs():
    torch.manual_seed(0)
    layers = _conv_layers(CPU_WIDE_CONVS)
    return Layers(layers).eval(), _conv_inputs(CPU_WIDE_CONVS)


def cpu_deep_convs():
    torch.manual_seed(0)
    layers = _conv_layers(CPU_DEEP_CONVS)
    return Layers(layers).eval(), _conv_inputs(CPU_DEEP_CONVS)


def cpu_depthwise():
    """The depthwise convolutions alone: DEPTHWISE's and WIDE_DEPTHWISE's."""
    torch.manual_seed(0)
    layers = _depthwise_layers(DEPTHWISE + WIDE_DEPTHWISE)
    return Layers(layers).eval(), _depthwise_inputs(DEPTHWISE + WIDE_DEPTHWISE)


def pools():
    layers = [(nn.MaxPool2d if kind == "max" else nn.AvgPool2d)(window, stride, padding, ceil_mode=ceil)
              for kind, _, _, window, stride, padding, ceil in POOLS]
    torch.manual_seed(0)
    inputs = tuple(torch.randn(1, c, size, size) for _, c, size, *_ in POOLS)
    return Layers(layers).eval(), inputs


def expansions():
    layers = [nn.Sequential(nn.Conv2d(cin, cout, 1), nn.ReLU6(), nn.Conv2d(cout, cout, 3, padding=1, groups=cout))
              for cin, cout, _ in EXPANSIONS]
    torch.manual_seed(0)
    inputs = tuple(torch.randn(1, cin, size, size) for cin, _, size in EXPANSIONS)
    return Layers(layers).eval(), inputs


def narrow_pointwise():
    """1x1 convolutions with few pixels and many input channels (a bottleneck's projection at
    the end of a CNN), the N of whose matmul (pixels, 16-144) no tensor-core tile fills well:
    bench/split_k.py's synthetic FIT_POINTWISE shapes, each whole, for its configs."""
    from split_k import FIT_POINTWISE

    torch.manual_seed(0)
    layers = [nn.Sequential(nn.Conv2d(cin, cout, 1), nn.ReLU()) for cin, cout, _, _, _ in FIT_POINTWISE]
    inputs = tuple(torch.randn(1, cin, size, size) for cin, _, size, _, _ in FIT_POINTWISE)
    return Layers(layers).eval(), inputs


def matmuls():
    torch.manual_seed(0)
    layers = [nn.Linear(k, n) for _, n, k in MATMULS] + [BatchMatmul(b, n, k) for b, _, n, k in BATCH_MATMULS]
    inputs = tuple(torch.randn(m, k) for m, _, k in MATMULS) + tuple(torch.randn(b, m, k) for b, m, _, k in BATCH_MATMULS)
    return Layers(layers).eval(), inputs


def odd_matmuls():
    torch.manual_seed(0)
    layers = [nn.Linear(k, n) for _, n, k in ODD_MATMULS] + [BatchMatmul(b, n, k) for b, _, n, k in ODD_BATCH_MATMULS]
    inputs = tuple(torch.randn(m, k) for m, _, k in ODD_MATMULS) + tuple(torch.randn(b, m, k) for b, m, _, k in ODD_BATCH_MATMULS)
    return Layers(layers).eval(), inputs


class NarrowMatvecs(nn.Module):
    """`x @ W` (W stored K x N) and P @ V over a cache, with few outputs and long reductions."""

    def forward(self, *inputs):
        count = len(NARROW_MATVECS_KN)
        results = [inputs[2 * i] @ inputs[2 * i + 1] for i in range(count)]
        results += [torch.bmm(p, v) for p, v in zip(inputs[2 * count::2], inputs[2 * count + 1::2])]
        return tuple(results)


def _times_matrix_inputs(shapes) -> list:
    """A vector and a K x N matrix per (N, K)."""
    return [t for n, k in shapes for t in (torch.randn(1, k), torch.randn(k, n) / k**0.5)]


def narrow_matvecs():
    torch.manual_seed(0)
    inputs = _times_matrix_inputs(NARROW_MATVECS_KN)
    for heads, positions, width in NARROW_ATTENTION:
        inputs += [torch.softmax(torch.randn(heads, 1, positions), -1), torch.randn(heads, positions, width)]
    return NarrowMatvecs().eval(), tuple(inputs)


class Matvecs(nn.Module):
    """Batch-1 products with their matrices as inputs (weights inlined would be 3 GB of text):
    `x @ W` with W stored K x N (GPT-2's Conv1D), `x @ W.T` with W stored N x K (nn.Linear),
    and one token's attention over a cache (q @ K^T and P @ V, keys and values heads x
    positions x width)."""

    def forward(self, *inputs):
        kn, nk = len(MATVECS_KN), len(MATVECS_NK)
        pairs = [inputs[2 * i: 2 * i + 2] for i in range(kn + nk)]
        results = [x @ w for x, w in pairs[:kn]] + [nn.functional.linear(x, w) for x, w in pairs[kn:]]
        for i in range(len(MATVEC_ATTENTION)):
            q, keys, values = inputs[2 * (kn + nk) + 3 * i: 2 * (kn + nk) + 3 * i + 3]
            scores = torch.bmm(q, keys.transpose(1, 2))
            results += [scores, torch.bmm(torch.softmax(scores.float(), -1).to(q.dtype), values)]
        return tuple(results)


def matvecs():
    torch.manual_seed(0)
    inputs = _times_matrix_inputs(MATVECS_KN)
    for n, k in MATVECS_NK:
        inputs += [torch.randn(1, k), torch.randn(n, k) / k**0.5]
    for heads, positions, width in MATVEC_ATTENTION:
        inputs += [torch.randn(heads, 1, width), torch.randn(heads, positions, width), torch.randn(heads, positions, width)]
    return Matvecs().eval(), tuple(inputs)


def matvec_grid(sig) -> list:
    """Every vector-distribute config of a matvec (`schedc.decisions.kernel_config.matvec.grid`)."""
    from schedc.decisions.kernel_config import matvec

    form = matvec.MatvecForm.of(sig)
    return matvec.grid(sig, form) if form is not None else []


def simt_grid(sig, padded_only: bool = False) -> list:
    """Every SIMT tiling of a plain f32 matmul's M and N (workgroup 16-64 by 32-128, 1-4 results
    per thread each way, the longest K step, operands staged), and the same tiles with the
    operands padded to them (IREE's `padding`) where a tile does not divide its loop: the space
    the estimate ranks. `padded_only`: the padded ones alone (a second run beside a first)."""
    from schedc.decisions import kernel_config as kc

    if sig.element_type != "f32" or sig.kind not in ("matmul", "batch_matmul") or kc.contraction_roles(sig) is None:
        return []
    k = max(kc.k_steps(max(sig.loops[i] for i in sig.reduction_loops)))
    found = []
    for wg_m in (16, 32, 64):
        for wg_n in (32, 64, 128):
            for th_m in (1, 2, 4):
                for th_n in (1, 2, 4):
                    config = kc.make_config(sig, wg_m, wg_n, th_m, th_n, k, True)
                    if config is not None and config not in found:
                        found.append(config)
    padded = [kc.padded_to_tiles(c) for c in found if any(n % t for n, t in zip(sig.loops, kc.padded_to_tiles(c).padding) if t)]
    return padded if padded_only else found + padded


def half_contraction_grid(sig) -> list:
    """Every tensor-core config the candidate generator makes for an f16/bf16 contraction that
    is not a window convolution (1x1 convolutions, matmuls), and SIMT tiles of it as f32
    contractions get them: the space a rule for the narrow ones is chosen from."""
    from schedc.decisions import kernel_config as kc

    if sig.element_type not in ("f16", "bf16") or sig.kind not in ("matmul", "batch_matmul", "matmul_like"):
        return []
    roles = kc.contraction_roles(sig)
    if roles is None or kc.igemm_form(sig) is not None or kc.is_matvec(sig):
        return []
    simt = kc._simt_rows_candidates(sig, sig, 48) if kc._row_loop(sig, roles) is not None else kc._simt_candidates(sig, 48)
    return kc._mma_candidates(sig, 400) + simt


SWEEP = {"matvecs": matvecs, "narrow_pointwise": narrow_pointwise, "cpu_wide_convs": cpu_wide_convs, "cpu_deep_convs": cpu_deep_convs, "cpu_depthwise": cpu_depthwise, "narrow_matvecs": narrow_matvecs, "odd_matmuls": odd_matmuls, "convs": convs, "wide_convs": wide_convs, "expansions": expansions, "matmuls": matmuls, "pools": pools, "cpu_convs": cpu_convs}


def _measured(folder: str) -> list:
    """(signature, [(config, us)...]) per dispatch of a tune folder with 2+ matched configs."""
    import json
    from pathlib import Path

    from schedc.decisions import kernel_config as kc
    from schedc.tune.prepare import matched_candidates

    manifest = json.loads((Path(folder) / "manifest.json").read_text())
    results = json.loads((Path(folder) / "results.json").read_text())["kernels"]
    kernels = []
    for kernel in manifest["kernels"]:
        sig = kc.KernelSignature.from_json(kernel["signature"])
        measured = [(config, time_us) for _, config, time_us in matched_candidates(kernel, results.get(kernel["name"], [])) if config is not None]
        if len(measured) >= 2:
            kernels.append((sig, measured))
    return kernels


def _is_igemm_f32(sig) -> bool:
    from schedc.decisions import kernel_config as kc

    return sig.element_type == "f32" and kc.igemm_form(sig) is not None and bool(kc.candidate_configs(sig, 1))


def _pick_shares(kernels, everything) -> tuple[int, int]:
    """Of f32 implicit GEMMs: how many have the estimate's pick (over all candidates) within
    1.25x of the fastest measured, and how many picks were not measured at all."""
    from schedc.decisions import kernel_config as kc

    good = unmeasured = 0
    for sig, measured in kernels:
        pick = min(everything[sig.key], key=lambda c: (kc.estimate(sig, c), c.label()))
        times = dict(measured)
        if pick not in times:
            unmeasured += 1
        elif times[pick] <= 1.25 * min(times.values()):
            good += 1
    return good, unmeasured


def fit(folder: str) -> None:
    """Grid searches of the cost models' constants (fixed grids: bounded by work, so the fit
    is the same on any machine). The SIMT and tensor-core constants: for the most dispatches
    whose estimated-best measured candidate is within 1.25x of the fastest. The f32 implicit
    GEMMs' (IGEMM_GRID): for the most whose pick among all candidates is (`prepare` measured
    every pick of the grid). Prints the share with the current constants and the fit's."""
    import itertools

    from schedc.decisions import kernel_config as kc

    kernels = _measured(folder)
    # matvecs: fit_matvec; tensor-core configs: fit_mma
    others = [(sig, simt) for sig, measured in kernels if not _is_igemm_f32(sig) and not kc.is_matvec(sig)
              for simt in [[(c, t) for c, t in measured if not c.mma]] if len(simt) >= 2]
    names = ("SM_LANES", "SM_LOADS", "UNPROMOTED_READS", "SIMT_STEP_CYCLES")

    def share(rates) -> float:
        def work():
            good = 0
            for sig, measured in others:
                chosen = min(measured, key=lambda m: (kc.estimate(sig, m[0]), m[0].label()))
                good += chosen[1] <= 1.25 * min(t for _, t in measured)
            return good / max(len(others), 1)
        return _with_constants(names, rates, work)

    if others:
        original = tuple(getattr(kc, name) for name in names)
        grid = itertools.product((128,), (16, 32, 64), (1, 2, 4), (0, 200, 800, 3200, 12800))
        best = max(grid, key=lambda rates: (share(rates), rates == original, tuple(-r for r in rates)))
        print(f"{len(others)} measured dispatches; within 1.25x of the fastest: {share(original):.0%} with "
              f"{dict(zip(names, original))}; {share(best):.0%} with {dict(zip(names, best))}")

    igemms = [k for k in kernels if _is_igemm_f32(k[0])]
    if igemms:
        everything = {sig.key: kc.candidate_configs(sig, limit=100000) for sig, _ in igemms}
        original = tuple(getattr(kc, name) for name in IGEMM_NAMES)
        scored = {values: _with_constants(IGEMM_NAMES, values, lambda: _pick_shares(igemms, everything))
                  for values in itertools.product(*IGEMM_GRID)}
        scored.setdefault(original, _pick_shares(igemms, everything))
        best = max(scored, key=lambda v: (scored[v][0], v == original, tuple(-x for x in v)))
        for label, values in (("current", original), ("fitted", best)):
            good, unmeasured = scored[values]
            print(f"f32 implicit GEMMs, {label} {dict(zip(IGEMM_NAMES, values))}: the pick within 1.25x of the fastest "
                  f"for {good} of {len(igemms)} ({unmeasured} picks not measured)")


# The grid `fit-mma` searches for each class's tensor-core constants (kernel_config.MMA_CONSTANTS:
# multiply-adds a cycle, cycles a K step, the stage budget and the cycles an element past it).
MMA_GRID = ((128, 256, 512, 1024), (0, 80, 320, 1280), (16, 24, 32, 48, 64, 1 << 20), (0, 10, 40, 160, 640))


def _mma_terms(sig, config) -> tuple:
    """kernel_config.mma_terms of a tensor-core config, as `estimate` computes them."""
    from schedc.decisions import kernel_config as kc

    if config.igemm:
        sig = kc.igemm_form(sig) or sig
    return kc.mma_terms(sig, config, kc.contraction_roles(sig)[1:], kc.CHIPS["cuda"].sms)


def _mma_pick(terms: list, values: tuple) -> int:
    """The index of the config `kernel_config.mma_cost` ranks first under `values` (ties: the first)."""
    from schedc.decisions import kernel_config as kc

    costs = [kc.mma_cost(t, *values) for t in terms]
    return costs.index(min(costs))


def _mma_pick_share(kernels, values: tuple) -> tuple[float, float]:
    """Of tensor-core dispatches (signature, [(config, us)...], the configs' terms): the share
    whose estimated-best measured config under `values` is within 1.25x of the fastest
    measured one, and the geometric mean of pick / fastest."""
    good, logs = 0, 0.0
    for _, measured, terms in kernels:
        chosen = measured[_mma_pick(terms, values)][1]
        fastest = min(t for _, t in measured)
        good += chosen <= 1.25 * fastest
        logs += math.log(chosen / fastest)
    return good / max(len(kernels), 1), math.exp(logs / max(len(kernels), 1))


def _mma_kernels(folders: list[str]) -> dict:
    """Per class (kernel_config.mma_class): (signature, [(tensor-core config, us)...], their
    terms) of the folders' dispatches with 2+ of that class measured, the configs in label
    order (the estimate's tie-break)."""
    from schedc.decisions import kernel_config as kc

    classes: dict[str, list] = {}
    for folder in folders:
        for sig, measured in _measured(folder):
            for name in kc.MMA_CONSTANTS:
                mma = sorted(((c, t) for c, t in measured if c.mma and kc.mma_class(sig, c) == name), key=lambda m: m[0].label())
                if len(mma) >= 2:
                    classes.setdefault(name, []).append((sig, mma, [_mma_terms(sig, c) for c, _ in mma]))
    return classes


def fit_mma(folders: list[str]) -> None:
    """Per class, a grid search (MMA_GRID, fixed: bounded by work) of the tensor-core model's
    constants on the folders' measurements: the most dispatches whose estimated-best measured
    config is within 1.25x of the fastest, then the lowest geometric mean of pick / fastest.
    Prints each class's figures with the current constants and the fit's."""
    import itertools

    from schedc.decisions import kernel_config as kc

    for name, kernels in _mma_kernels(folders).items():
        original = kc.MMA_CONSTANTS[name]
        scored = {values: _mma_pick_share(kernels, values) for values in itertools.product(*MMA_GRID)}
        scored.setdefault(original, _mma_pick_share(kernels, original))
        best = max(scored, key=lambda v: (scored[v][0], -scored[v][1], v == original))
        for label, values in (("current", original), ("fitted", best)):
            share, mean = scored[values]
            print(f"{name}, {len(kernels)} dispatches, {label} {values}: the pick within 1.25x of the fastest measured "
                  f"for {share:.0%}, geometric mean pick / fastest {mean:.3f}")


def judge_mma(folders: list[str]) -> None:
    """The current tensor-core constants on the folders (e.g. held-out ones), per class."""
    from schedc.decisions import kernel_config as kc

    for name, kernels in _mma_kernels(folders).items():
        share, mean = _mma_pick_share(kernels, kc.MMA_CONSTANTS[name])
        print(f"{name}, {len(kernels)} dispatches, {kc.MMA_CONSTANTS[name]}: the pick within 1.25x of the fastest measured "
              f"for {share:.0%}, geometric mean pick / fastest {mean:.3f}")


def mma_grid_picks(sig) -> list:
    """The tensor-core config each point of MMA_GRID would pick for a dispatch (the heuristic's
    candidates, every one): a tune folder with these measured judges any fitted constants."""
    import itertools

    from schedc.decisions import kernel_config as kc

    everything = sorted((c for c in kc.candidate_configs(sig, limit=100000) if c.mma), key=lambda c: c.label())
    if not everything:
        return []
    terms = [_mma_terms(sig, c) for c in everything]
    picks = {_mma_pick(terms, values) for values in itertools.product(*MMA_GRID)}
    return [everything[i] for i in sorted(picks)]


def _matvec_times(folders: list[str]) -> dict:
    """Per (layout, element type): (signature, IREE's time, {config shape: time}) of each matvec
    of the tune folders, from the candidates whose outputs matched IREE's (us)."""
    import json
    from pathlib import Path

    from schedc.decisions import kernel_config as kc
    from schedc.decisions.kernel_config import matvec as mc
    from schedc.tune.prepare import matched_candidates

    groups: dict = {}
    for folder in folders:
        manifest = json.loads((Path(folder) / "manifest.json").read_text())
        results = json.loads((Path(folder) / "results.json").read_text())["kernels"]
        for kernel in manifest["kernels"]:
            sig = kc.KernelSignature.from_json(kernel["signature"])
            form = mc.MatvecForm.of(sig)
            matched = matched_candidates(kernel, results.get(kernel["name"], []))
            iree = [us for _, config, us in matched if config is None]
            if form is None or not iree:
                continue
            times = {mc.shape_of(form, c): us for _, c, us in matched if c is not None and c.vector_distribute}
            groups.setdefault((mc.layout(form), sig.element_type), []).append((sig, iree[0], times))
    return groups


MATVEC_TABLE_SIZES = (1, 2, 4, 6, 8)  # how many ranked shapes fit_matvec tries to keep
MATVEC_TARGETS = (64, 96, 128, 192, 256, 384, 512, 1024)  # and the workgroup targets


def fit_matvec(folders: list[str]) -> None:
    """matvec's RANKED_SHAPES and TARGET_WORKGROUPS from tune folders' matvecs. Per layout and
    element type: the config shapes measured on at least 40% of its kernels, by the geometric
    mean of their time over each kernel's fastest; then the table size and workgroup target
    (fixed grids) whose picks come nearest the fastest in geometric mean, among those whose
    every pick was measured. Prints each kernel's pick against its fastest config and IREE's
    own, and the table to paste into kernel_config/matvec.py; a layout whose picks are slower
    than IREE's gets no shapes."""
    from schedc.decisions.kernel_config import matvec as mc

    def geomean(values):
        values = list(values)
        return math.exp(sum(math.log(v) for v in values) / len(values)) if values else float("inf")

    tables, targets = {}, {}
    for key, kernels in sorted(_matvec_times(folders).items()):
        fastest = [min([iree, *times.values()]) for _, iree, times in kernels]
        shapes = {shape for _, _, times in kernels for shape in times}
        score = {}
        for shape in shapes:
            ratios = [times[shape] / best for (_, _, times), best in zip(kernels, fastest) if shape in times]
            if 5 * len(ratios) >= 2 * len(kernels):
                score[shape] = geomean(ratios)
        ranked = sorted(score, key=lambda shape: (score[shape], shape))

        def picks(size, target):  # (pick's time or None where not measured, IREE's, fastest)
            found = []
            for (sig, iree, times), best in zip(kernels, fastest):
                config = mc.heuristic(sig, tuple(ranked[:size]), target)
                found.append((times.get(mc.shape_of(mc.MatvecForm.of(sig), config)) if config else iree, iree, best))
            return found

        tried = {(size, target): picks(size, target) for size in MATVEC_TABLE_SIZES for target in MATVEC_TARGETS}
        complete = {rule: found for rule, found in tried.items() if all(p is not None for p, _, _ in found)}
        if not complete:
            sys.exit(f"{key}: every rule picks a config not measured somewhere: measure the whole grid on every kernel")
        size, target = min(complete, key=lambda rule: (geomean(p / b for p, _, b in complete[rule]), rule))
        chosen = complete[(size, target)]
        print(f"{key[0]} {key[1]}: {len(kernels)} kernels, {len(shapes)} shapes measured; {size} shapes, target {target} workgroups")
        for (sig, _, _), (pick, iree, best) in zip(kernels, chosen):
            print(f"  {sig.describe():<36} IREE {iree:8.2f} us  fastest {best:8.2f}  pick {pick:8.2f} "
                  f"({pick / best:.2f}x fastest, {iree / pick:.2f}x faster than IREE's)")
        over_iree = geomean(iree / pick for pick, iree, _ in chosen)
        print(f"  picks: {geomean(p / b for p, _, b in chosen):.3f}x the fastest (worst {max(p / b for p, _, b in chosen):.2f}x), "
              f"{over_iree:.2f}x faster than IREE's (geometric means)")
        if over_iree > 1:
            tables[key], targets[key] = tuple(ranked[:size]), target
    print("RANKED_SHAPES = {")
    for key, shapes in tables.items():
        print(f"    {key!r}: {shapes!r},")
    print("}")
    print(f"TARGET_WORKGROUPS = {targets!r}")


def judge(folder: str) -> None:
    """The current estimate's picks on a tune folder: f32 implicit GEMMs, and the rows-form
    contractions' tiles against the plain SIMT tiles they had before (`prepare` measures both)."""
    from schedc.decisions import kernel_config as kc

    kernels = _measured(folder)
    igemms = [k for k in kernels if _is_igemm_f32(k[0])]
    if igemms:
        everything = {sig.key: kc.candidate_configs(sig, limit=100000) for sig, _ in igemms}
        good, unmeasured = _pick_shares(igemms, everything)
        print(f"f32 implicit GEMMs: the estimate's pick within 1.25x of the fastest measured for {good} of {len(igemms)} "
              f"({unmeasured} picks not measured)")
    rows = [k for k in kernels if kc.rows_form(k[0])]
    if rows:
        counts = {"rows-form tiles": [0, 0], "plain SIMT tiles": [0, 0]}
        for sig, measured in rows:
            times = dict(measured)
            plain = kc._simt_candidates(sig, 100000)
            picks = {"rows-form tiles": kc.heuristic_config(sig),
                     "plain SIMT tiles": min(plain, key=lambda c: (kc._score(sig, c), c.label())) if plain else None}
            for label, pick in picks.items():
                if pick not in times:
                    counts[label][1] += 1
                elif times[pick] <= 1.25 * min(times.values()):
                    counts[label][0] += 1
        for label, (good, unmeasured) in counts.items():
            print(f"rows-form 1x1 convolutions, {label}: the pick within 1.25x of the fastest measured for {good} of {len(rows)} "
                  f"({unmeasured} picks not measured)")


# The grid `fit` searches for the f32 implicit GEMMs' constants (kernel_config.IM2COL_READS,
# IGEMM_SIZE_COST, IGEMM_N_THREAD_COST, IGEMM_WASTE_COST). `prepare` measures every config
# one of its points would pick, so that the fit's own pick is always among the measured.
IGEMM_NAMES = ("IM2COL_READS", "IGEMM_SIZE_COST", "IGEMM_N_THREAD_COST", "IGEMM_WASTE_COST")
IGEMM_GRID = ((1, 2, 4, 8), (0, 0.25, 0.5), (0, 0.5, 1, 2), (0, 1, 2, 4))


def constants_module(name: str):
    """The decision module that holds constant `name`: kernel_config's, its sums', split_k's, else
    triton_conv's (the Triton kernel's tiles)."""
    from schedc.decisions import kernel_config, split_k, triton_conv
    from schedc.decisions.kernel_config import sums

    return next((m for m in (sums, split_k, triton_conv) if hasattr(m, name) and not hasattr(kernel_config, name)), kernel_config)


def _with_constants(names, values, work):
    """`work()` with the constants `names` (kernel_config's, its sums', split_k's or triton_conv's) set to `values`, then restored."""
    modules = [constants_module(name) for name in names]
    saved = [getattr(module, name) for module, name in zip(modules, names)]
    for module, name, value in zip(modules, names, values):
        setattr(module, name, value)
    try:
        return work()
    finally:
        for module, name, value in zip(modules, names, saved):
            setattr(module, name, value)


def igemm_grid_picks(sig) -> list:
    """The config each point of IGEMM_GRID would pick for an f32 implicit GEMM (else none)."""
    import itertools

    from schedc.decisions import kernel_config as kc

    if sig.element_type != "f32" or kc.igemm_form(sig) is None:
        return []
    everything = kc.candidate_configs(sig, limit=100000)
    if not everything:
        return []
    picks = []
    for values in itertools.product(*IGEMM_GRID):
        pick = _with_constants(IGEMM_NAMES, values, lambda: min(everything, key=lambda c: (kc.estimate(sig, c), c.label())))
        if pick not in picks:
            picks.append(pick)
    return picks


def prepare(folder: str, models: list[str], candidates: int, padded_only: bool = False, grid_picks: bool = False) -> None:
    """`schedc tune prepare --target=cuda` that also measures every IGEMM_GRID pick, and every
    SIMT tiling of f32 matmuls (`simt_grid`); with `grid_picks`, the candidates and the picks
    of the fits' grids alone (IGEMM_GRID, MMA_GRID): a folder that judges any fitted constants
    (a held-out model's)."""
    from schedc.targets import resolve_target
    from schedc.tune.prepare import TuneOptions, prepare as tune_prepare

    from schedc.decisions import kernel_config as kc

    def extra(sig):  # and the plain SIMT tiles a rows-form contraction had before
        if grid_picks:
            return igemm_grid_picks(sig) + mma_grid_picks(sig)
        return (igemm_grid_picks(sig) + mma_grid_picks(sig) + (kc._simt_candidates(sig, candidates) if kc.rows_form(sig) else []) + simt_grid(sig, padded_only)
                + matvec_grid(sig) + half_contraction_grid(sig))

    manifest = tune_prepare(models, folder, TuneOptions(resolve_target("cuda"), candidates=candidates, extra=extra))
    configs = sum(len(k["configs"]) for k in manifest["kernels"])
    print(f"{len(manifest['kernels'])} dispatches, {configs} configs in {folder}")


CPU_SWEEP = ("convs", "cpu_convs", "cpu_wide_convs", "cpu_deep_convs", "matmuls")


def cpu(database: str | None, names: tuple[str, ...] = CPU_SWEEP, add: bool = False, modes: tuple[str, ...] = (),
        keys: tuple[str, ...] = ()) -> None:
    """`schedc tune --target=llvm-cpu` over every CPU sweep shape (CPU_SWEEP's models, or
    `names`), into `database` (default: the built-in one for this host's ISA), replaced, or with
    `add` merged into it; `modes`: only these modes measured (plain first); `keys` ("mode/layout"):
    only these times merged into the ops the database holds."""
    import tempfile
    from pathlib import Path

    import schedc
    from schedc.decisions.cpu_config import host_isa
    from schedc.targets import host_cpu_features, resolve_target
    from schedc.tune import cpu as tune_cpu

    isa = host_isa(host_cpu_features())
    path = database or str(tune_cpu.builtin_path(isa))
    if not add:
        Path(path).unlink(missing_ok=True)
    options = tune_cpu.CpuTuneOptions(resolve_target("llvm-cpu"))
    with tempfile.TemporaryDirectory(prefix="schedc-sweep-") as folder:
        models = []
        for name in names:
            model, inputs = SWEEP[name]()
            models.append(str(Path(folder) / f"{name}.mlir"))
            Path(models[-1]).write_text(schedc.import_torch(model, *inputs))
        manifest = tune_cpu.prepare(models, str(Path(folder) / "tune"), options, isa, *((modes,) if modes else ()))
        tune_cpu.bench(str(Path(folder) / "tune"), calls=100)
        database, kept, path = tune_cpu.merge(str(Path(folder) / "tune"), path, isa, keys)
    print(f"{len(kept)} of {len(manifest['kernels'])} ops measured into {path}")


def cpu_loo(database: str | None) -> None:
    """cpu-config's layout choice judged on the CPU database itself, each window convolution
    left out in turn and estimated from the others (`estimate`'s neighbours), in plain mode,
    on time alone (no im2col memory rule): the chosen layout's measured time over the fastest
    measured layout's, chosen cautiously (cpu-config's default) and on the median ratios."""
    import statistics

    from schedc.decisions import cpu_config as cc
    from schedc.targets import host_cpu_features

    whole = cc.CpuDatabase.load(database) if database else cc.default_database(cc.host_isa(host_cpu_features()))
    left_out = sorted(k for k, e in whole.entries.items() if e.shape.kind == "conv" and e.shape.kh * e.shape.kw > 1)

    def regrets(cautious: bool) -> list[tuple[float, str, str]]:
        rows = []
        for key in left_out:
            entry = whole.entries[key]
            others = cc.CpuDatabase(whole.isa, {k: e for k, e in whole.entries.items() if k != key})
            layout = cc.choose_plan([entry.shape], others, modes=("plain",), im2col_min_gain=1.0, cautious=cautious).ops[0].layout
            measured = {l: entry.time("plain", l) for l in entry.shape.layouts("plain") if entry.time("plain", l)}
            rows.append((measured.get(layout, measured["nchw"]) / min(measured.values()), layout, key))
        return rows

    print(f"{len(left_out)} window convolutions of {whole.path}, each estimated from the others:")
    for label, cautious in (("chosen on the median ratios", False), ("chosen cautiously (the default)", True)):
        rows = regrets(cautious)
        mean = math.exp(statistics.mean(math.log(r) for r, _, _ in rows))
        print(f"{label}: chosen/fastest geometric mean {mean:.3f}, largest {max(rows)[0]:.2f}, over 1.5x on {sum(r > 1.5 for r, _, _ in rows)}")
        for regret, layout, key in sorted(rows, reverse=True)[:3]:
            print(f"    {regret:5.2f}x  {layout:<8} {key}")
    # the estimates a plan's total sums: each entry's plain-mode times from the others
    errors: dict[str, list[float]] = {}
    for key, entry in whole.entries.items():
        others = cc.CpuDatabase(whole.isa, {k: e for k, e in whole.entries.items() if k != key})
        _, times = cc.estimate(entry.shape, others)
        for candidate in ("plain/nchw", "plain/im2col"):
            if candidate in times and candidate in entry.times_us:
                errors.setdefault(candidate, []).append(abs(math.log(times[candidate] / entry.times_us[candidate])))
    for candidate, found in errors.items():
        print(f"{candidate} estimated from the others, {len(found)} entries: off by {math.exp(statistics.median(found)):.2f}x "
              f"(median), {math.exp(statistics.mean(found)):.2f}x (geometric mean)")


def import_models(folder: str, dtypes: str = "f32,f16", names: str = "convs,matmuls") -> None:
    """Each GPU sweep model in each dtype as torch-dialect MLIR, for `schedc tune prepare`."""
    from pathlib import Path

    import schedc

    out = Path(folder)
    out.mkdir(parents=True, exist_ok=True)
    for name in names.split(","):
        for dtype in dtypes.split(","):
            model, inputs = SWEEP[name]()
            torch_dtype = {"f32": torch.float32, "f16": torch.float16, "bf16": torch.bfloat16}[dtype]
            model, inputs = model.to(torch_dtype), tuple(x.to(torch_dtype) for x in inputs)
            path = out / f"{name}.{dtype}.mlir"
            path.write_text(schedc.import_torch(model, *inputs))
            print(f"wrote {path}")


if __name__ == "__main__":
    if len(sys.argv) >= 3 and sys.argv[1] == "import":
        import argparse

        parser = argparse.ArgumentParser(prog="sweep.py import")
        parser.add_argument("folder")
        parser.add_argument("--dtypes", default="f32,f16")
        parser.add_argument("--models", default="convs,matmuls")
        args = parser.parse_args(sys.argv[2:])
        import_models(args.folder, args.dtypes, args.models)
    elif len(sys.argv) == 3 and sys.argv[1] == "fit":
        fit(sys.argv[2])
    elif len(sys.argv) >= 3 and sys.argv[1] == "fit-mma":
        fit_mma(sys.argv[2:])
    elif len(sys.argv) >= 3 and sys.argv[1] == "judge-mma":
        judge_mma(sys.argv[2:])
    elif len(sys.argv) >= 3 and sys.argv[1] == "fit-matvec":
        fit_matvec(sys.argv[2:])
    elif len(sys.argv) == 3 and sys.argv[1] == "judge":
        judge(sys.argv[2])
    elif len(sys.argv) >= 4 and sys.argv[1] == "prepare":
        import argparse

        parser = argparse.ArgumentParser(prog="sweep.py prepare")
        parser.add_argument("folder")
        parser.add_argument("models", nargs="+")
        parser.add_argument("--candidates", type=int, default=8)
        parser.add_argument("--padded-only", action="store_true", help="f32 matmuls: the padded SIMT tilings alone")
        parser.add_argument("--grid-picks", action="store_true", help="the candidates and the fits' grid picks alone (judging folders)")
        args = parser.parse_args(sys.argv[2:])
        prepare(args.folder, args.models, args.candidates, args.padded_only, args.grid_picks)
    elif len(sys.argv) >= 2 and sys.argv[1] == "cpu":
        import argparse

        parser = argparse.ArgumentParser(prog="sweep.py cpu")
        parser.add_argument("database", nargs="?")
        parser.add_argument("--models", default=",".join(CPU_SWEEP), help="the sweep models to measure")
        parser.add_argument("--add", action="store_true", help="merge into the database instead of replacing it")
        parser.add_argument("--modes", default="", help="only these modes measured, plain first (default: all)")
        parser.add_argument("--keys", default="", help="only these mode/layout times merged into the ops the database holds")
        args = parser.parse_args(sys.argv[2:])
        split = lambda text: tuple(t for t in text.split(",") if t)  # noqa: E731
        cpu(args.database, split(args.models), args.add, split(args.modes), split(args.keys))
    elif len(sys.argv) in (2, 3) and sys.argv[1] == "cpu-loo":
        cpu_loo(sys.argv[2] if len(sys.argv) == 3 else None)
    else:
        print(__doc__)
