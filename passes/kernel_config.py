"""kernel-config: give each dispatch a code-generation config for the GPU it will run on.

For every flow.executable it reads the root op's signature (`schedc.ir.dispatches.signature`) and
picks, in order, the config measured fastest on the chip (the kernel database, filled by
`schedc tune`), the analytic heuristic's config for kernels never tuned, or IREE's own choice
(`schedc.decisions.kernel_config.choose_config`). The config goes on the root op as IREE's
`compilation_info`; a measured time goes on the entry function as `sched.kernel_time_us`, where
stream-schedule's cost model reads it.

    // before: IREE would pick workgroup [32, 128], 4-16 workgroups on 132 SMs
    %5 = linalg.matmul ins(%0, %1 : tensor<32x128xf32>, tensor<384x128xf32>) outs(%4 ...)
    // after
    %5 = linalg.matmul {compilation_info = #iree_codegen.compilation_info<
           lowering_config = #iree_gpu.lowering_config<{workgroup = [16, 32, 0],
           reduction = [0, 0, 32], thread = [1, 2, 0], promote_operands = [0, 1]}>,
           translation_info = #iree_codegen.translation_info<pipeline = #iree_gpu.pipeline<TileAndFuse>
           workgroup_size = [256, 1, 1] subgroup_size = 32>>} ins(...) outs(...)
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from schedc.dialects.sched import KERNEL_TIME_US
from schedc.ir.dispatches import apply_config, executables, signature
from schedc.decisions.kernel_config import CHIPS, KernelDatabase, choose_config, default_database

from schedc.passes.base import PassInfo


@dataclass(frozen=True)
class Options:
    database: str = ""  # a kernel database (JSON); empty: the one built in for the target
    heuristic: bool = True  # configure kernels the database lacks with the analytic heuristic
    target: str = ""  # cuda or rocm; empty: the target being compiled (cuda in schedc-opt)
    arch: str = ""  # code-generation arch of the database; empty: the target's

    def __post_init__(self):
        if self.target and self.target not in CHIPS:
            raise ValueError(f"kernel configs are for GPU targets ({', '.join(CHIPS)}), not '{self.target}'")


def _database(options: Options, target: str, arch: str, context) -> KernelDatabase | None:
    path = options.database or getattr(context, "kernel_database", "")
    if path:
        database = KernelDatabase.load(path)
        database.check_for(target, arch)
        return database
    return default_database(target, arch)


def kernel_config(module, pass_, options: Options, context) -> None:
    target = options.target or context.target or "cuda"
    if target not in CHIPS:
        return  # CPU and Vulkan code generation take no GPU tile configs: IREE's own stand
    arch = options.arch or context.arch or ("sm_80" if target == "cuda" else "gfx942")
    database = _database(options, target, arch, context)
    if database is None and target != "cuda":
        return  # the heuristic is calibrated on NVIDIA GPUs: elsewhere only measured configs
    records = context.records.setdefault("kernel-config", {})
    kernels = []
    for executable in executables(module):
        found = signature(executable)
        if found is None:
            continue
        sig, root = found
        choice = choose_config(sig, database, options.heuristic, CHIPS[target])
        if choice.config is not None:
            apply_config(root, choice.config)
        if choice.time_us is not None:
            KERNEL_TIME_US.set(executable.func, choice.time_us)
        kernels.append({
            "dispatch": sig.name,
            "signature": sig.describe(),
            "kind": sig.kind,
            "work": math.prod(sig.loops),  # iterations of the root op: its share of the model's work
            "key": sig.key,
            "source": choice.source,
            "config": choice.config.label() if choice.config else "IREE's own",
            "time_us": choice.time_us,
        })
    records["module"] = {
        "target": target,
        "arch": arch,
        "database": database.path if database is not None else None,
        "kernels": kernels,
    }


PASS = PassInfo(
    name="kernel-config",
    summary="give each dispatch a GPU code-generation config: tuned, heuristic, or IREE's",
    run=kernel_config,
    options=Options,
    implicit_for=("cuda", "rocm"),
)
