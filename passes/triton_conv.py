"""triton-conv: on cuda, run f16 and bf16 convolutions in schedc's Triton kernel.

Part of every cuda compile that tunes (`triton-conv{enabled=false}` turns it off). It runs where
IREE's input conversion ends (linalg on tensors, before dispatch formation), before split-k:
each `linalg.conv_2d_nchw_fchw` that qualifies (schedc.ir.triton_conv.conv_sizes) and that the
rule gives the kernel (schedc.decisions.triton_conv.left_to_iree: a window of more than one
position, 16 channels or more) gets its tiles (conv_tiles), its kernel compiled ahead of time
to PTX by Triton (schedc.kernels.triton_conv), and a dispatch of that PTX in its place. Where
Triton is not installed (`pip install schedc[cuda]`), the pass leaves every convolution to IREE
and the report says why.
"""

from __future__ import annotations

from dataclasses import dataclass

from schedc.decisions import triton_conv as rule
from schedc.ir.iree import function_name, function_ops, ops_named
from schedc.kernels import KernelUnavailable
from schedc.kernels.triton_conv import TritonMissing
from schedc.options import Phase
from schedc.passes.base import PassInfo


@dataclass(frozen=True)
class Options:
    enabled: bool = True
    # Every qualifying convolution, the 1x1s and stems the rule leaves to IREE too (to time the
    # rule's choice against: bench/generalization.py and bench/layers.py --triton).
    every: bool = False
    # f32 convolutions too, their products in TF32 (10 mantissa bits where f32 has 23; f32 sums),
    # as torch's cuDNN convolutions are by default (torch.backends.cudnn.allow_tf32); every one,
    # whatever the rule says of f16 ones (`takes_every_f32`). Off: f32 convolutions keep IREE's
    # f32 kernels, unless the compile says --tf32.
    tf32: bool = False
    # How the kernel reads the image and the filter: nhwc (the image channels last, transposed
    # where it is made, and the filter as RSCF: a step's channels are one vector load) or nchw
    # (both as torch lays them out); empty: the rule's (schedc.decisions.triton_conv.CHANNELS_LAST).
    layout: str = ""
    # The GPU the kernels are compiled for (80: sm_80 PTX, which any later GPU's driver
    # compiles; 90: sm_90a, H100 and H200 only); 0: the compile's --cuda-arch.
    arch: int = 0
    # The kernel runs the elementwise ops after its convolution and a split one sums its own
    # parts (schedc.decisions.triton_conv.EPILOGUES and SERIAL_SUM, whatever they say); false:
    # as the rule says.
    epilogues: bool = False

    def __post_init__(self):
        if self.layout not in ("", "nchw", "nhwc"):
            raise ValueError(f"layout must be nchw or nhwc (empty: the rule's), not '{self.layout}'")
        if self.arch not in (0, 80, 86, 89, 90):
            raise ValueError(f"arch must be 0 (the compile's --cuda-arch), 80, 86, 89 or 90, not {self.arch}")


# --cuda-arch (schedc.targets.CUDA_ARCHS) -> the Triton target; older chips have no kernel.
TRITON_ARCHS = {"sm_80": 80, "a100": 80, "sm_86": 86, "sm_87": 86, "sm_89": 89, "rtx4090": 89}


def _arch(options: Options, context) -> int | None:
    if options.arch:
        return options.arch
    return TRITON_ARCHS.get(context.arch or "sm_80")


def triton_conv(module, pass_, options: Options, context) -> None:
    from schedc.ir.triton_conv import rewrite

    if not options.enabled or (context.target or "cuda") != "cuda":
        return
    records = context.records.setdefault("triton-conv", {})
    executables: dict[str, str] = {}
    arch = _arch(options, context)
    if arch is None:
        records["unavailable"] = f"schedc's Triton kernel needs sm_80 or later (--cuda-arch={context.arch}); arch=80 or 90 overrides it"
        return
    channels_last = options.layout == "nhwc" or (not options.layout and rule.CHANNELS_LAST)
    for function in function_ops(module):
        replaced, left, declined = [], [], []
        # Last first: a convolution's kernel that reads channels last makes its image's transpose,
        # which the kernel of the convolution before it may then write in its place.
        for op in reversed(ops_named(function, "linalg.conv_2d_nchw_fchw")):
            try:
                decided = rewrite(op, arch, executables, options.every, options.tf32 or context.tf32, channels_last, options.epilogues)
            except TritonMissing as e:  # said once, at the first convolution the kernel would take
                records["unavailable"] = str(e)
                context.warn(op.location, f"triton-conv: {e}; every convolution stays on IREE's kernels")
                return
            except KernelUnavailable as e:  # this one stays IREE's
                declined.append(str(e))
                continue
            if decided is not None:
                (left if "left_to_iree" in decided else replaced).append(decided)
        if replaced or left or declined:  # in program order
            records[function_name(function)] = {"arch": arch, "convolutions": replaced[::-1], "left_to_iree": left[::-1], "declined": declined[::-1]}


PASS = PassInfo(
    name="triton-conv",
    summary="on cuda, run f16 and bf16 convolutions in schedc's Triton kernel (compiled ahead of time to PTX) instead of IREE's code",
    run=triton_conv,
    options=Options,
    phase=Phase.INPUT,
    implicit_for=("cuda",),
)
