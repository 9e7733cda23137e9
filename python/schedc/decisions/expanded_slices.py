"""Where a slice that a reshape splits can be taken after the reshape instead (the decision of
the expanded-slices pass, over plain data).

GPT-2's attention splits its fused Q/K/V projection, a [1, rows, 2304] tensor, into three
[rows, 768] column slices and splits each slice's columns into 12 heads of 64:

    %s = tensor.extract_slice %qkv[0, 0, 768] [1, rows, 768] [1, 1, 1] : ... to tensor<rowsx768xf16>
    %k = tensor.expand_shape %s [[0], [1, 2]] output_shape [rows, 12, 64]

IREE 3.13 clones a slice into the dispatches that read it (a load at an offset), but not a slice
an `expand_shape` reads: each such slice was a copy of its own (three `slow_memcpy` dispatches
per layer of a prefill). Expanding the whole tensor first, [1, rows, 36, 64], and slicing heads
12..23 of it gives the same [rows, 12, 64] tensor as a slice the readers' dispatches take in.
That holds when the reshape splits the sliced dimension into an outer part and inner parts
that its size, the slice's offset and the slice's size are all multiples of.
"""

from __future__ import annotations

import math
from dataclasses import dataclass


@dataclass(frozen=True)
class ExpandedSlice:
    """The source reshaped to `shape` (`groups`: the new dimensions of each source dimension),
    then sliced at `offsets` for `sizes` (unit strides), dropping the source's dropped unit
    dimensions as the original slice did."""

    shape: tuple[int, ...]
    groups: tuple[tuple[int, ...], ...]
    offsets: tuple[int, ...]
    sizes: tuple[int, ...]


def kept_dims(source: tuple[int, ...], sizes: tuple[int, ...], sliced: tuple[int, ...]) -> list[int] | None:
    """The source dimension of each dimension of a rank-reducing slice's result (`sliced`), as
    MLIR's `computeRankReductionMask` pairs them: each size in order matches the next result
    dimension if equal, and is dropped if not and a unit. None when `sliced` is no such
    reduction."""
    kept, j = [], 0
    for d, size in enumerate(sizes):
        if j < len(sliced) and size == sliced[j]:
            kept.append(d)
            j += 1
        elif size != 1:
            return None
    return kept if j == len(sliced) and len(source) == len(sizes) else None


def expanded_slice(source: tuple[int, ...], offsets: tuple[int, ...], sizes: tuple[int, ...], strides: tuple[int, ...],
                   sliced: tuple[int, ...], groups: tuple[tuple[int, ...], ...], expanded: tuple[int, ...]) -> ExpandedSlice | None:
    """The slice-after-reshape form of `expand_shape(extract_slice(source))`, or None where it
    does not apply: a stride, a dynamic size, no split of a sliced dimension (nothing to gain),
    or a split that the sizes and offsets are not multiples of.

    `source` is the slice's source shape, `offsets`/`sizes`/`strides` the slice's, `sliced` its
    result's shape; `groups` the reshape's reassociation (the expanded dimensions of each
    dimension of `sliced`) and `expanded` its result's shape."""
    static = (*source, *offsets, *sizes, *sliced, *expanded)
    if any(s != 1 for s in strides) or any(v < 0 for v in static) or len(groups) != len(sliced):
        return None
    kept = kept_dims(source, sizes, sliced)
    if kept is None:
        return None
    group_of = {d: groups[r] for r, d in enumerate(kept)}
    shape, new_groups, new_offsets, new_sizes = [], [], [], []
    gains = False
    for d, extent in enumerate(source):
        group = group_of.get(d, ())
        inner = [expanded[e] for e in group[1:]]
        size = math.prod(inner)
        if extent % size or offsets[d] % size or sizes[d] % size:
            return None
        gains |= bool(inner) and sizes[d] != extent
        new_groups.append(tuple(range(len(shape), len(shape) + 1 + len(inner))))
        shape += [extent // size, *inner]
        new_offsets += [offsets[d] // size] + [0] * len(inner)
        new_sizes += [sizes[d] // size, *inner]
    if not gains:
        return None
    return ExpandedSlice(tuple(shape), tuple(new_groups), tuple(new_offsets), tuple(new_sizes))
