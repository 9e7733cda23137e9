"""Which fills of a serial command sequence can run beside the command before them.

A replayed graph runs each command of an execution region after the one before it, unless they
share a `stream.cmd.concurrent` group. A fill (a memset node in a CUDA graph) that waits for the
kernel before it costs about 1.1 us of the call on an H200; beside that kernel, about 0.5 us
(`bench/graph_fills.py`: 13 fills between 26 small kernels).
A fill may run beside the command before it when no byte it writes is a byte that command
reads or writes: the fill still comes after everything before that command, and the command
after it still waits for both. Pure decisions over byte ranges; `passes/overlap_fills.py`
reads them from IR and moves the fills.
"""

from __future__ import annotations

from dataclasses import dataclass

# (resource, offset, length): the bytes of one resource a command touches. Resources are
# compared with ==: distinct resources never share a byte.
Range = tuple[object, int, int]


@dataclass(frozen=True)
class Command:
    fill: bool  # a fill, which may join the group before it
    ranges: tuple[Range, ...] | None  # every byte it touches; None: not known


def _overlap(a: tuple[Range, ...], b: tuple[Range, ...]) -> bool:
    return any(ra == rb and oa < ob + lb and ob < oa + la for ra, oa, la in a for rb, ob, lb in b)


def groups(commands: list[Command]) -> list[list[int]]:
    """The commands in groups that run one after another, each group's members side by side:
    each command in a group of its own, except a fill whose bytes are known and meet none of
    the group before it, which joins that group."""
    result: list[list[int]] = []
    touched: list[tuple[Range, ...] | None] = []  # per group: the bytes its members touch
    for i, command in enumerate(commands):
        before = touched[-1] if touched else None
        if command.fill and command.ranges is not None and before is not None and not _overlap(command.ranges, before):
            result[-1].append(i)
            touched[-1] = before + command.ranges
            continue
        result.append([i])
        touched.append(command.ranges)
    return result
