"""memory-order: reorder each function's kernels to lower the peak of live transient bytes.

IREE keeps ops near their input order, so the order that reaches its stream phase decides
which tensors are alive together. This pass builds the kernel graph, picks the order with the
lowest estimated peak (`schedc.decisions.memory_order.best_order`), moves the ops into it, and records each
kernel's position as `sched.position` and the winning strategy as `sched.strategy`.

    // before: two branches interleaved, both 4 KiB tensors alive at once
    %a = flow.dispatch @ex::@a(%x)    %b = flow.dispatch @ex::@b(%x)
    %a2 = flow.dispatch @ex::@a2(%a)  %b2 = flow.dispatch @ex::@b2(%b)
    // after: one branch finished before the other starts
    %a = ... {sched.position = 0}  %a2 = ... {sched.position = 1}
    %b = ... {sched.position = 2}  %b2 = ... {sched.position = 3}
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from schedc.dialects.sched import POSITION, STRATEGY
from schedc.ir.extract import build_kernel_graph
from schedc.decisions.kernel_graph import KernelGraph
from schedc.ir.iree import body_ops, function_ops, is_kernel, serialize_partitioning
from schedc.decisions.memory_order import STRATEGIES, OrderDecision, OrderLimits, best_order
from schedc.decisions.kernel_graph import kernel_graph_record, live_timeline

from schedc.passes.base import PassInfo


@dataclass(frozen=True)
class Options:
    strategy: str = "auto"
    exact_limit: int = 160  # nodes that allocate, above which the exact search only improves the order
    # States the exact search may create before it gives up, and the beam search's (and,
    # above exact-limit, the improving search's): the searches stop on work, so the order is
    # the same on any machine at any load. With the lower bound (`schedc.decisions.memory_order.bounds`) the
    # bench models and RandWire nets of 16-40 nodes need at most 25,577 states.
    max_states: int = 3_000_000
    beam_states: int = 200_000
    time_limit: float = 60.0  # seconds per function: a safety net, warned about when it fires
    # Ask IREE to run the kernels one at a time in this order: its default partitioning groups
    # independent kernels into concurrent waves, and a wave keeps all its tensors alive.
    serialize: bool = True

    def __post_init__(self):
        if self.strategy != "auto" and self.strategy not in STRATEGIES:
            raise ValueError(f"unknown strategy '{self.strategy}'; valid: auto, {', '.join(STRATEGIES)}")
        if self.exact_limit < 0:
            raise ValueError(f"exact-limit must be >= 0, got {self.exact_limit}")
        if self.max_states < 0:
            raise ValueError(f"max-states must be >= 0, got {self.max_states}")
        if self.beam_states < 0:
            raise ValueError(f"beam-states must be >= 0, got {self.beam_states}")
        if not self.time_limit > 0:
            raise ValueError(f"time-limit must be > 0 seconds, got {self.time_limit}")


def apply_order(func, order: list[int]) -> None:
    """Moves the body's ops into `order` (node indices), before the terminator."""
    ops = body_ops(func)
    terminator = func.regions[0].blocks[0].operations[len(ops)]
    for index in order:
        ops[index].move_before(terminator)


def memory_order(module, pass_, options: Options, context) -> None:
    records = context.records.setdefault("memory-order", {})
    limits = OrderLimits(options.exact_limit, options.max_states, options.time_limit, beam_states=options.beam_states)
    for func in function_ops(module):
        started = time.perf_counter()
        graph = build_kernel_graph(func)
        if not graph.kernels:
            continue
        decision = best_order(graph, options.strategy, limits)
        apply_order(func, decision.order)
        for position, op in enumerate(op for op in body_ops(func) if is_kernel(op)):
            POSITION.set(op, position)
        STRATEGY.set(func, decision.strategy)
        if decision.deadline_fired:
            context.warn(func.location, f"memory-order stopped its search at the time limit ({options.time_limit:g} s) "
                         f"for @{graph.function}: the order may differ between runs; raise time-limit or lower max-states")
        if options.serialize:
            serialize_partitioning(func)
        records[graph.function] = record(graph, decision) | {
            "serialize": options.serialize,
            "pass_seconds": round(time.perf_counter() - started, 4),
            # For the report's pictures: live bytes per kernel in both orders, and the graph.
            "timeline": {
                "iree": live_timeline(graph, graph.program_order()),
                "schedc": live_timeline(graph, decision.order),
            },
            "graph": kernel_graph_record(graph, decision.order),
        }


def record(graph: KernelGraph, decision: OrderDecision) -> dict:
    """What the report keeps of a function's order."""
    return {
        "kernels": len(graph.kernels),
        "strategy": decision.strategy,
        "program_peak_bytes": decision.program_peak,
        "peak_bytes": decision.peak,
        "optimum_bytes": decision.optimum,
        "lower_bound_bytes": decision.lower_bound,
        "strategy_peaks": decision.peaks,
        "searches": decision.searches,
        "deadline_fired": decision.deadline_fired,
    }


PASS = PassInfo(
    name="memory-order",
    summary="reorder kernels to lower the peak of live transient memory",
    run=memory_order,
    options=Options,
)
