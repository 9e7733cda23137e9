"""mma-operands: on cuda, give each f16/bf16 contraction its inputs in the order IREE's
tensor-core code generation computes correctly.

IREE 3.13 lowers an f16 or bf16 contraction on sm_80 to mma.sync, with its own configs and with
kernel-config's, and gets it wrong when the contraction's first input does not index the
output's leading dimension while the second does. Every 1x1 convolution in NCHW is such a
contraction after IREE's preprocessing:

    // before: wrong on the GPU (relative max error 0.8-1.0 against torch)
    %r = linalg.generic {indexing_maps = [(m, n, k) -> (k, n), (m, n, k) -> (m, k), (m, n, k) -> (m, n)] ...}
           ins(%input, %filter : tensor<64x3025xf16>, tensor<16x64xf16>) ...
    // after: the same loops and arithmetic, the inputs (and the body's arguments) swapped
    %r = linalg.generic {indexing_maps = [(m, n, k) -> (m, k), (m, n, k) -> (k, n), (m, n, k) -> (m, n)] ...}
           ins(%filter, %input : tensor<16x64xf16>, tensor<64x3025xf16>) ...

Measured on an H200 with bench/layers.py: swapped, each of those layers matched torch to 8e-4.
The pass runs on every cuda compile, `--no-tuning` too (it is a correction, not a tuning), and
before kernel-config, so configs and the kernel database see the swapped op.
"""

from __future__ import annotations

from dataclasses import dataclass

from schedc.ir.dispatches import executables, mma_swap_candidates, swap_first_inputs
from schedc.passes.base import PassInfo


@dataclass(frozen=True)
class Options:
    # false: list what it would swap and swap nothing (`--passes=mma-operands{swap=false},...`),
    # to check on a GPU whether a wrong result comes from the swap or from IREE's code.
    swap: bool = True


def mma_operands(module, pass_, options: Options, context) -> None:
    if (context.target or "cuda") != "cuda":
        return
    candidates = []
    for executable in executables(module):
        for op in mma_swap_candidates(executable):
            if options.swap:
                swap_first_inputs(op)
            candidates.append(executable.entry)
    record = {"swapped": candidates} if options.swap else {"swapped": [], "left": candidates}
    context.records.setdefault("mma-operands", {})["module"] = record


PASS = PassInfo(
    name="mma-operands",
    summary="on cuda, put an f16/bf16 contraction's inputs in the order IREE's tensor-core code computes correctly",
    run=mma_operands,
    options=Options,
    implicit_for=("cuda",),
    always=True,
)
