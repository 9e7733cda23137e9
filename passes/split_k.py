"""split-k: on cuda, split the reduction of a deep convolution with few outputs into parts.

It runs where IREE's input conversion ends (linalg on tensors, before dispatch formation),
reads each `linalg.conv_2d_nchw_fchw` as plain data (`schedc.ir.cpu_ops.op_shape`), decides
its parts (`schedc.decisions.split_k.split_parts`), and rewrites it as a grouped convolution
of the parts and their sum (`schedc.ir.split_k.split_conv`). kernel-config then configures
the grouped convolution as any other implicit GEMM.
"""

from __future__ import annotations

from dataclasses import dataclass

from schedc.decisions.split_k import MAX_PARTS, can_split, split_parts
from schedc.ir.cpu_ops import op_shape
from schedc.ir.iree import function_ops, ops_named
from schedc.ir.split_k import split_conv
from schedc.options import Phase
from schedc.passes.base import PassInfo


@dataclass(frozen=True)
class Options:
    parts: int = 0  # every convolution it can split in this many parts, on any target; 0: chosen per convolution (cuda)
    # f16 1x1 convolutions too, when parts are chosen: faster, but a whole MobileNetV2 came out
    # wrong with them split on an H100 (schedc.decisions.split_k); check its numerics first.
    pointwise: bool = False

    def __post_init__(self):
        if self.parts < 0 or self.parts > 64 or self.parts & (self.parts - 1):
            raise ValueError(f"parts must be 0 (chosen) or a power of two up to 64, not {self.parts}")


def split_k(module, pass_, options: Options, context) -> None:
    # Chosen splits are measured on cuda only; a forced part count splits on any target.
    if not options.parts and (context.target or "cuda") != "cuda":
        return
    split = []
    for function in function_ops(module):
        for op in ops_named(function, "linalg.conv_2d_nchw_fchw"):
            shape = op_shape(op)
            if shape is None:
                continue
            parts = options.parts if options.parts else split_parts(shape, pointwise_f16=options.pointwise)
            if parts > 1 and can_split(shape, parts):
                split_conv(op, parts)
                split.append({"op": shape.key, "parts": parts})
    context.records.setdefault("split-k", {})["module"] = {"split": split, "max_parts": options.parts or MAX_PARTS}


PASS = PassInfo(
    name="split-k",
    summary="on cuda, split a deep convolution's reduction into parts (a grouped convolution and a sum) when its outputs are too few to fill the GPU",
    run=split_k,
    options=Options,
    phase=Phase.INPUT,
    implicit_for=("cuda",),
)
