"""Persistent fills: a padded buffer's border written once, not on every call.

A `tensor.pad` that IREE does not fuse becomes, per call, a fill of the whole padded buffer (a
memset node of a replayed CUDA graph, about 1.1 us each on an H200) and a dispatch that stores
the interior into it. When the buffer's bytes belong to it alone, across every call, the
border keeps its fill value from one call to the next and the fill need run only once: static
replay runs it when the module loads.

Pads whose fills and stores are the same (`Pad.key`: the same bytes, fill value and store
offsets, sizes and strides) have the same border and the same interior, so pads of one key
whose lifetimes do not meet can share one copy of the bytes. Each copy is pinned: alive for
the whole execution region, so no other slice of the arena meets its bytes. The cost is arena
bytes: one copy per key (more where pads of a key are alive at once).

On an H200 (`python bench/graph_fills.py DIR` on bench/replay.py's modules, one process):
inception's replayed call ran 1.106x faster with its 13 fills run once (5 copies, 311 KB more
arena), RandWire's 1.146x (33 fills, 3 copies, 331 KB).

Pure Python over the arena's slices; `passes/arena_plan.py` finds the pads in IR and plans
the pinned slices with the others.
"""

from __future__ import annotations

from collections.abc import Hashable
from dataclasses import dataclass

from .arena import Slice


@dataclass(frozen=True)
class Pad:
    slice: int  # the padded buffer's slice in the arena
    key: Hashable  # equal keys: the same border and interior, byte for byte


@dataclass(frozen=True)
class Pinning:
    """The slices the arena plans (the unpinned ones, then one per pinned copy) and where each
    original slice went."""

    slices: tuple[Slice, ...]
    planned: tuple[int, ...]  # per original slice, its index in `slices`
    copies: tuple[tuple[int, ...], ...]  # per pinned copy, the original slices that share it

    def offsets(self, planned_offsets) -> tuple[int, ...]:
        """Each original slice's offset, from the offsets planned for `slices`."""
        return tuple(planned_offsets[i] for i in self.planned)

    @property
    def pinned_bytes(self) -> int:
        return sum(s.size for s in self.slices[len(self.slices) - len(self.copies):])

    def problems(self, slices: list[Slice], offsets) -> list[str]:
        """What breaks pinning in a plan of the original slices: a slice outside a copy that
        meets the copy's bytes (at any time: a pinned copy is alive all the time)."""
        found = []
        for members in self.copies:
            start, end = offsets[members[0]], offsets[members[0]] + slices[members[0]].size
            for i, s in enumerate(slices):
                if i not in members and offsets[i] < end and start < offsets[i] + s.size:
                    found.append(f"slice {i} meets the bytes of pinned slice {members[0]}")
        return found


def pin(slices: list[Slice], pads: list[Pad]) -> Pinning:
    """Pads in copies (pads of one key with lifetimes that do not meet share a copy), each copy
    one slice alive from the region's first step to its last."""
    last = max((s.end for s in slices), default=0)
    by_key: dict[Hashable, list[int]] = {}
    for pad in sorted(pads, key=lambda p: (slices[p.slice].start, slices[p.slice].end, p.slice)):
        by_key.setdefault(pad.key, []).append(pad.slice)
    copies: list[list[int]] = []
    for members in by_key.values():
        open_copies: list[list[int]] = []  # of this key, by the order they were opened
        for index in members:
            home = next((c for c in open_copies if slices[c[-1]].end < slices[index].start), None)
            if home is None:
                home = []
                open_copies.append(home)
            home.append(index)
        copies.extend(open_copies)
    pinned = {index: number for number, members in enumerate(copies) for index in members}
    kept = [i for i in range(len(slices)) if i not in pinned]
    planned_slices = [slices[i] for i in kept] + [
        Slice(0, last, max(slices[i].size for i in members)) for members in copies
    ]
    planned = [0] * len(slices)
    for position, index in enumerate(kept):
        planned[index] = position
    for index, number in pinned.items():
        planned[index] = len(kept) + number
    return Pinning(tuple(planned_slices), tuple(planned), tuple(tuple(c) for c in copies))
