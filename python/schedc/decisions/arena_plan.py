"""Arena planning: an offset for every transient slice, as tight as the lifetimes allow.

Pure Python over (start, end, size) intervals, `end` inclusive as in IREE's
`stream.resource.pack`. Two slices conflict when their lifetimes overlap; conflicting slices
must not share a byte. No arena can be smaller than LOAD, the most bytes alive at one time.

Methods (the planner keeps the smallest arena; `verify` checks any plan):
- "iree": IREE 3.13's own layout-slices (slices in IR order, smallest fitting gap), for
  reference, so the plan is never worse than IREE's.
- "size": greedy by size with best fit (TFLite's arena planner, XLA's heap simulator).
- "lifetime": greedy by longest lifetime, best fit.
- "conflicts": greedy by conflicting bytes, best fit.
- "search": best fit over perturbed orders (local search from the best greedy order), when the
  greedy methods stay above LOAD.
- "exact": depth-first search over canonical placements (slices in any order, each at its
  lowest free offset), bounded by a capacity of LOAD, in the spirit of MiniMalloc (Moffitt,
  ASPLOS 2023); run only when the best heuristic is above LOAD.

Both searches are bounded by work (`max_checks`, half each): one unit per slice placed and per
placed slice it is checked against, which is what their time is made of. A plan is then the same
on any machine; a wall-clock deadline is only a safety net (`schedc.decisions.budget`).
"""

from __future__ import annotations

import random
import sys
from collections.abc import Hashable
from dataclasses import dataclass

from schedc.decisions.budget import Budget, Deadline, SearchStopped
from schedc.decisions.liveness import peak


@dataclass(frozen=True)
class Slice:
    start: int
    end: int  # inclusive
    size: int

    def overlaps(self, other: "Slice") -> bool:
        return self.start <= other.end and other.start <= self.end


@dataclass(frozen=True)
class Plan:
    offsets: tuple[int, ...]
    size: int  # the arena's bytes, aligned
    method: str


@dataclass(frozen=True)
class PlanReport:
    plan: Plan
    load: int
    iree_size: int
    sizes: dict  # method -> arena bytes, for every method that ran
    exact_finished: bool | None  # None when the exact search did not run
    iree_offsets: tuple[int, ...] = ()  # IREE's own layout of the same slices, for reports
    deadline_fired: bool = False  # the time limit cut a search short: the plan may vary by run


def align(value: int, alignment: int) -> int:
    return (value + alignment - 1) // alignment * alignment


def load(slices: list[Slice], alignment: int = 1) -> int:
    """The most (aligned) bytes alive at one time."""
    return peak((s.start, s.end, align(s.size, alignment)) for s in slices)


def verify(slices: list[Slice], offsets, alignment: int = 1, arena_size: int | None = None) -> list[str]:
    """Problems with a plan: overlapping bytes of overlapping lifetimes, misaligned offsets,
    slices past the arena's end. An empty list means the plan is valid."""
    problems = []
    if len(offsets) != len(slices):
        return [f"{len(offsets)} offsets for {len(slices)} slices"]
    for i, (s, o) in enumerate(zip(slices, offsets)):
        if o < 0 or o % alignment:
            problems.append(f"slice {i} at offset {o} is not {alignment}-byte aligned")
        if arena_size is not None and o + s.size > arena_size:
            problems.append(f"slice {i} [{o}, {o + s.size}) ends past the arena ({arena_size} B)")
    by_start = sorted(range(len(slices)), key=lambda i: slices[i].start)
    active: list[int] = []
    for i in by_start:
        active = [j for j in active if slices[j].end >= slices[i].start]
        for j in active:
            if offsets[i] < offsets[j] + slices[j].size and offsets[j] < offsets[i] + slices[i].size:
                problems.append(f"slices {j} and {i} are alive together and share bytes")
        active.append(i)
    return problems


def conflicts_of(slices: list[Slice]) -> list[list[int]]:
    """For each slice, the slices whose lifetimes overlap it (sweep over start times)."""
    result: list[list[int]] = [[] for _ in slices]
    by_start = sorted(range(len(slices)), key=lambda i: (slices[i].start, i))
    active: list[int] = []
    for i in by_start:
        active = [j for j in active if slices[j].end >= slices[i].start]
        for j in active:
            result[i].append(j)
            result[j].append(i)
        active.append(i)
    return result


