"""One liveness model for every pass and report: lifetimes as intervals and their peak, and
last-use freeing as nodes run one at a time. Pure Python over plain data.

Intervals (`ranges`, `live_per_step`, `peak`): a buffer is alive from step `first` to step
`last`, both included; the live bytes at a step are the sizes of the buffers alive then. The
kernel graph, the waves, the arena planner (a pack's slices) and the report count with them.

Last use (`MemoryProblem`, `LastUse`): a node allocates the buffers it defines when it runs,
and a buffer is freed once its last user has run (at once when nothing uses it). Ordering's
heuristics and search and the waves' list scheduler count with it. On an order, both give the
same peak: a buffer's interval runs from its definer to its last user.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Callable, Iterable

if TYPE_CHECKING:
    from schedc.decisions.kernel_graph import KernelGraph


def ranges(touches: Iterable[tuple[int, Iterable[int]]]) -> dict[int, tuple[int, int]]:
    """Each buffer's [first, last] step, from (step, buffers touched at that step) pairs."""
    found: dict[int, tuple[int, int]] = {}
    for step, buffers in touches:
        for b in buffers:
            first, last = found.get(b, (step, step))
            found[b] = (min(first, step), max(last, step))
    return found


def live_per_step(intervals: Iterable[tuple[int, int, int]], steps: int) -> list[int]:
    """The bytes alive at each of `steps` steps, for (first, last, bytes) intervals."""
    delta = [0] * (steps + 1)
    for first, last, size in intervals:
        delta[first] += size
        delta[last + 1] -= size
    live, running = [], 0
    for step in range(steps):
        running += delta[step]
        live.append(running)
    return live


def peak(intervals: Iterable[tuple[int, int, int]]) -> int:
    """The most bytes alive at one time, for (first, last, bytes) intervals."""
    events: dict[int, int] = {}
    for first, last, size in intervals:
        events[first] = events.get(first, 0) + size
        events[last + 1] = events.get(last + 1, 0) - size
    live = best = 0
    for t in sorted(events):
        live += events[t]
        best = max(best, live)
    return best


@dataclass(frozen=True)
class MemoryProblem:
    """A kernel graph reduced to what ordering and scheduling need."""

    count: int
    preds: tuple[tuple[int, ...], ...]
    succs: tuple[tuple[int, ...], ...]
    alloc: tuple[int, ...]  # bytes each node allocates
    defines: tuple[tuple[int, ...], ...]  # transient buffers each node defines
    uses: tuple[tuple[int, ...], ...]  # transient buffers each node reads or writes in place
    size: dict  # buffer -> bytes
    users: dict  # buffer -> number of nodes that use it (the definer excluded)
    program: tuple[int, ...]

    @staticmethod
    def from_graph(graph: "KernelGraph") -> "MemoryProblem":
        transient = {b.id: (b.size or 0) for b in graph.buffers if b.transient}
        defines = tuple(tuple(b for b in n.defines if b in transient) for n in graph.nodes)
        uses = tuple(tuple(b for b in n.uses if b in transient) for n in graph.nodes)
        users: dict[int, int] = {b: 0 for b in transient}
        for node_uses in uses:
            for b in node_uses:
                users[b] += 1
        return MemoryProblem(
            count=len(graph.nodes),
            preds=tuple(tuple(p) for p in graph.predecessors()),
            succs=tuple(tuple(s) for s in graph.successors()),
            alloc=tuple(sum(transient[b] for b in d) for d in defines),
            defines=defines,
            uses=uses,
            size=transient,
            users=users,
            program=tuple(graph.program_order()),
        )

    def freed_reads(self, v: int, last_user: Callable[[int], bool]) -> int:
        """Bytes of the buffers `v` uses that running it frees (`last_user(b)`: nothing else
        that uses b is left to run)."""
        return sum(self.size[b] for b in self.uses[v] if last_user(b))

    def freed(self, v: int, last_user: Callable[[int], bool]) -> int:
        """Bytes running `v` frees: the buffers it was the last user of, and the ones it
        defines that nothing uses."""
        return self.freed_reads(v, last_user) + sum(self.size[b] for b in self.defines[v] if self.users[b] == 0)

    def peak(self, order) -> int:
        memory = LastUse(self)
        for v in order:
            memory.run(v)
        return memory.peak


class LastUse:
    """Live bytes as nodes run: each allocates what it defines, and frees a buffer once its
    last user has run."""

    def __init__(self, problem: MemoryProblem):
        self.p = problem
        self.remaining = dict(problem.users)  # buffer -> users still to run
        self.live = 0
        self.peak = 0

    def is_last_user(self, b: int) -> bool:
        """Whether the one user of `b` still to run is the node about to run."""
        return self.remaining[b] == 1

    def freed_by(self, v: int) -> int:
        """Bytes that running `v` would free."""
        return self.p.freed(v, self.is_last_user)

    def allocate(self, v: int) -> None:
        """`v` starts: the buffers it defines are alive."""
        self.live += self.p.alloc[v]
        self.peak = max(self.peak, self.live)

    def release(self, v: int) -> None:
        """`v` ends: what it was the last user of, and what nothing uses, is freed."""
        self.live -= self.freed_by(v)
        for b in self.p.uses[v]:
            self.remaining[b] -= 1

    def run(self, v: int) -> None:
        self.allocate(v)
        self.release(v)
