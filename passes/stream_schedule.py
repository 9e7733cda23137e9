"""stream-schedule: decide which kernels run concurrently, within a memory budget.

Per function: each kernel's time from the roofline cost model (`schedc.ir.costs`), the
memory-aware order (memory-order's, when it ran before; else found as memory-order finds it)
as the fallback, then a list schedule on `streams` streams (`schedc.decisions.stream_schedule`). Its waves become
the op order, wave by wave; IREE's own waves are turned off for the function, and the
stream-phase pass stream-waves (which follows this one: its registry entry says so) makes each
wave one `stream.async.concurrent`, so the module's `stream.cmd.concurrent` groups are
schedc's. Kernels get `sched.wave` and `sched.stream`; the
function gets `sched.waves`, each flow.dispatch's wave in order, for stream-waves.

    mode=min-memory        one kernel at a time, in the memory-aware order
    mode=max-concurrency   as many as the streams allow (at most 32 a wave on CUDA graphs)
    mode=balanced          concurrency while the waves' live bytes stay within memory-budget
                           (default: 1.2x the min-memory peak)
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from iree.compiler import ir

from schedc.ir.costs import PEAKS, node_cost
from schedc.dialects.sched import STRATEGY, STREAM, WAVE, WAVES
from schedc.ir.extract import build_kernel_graph
from schedc.ir.iree import (
    body_ops,
    executable_bodies,
    function_ops,
    is_dispatch,
    is_fill,
    may_write_in_place,
    serialize_partitioning,
    update_of,
)
from schedc.decisions.memory_order import best_order
from schedc.decisions.kernel_graph import kernel_graph_record
from schedc.decisions.stream_schedule import MODES, is_serial, schedule

from schedc.passes.base import PassInfo
from schedc.passes.memory_order import apply_order


@dataclass(frozen=True)
class Options:
    mode: str = "balanced"
    streams: int = 4
    memory_budget: int = 0  # bytes; 0: 1.2x the min-memory peak (balanced only)
    target: str = ""  # llvm-cpu, cuda, rocm, vulkan; empty: the target being compiled (cuda in schedc-opt)

    def __post_init__(self):
        if self.mode not in MODES:
            raise ValueError(f"unknown mode '{self.mode}'; valid: {', '.join(MODES)}")
        if not 1 <= self.streams <= 64:
            raise ValueError(f"streams must be between 1 and 64, got {self.streams}")
        if self.memory_budget < 0:
            raise ValueError(f"memory-budget must be >= 0, got {self.memory_budget}")
        if self.target and self.target not in PEAKS:
            raise ValueError(f"unknown target '{self.target}'; valid: {', '.join(PEAKS)}")


def split_shared_fills(func) -> None:
    """Gives every in-place writer of a shared fill (splat, empty) a fill of its own, just
    before it: what IREE's copy-on-write would do, but where the schedule wants it."""
    for op in body_ops(func):
        if not is_fill(op):
            continue
        uses = [(use.owner, use.operand_number) for use in op.results[0].uses]
        if len(uses) < 2:
            continue
        for owner, index in uses[1:]:
            owner = owner.operation
            if not may_write_in_place(owner):
                continue
            clone = op.clone(ir.InsertionPoint(owner))
            owner.operands[index] = clone.results[0]


def stream_schedule(module, pass_, options: Options, context) -> None:
    records = context.records.setdefault("stream-schedule", {})
    target = options.target or getattr(context, "target", "") or "cuda"
    peaks = PEAKS[target]
    max_wave = 32 if target == "cuda" else 64
    bodies = executable_bodies(module)
    for func in function_ops(module):
        started = time.perf_counter()
        split_shared_fills(func)
        graph = build_kernel_graph(func)
        if not graph.kernels:
            continue
        ops = body_ops(func)
        # Fills are scheduled with the kernel that writes into them (see schedc.decisions.stream_schedule).
        # An update IREE writes in place (source and target one buffer) copies nothing.
        seconds = [
            0.0 if node.fill or (update_of(op) is not None and len(node.uses) <= 1)
            else node_cost(op, bodies).seconds(peaks)
            for op, node in zip(ops, graph.nodes)
        ]
        # The memory-aware order: memory-order's, where it ran (the ops are in its order).
        memory = best_order(graph, "program" if STRATEGY.get(func) is not None else "auto")
        if memory.deadline_fired:
            context.warn(func.location, f"stream-schedule's memory-aware order stopped at its time limit for @{graph.function}: "
                         "the schedule may differ between runs")
        plan = schedule(graph, seconds, options.mode, options.streams, options.memory_budget or None, max_wave, memory.order)
        serial = is_serial(plan)  # no concurrency: the memory-aware order as memory-order applies it
        apply_order(func, list(plan.order))
        stream_of = {slot.node: slot.stream for slot in plan.slots}
        wave_of: dict[int, int] = {}
        for w, wave in enumerate(plan.waves):
            for n in wave:
                wave_of[n] = w
                WAVE.set(ops[n], w)
                STREAM.set(ops[n], stream_of.get(n, 0))
        # For stream-waves: each dispatch's wave in the new order (IREE keeps function attributes).
        # None when serial: stream-waves then leaves the function as memory-order would.
        if not serial:
            dispatches = [n for n in plan.order if is_dispatch(ops[n])]
            WAVES.set(func, [wave_of.get(n, -1) for n in dispatches])
        serialize_partitioning(func)  # IREE's own waves stay off: stream-waves builds schedc's
        timeline: dict[int, list] = {}
        for slot in plan.slots:
            timeline.setdefault(slot.stream, []).append(
                [graph.nodes[slot.node].label, round(slot.start * 1e6, 3), round(slot.end * 1e6, 3), wave_of.get(slot.node, -1)]
            )
        per_kernel = {n: {"wave": wave_of.get(n, -1), "stream": stream_of.get(n, 0), "estimated_us": round(seconds[n] * 1e6, 3)} for n in plan.order}
        records[graph.function] = {
            "mode": options.mode,
            "streams": options.streams,
            "target": target,
            "peaks": peaks.name,
            "memory_budget_bytes": options.memory_budget or None,
            "estimated_makespan_us": round(plan.makespan * 1e6, 3),
            "estimated_wave_makespan_us": round(plan.wave_makespan * 1e6, 3),
            "estimated_peak_bytes": plan.peak_bytes,
            "min_memory_peak_bytes": memory.peak,
            "waves": [len(w) for w in plan.waves],
            "timeline_us": {f"stream {s}": slots for s, slots in sorted(timeline.items())},  # [kernel, start, end, wave]
            "pass_seconds": round(time.perf_counter() - started, 4),
            "graph": kernel_graph_record(graph, list(plan.order), per_kernel),
        }


PASS = PassInfo(
    name="stream-schedule",
    summary="choose which kernels run concurrently (waves on streams) within a memory budget",
    run=stream_schedule,
    options=Options,
    after=("memory-order", "remat"),  # then it takes memory-order's order as its memory-aware one
    followed_by=("stream-waves",),  # which makes its waves IREE's concurrent regions
)
