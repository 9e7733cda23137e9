"""Reading IREE's stream-phase IR: transient allocations and the slices IREE packs into them."""

from __future__ import annotations

import re
from dataclasses import dataclass

_FUNC = re.compile(r"^\s*util\.func\s+(?:public\s+|private\s+)?@([\w$.\-]+)\(|^\s*(util\.initializer)\b")
_CONST = re.compile(r"(%[\w$.\-]+) = arith\.constant (\d+) : index")
_TRANSIENT_ALLOCA = re.compile(r"stream\.resource\.alloca\b.*!stream\.resource<transient>\{(%[\w$.\-]+)\}")
_SLICE = re.compile(r"^\s*\[(\d+),\s*(\d+)\]\s*=\s*(%[\w$.\-]+)")


@dataclass(frozen=True)
class PackedRegion:
    """One `stream.resource.pack`: the [start, end] lifetime and byte size of each slice."""

    function: str
    slices: tuple[tuple[int, int, int], ...]

    @property
    def load(self) -> int:
        """The most bytes alive at once: no packing of these slices can be smaller."""
        events: dict[int, int] = {}
        for start, end, size in self.slices:
            events[start] = events.get(start, 0) + size
            events[end + 1] = events.get(end + 1, 0) - size
        live = best = 0
        for t in sorted(events):
            live += events[t]
            best = max(best, live)
        return best


def _functions(text: str):
    """Yields (function name, its lines) for each util.func in the text."""
    name, lines = None, []
    for line in text.splitlines():
        match = _FUNC.match(line)
        if match:
            if name is not None:
                yield name, lines
            name, lines = match.group(1) or match.group(2), []
        if name is not None:
            lines.append(line)
    if name is not None:
        yield name, lines


def transient_allocations(text: str) -> dict[str, list[int]]:
    """Per function (initializers as "util.initializer"), the size of each transient
    `stream.resource.alloca` (one per execution region), from stream-phase IR after allocation."""
    result: dict[str, list[int]] = {}
    for name, lines in _functions(text):
        constants = {m.group(1): int(m.group(2)) for line in lines for m in [_CONST.search(line)] if m}
        sizes = []
        for line in lines:
            match = _TRANSIENT_ALLOCA.search(line)
            if match and match.group(1) in constants:
                sizes.append(constants[match.group(1)])
        if sizes:
            result.setdefault(name, []).extend(sizes)  # initializers share one name
    return result


def packed_regions(text: str) -> list[PackedRegion]:
    """The `stream.resource.pack` ops of IR stopped right after schedule-allocation."""
    regions = []
    for name, lines in _functions(text):
        constants = {m.group(1): int(m.group(2)) for line in lines for m in [_CONST.search(line)] if m}
        slices, inside = [], False
        for line in lines:
            if "stream.resource.pack" in line:
                inside, slices = True, []
                continue
            if inside:
                match = _SLICE.match(line)
                if match:
                    slices.append((int(match.group(1)), int(match.group(2)), constants[match.group(3)]))
                elif "})" in line:
                    regions.append(PackedRegion(name, tuple(slices)))
                    inside = False
    return regions


def concurrent_groups(text: str) -> dict[str, list[int]]:
    """Per function, the number of dispatches in each `stream.cmd.concurrent` of stream-phase
    IR after allocation (the waves IREE runs concurrently), in program order."""
    result: dict[str, list[int]] = {}
    for name, lines in _functions(text):
        groups, depth, inside = [], 0, None
        for line in lines:
            if inside is None and "stream.cmd.concurrent" in line:
                inside, depth = 0, line.count("{") - line.count("}")
                continue
            if inside is not None:
                if "stream.cmd.dispatch" in line:
                    inside += 1
                depth += line.count("{") - line.count("}")
                if depth <= 0:
                    groups.append(inside)
                    inside = None
        if groups:
            result[name] = groups
    return result
