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

from .graph import KernelGraph
from .liveness import LastUse, MemoryProblem, peak

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
    problem = MemoryProblem.from_graph(graph)
    count = len(graph.nodes)
    preds, succs = graph.predecessors(), graph.successors()
    path = critical_paths(graph, seconds)
    position = {n: i for i, n in enumerate(memory_order or graph.program_order())}
    # Fills that take no time run with their first consumer: run at once, they would hold
    # their bytes from the start. Only fills that wait on no kernel: running them late never
    # runs them before their inputs.
    timed = {n for n in range(count) if seconds[n] > 0.0}
    lazy = {
        n for n in range(count)
        if graph.nodes[n].fill and seconds[n] == 0.0 and problem.alloc[n] > 0 and succs[n]
        and not timed_ancestors(preds, timed, n)
    }
    waiting = [sum(1 for p in ps if p not in lazy) for ps in preds]
    memory = LastUse(problem)
    ready = {n for n in range(count) if waiting[n] == 0 and n not in lazy}
    lazy_done: set[int] = set()
    running: list[tuple[float, int, int]] = []  # (end, node, stream)
    free_streams = set(range(streams))
    slots: list[Slot] = []
    now, done = 0.0, 0

    def run_lazy_inputs(n: int) -> None:
        for p in preds[n]:
            if p in lazy and p not in lazy_done:
                lazy_done.add(p)
                memory.allocate(p)
                finish(p)

    def finish(n: int) -> None:
        nonlocal done
        done += 1
        memory.release(n)
        if n in lazy:
            return
        for s in succs[n]:
            if s in lazy:
                continue  # runs with its consumer
            waiting[s] -= 1
            if waiting[s] == 0:
                ready.add(s)

    def _lazy_bytes(n: int) -> int:
        return sum(problem.alloc[p] for p in preds[n] if p in lazy and p not in lazy_done)

    def priority(n: int):
        unblocked = sum(1 for s in succs[n] if waiting[s] == 1)
        freed = problem.freed_reads(n, memory.is_last_user)
        return (-path[n], -unblocked, -freed, position[n])

    while done < count:
        instant = sorted(n for n in ready if seconds[n] == 0.0)
        if instant:  # zero-time nodes hold no stream
            for n in instant:
                ready.discard(n)
                run_lazy_inputs(n)
                memory.allocate(n)
                finish(n)
            continue
        while free_streams and ready:
            fitting = [n for n in ready if memory.live + problem.alloc[n] + _lazy_bytes(n) <= budget]
            if fitting:
                choice = min(fitting, key=priority)
            elif not running:
                choice = min(ready, key=lambda n: position[n])  # nothing fits: the memory-aware next
            else:
                break  # wait for running kernels to free memory
            stream = min(free_streams)
            free_streams.discard(stream)
            ready.discard(choice)
            run_lazy_inputs(choice)
            memory.allocate(choice)
            slots.append(Slot(choice, stream, now, now + seconds[choice]))
            heapq.heappush(running, (now + seconds[choice], choice, stream))
        if not running:
            if ready:
                continue
            leftover = sorted(n for n in lazy if n not in lazy_done)
            if leftover:  # fills that only other fills wait for
                for n in leftover:
                    lazy_done.add(n)
                    memory.allocate(n)
                    finish(n)
                continue
            raise AssertionError("list scheduler stalled: the graph has a cycle")
        now = running[0][0]
        while running and running[0][0] <= now:
            _, n, stream = heapq.heappop(running)
            free_streams.add(stream)
            finish(n)
    return slots


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
    `budget` (default: 1.2x the min-memory peak)."""
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
    makespan = max((s.end for s in slots), default=0.0)
    wave_makespan = sum(max(seconds[n] for n in w) for w in waves if w)
    return Schedule(tuple(sorted(slots, key=lambda s: (s.start, s.stream))), tuple(tuple(w) for w in waves), tuple(order), makespan, wave_makespan, peak)


def _serial(graph: KernelGraph, seconds: list[float], memory_order: list[int]) -> Schedule:
    slots, now, waves = [], 0.0, []
    for n in memory_order:
        if seconds[n] > 0:
            slots.append(Slot(n, 0, now, now + seconds[n]))
            now += seconds[n]
            waves.append([n])
    order = order_for_waves(graph, waves)
    return Schedule(tuple(slots), tuple(tuple(w) for w in waves), tuple(order), now, now, wave_peak(graph, waves, order))
