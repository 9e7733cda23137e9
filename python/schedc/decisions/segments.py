"""A memory problem cut at its separators into parts that can be ordered one by one: pure
Python over plain data.

A separator is a node every other node is an ancestor or a descendant of (RandWire's stage
joins, a chain between cells, a stem). Every order runs its ancestors first and its descendants
after, so the nodes between two separators (a segment, the later separator its last node) are
ordered on their own: the bytes alive while a segment runs depend only on the order inside it
and on what earlier segments left alive for it. The lowest peak of the whole graph is the
highest of the segments' lowest peaks, so a search over each segment finds the optimum of the
graph with a sum of state counts instead of a product.

Each segment becomes a `MemoryProblem` of its own: a first node (`Segment.source`) defines the
buffers earlier segments left alive, every other node runs after it, and a buffer that a later
segment still reads counts one user more than the segment has, so it is never freed inside it.
"""

from __future__ import annotations

from dataclasses import dataclass

from schedc.decisions.liveness import MemoryProblem


@dataclass(frozen=True)
class Segment:
    nodes: tuple[int, ...]  # the graph's nodes in it, in program order
    problem: MemoryProblem  # node 0 is the source; node i + 1 is nodes[i]

    @property
    def source(self) -> int:
        return 0

    def graph_order(self, order: list[int]) -> list[int]:
        """The graph's nodes of an order of the segment's problem (the source left out)."""
        return [self.nodes[v - 1] for v in order if v != self.source]


def reach(problem: MemoryProblem) -> tuple[list[int], list[int], list[int]]:
    """(a topological order, each node's ancestors, each node's descendants, as bitmasks)."""
    waiting = [len(ps) for ps in problem.preds]
    ready = [v for v in range(problem.count) if not waiting[v]]
    topo = []
    while ready:
        v = ready.pop()
        topo.append(v)
        for s in problem.succs[v]:
            waiting[s] -= 1
            if not waiting[s]:
                ready.append(s)
    ancestors, descendants = [0] * problem.count, [0] * problem.count
    for v in topo:
        for u in problem.preds[v]:
            ancestors[v] |= ancestors[u] | (1 << u)
    for v in reversed(topo):
        for s in problem.succs[v]:
            descendants[v] |= descendants[s] | (1 << s)
    return topo, ancestors, descendants


def split_at_separators(problem: MemoryProblem) -> list[Segment]:
    """The problem's segments in the order every order runs them; one segment (the whole
    problem, with a source that defines nothing) when it has no separator inside.

    Nodes that read no transient and only follow such nodes (weights loaded, their views, fills,
    kernels of the function's arguments), and whose bytes, if any, are read, are "floating":
    they belong to no separator's past or future, and an order loses nothing by running them
    just before their first reader (their bytes are then alive for less time, and they free
    nothing). So separators are found among
    the other nodes, and each floating node joins the segment of its first reader."""
    topo, ancestors, descendants = reach(problem)
    floating = set()
    for v in topo:
        # (a node whose bytes nothing reads is alive only while it runs: where it runs matters)
        read = problem.alloc[v] == 0 or (problem.succs[v] and all(problem.users[b] for b in problem.defines[v]))
        if read and not problem.uses[v] and all(u in floating for u in problem.preds[v]):
            floating.add(v)
    anchored = sum(1 << v for v in range(problem.count) if v not in floating)
    parts, covered = [], 0
    for v in topo:
        if v not in floating and (ancestors[v] | descendants[v] | (1 << v)) & anchored == anchored:
            part = (ancestors[v] | (1 << v)) & anchored & ~covered
            parts.append(part)
            covered |= part
    if covered != anchored or not parts:
        parts.append(anchored & ~covered)
    segment_of = {v: index for index, part in enumerate(parts) for v in members(part)}
    # A floating node joins its first reader's segment; one that nothing follows allocates
    # nothing, and joins the last, so that it pulls no node with bytes ahead of their readers.
    for v in reversed(topo):
        if v in floating:
            segment_of[v] = min((segment_of[s] for s in problem.succs[v]), default=len(parts) - 1)
            parts[segment_of[v]] |= 1 << v
    position = {v: step for step, v in enumerate(problem.program)}
    definer = {b: v for v in range(problem.count) for b in problem.defines[v]}
    readers: dict[int, dict[int, int]] = {}  # buffer -> segment -> its nodes that read it
    for v in range(problem.count):
        for b in problem.uses[v]:
            counts = readers.setdefault(b, {})
            counts[segment_of[v]] = counts.get(segment_of[v], 0) + 1
    return [_segment(problem, sorted(members(part), key=position.get), index, segment_of, definer, readers)
            for index, part in enumerate(parts)]


def members(mask: int):
    """The nodes of a bitmask, lowest first."""
    while mask:
        low = mask & -mask
        yield low.bit_length() - 1
        mask ^= low


def _segment(problem: MemoryProblem, nodes: list[int], index: int, segment_of: dict, definer: dict, readers: dict) -> Segment:
    local = {v: i + 1 for i, v in enumerate(nodes)}
    size = {b: problem.size[b] for v in nodes for b in problem.defines[v] + problem.uses[v]}
    # What earlier segments left alive: buffers they defined that this or a later segment reads.
    incoming = tuple(sorted(
        b for b, counts in readers.items()
        if b in definer and segment_of[definer[b]] < index and any(k >= index for k in counts)
    ))
    size.update({b: problem.size[b] for b in incoming})

    def users(b: int) -> int:  # readers here, and one more when a later segment reads it
        counts = readers.get(b, {})
        return counts.get(index, 0) + any(k > index for k in counts)

    preds = [()] + [tuple(sorted({local[u] for u in problem.preds[v] if u in local} or {0})) for v in nodes]
    succs: list[list[int]] = [[] for _ in preds]
    for v, ps in enumerate(preds):
        for u in ps:
            succs[u].append(v)
    sub = MemoryProblem(
        count=len(preds),
        preds=tuple(preds),
        succs=tuple(tuple(s) for s in succs),
        alloc=(sum(problem.size[b] for b in incoming),) + tuple(problem.alloc[v] for v in nodes),
        defines=(incoming,) + tuple(problem.defines[v] for v in nodes),
        uses=((),) + tuple(problem.uses[v] for v in nodes),
        size=size,
        users={b: users(b) for b in size},
        program=tuple(range(len(preds))),
    )
    return Segment(tuple(nodes), sub)
