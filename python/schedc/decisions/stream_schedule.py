"""Concurrent schedules of a kernel graph: list scheduling on N streams under a memory budget,
and the waves (groups that run concurrently between two barriers) that realize it in IREE.

Pure Python over `KernelGraph` plus each node's estimated time. Nodes that take no time
(views, constants, imports and exports) run as soon as they are ready and hold no stream.

The list scheduler takes kernels by priority (critical-path length, then successors it
unblocks, then bytes it frees) and gives each to the stream that frees earliest; a kernel waits
for its predecessors, and a predecessor on another stream is a synchronisation point. Where
starting a kernel would lift the live bytes past the budget, it falls back to the next kernel
of the memory-aware order, or waits for running kernels to finish.
"""

from __future__ import annotations

import heapq
from dataclasses import dataclass

from schedc.decisions.kernel_graph import KernelGraph
from schedc.decisions.liveness import LastUse, MemoryProblem, peak

MODES = ("min-memory", "balanced", "max-concurrency")


@dataclass(frozen=True)
class Slot:
    node: int
    stream: int
    start: float
    end: float


@dataclass(frozen=True)
class Schedule:
    slots: tuple[Slot, ...]  # kernels that take time, by start
    waves: tuple[tuple[int, ...], ...]  # nodes that take time, grouped; waves run one after another
    order: tuple[int, ...]  # every node, wave by wave: the op order to give IREE
    makespan: float  # of the stream timeline
    wave_makespan: float  # waves one after another, each as long as its longest kernel
    peak_bytes: int  # live transient bytes with waves' lifetimes (all of a wave alive together)


def critical_paths(graph: KernelGraph, seconds: list[float]) -> list[float]:
    """For each node, the longest time from its start to the end of the graph."""
    succs = graph.successors()
    order = graph.program_order()
    length = [0.0] * len(graph.nodes)
    for n in reversed(order):
        length[n] = seconds[n] + max((length[s] for s in succs[n]), default=0.0)
    return length


def wave_peak(graph: KernelGraph, waves, order) -> int:
    """Peak live bytes when every node of a wave is alive together (IREE's lifetime model)."""
    step_of: dict[int, int] = {}
    step = 0
    in_wave = {n: w for w, wave in enumerate(waves) for n in wave}
    last_wave = -1
    for n in order:  # zero-time nodes take the step of the wave before the next
        w = in_wave.get(n)
        if w is not None and w != last_wave:
            step += 1
            last_wave = w
        step_of[n] = step
    return peak(graph.intervals(order, step_of))


def list_schedule(
    graph: KernelGraph,
    seconds: list[float],
    streams: int,
    budget: float = float("inf"),
    memory_order: list[int] | None = None,
) -> list[Slot]:
    """Kernels on `streams` streams, by event simulation; see the module docstring."""
    return _ListScheduler(graph, seconds, streams, budget, memory_order).run()


