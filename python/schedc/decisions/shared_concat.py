"""Which concatenations can share one buffer (the decision of the shared-concat pass, over plain
data).

DenseNet's dense blocks concatenate every earlier output before each layer: `cat([x0])`,
`cat([x0, x1])`, ..., `cat([x0, ..., xn])`. IREE builds each as a tensor of its own, copying
every piece into it, while the pieces themselves stay alive for the concatenations after it.
When each concatenation's pieces begin with all of the previous one's, in order, along the same
dimension, one buffer of the last one's size holds them all: every piece is inserted into it
once, when the concatenation that first has it is made, and each concatenation is the buffer's
leading part. IREE then stores each piece's kernel straight into the buffer and copies nothing.
"""

from __future__ import annotations

import math
from dataclasses import dataclass


@dataclass(frozen=True)
class Concatenation:
    """One `tensor.concat` of a function's body, in program order."""

    dim: int
    shape: tuple[int, ...]  # the result's; a negative size is dynamic
    pieces: tuple[int, ...]  # the values it concatenates, as ids


def contiguous(shape: tuple[int, ...], dim: int) -> bool:
    """Whether slices along `dim` are contiguous in memory: every dimension before it has one
    element (an image batch of one, concatenated along channels), and no size is dynamic."""
    return all(d >= 0 for d in shape) and all(d == 1 for d in shape[:dim])


def extends(before: Concatenation, after: Concatenation) -> bool:
    """Whether `after` concatenates all of `before`'s pieces first, in order, and more after them,
    along the same dimension of a shape that differs only there."""
    return (before.dim == after.dim and len(after.pieces) > len(before.pieces)
            and after.pieces[:len(before.pieces)] == before.pieces and len(before.shape) == len(after.shape)
            and all(a == b for i, (a, b) in enumerate(zip(before.shape, after.shape)) if i != before.dim))


def chains(concatenations: list[Concatenation]) -> list[list[int]]:
    """Chains of at least two concatenations (indices into the list, in program order) that one
    buffer can hold: each extends the one before it, and every slice is contiguous. A
    concatenation joins the first chain it extends the last of."""
    found: list[list[int]] = []
    taken: set[int] = set()
    for i, first in enumerate(concatenations):
        if i in taken or not contiguous(first.shape, first.dim):
            continue
        chain = [i]
        for j in range(i + 1, len(concatenations)):
            if j not in taken and contiguous(concatenations[j].shape, concatenations[j].dim) and extends(concatenations[chain[-1]], concatenations[j]):
                chain.append(j)
        if len(chain) > 1:
            found.append(chain)
            taken.update(chain)
    return found


def copied_bytes(concatenations: list[Concatenation], chain: list[int], element_bytes: int) -> int:
    """The bytes IREE copied into the chain's concatenations but the last (which the buffer
    becomes): what sharing saves in copies each call."""
    return sum(math.prod(concatenations[i].shape) for i in chain[:-1]) * element_bytes
