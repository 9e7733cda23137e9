"""reduction-config: on cuda, give a row reduction that IREE leaves to one thread per row a
subgroup per row instead. It runs in every cuda compile: on an H200 it took ViT's replayed call
(held-out) from 0.451 to 0.320 ms in f16 and from 0.485 to 0.363 in f32, its numerics unchanged
(bench/README.md, "The held-out suite on the GPU, eighth session").

It runs where IREE has configured every executable (the end of its executable-configurations
phase), reads each as a row reduction (`schedc.ir.rows.row_dispatch`: a softmax, a layer norm,
a mean over the last dimension), and where IREE chose TileAndFuse for one, replaces IREE's
config by the VectorDistribute config IREE gives aligned rows, for the row it has
(`schedc.decisions.kernel_config.rows.row_config`):

    // before: ViT's softmax over 197 keys, 32 threads a workgroup, one row each
    func.func @..._softmax_3x197x197xf32_generic() attributes {translation_info = #iree_codegen.translation_info<
        pipeline = #iree_gpu.pipeline<TileAndFuse> workgroup_size = [32, 1, 1] subgroup_size = 32>}
      %8 = linalg.generic ... {lowering_config = #iree_gpu.lowering_config<{reduction = [0, 0, 1], thread = [1, 1, 0], workgroup = [4, 8, 0]}>}
    // after: a subgroup per row, 8 elements a lane, the last lanes masked
    func.func @..._softmax_3x197x197xf32_generic() attributes {translation_info = #iree_codegen.translation_info<
        pipeline = #iree_gpu.pipeline<VectorDistribute> workgroup_size = [32, 1, 1] subgroup_size = 32>}
      %8 = linalg.generic ... {lowering_config = #iree_gpu.lowering_config<{lane_basis = [[1, 1, 32], [0, 1, 2]],
             subgroup_basis = [[1, 1, 1], [0, 1, 2]], thread = [0, 0, 8], partial_reduction = [0, 0, 256], workgroup = [1, 1, 0]}>}
"""

from __future__ import annotations

from dataclasses import dataclass

from schedc.decisions.kernel_config.rows import row_config
from schedc.ir.rows import apply_row_config, configured_dispatches, row_dispatch
from schedc.options import Phase
from schedc.passes.base import PassInfo


@dataclass(frozen=True)
class Options:
    thread: int = 0  # elements a lane reads per step; 0: chosen per dispatch
    subgroups: int = 0  # subgroups per row; 0: chosen per dispatch

    def __post_init__(self):
        for name in ("thread", "subgroups"):
            value = getattr(self, name)
            if value < 0 or value > 16 or value & (value - 1):
                raise ValueError(f"{name} must be 0 (chosen) or a power of two up to 16, not {value}")


def reduction_config(module, pass_, options: Options, context) -> None:
    if (context.target or "cuda") != "cuda":
        return
    configured = []
    for dispatch in configured_dispatches(module):
        row = row_dispatch(dispatch)
        config = row_config(row, options.thread, options.subgroups) if row is not None else None
        if config is None:
            continue
        apply_row_config(dispatch, row, config)
        configured.append({"dispatch": dispatch.entry, "loops": list(row.loops), "config": config.label()})
    context.records.setdefault("reduction-config", {})["module"] = {"configured": configured}


PASS = PassInfo(
    name="reduction-config",
    summary="on cuda, give a row reduction (softmax, layer norm) that IREE leaves to one thread per row a subgroup per row",
    run=reduction_config,
    options=Options,
    phase=Phase.CONFIGURATIONS,
    implicit_for=("cuda",),
)
