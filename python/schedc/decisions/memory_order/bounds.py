"""Lower bounds on the peak of every order of a memory problem: pure Python over plain data.

memory-order reports how far its order may be from the optimum, and its exact search starts
from a bound: the higher the bound, the fewer states a search needs to prove an order optimal.

Both bounds look at one node v at a time: while v runs, the bytes it allocates are alive, and
so is every buffer defined before v and read at or after it. The set of nodes that ran before v
is not known, but it holds every ancestor of v and no descendant:
- `working_set_bound` counts only the buffers alive whatever that set is (an ancestor's buffer
  that v or a descendant reads);
- `cut_bound` finds the set that leaves the fewest bytes alive (a minimum cut), so it also
  counts what an ancestor defined for a node that is neither before nor after v: either that
  node ran before v, and its ancestors with it, or the buffer is still alive.

`lower_bound`, what the searches start from, adds one more: one of a join's predecessors runs
last, after all the others (`join_bound`). Forty branches from one input to one join leave 39
outputs and the input alive while the last branch runs, whichever it is; no single node's cut
sees that, and the exact search then spent its whole budget of 3,000,000 states failing to find
an order one branch under the optimum.
"""

from __future__ import annotations

from collections import deque

from schedc.decisions.budget import Deadline
from schedc.decisions.liveness import LastUse, MemoryProblem
from schedc.decisions.segments import members, reach

_UNCUT = 1 << 62  # a capacity no cut pays: an arc that a set of nodes may not cross
_ARCS_PER_ITEM = 16  # the cuts' work: arcs built per node and buffer of the problem


def working_set_bound(problem: MemoryProblem) -> int:
    """A peak no order goes under: while a node runs, the transients it defines are alive, and
    so is every transient defined by one of its ancestors and used by it or one of its
    descendants (a skip connection across it), whatever the order."""
    count = problem.count
    _, ancestors, descendants = reach(problem)
    definer = {b: v for v in range(count) for b in problem.defines[v]}
    needed_by: dict[int, int] = {}  # buffer -> its users and their ancestors
    for v in range(count):
        for b in problem.uses[v]:
            needed_by[b] = needed_by.get(b, 0) | ancestors[v] | (1 << v)
    alive = list(problem.alloc)
    for b, size in problem.size.items():
        if not size or b not in definer or b not in needed_by:
            continue
        during = descendants[definer[b]] & needed_by[b]  # the nodes that run while b must be alive
        while during:
            low = during & -during
            alive[low.bit_length() - 1] += size
            during ^= low
    return max(alive, default=0)


def cut_bound(problem: MemoryProblem, order: list[int] | None = None, enough: int | None = None,
              deadline: Deadline | None = None) -> int:
    """A peak no order goes under, at least `working_set_bound`: the highest, over the nodes
    that allocate, of the fewest bytes alive while the node runs, over every set of nodes that
    may run before it.

    The bytes alive while v runs in `order` (program order by default) cap what v's cut can
    prove, so only the nodes whose cap passes the bound found so far are cut, highest cap
    first. The bound stops rising at `enough` (a known order's peak), and once the cuts have
    built `_ARCS_PER_ITEM` arcs per node and buffer (a deterministic work limit, reached only
    on graphs of thousands of kernels); the deadline too ends the loop early (any node's cut
    is a valid bound)."""
    return _Cuts(problem, order).node_bound(working_set_bound(problem), enough, deadline)


def join_bound(problem: MemoryProblem, order: list[int] | None = None, enough: int | None = None,
               deadline: Deadline | None = None) -> int:
    """A peak no order goes under: the highest, over the nodes with two or
    more predecessors (joins), of the fewest bytes alive while the last of them runs. Whichever
    predecessor p runs last, the others and their ancestors ran before it, and p's descendants
    did not: p's cut with those forced before it. The least over the candidates for last (those
    none of the others descends from) is the join's bound.

    `order`, `enough`, `deadline` and the work limit as for `cut_bound`: a join is cut only where
    the bytes alive while its last predecessor runs in `order` pass the bound found so far."""
    return _Cuts(problem, order).join_bound(0, enough, deadline)


def lower_bound(problem: MemoryProblem, order: list[int] | None = None, enough: int | None = None,
                deadline: Deadline | None = None) -> int:
    """The higher of `cut_bound` and `join_bound`, within one work limit."""
    cuts = _Cuts(problem, order)
    best = cuts.node_bound(working_set_bound(problem), enough, deadline)
    return cuts.join_bound(best, enough, deadline)


