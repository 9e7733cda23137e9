"""Which results of an elementwise kernel are written into the buffer of an input that dies there.

A kernel that reads a tensor nothing else reads, element by element, and writes a result of the
same type, can write the result into that tensor's bytes: each output element depends on the
input only at its own position. IREE calls such a result "tied" to the operand. The kernel then
allocates nothing for that result, and the tensor's bytes and the result's are one buffer, alive
from the tensor's producer to the result's last reader, where they were two, both alive while
the kernel ran. No order's live bytes get higher (the two buffers had the same size, and only
ever overlapped at this kernel), and the kernel does the same work.

Pure data: `schedc.ir.iree` reads which operands qualify (`InPlaceSite`), and the pass applies
the ties.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class InPlaceSite:
    """One call of an elementwise kernel, as the tie needs it.

    results: per result, its tensor type when it may be written in place (it is stored whole at
    its own positions and is not written into another buffer already), else None.
    candidates: (operand index, tensor type) of each input the kernel reads only at each output's
    own position, whose only reader is this call and which a kernel of the same function made.
    """

    results: tuple[str | None, ...]
    candidates: tuple[tuple[int, str], ...]


def ties(site: InPlaceSite) -> tuple[int, ...]:
    """Per result, the operand it is written into, or -1: each result that may be written in place
    takes the first unused candidate of its type."""
    taken: set[int] = set()
    chosen = []
    for result_type in site.results:
        operand = next((o for o, t in site.candidates if t == result_type and o not in taken), -1) if result_type else -1
        if operand >= 0:
            taken.add(operand)
        chosen.append(operand)
    return tuple(chosen)


def shared_ties(sites: list[InPlaceSite]) -> tuple[int, ...]:
    """The ties of a kernel that several calls share (one executable): the ties every call
    would choose, since the kernel's code is written for one set of bindings; -1 where the calls
    disagree."""
    each = [ties(site) for site in sites]
    return tuple(first if all(t[r] == first for t in each) else -1 for r, first in enumerate(each[0]))


def saved_bytes(result_bytes: tuple[int, ...], chosen: tuple[int, ...]) -> int:
    """Bytes the kernel no longer allocates."""
    return sum(b for b, t in zip(result_bytes, chosen) if t >= 0)
