"""Row reductions (a softmax, a layer norm, a mean over the last dimension) whose rows IREE 3.13
leaves to one thread each: configs over IREE's VectorDistribute pipeline. Pure Python over
`RowDispatch` data; `schedc.ir.rows` reads and writes the IR, `passes/reduction_config.py` is
the pass.

IREE 3.13 gives a row reduction a subgroup per row (VectorDistribute: 32 lanes along the row,
each reading 16 bytes a step, the partial results combined by subgroup shuffles) only when
its row is a multiple of the lanes' step. Any other row falls back to TileAndFuse with one
thread per row: ViT's softmax over 197 keys (a prime) runs as 25 workgroups of 32 threads,
each thread walking its row three times, 34.4 us for 3x197 rows on an H200 (where a subgroup
per row needs a few). The same VectorDistribute config compiles for any row length: IREE masks
the last step's lanes past the row's end.

    rows of 197 f16:   workgroup [1, 1, 0]  lanes [1, 1, 32]  subgroups [1, 1, 1]
                       thread [0, 0, 8]     partial reduction [0, 0, 256] (one masked step)

as IREE spells its own configs for rows of 256, on every op of the dispatch: the reductions'
`partial_reduction`, the elementwise ops' `serial` step, the root's `workgroup`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from schedc.decisions.kernel_config import SUBGROUP

# A lane's widest load (IREE's own row configs read 8 f16 or 4 f32 per lane and step).
LOAD_BITS = 128
# IREE's own configs for aligned rows: one subgroup per row up to 1,024 elements, then one
# more per 1,024 (4 for rows of 4,096), at most MAX_SUBGROUPS.
ROW_PER_SUBGROUP = 1024
MAX_SUBGROUPS = 4
# Shorter rows keep IREE's one thread per row: a lane step would leave most lanes masked.
MIN_ROW = 32


@dataclass(frozen=True)
class RowDispatch:
    """A dispatch whose ops share one loop nest and reduce, if at all, only its innermost loop."""

    loops: tuple[int, ...]  # the shared loop ranges, the row last
    ops: tuple[str, ...]  # per op, in order: "reduction" (over the row) or "elementwise"
    root: int  # the op IREE configured (it carries the lowering config and the workgroup tile)
    element_bits: int  # the narrowest element type read along the row
    pipeline: str  # IREE's own pipeline for the dispatch (TileAndFuse, VectorDistribute, ...)

    @property
    def row(self) -> int:
        return self.loops[-1]


@dataclass(frozen=True)
class RowConfig:
    """A subgroup's lanes along the row, `thread` elements each per step, `subgroups` per row."""

    thread: int
    subgroups: int

    @property
    def step(self) -> int:
        return SUBGROUP * self.subgroups * self.thread

    @property
    def workgroup_size(self) -> int:
        return SUBGROUP * self.subgroups

    def label(self) -> str:
        return f"row lanes 32 x {self.thread}, {self.subgroups} subgroup{'s' if self.subgroups > 1 else ''}, step {self.step}"


def row_config(dispatch: RowDispatch, thread: int = 0, subgroups: int = 0) -> RowConfig | None:
    """The config for `dispatch`, or None where IREE's own stands (it already reduces a row per
    subgroup, there is no reduction, or the row is short). `thread` and `subgroups` force those
    (0: chosen), for measuring."""
    if dispatch.pipeline != "TileAndFuse" or "reduction" not in dispatch.ops or dispatch.row < MIN_ROW:
        return None
    widest = max(1, LOAD_BITS // dispatch.element_bits)
    chosen_thread = min(widest, 1 << max(0, math.ceil(math.log2(math.ceil(dispatch.row / SUBGROUP)))))
    chosen_subgroups = max(1, min(MAX_SUBGROUPS, dispatch.row // ROW_PER_SUBGROUP))
    return RowConfig(thread or chosen_thread, subgroups or chosen_subgroups)


def _ints(values) -> str:
    return "[" + ", ".join(str(v) for v in values) + "]"


def lowering_configs(dispatch: RowDispatch, config: RowConfig) -> list[str]:
    """IREE's `lowering_config` attribute for each op of the dispatch, as IREE 3.13 spells its
    own for aligned rows."""
    rank = len(dispatch.loops)
    last = lambda value: [0] * (rank - 1) + [value]  # noqa: E731
    common = (f"lane_basis = [{_ints([1] * (rank - 1) + [SUBGROUP])}, {_ints(range(rank))}], "
              f"subgroup_basis = [{_ints([1] * (rank - 1) + [config.subgroups])}, {_ints(range(rank))}], "
              f"thread = {_ints(last(config.thread))}")
    configs = []
    for i, kind in enumerate(dispatch.ops):
        step = f"partial_reduction = {_ints(last(config.step))}" if kind == "reduction" else f"serial = {_ints(last(config.step))}"
        workgroup = f", workgroup = {_ints([1] * (rank - 1) + [0])}" if i == dispatch.root else ""
        configs.append(f"#iree_gpu.lowering_config<{{{common}, {step}{workgroup}}}>")
    return configs


def translation_info(config: RowConfig) -> str:
    return ("#iree_codegen.translation_info<pipeline = #iree_gpu.pipeline<VectorDistribute> "
            f"workgroup_size = [{config.workgroup_size}, 1, 1] subgroup_size = {SUBGROUP}>")
