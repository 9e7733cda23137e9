"""Which padded tensors their producer can write straight into the padded buffer (the
decision of the padded-producers pass, over plain data).

IREE 3.13 turns a `tensor.pad` into a fill of the padded shape and an `insert_slice` of the
source into it. When the source is a kernel's result and nothing else reads it, the kernel's
dispatch stores into the interior of the padded buffer. When something else reads it too (a
residual connection, a 1x1 convolution beside the padded 3x3), the source keeps its own buffer
and a dispatch of its own copies it into the padded one (`..._slow_memcpy`, about 4.6 us on an
H100 for 64x56x56 f16). The other readers can read the interior of the padded buffer instead,
at the pad's offsets: then the kernel writes the padded buffer alone and the copy is gone.

A source qualifies when a kernel (a linalg op) makes it, one pad reads it, and every other
reader reads it in one of the ways the pass can move by the padding (`READER_KINDS`). Left alone:
- a reshape, a concatenation or a function result, which would copy the interior out again;
- an elementwise op that transposes: ConvNeXt's residual sum reads the projection's NHWC result
  transposed, and with the residual read at moved indices IREE 3.13 no longer fused the sum
  into the projection's dispatch (8 elementwise dispatches of their own against the 7 copies
  saved; f16 0.320 -> 0.354 ms replayed on an H100);
- a source two pads read, since only one of them can own its buffer;
- a source with a unit dimension that is not padded. IREE's global optimization has folded
  those by the time the pass runs, and a 1x64x56x56 insert into 1x64x58x58 written before it
  (at the input phase, sixteenth session) was folded into its producer as a rank-3 store, and
  the host module's results were all NaN.

A concatenation that a pad alone reads (SqueezeNet's fire output before a max pool) is the same
copy one level up: IREE stores each piece's kernel into the concatenation's buffer, then copies
that into the padded one. When the pieces tile an empty tensor exactly and the reshape between
concatenation and pad (if any) only drops unit dimensions, the pieces can be inserted into the
padded buffer at the pad's offsets instead (`concatenation_qualifies`). IREE 3.13 then stores the
first piece's kernel into the padded buffer and copies the others in: SqueezeNet copies half.
"""

from __future__ import annotations

import math
from dataclasses import dataclass


# The readers that can read the interior of the padded buffer instead of the source:
READER_KINDS = (
    # an elementwise linalg.generic with identity or broadcast maps (a residual sum), whose
    # indexing map the pass moves by the low padding
    "elementwise",
    # any other linalg op reading it as an input (a 1x1 convolution), which reads a slice of
    # the padded buffer through a reshape that canonicalization does not fold back into the source
    "linalg",
    # a slice at static offsets (a stride-2 shortcut's input): the same slice, moved
    "slice",
)


@dataclass(frozen=True)
class PaddedSource:
    """One tensor and the ops that read it."""

    shape: tuple[int, ...]
    low: tuple[int, ...]  # the pad's padding before and after each dimension
    high: tuple[int, ...]
    produced_by_kernel: bool
    pads: int  # tensor.pad ops that read it
    other_readers: tuple[str, ...]  # how each other reader reads it: READER_KINDS, or the op's name


def qualifies(source: PaddedSource) -> bool:
    """Whether the pad's producer should write the padded buffer and its other readers read
    the interior (see the module docstring)."""
    if not source.produced_by_kernel or source.pads != 1 or not source.other_readers:
        return False
    if any(kind not in READER_KINDS for kind in source.other_readers):
        return False
    if any(d < 0 for d in source.shape + source.low + source.high) or not any(source.low + source.high):
        return False  # dynamic, or no padding at all
    return all(size != 1 or lo or hi for size, lo, hi in zip(source.shape, source.low, source.high))


@dataclass(frozen=True)
class PaddedConcatenation:
    """A pad's source built by `insert_slice`s of pieces into an empty tensor, seen after the
    reshape between them (unit dimensions dropped): where each piece lands."""

    shape: tuple[int, ...]  # the concatenation's, as the pad reads it
    low: tuple[int, ...]
    high: tuple[int, ...]
    pieces: tuple[tuple[tuple[int, ...], tuple[int, ...]], ...]  # (offsets, sizes) in `shape`
    into_empty: bool  # the first insert's destination is a tensor.empty
    pieces_fit: bool  # each piece's own type has its sizes (no rank-reducing insert left after the reshape)
    read_once: bool  # every insert's result and the reshape's read by the next step alone


def concatenation_qualifies(source: PaddedConcatenation) -> bool:
    """Whether the pieces of a concatenation that a pad alone reads should be inserted into the
    padded buffer (see the module docstring): they must cover the concatenation exactly, once."""
    if not (source.into_empty and source.pieces_fit and source.read_once and len(source.pieces) >= 2):
        return False
    if any(d < 0 for d in source.shape + source.low + source.high) or not any(source.low + source.high):
        return False
    volume = 0
    for offsets, sizes in source.pieces:
        if any(o < 0 or o + s > d for o, s, d in zip(offsets, sizes, source.shape)):
            return False
        volume += math.prod(sizes)
    overlapping = any(_overlap(a, b) for i, a in enumerate(source.pieces) for b in source.pieces[i + 1:])
    return not overlapping and volume == math.prod(source.shape)


def _overlap(a, b) -> bool:
    (oa, sa), (ob, sb) = a, b
    return all(x < y + t and y < x + s for x, s, y, t in zip(oa, sa, ob, sb))
