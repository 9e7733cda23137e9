"""split-k: on cuda, split the reduction of a deep convolution with few outputs into parts.

It runs where IREE's input conversion ends (linalg on tensors, before dispatch formation),
reads each `linalg.conv_2d_nchw_fchw` as plain data (`schedc.ir.cpu_ops.op_shape`), decides
its parts (`schedc.decisions.split_k.choose_split`), and rewrites it as a grouped convolution
of the parts and their sum (`schedc.ir.split_k.split_conv`). kernel-config then configures
the grouped convolution as any other implicit GEMM. An f16 `linalg.matmul` (a Linear layer;
its inputs widened to f32 by torch-mlir are read narrow) is split over K by the same rule as an
f16 1x1 convolution (`schedc.decisions.split_k.matmul_parts`, `schedc.ir.split_k.split_matmul`;
`matmuls=false`: not). A weight gradient (a training step's,
whose window is larger than its output) is split over its window's rows instead (`window=false`:
not) (`window_parts`, `schedc.ir.split_k.split_conv_rows`).
"""

from __future__ import annotations

from dataclasses import dataclass

from schedc.decisions.split_k import MAX_PARTS, WINDOW_ROWS, choose_split, matmul_parts
from schedc.ir.cpu_ops import op_shape
from schedc.ir.iree import function_ops, ops_named
from schedc.ir.split_k import matmul_shape, split_conv, split_conv_rows, split_matmul
from schedc.options import Phase
from schedc.passes.base import PassInfo


@dataclass(frozen=True)
class Options:
    parts: int = 0  # every convolution it can split in this many parts, on any target; 0: chosen per convolution (cuda)
    # f16 1x1 convolutions too, when parts are chosen (schedc.decisions.split_k); false: whole
    pointwise: bool = True
    # f16 matmuls (Linear layers) too, by the same rule as f16 1x1 convolutions; a forced
    # `parts` splits matmuls of any element type whose K divides (false: matmuls stay whole)
    matmuls: bool = True
    # Weight gradients (a window larger than the output) over their window's rows, when parts
    # are chosen (schedc.decisions.split_k.window_parts): the bench CNN's training step 0.936x
    # the time with them on an H100 (bench/remat_gpu.py) ...
    window: bool = True
    # ... or every weight gradient whose rows divide in this many parts, on any target
    rows: int = 0
    # Choose parts as for cuda on any target: a host module with a cuda module's splits, whose
    # dispatches bench/dispatch_diff.py compares with the GPU's one by one.
    anywhere: bool = False

    def __post_init__(self):
        for name in ("parts", "rows"):
            value = getattr(self, name)
            if value < 0 or value > 64 or value & (value - 1):
                raise ValueError(f"{name} must be 0 (chosen) or a power of two up to 64, not {value}")


def split_k(module, pass_, options: Options, context) -> None:
    # Chosen splits are measured on cuda only; a forced part count splits on any target.
    chosen = options.anywhere or (context.target or "cuda") == "cuda"
    if not options.parts and not options.rows and not chosen:
        return
    split = []
    for function in function_ops(module):
        for op in ops_named(function, "linalg.conv_2d_nchw_fchw"):
            shape = op_shape(op)
            if shape is None:
                continue
            parts, over = choose_split(shape, options.parts, options.rows, options.window, options.pointwise, chosen)
            if parts > 1:
                (split_conv_rows if over == WINDOW_ROWS else split_conv)(op, parts)
                split.append({"op": shape.key, "parts": parts, "over": over})
        if options.matmuls and (options.parts or chosen):
            for op in ops_named(function, "linalg.matmul"):
                shape = matmul_shape(op)
                parts = matmul_parts(shape, options.parts) if shape is not None else 1
                if parts > 1:
                    split_matmul(op, parts)
                    split.append({"op": shape.key, "parts": parts, "over": "k"})
    context.records.setdefault("split-k", {})["module"] = {"split": split, "max_parts": options.parts or MAX_PARTS}


PASS = PassInfo(
    name="split-k",
    summary="on cuda, split a deep convolution's or f16 matmul's reduction into parts (a grouped convolution or batched matmul, and a sum) when its outputs are too few to fill the GPU",
    run=split_k,
    options=Options,
    phase=Phase.INPUT,
    implicit_for=("cuda",),
    after=("triton-conv",),  # the convolutions it takes are no longer there to split
)
