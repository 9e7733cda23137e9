"""Which reductions over a concatenation can read its pieces instead (the decision of the
split-concat pass, over plain data).

A concatenation here is a chain of `tensor.insert_slice`s into a `tensor.empty`, each piece
covering every dimension but one, `dim`, along which the pieces tile the whole extent. A
reduction that reads the concatenation with `dim` as one of its reduction loops can run once
per piece, in the pieces' order, each run starting from the previous one's result: linalg
reduces in loop order, so the result is the same, and the concatenation is never built.
"""

from __future__ import annotations

from dataclasses import dataclass


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
