"""Where memory-order's serial order is worth its barriers, on llvm-cpu: asked of IREE itself.

memory-order asks IREE to run each function's kernels one at a time in its order
(`serialize`): IREE's own partitioning groups independent kernels into concurrent waves, and a
wave keeps all its tensors alive. But one at a time, every two kernels have a barrier between
them, and on the CPU's task system a barrier costs time: bench/models.py's transformer, whose
order saves nothing, ran 1.10x IREE alone's time serialized and 1.01x with IREE's waves, in the
same transient bytes.

IREE's waves are hard to predict from outside (a model of its partitioning matched its
allocation on some bench models and fell short on others), so this asks IREE: a copy of the
flow-phase module with every serialized function given back its waves goes through IREE's
stream phase up to allocation (a fraction of a second), and each function whose packed
transients then need no more bytes at once (the LOAD of its `stream.resource.pack`s) than the
serial order's peak keeps its waves in the real module. The rest stay serialized. The answer
is IREE's own, so it is the same on every run.
"""

from __future__ import annotations

from pathlib import Path

from schedc.compiler.iree_tools import run_iree_tool
from schedc.compiler.phases import pipeline_until
from schedc.ir.iree import function_name, function_ops, packs, unserialize_partitioning
from schedc.ir.mlirio import read_module, read_without_resources, write_with_resources

TARGETS = ("llvm-cpu",)  # where barriers cost time: the GPU's serial order is replayed or streamed


def wave_loads(flow: Path, trial: Path, allocated: Path, functions: set[str], opt_flags: list[str]) -> dict[str, int | None]:
    """IREE's LOAD of each of `functions` run in concurrent waves: `flow` without their
    serialization, written to `trial`, through IREE's stream phase to `allocated`. None where
    a slice's size is not a constant."""
    module, resources = read_without_resources(flow)
    for func in function_ops(module):
        if function_name(func) in functions:
            unserialize_partitioning(func)
    write_with_resources(module, resources, trial)
    run_iree_tool("iree-opt", [str(trial), *opt_flags, f"--pass-pipeline={pipeline_until('stream')}", "-o", str(allocated)],
                  what="IREE's allocation of the kernels in concurrent waves")
    loads: dict[str, int | None] = {name: 0 for name in functions}
    for pack in packs(read_module(allocated)):
        if pack.function in loads:
            previous = loads[pack.function]
            loads[pack.function] = None if previous is None or pack.dynamic_slices else max(previous, pack.load)
    return loads


def keep_free_waves(steps, records: dict, target: str) -> None:
    """Gives each function memory-order serialized its concurrent waves back where IREE packs
    them in no more bytes than the serial order's peak (`records`: the passes' records;
    memory-order's are updated with `serialize` and `waves_load_bytes`). A function
    stream-schedule planned keeps its serial partitioning: stream-waves builds that plan's own
    waves on it. `steps` is the driver's: its current file is the flow phase after schedc's
    passes, and becomes the result."""
    planned = records.get("stream-schedule", {})
    records = records.get("memory-order", {})
    serialized = {name for name, record in records.items() if record.get("serialize") and name not in planned}
    if target not in TARGETS or not serialized:
        return
    with steps.timer.phase("IREE's allocation of concurrent waves"):
        loads = wave_loads(steps.current, steps.next_file("waves-trial"), steps.next_file("waves-trial-allocation"), serialized, steps.opt_flags)
        free = {name for name, load in loads.items() if load is not None and load <= records[name]["peak_bytes"]}
        for name, load in loads.items():
            records[name]["waves_load_bytes"] = load
            records[name]["serialize"] = name not in free
        if not free:
            return
        module, resources = read_without_resources(steps.current)
        for func in function_ops(module):
            if function_name(func) in free:
                unserialize_partitioning(func)
        write_with_resources(module, resources, steps.next_file("flow-waves"))
        steps.current = steps.last_file