def iree_layout(slices: list[Slice], alignment: int) -> Plan:
    """IREE 3.13's layout-slices, reimplemented: in order, the smallest gap among the
    reservations that overlap in time, else on top of them."""
    reservations: list[tuple[int, int, int]] = []  # (offset, aligned size, slice index), by offset
    offsets = [0] * len(slices)
    highwater = 0
    for i, s in enumerate(slices):
        size = align(s.size, alignment)
        best, best_fit, current = None, None, 0
        for offset, rsize, j in reservations:
            if not slices[j].overlaps(s):
                continue
            aligned = align(current, alignment)
            if aligned + size <= offset and (best_fit is None or offset - aligned < best_fit):
                best, best_fit = aligned, offset - current
            current = max(current, offset + rsize)
        if best is None:
            best = align(current, alignment)
        reservations.append((best, size, i))
        reservations.sort(key=lambda r: r[0])
        offsets[i] = best
        highwater = max(highwater, best + size)
    return Plan(tuple(offsets), align(highwater, alignment), "iree")


def best_fit(slices: list[Slice], order: list[int], conflicts, alignment: int, method: str) -> Plan:
    """Places slices in `order`, each in the smallest gap left by the conflicting slices
    placed so far (lowest offset on ties), else on top of them."""
    offsets: list[int | None] = [None] * len(slices)
    for i in order:
        size = align(slices[i].size, alignment)
        placed = sorted((offsets[j], align(slices[j].size, alignment)) for j in conflicts[i] if offsets[j] is not None)
        best, best_gap, current = None, None, 0
        for offset, psize in placed:
            gap = offset - current
            if gap >= size and (best_gap is None or gap < best_gap):
                best, best_gap = current, gap
            current = max(current, offset + psize)
        offsets[i] = best if best is not None else current
    top = max((o + align(s.size, alignment) for o, s in zip(offsets, slices)), default=0)
    return Plan(tuple(offsets), align(top, alignment), method)


def greedy_orders(slices: list[Slice], conflicts) -> dict[str, list[int]]:
    """The orders the greedy methods place slices in: by size, by longest lifetime, and by
    the bytes of the slices they conflict with (largest first)."""
    weight = [sum(slices[j].size for j in conflicts[i]) + slices[i].size for i in range(len(slices))]
    every = range(len(slices))
    return {
        "size": sorted(every, key=lambda i: (-slices[i].size, slices[i].start, i)),
        "lifetime": sorted(every, key=lambda i: (-(slices[i].end - slices[i].start), -slices[i].size, i)),
        "conflicts": sorted(every, key=lambda i: (-weight[i], -slices[i].size, i)),
    }


RESTART = 50  # orders the local search tries from one start before it starts again


def local_search(slices, conflicts, alignment: int, order: list[int], target: int, budget: Budget, seed: int = 0) -> Plan:
    """Best fit over perturbed orders, each from the current one: half the time a slice that
    lands above `target` (LOAD) placed earlier, else a few slices swapped; a result is kept when
    its arena is no larger. Every RESTART orders it starts again from `order` with the next
    seed (it can sit on a plateau). Stops at `target` or when `budget` runs out (each order
    tried costs a placement and a check per conflict). RandWire's slices (131,072-byte tensors
    and 147,968-byte padded images) stayed one slice above LOAD with swaps alone and reach it
    now; on bench/memory.py's synthetic sets (100 to 1,000 slices, three seeds each) 9 of 12
    arenas came out smaller or equal, 3 larger by at most 0.44%."""
    cost = len(order) + sum(len(c) for c in conflicts)
    best = start = best_fit(slices, order, conflicts, alignment, "search")
    current_order, current, rng, tried = list(order), start, random.Random(seed), 0
    try:
        while best.size > target and len(order) > 1:
            if tried and tried % RESTART == 0:
                current_order, current, rng = list(order), start, random.Random(seed + tried)
            tried += 1
            budget.charge(cost)
            candidate = list(current_order)
            if rng.random() < 0.5:  # a slice that lands too high, placed earlier
                high = [i for i, offset in enumerate(current.offsets) if offset + align(slices[i].size, alignment) > target]
                moved = rng.choice(high)
                position = candidate.index(moved)
                candidate.pop(position)
                candidate.insert(rng.randrange(position + 1), moved)
            else:  # a few slices swapped
                for _ in range(rng.randint(1, 6)):
                    a, b = rng.randrange(len(candidate)), rng.randrange(len(candidate))
                    candidate[a], candidate[b] = candidate[b], candidate[a]
            plan = best_fit(slices, candidate, conflicts, alignment, "search")
            if plan.size <= current.size:
                current, current_order = plan, candidate
                if plan.size < best.size:
                    best = plan
    except SearchStopped:
        pass
    return best


