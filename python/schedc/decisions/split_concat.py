"""Which reductions over a concatenation can read its pieces instead (the decision of the
split-concat pass, over plain data).

A concatenation here is a `tensor.concat` (torch's cat, as IREE's input phase has it) or a
chain of `tensor.insert_slice`s into a `tensor.empty`, each piece covering every dimension but
one, `dim`, along which the pieces tile the whole extent. A reduction that reads the
concatenation with `dim` as one of its reduction loops can run once per piece, in the pieces'
order, each run starting from the previous one's result: linalg reduces in loop order, so the
result is the same, and the concatenation is never built.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from schedc.decisions.cpu_config import IREE_DEFAULT, CpuDatabase, CpuPlan, OpChoice, OpShape, estimate


@dataclass(frozen=True)
class Piece:
    offsets: tuple[int, ...]
    sizes: tuple[int, ...]
    strides: tuple[int, ...]


def split_dimension(shape: tuple[int, ...], pieces: list[Piece]) -> tuple[int, list[tuple[int, int]]] | None:
    """(dim, [(offset, size) per piece in the pieces' order along dim]) when the pieces tile
    `shape` along one dimension and cover it whole in every other; None otherwise."""
    if len(pieces) < 2:
        return None
    split = None
    for piece in pieces:
        if any(s != 1 for s in piece.strides) or len(piece.offsets) != len(shape):
            return None
        for d, (offset, size) in enumerate(zip(piece.offsets, piece.sizes)):
            if (offset, size) == (0, shape[d]):
                continue
            if split not in (None, d):
                return None
            split = d
    if split is None:
        return None
    spans = sorted((p.offsets[split], p.sizes[split]) for p in pieces)
    end = 0
    for offset, size in spans:
        if offset != end or size <= 0:
            return None
        end += size
    return (split, spans) if end == shape[split] else None


def collapsed_dimension(dim: int, shape: tuple[int, ...], reassociation: list[list[int]]) -> int | None:
    """The dimension of a collapse_shape's result that holds `dim` of its source, when the
    other source dimensions folded into it have size 1 (so a piece along `dim` stays a piece
    along the result's dimension); None otherwise."""
    for result_dim, group in enumerate(reassociation):
        if dim in group:
            return result_dim if all(shape[d] == 1 for d in group if d != dim) else None
    return None


# -- whether a split pays (split-concat{when=faster}, the default on llvm-cpu) -------------------
#
# Memory: the concatenation is gone, but each piece's reduction makes a partial result the size
# of the whole one's, and on llvm-cpu these are not added up one after another: cpu-config's
# kernel adds its initial value after the call, and IREE fuses that chain of adds into one
# dispatch, which reads every partial result at once (DARTS, bench/README.md). So a split is
# only sure not to raise the peak where a partial result is no larger than the piece it is made
# from (`partials_fit`). Time: a reduction over fewer channels may run slower per multiply-add,
# and the partial results are read and written once per piece. So the pass splits where both
# hold, time by cpu-config's estimate (its database of measured CPU times) of the module with
# the pieces against it whole, and declines, with the reason in the report, where not.


def partials_fit(result_bytes: int, piece_bytes: list[int]) -> bool:
    """Whether a reduction's partial results (`result_bytes` each) are no larger than any of
    the pieces they are made from."""
    return result_bytes <= min(piece_bytes)


def piece_shapes(whole: OpShape, sizes: list[int]) -> list[OpShape]:
    """The reductions over each piece: `whole` with the piece's share of the reduced channels
    (a matmul's K); each after the first adds into the previous one's result."""
    field = "k" if whole.kind == "matmul" else "cin"
    return [replace(whole, **{field: size}, accumulates=whole.accumulates or i > 0) for i, size in enumerate(sizes)]


@dataclass(frozen=True)
class SplitDecision:
    split: bool
    reason: str  # why, in words, for the report
    kept_us: float | None = None  # the module's estimated time with the reduction whole
    split_us: float | None = None  # and with it split


def iree_build(shapes: list[OpShape], database: CpuDatabase | None) -> CpuPlan:
    """The plan of a compile without cpu-config (--no-tuning): every op in IREE's own build,
    at the database's estimate of it."""
    key = "/".join(IREE_DEFAULT)
    times = [estimate(shape, database)[1].get(key) for shape in shapes]
    ops = tuple(OpChoice(shape, IREE_DEFAULT[1], "estimate", time, False) for shape, time in zip(shapes, times))
    return CpuPlan(IREE_DEFAULT[0], ops, {IREE_DEFAULT[0]: sum(t for t in times if t is not None)})


def split_pays(shapes: list[OpShape], index: int, sizes: list[int], plan) -> SplitDecision:
    """Whether the module whose convolutions and matmuls are `shapes` is estimated no slower with
    `shapes[index]` reduced piece by piece (`sizes`) than whole. `plan(shapes)` plans the module
    as the compile will build it (cpu-config's `choose_plan` with its database, or `iree_build`
    without cpu-config); its fastest mode's total is the module's estimate. An op it cannot
    estimate counts nothing there, so a split of one is declined."""
    pieces = piece_shapes(shapes[index], sizes)
    whole, split = plan(shapes), plan(shapes[:index] + pieces + shapes[index + 1:])
    known = [op.time_us is not None for op in split.ops[index:index + len(pieces)]]
    if whole.ops[index].time_us is None or not all(known):
        return SplitDecision(False, "no time estimate for it")
    kept_us, split_us = min(whole.estimates_us.values()), min(split.estimates_us.values())
    if split_us > kept_us:
        return SplitDecision(False, "the module is estimated slower split", kept_us, split_us)
    return SplitDecision(True, "the module is estimated no slower split", kept_us, split_us)