class _ListScheduler:
    """The event simulation of `list_schedule`: ready kernels go to free streams by priority
    while the live bytes stay under the budget; time advances to the next kernel's end."""

    def __init__(self, graph: KernelGraph, seconds: list[float], streams: int, budget: float, memory_order: list[int] | None):
        self.problem = problem = MemoryProblem.from_graph(graph)
        self.seconds, self.budget = seconds, budget
        self.count = count = len(graph.nodes)
        self.preds, self.succs = preds, succs = graph.predecessors(), graph.successors()
        self.path = critical_paths(graph, seconds)
        self.position = {n: i for i, n in enumerate(memory_order or graph.program_order())}
        # Fills that take no time run with their first consumer: run at once, they would hold
        # their bytes from the start. Only fills that wait on no kernel: running them late never
        # runs them before their inputs.
        timed = {n for n in range(count) if seconds[n] > 0.0}
        self.lazy = lazy = {
            n for n in range(count)
            if graph.nodes[n].fill and seconds[n] == 0.0 and problem.alloc[n] > 0 and succs[n]
            and not timed_ancestors(preds, timed, n)
        }
        self.waiting = [sum(1 for p in ps if p not in lazy) for ps in preds]
        self.memory = LastUse(problem)
        self.ready = {n for n in range(count) if self.waiting[n] == 0 and n not in lazy}
        self.lazy_done: set[int] = set()
        self.running: list[tuple[float, int, int]] = []  # (end, node, stream)
        self.free_streams = set(range(streams))
        self.slots: list[Slot] = []
        self.now, self.done = 0.0, 0

    def run(self) -> list[Slot]:
        while self.done < self.count:
            instant = sorted(n for n in self.ready if self.seconds[n] == 0.0)
            if instant:  # zero-time nodes hold no stream
                for n in instant:
                    self.ready.discard(n)
                    self.run_lazy_inputs(n)
                    self.memory.allocate(n)
                    self.finish(n)
                continue
            self.start_ready()
            if not self.running:
                if self.ready:
                    continue
                leftover = sorted(n for n in self.lazy if n not in self.lazy_done)
                if leftover:  # fills that only other fills wait for
                    for n in leftover:
                        self.lazy_done.add(n)
                        self.memory.allocate(n)
                        self.finish(n)
                    continue
                raise AssertionError("list scheduler stalled: the graph has a cycle")
            self.now = self.running[0][0]
            while self.running and self.running[0][0] <= self.now:
                _, n, stream = heapq.heappop(self.running)
                self.free_streams.add(stream)
                self.finish(n)
        return self.slots

    def start_ready(self) -> None:
        """Gives ready kernels to free streams: the best that fits the budget, else (nothing
        running) the memory-aware next one; else waits for running kernels to free memory."""
        while self.free_streams and self.ready:
            fitting = [n for n in self.ready if self.memory.live + self.problem.alloc[n] + self.lazy_bytes(n) <= self.budget]
            if fitting:
                choice = min(fitting, key=self.priority)
            elif not self.running:
                choice = min(self.ready, key=lambda n: self.position[n])  # nothing fits: the memory-aware next
            else:
                return  # wait for running kernels to free memory
            stream = min(self.free_streams)
            self.free_streams.discard(stream)
            self.ready.discard(choice)
            self.run_lazy_inputs(choice)
            self.memory.allocate(choice)
            end = self.now + self.seconds[choice]
            self.slots.append(Slot(choice, stream, self.now, end))
            heapq.heappush(self.running, (end, choice, stream))

    def run_lazy_inputs(self, n: int) -> None:
        for p in self.preds[n]:
            if p in self.lazy and p not in self.lazy_done:
                self.lazy_done.add(p)
                self.memory.allocate(p)
                self.finish(p)

    def finish(self, n: int) -> None:
        self.done += 1
        self.memory.release(n)
        if n in self.lazy:
            return
        for s in self.succs[n]:
            if s in self.lazy:
                continue  # runs with its consumer
            self.waiting[s] -= 1
            if self.waiting[s] == 0:
                self.ready.add(s)

    def lazy_bytes(self, n: int) -> int:
        return sum(self.problem.alloc[p] for p in self.preds[n] if p in self.lazy and p not in self.lazy_done)

    def priority(self, n: int):
        unblocked = sum(1 for s in self.succs[n] if self.waiting[s] == 1)
        freed = self.problem.freed_reads(n, self.memory.is_last_user)
        return (-self.path[n], -unblocked, -freed, self.position[n])


def timed_ancestors(preds: list[list[int]], timed: set[int], n: int) -> set[int]:
    """The nearest predecessors of `n` that take time, looking through zero-time nodes."""
    found, stack, seen = set(), list(preds[n]), set()
    while stack:
        p = stack.pop()
        if p in seen:
            continue
        seen.add(p)
        if p in timed:
            found.add(p)
        else:
            stack.extend(preds[p])
    return found


def waves_from_slots(graph: KernelGraph, slots: list[Slot], max_width: int) -> list[list[int]]:
    """Groups kernels by start time into waves of at most `max_width`; a kernel that depends
    on one in the current wave starts the next."""
    preds = graph.predecessors()
    timed = {s.node for s in slots}

    waves: list[list[int]] = []
    current: set[int] = set()
    for slot in sorted(slots, key=lambda s: (s.start, s.stream)):
        n = slot.node
        if not waves or len(waves[-1]) >= max_width or timed_ancestors(preds, timed, n) & current:
            waves.append([])
            current = set()
        waves[-1].append(n)
        current.add(n)
    return waves