def exact_search(slices: list[Slice], conflicts, alignment: int, capacity: int, budget: Budget) -> Plan | None:
    """A plan within `capacity` bytes, or None if there is none or the budget runs out first
    (a search step costs, for each slice still to place, a unit and one per conflict).

    Depth-first over which slice to place next, each at its lowest free offset: every plan can
    be rebuilt that way (take its slices by offset; each lands at or below where it was), so the
    search is complete. Pruned by the capacity (a slice's lowest free offset only rises as
    others are placed) and by remembering placements already explored.
    """
    sizes = [align(s.size, alignment) for s in slices]
    offsets: dict[int, int] = {}
    explored: set = set()
    step_cost = [1 + len(c) for c in conflicts]

    def lowest(i: int) -> int:
        x = 0
        for o, s in sorted((offsets[j], sizes[j]) for j in conflicts[i] if j in offsets):
            if x + sizes[i] <= o:
                break
            x = max(x, o + s)
        return x

    def search() -> bool:
        if len(offsets) == len(slices):
            return True
        key = frozenset(offsets.items())
        if key in explored:
            return False
        explored.add(key)
        budget.charge(sum(step_cost[i] for i in range(len(slices)) if i not in offsets))
        candidates = []
        for i in range(len(slices)):
            if i not in offsets:
                x = lowest(i)
                if x + sizes[i] > capacity:
                    return False  # it only rises as more slices are placed
                candidates.append((x, -sizes[i], slices[i].start, i))
        for x, _, _, i in sorted(candidates):
            offsets[i] = x
            if search():
                return True
            del offsets[i]
        return False

    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(max(limit, 2 * len(slices) + 100))
    try:
        found = search()
    except SearchStopped:
        return None
    finally:
        sys.setrecursionlimit(limit)
    if not found:
        return None
    return Plan(tuple(offsets[i] for i in range(len(slices))), align(capacity, alignment), "exact")


MAX_CHECKS = 2_000_000  # about half a second of search on an idle core of the project's machines


def plan_arena(slices: list[Slice], alignment: int = 64, time_limit_s: float = 30.0, exact_limit: int = 400,
               max_checks: int = MAX_CHECKS) -> PlanReport:
    """Runs every method and keeps the smallest arena (IREE's own layout included).

    Where the greedy methods stay above LOAD, half of `max_checks` goes to a local search
    from the best of them, and the rest to the exact search (up to `exact_limit` slices).
    `time_limit_s` is a safety net over both; the report says when it fired."""
    deadline = Deadline(time_limit_s)
    conflicts = conflicts_of(slices)
    lower = align(load(slices, alignment), alignment)
    plans = [iree_layout(slices, alignment)]
    orders = greedy_orders(slices, conflicts)
    plans += [best_fit(slices, order, conflicts, alignment, name) for name, order in orders.items()]
    best = min(plans, key=lambda p: p.size)
    exact_finished = None
    if best.size > lower:
        seed_order = orders.get(best.method, orders["size"])
        budget = Budget(max_checks // 2, deadline)
        searched = local_search(slices, conflicts, alignment, seed_order, lower, budget)
        plans.append(searched)
        best = min(plans, key=lambda p: p.size)
    if best.size > lower and len(slices) <= exact_limit:
        budget = Budget(max_checks - max_checks // 2, deadline)
        found = exact_search(slices, conflicts, alignment, lower, budget)
        exact_finished = found is not None
        if found is not None:
            plans.append(found)
            best = found
    return PlanReport(best, lower, plans[0].size, {p.method: p.size for p in plans}, exact_finished, plans[0].offsets, deadline.fired)


# -- persistent fills (arena-plan{persistent-fills=true}) -------------------------------------
#
# Persistent fills: a padded buffer's border written once, not on every call.
#
# A `tensor.pad` that IREE does not fuse becomes, per call, a fill of the whole padded buffer (a
# memset node of a replayed CUDA graph, about 1.1 us each on an H200) and a dispatch that stores
# the interior into it. When the buffer's bytes belong to it alone, across every call, the
# border keeps its fill value from one call to the next and the fill need run only once: static
# replay runs it when the module loads.
#
# Pads whose fills and stores are the same (`Pad.key`: the same bytes, fill value and store
# offsets, sizes and strides) have the same border and the same interior, so pads of one key
# whose lifetimes do not meet can share one copy of the bytes. Each copy is pinned: alive for
# the whole execution region, so no other slice of the arena meets its bytes. The cost is arena
# bytes: one copy per key (more where pads of a key are alive at once).
#
# On an H200 (`python bench/graph_fills.py DIR` on bench/replay.py's modules, one process):
# inception's replayed call ran 1.106x faster with its 13 fills run once (5 copies, 311 KB more
# arena), RandWire's 1.146x (33 fills, 3 copies, 331 KB).
#
# Pure Python over the arena's slices; `passes/arena_plan.py` finds the pads in IR and plans
# the pinned slices with the others.


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
