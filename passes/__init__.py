"""schedc's scheduling passes, by command-line name.

Each pass module defines `PASS`, a `PassInfo` that names the phase the pass runs in
(`schedc.compiler.phases`) and the passes it needs; `REGISTRY` maps kebab-case names to them. A new pass,
in any phase, is its own module and one entry here: the driver reads the rest from the entry.
"""

from __future__ import annotations

from schedc.passes.base import PassContext, PassInfo
from schedc.passes.arena_plan import PASS as ARENA_PLAN
from schedc.passes.cpu_config import PASS as CPU_CONFIG
from schedc.passes.expanded_slices import PASS as EXPANDED_SLICES
from schedc.passes.kernel_config import PASS as KERNEL_CONFIG
from schedc.passes.memory_order import PASS as MEMORY_ORDER
from schedc.passes.mma_operands import PASS as MMA_OPERANDS
from schedc.passes.overlap_fills import PASS as OVERLAP_FILLS
from schedc.passes.padded_producers import PASS as PADDED_PRODUCERS
from schedc.passes.reduction_config import PASS as REDUCTION_CONFIG
from schedc.passes.print_kernel_graph import PASS as PRINT_KERNEL_GRAPH
from schedc.passes.remat import PASS as REMAT
from schedc.passes.split_concat import PASS as SPLIT_CONCAT
from schedc.passes.shared_concat import PASS as SHARED_CONCAT
from schedc.passes.split_k import PASS as SPLIT_K
from schedc.passes.strided_slices import PASS as STRIDED_SLICES
from schedc.passes.static_replay import PASS as STATIC_REPLAY
from schedc.passes.triton_conv import PASS as TRITON_CONV
from schedc.passes.stream_schedule import PASS as STREAM_SCHEDULE
from schedc.passes.stream_waves import PASS as STREAM_WAVES
from schedc.passes.write_in_place import PASS as WRITE_IN_PLACE

REGISTRY: dict[str, PassInfo] = {
    p.name: p for p in (PRINT_KERNEL_GRAPH, CPU_CONFIG, TRITON_CONV, SPLIT_K, SPLIT_CONCAT, SHARED_CONCAT, STRIDED_SLICES, EXPANDED_SLICES, PADDED_PRODUCERS, MMA_OPERANDS, KERNEL_CONFIG, REDUCTION_CONFIG, WRITE_IN_PLACE, MEMORY_ORDER, REMAT, STREAM_SCHEDULE, STREAM_WAVES, ARENA_PLAN, OVERLAP_FILLS, STATIC_REPLAY)
}

# What `schedc` runs when the user names no pipeline. Each pass runs in its phase: memory-order
# on IREE's flow phase, arena-plan inside IREE's stream phase, after allocation.
DEFAULT_PIPELINE = "write-in-place,memory-order,arena-plan"

# What an execution mode compiles to, whatever the pipeline: --execution=graphs replays each
# call's command buffers recorded once over static buffers (a HAL-phase pass).
EXECUTION_PIPELINES = {"streams": "", "graphs": "static-replay"}

__all__ = ["DEFAULT_PIPELINE", "EXECUTION_PIPELINES", "REGISTRY", "PassContext", "PassInfo"]