class _Cuts:
    """What the bounds' minimum cuts share: the graph's reach, its buffers as (bytes, definer,
    readers), the bytes alive while each node runs in an order, and the work left."""

    def __init__(self, problem: MemoryProblem, order: list[int] | None):
        self.problem = problem
        count = problem.count
        _, self.ancestors, self.descendants = reach(problem)
        definer = {b: v for v in range(count) for b in problem.defines[v]}
        users: dict[int, list[int]] = {}
        for v in range(count):
            for b in problem.uses[v]:
                users.setdefault(b, []).append(v)
        self.buffers = [(size, definer[b], tuple(users[b])) for b, size in sorted(problem.size.items())
                        if size and b in definer and b in users]
        self.order = order if order is not None else list(problem.program)
        self.caps = _alive_while_running(problem, self.order)
        self.work = [_ARCS_PER_ITEM * (count + len(self.buffers))]

    def _stop(self, cap: int, best: int, enough: int | None, deadline: Deadline | None) -> bool:
        return (cap <= best or (enough is not None and best >= enough) or self.work[0] <= 0
                or (deadline is not None and deadline.passed()))

    def _least(self, v: int, before: int) -> int:
        return _least_alive(self.problem, self.buffers, v, before, self.descendants[v] | (1 << v), self.work)

    def node_bound(self, best: int, enough: int | None, deadline: Deadline | None) -> int:
        problem, caps = self.problem, self.caps
        candidates = sorted(((-caps[v], v) for v in range(problem.count) if problem.alloc[v] > 0 and caps[v] > best))
        for negative_cap, v in candidates:
            if self._stop(-negative_cap, best, enough, deadline):
                break
            best = max(best, self._least(v, self.ancestors[v]))
        return best

    def join_bound(self, best: int, enough: int | None, deadline: Deadline | None) -> int:
        problem, caps, ancestors, descendants = self.problem, self.caps, self.ancestors, self.descendants
        position = {v: i for i, v in enumerate(self.order)}
        joins = []
        for j in range(problem.count):
            preds = problem.preds[j]
            if len(preds) >= 2:
                last = max(preds, key=position.__getitem__)  # the last of them in `order`: a cap
                joins.append((-caps[last], j))
        for negative_cap, j in sorted(joins):
            if self._stop(-negative_cap, best, enough, deadline):
                break
            preds = problem.preds[j]
            ran = {p: ancestors[p] | (1 << p) for p in preds}
            least = None
            for p in preds:
                before = ancestors[p]
                for q in preds:
                    if q != p:
                        before |= ran[q]
                if before & (descendants[p] | (1 << p)):
                    continue  # another predecessor descends from p: p is never the last
                alive = self._least(p, before)
                least = alive if least is None else min(least, alive)
                if least <= best:
                    break  # this join cannot raise the bound
            best = max(best, least if least is not None else 0)
        return best


def _alive_while_running(problem: MemoryProblem, order: list[int]) -> list[int]:
    """The bytes alive while each node runs, in `order`."""
    memory = LastUse(problem)
    alive = [0] * problem.count
    for v in order:
        memory.allocate(v)
        alive[v] = memory.live
        memory.release(v)
    return alive


def _least_alive(problem: MemoryProblem, buffers: list, v: int, before: int, after: int, work: list[int]) -> int:
    """The fewest bytes alive while `v` runs, over every set of nodes run before it: one that
    holds `before` (v's ancestors), none of `after` (v and its descendants), and every
    predecessor of its members. The arcs built are taken off `work[0]`.

    A minimum cut: the source side is the set run before v. A buffer costs its bytes when its
    definer is on the source side and one of its users is not (a user after v always is not):
    an arc from the definer to the sink, from the source to the users, or from the definer
    through a node of the buffer's own to its users, uncuttable behind it."""
    undecided = ((1 << problem.count) - 1) & ~before & ~after
    index = {x: i + 2 for i, x in enumerate(members(undecided))}
    source, sink, nodes = 0, 1, len(index) + 2
    alive = problem.alloc[v]
    arcs: list[tuple[int, int, int]] = []
    for size, u, readers in buffers:
        if after >> u & 1:
            continue  # defined after v
        if any(after >> w & 1 for w in readers):  # read at or after v: alive if u ran before
            if before >> u & 1:
                alive += size
            else:
                arcs.append((index[u], sink, size))
            continue
        open_readers = [index[w] for w in readers if undecided >> w & 1]
        if not open_readers:
            continue  # every reader is an ancestor of v: freed before it
        tail = source if before >> u & 1 else index[u]
        if len(open_readers) == 1:
            arcs.append((tail, open_readers[0], size))
        else:
            arcs.append((tail, nodes, size))
            arcs.extend((nodes, w, _UNCUT) for w in open_readers)
            nodes += 1
    for x, i in index.items():  # a node runs before v only after its predecessors
        arcs.extend((i, index[p], _UNCUT) for p in problem.preds[x] if p in index)
    work[0] -= len(arcs)
    return alive + _max_flow(nodes, arcs, source, sink)


def _max_flow(nodes: int, arcs: list[tuple[int, int, int]], source: int, sink: int) -> int:
    """The maximum flow from `source` to `sink` (Dinic's algorithm, blocking flows found with
    an explicit stack)."""
    out: list[list[int]] = [[] for _ in range(nodes)]
    head: list[int] = []
    capacity: list[int] = []
    for a, b, c in arcs:
        out[a].append(len(head))
        head.append(b)
        capacity.append(c)
        out[b].append(len(head))
        head.append(a)
        capacity.append(0)
    flow = 0
    while True:
        level = [-1] * nodes
        level[source] = 0
        queue = deque([source])
        while queue:
            x = queue.popleft()
            for e in out[x]:
                if capacity[e] and level[head[e]] < 0:
                    level[head[e]] = level[x] + 1
                    queue.append(head[e])
        if level[sink] < 0:
            return flow
        next_arc = [0] * nodes
        path: list[int] = []
        x = source
        while True:
            if x == sink:
                pushed = min(capacity[e] for e in path)
                for e in path:
                    capacity[e] -= pushed
                    capacity[e ^ 1] += pushed
                flow += pushed
                path, x = [], source
                continue
            arcs_out = out[x]
            while next_arc[x] < len(arcs_out):
                e = arcs_out[next_arc[x]]
                if capacity[e] and level[head[e]] == level[x] + 1:
                    break
                next_arc[x] += 1
            if next_arc[x] < len(arcs_out):
                e = arcs_out[next_arc[x]]
                path.append(e)
                x = head[e]
                continue
            if not path:
                break  # the source is blocked: this level graph is saturated
            level[x] = -1  # a dead end
            e = path.pop()
            x = head[e ^ 1]
            next_arc[x] += 1