def order_for_waves(graph: KernelGraph, waves: list[list[int]]) -> list[int]:
    """Every node, wave by wave; zero-time nodes (fills, views) just before the wave that
    needs them, and within a wave the members that feed the next wave last."""
    preds = graph.predecessors()
    succs = graph.successors()
    placed: set[int] = set()
    order: list[int] = []

    def place(n: int) -> None:
        stack = [(n, False)]
        while stack:
            node, expanded = stack.pop()
            if node in placed:
                continue
            if expanded:
                placed.add(node)
                order.append(node)
                continue
            stack.append((node, True))
            for p in sorted(preds[node], reverse=True):
                if p not in placed:
                    stack.append((p, False))

    for w, wave in enumerate(waves):
        # What the wave needs that takes no time (fills, views) goes before all of it: IREE
        # would otherwise open a wave at each fill.
        for n in wave:
            for p in sorted(preds[n]):
                place(p)
        following = set(waves[w + 1]) if w + 1 < len(waves) else set()
        feeds_next = lambda n: bool(set(succs[n]) & following)  # noqa: E731
        for n in sorted(wave, key=lambda n: (feeds_next(n), n)):
            place(n)
    for n in range(len(graph.nodes)):
        place(n)
    return order


def schedule(
    graph: KernelGraph,
    seconds: list[float],
    mode: str = "balanced",
    streams: int = 4,
    budget: float | None = None,
    max_wave: int = 32,
    memory_order: list[int] | None = None,
) -> Schedule:
    """The schedule for `mode`: min-memory runs one kernel at a time in the memory-aware
    order; max-concurrency ignores memory; balanced keeps the waves' live bytes within
    `budget` (default: 1.2x the min-memory peak). A schedule without a concurrent wave is
    min-memory's (see `is_serial`)."""
    if mode not in MODES:
        raise ValueError(f"unknown mode '{mode}'; valid: {', '.join(MODES)}")
    memory_order = memory_order or graph.program_order()
    serial = _serial(graph, seconds, memory_order)
    if mode == "min-memory":
        return serial
    limit = float("inf") if mode == "max-concurrency" else (budget if budget else 1.2 * serial.peak_bytes)
    while True:
        width = max(1, min(streams, max_wave))
        slots = list_schedule(graph, seconds, streams, limit, memory_order)
        waves = waves_from_slots(graph, slots, width)
        order = order_for_waves(graph, waves)
        peak = wave_peak(graph, waves, order)
        if peak <= limit:
            break
        if streams == 1:
            return serial  # no concurrency fits the budget: the memory-aware order
        streams //= 2  # the waves keep more alive than the budget: fewer streams
    if all(len(wave) <= 1 for wave in waves):
        return serial  # nothing ran concurrently after all: the memory-aware order, as it is
    makespan = max((s.end for s in slots), default=0.0)
    wave_makespan = sum(max(seconds[n] for n in w) for w in waves if w)
    return Schedule(tuple(sorted(slots, key=lambda s: (s.start, s.stream))), tuple(tuple(w) for w in waves), tuple(order), makespan, wave_makespan, peak)


def is_serial(plan: Schedule) -> bool:
    """No wave runs two kernels: the plan is the memory-aware order, one kernel at a time."""
    return all(len(wave) <= 1 for wave in plan.waves)


def _serial(graph: KernelGraph, seconds: list[float], memory_order: list[int]) -> Schedule:
    """One kernel at a time in the memory-aware order itself, fills and views where that order
    has them: its peak is that order's (no wave keeps anything alive longer). Regrouping the
    fills before their kernel, as waves do, would make a padded buffer live one kernel early."""
    slots, now, waves = [], 0.0, []
    for n in memory_order:
        if seconds[n] > 0:
            slots.append(Slot(n, 0, now, now + seconds[n]))
            now += seconds[n]
            waves.append([n])
    return Schedule(tuple(slots), tuple(tuple(w) for w in waves), tuple(memory_order), now, now, graph.peak_bytes(list(memory_order)))
