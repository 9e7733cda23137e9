"""schedc's scheduling passes, by command-line name.

Each pass module defines `PASS`, a `PassInfo`; `REGISTRY` maps kebab-case names to them.
"""

from __future__ import annotations

from ._base import PassContext, PassInfo
from .arena_plan import PASS as ARENA_PLAN
from .memory_order import PASS as MEMORY_ORDER
from .print_kernel_graph import PASS as PRINT_KERNEL_GRAPH
from .static_replay import PASS as STATIC_REPLAY
from .stream_schedule import PASS as STREAM_SCHEDULE
from .stream_waves import PASS as STREAM_WAVES

REGISTRY: dict[str, PassInfo] = {
    p.name: p for p in (PRINT_KERNEL_GRAPH, MEMORY_ORDER, STREAM_SCHEDULE, STREAM_WAVES, ARENA_PLAN, STATIC_REPLAY)
}

# What `schedc` runs when the user names no pipeline. Flow-phase passes run on IREE's flow
# phase; stream-phase passes (arena-plan) inside IREE's stream phase, after allocation.
DEFAULT_PIPELINE = "memory-order,arena-plan"

__all__ = ["DEFAULT_PIPELINE", "REGISTRY", "PassContext", "PassInfo"]
