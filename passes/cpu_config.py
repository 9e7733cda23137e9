"""cpu-config: choose how IREE's llvm-cpu code generation builds each convolution and matmul.

It runs where IREE's input conversion ends (linalg on tensors, before preprocessing), reads each
convolution and matmul (`schedc.ir.cpu_ops.shaped_ops`), and takes the plan estimated fastest
from measured times (`schedc.decisions.cpu_config.choose_plan`): a layout per convolution, which
it applies with IREE's own pass for that op alone (`schedc.ir.cpu_ops.rewrite_op`), and a mode
for the module, whose IREE flags (data tiling, micro-kernels) the rest of the compile takes.

    // before: a 3x3 convolution IREE would build in NCHW
    %4 = linalg.conv_2d_nchw_fchw {...} ins(%padded, %w : tensor<1x64x57x57xf32>, tensor<64x64x3x3xf32>) ...
    // after (layout im2col): a matmul over IREE's im2col, fused into one dispatch later
    %5 = iree_linalg_ext.im2col strides = [1, 1, 1] ... ins(%padded : tensor<1x64x57x57xf32>) ...
    %6 = linalg.generic {...} ins(%collapsed, %5 : tensor<64x576xf32>, tensor<1x576x55x55xf32>) ...
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from schedc.decisions.cpu_config import (
    CHANNELS_LAST_MODES, DATA_TILING_MODES, IM2COL_MIN_GAIN, ISAS, KERNEL_LAYOUTS, LAYOUTS, MODE_FLAGS, MODES, CpuDatabase, CpuPlan, OpChoice, choose_plan, data_tiles, default_database, host_isa,
)
from schedc.errors import CompileError
from schedc.ir.cpu_ops import depthwise_to_kernel, pool_to_kernel, rewrite_op, shaped_ops
from schedc.ir.iree import ops_named
from schedc.kernels import kernel_isa
from schedc.options import Phase
from schedc.passes.base import PassInfo
from schedc.targets import host_cpu_features


@dataclass(frozen=True)
class Options:
    database: str = ""  # a CPU kernel database (JSON); empty: the one built in for the host
    layout: str = ""  # every convolution (and, for gemm, matmul) in this layout (nchw, nhwc, im2col, gemm); empty: chosen
    mode: str = ""  # the module in this mode (plain, data-tiling); empty: chosen
    im2col_min_gain: float = IM2COL_MIN_GAIN  # a window convolution's least estimated gain in im2col (1: none)
    cautious: bool = True  # a window convolution leaves IREE's NCHW build where any neighbour's was off its cliff
    per_op_tiling: bool = False  # data tiling chosen op by op, not one mode for the module (opt-in: bench/README.md)
    pools: bool = True  # stride-1 max pools in schedc's kernel, which reads the image unpadded (false: IREE's)
    # stride-1 depthwise convolutions the plan leaves NCHW in schedc's kernel, which reads the
    # image unpadded (false: IREE's)
    depthwise: bool = True

    def __post_init__(self):
        if self.layout and self.layout not in LAYOUTS:
            raise ValueError(f"unknown layout '{self.layout}'; layouts: {', '.join(LAYOUTS)}")
        if self.mode and self.mode not in MODE_FLAGS:
            raise ValueError(f"unknown mode '{self.mode}'; modes: {', '.join(MODE_FLAGS)}")
        if self.im2col_min_gain < 1:
            raise ValueError(f"im2col-min-gain must be at least 1, not {self.im2col_min_gain}")


# Plans from another ISA's built-in database than the host's: the same plans on every machine
# (the test suite sets it), or a plan for a machine of that ISA.
ISA_VARIABLE = "SCHEDC_CPU_ISA"


def database_isa() -> str:
    """The ISA whose built-in database plans the module: $SCHEDC_CPU_ISA, else the host's."""
    named = os.environ.get(ISA_VARIABLE, "")
    if named and named not in ISAS:
        raise CompileError(f"{ISA_VARIABLE}={named} is no ISA a CPU database is measured for; valid: {', '.join(ISAS)}")
    return named or host_isa(host_cpu_features())


def plan_database(path: str, context) -> CpuDatabase | None:
    """The database that plans the module: `path` (cpu-config's `database`), else the one the
    compile names (--kernel-db), else the one built in for the ISA (`database_isa`)."""
    path = path or getattr(context, "kernel_database", "")
    return CpuDatabase.load(path) if path else default_database(database_isa())


# Target CPUs (`--cpu`) with AVX2 and FMA, which schedc's kernels need: the host's (what
# `host_isa` reads), and the x86-64 levels that include them.
KERNEL_CPUS = ("", "host", "x86-64-v3", "x86-64-v4")


def kernels_unavailable(isa: str, cpu: str = "") -> str | None:
    """Why schedc's own kernels (the `gemm` layout) cannot run in plans for `isa` and target CPU
    `cpu`; None where they can."""
    if not isa.startswith("x86_64"):
        return f"schedc's kernels are for x86-64 with AVX2, not {isa}"
    if cpu not in KERNEL_CPUS:
        return f"schedc's kernels need AVX2 and FMA, which target CPU '{cpu}' may lack (they run for {', '.join(c for c in KERNEL_CPUS if c)})"
    from schedc.kernels import GEMM, available

    return available(GEMM, kernel_isa(cpu))


def _forced_layout(plan: CpuPlan, layout: str) -> CpuPlan:
    """The plan with every op in `layout` where its mode lets it take it (data-tiled where
    the plan's mode or its own choice tiles it and the layout lets IREE)."""
    ops = []
    for c in plan.ops:
        forced = layout if layout in c.shape.layouts(plan.mode) else "nchw"
        tiled = (plan.mode in DATA_TILING_MODES or c.data_tiling) and data_tiles(c.shape, forced)
        ops.append(OpChoice(c.shape, forced, "forced", None, tiled))
    return CpuPlan(plan.mode, tuple(ops), plan.estimates_us)


def cpu_config(module, pass_, options: Options, context) -> None:
    if (context.target or "llvm-cpu") != "llvm-cpu":
        return
    found = shaped_ops(module)
    pools = ops_named(module, "linalg.pooling_nchw_max") if options.pools else []
    database = plan_database(options.database, context)
    per_op = options.per_op_tiling and not options.mode
    unavailable = kernels_unavailable(database_isa(), context.arch) if found or pools else None
    isa = kernel_isa(context.arch)  # AVX-512 where the target has it
    if options.layout in KERNEL_LAYOUTS and unavailable:
        raise CompileError(f"cpu-config{{layout={options.layout}}}: {unavailable}")
    plan = choose_plan([shape for _, shape in found], database, modes=(options.mode,) if options.mode else MODES,
                       im2col_min_gain=options.im2col_min_gain, cautious=options.cautious, per_op_tiling=per_op,
                       kernels=unavailable is None)
    if options.layout:
        plan = _forced_layout(plan, options.layout)
    ops = []
    for (op, _), choice in zip(found, plan.ops):
        # One mode for the module: IREE's flag tiles every matmul as it always has (a 1x1
        # convolution it turns into one too); per op: the hint marks the chosen ones alone.
        hint = choice.data_tiling and per_op
        applied = (choice.layout != "nchw" or hint) and rewrite_op(op, choice.layout, hint, channels_last=plan.mode in CHANNELS_LAST_MODES,
                                                                   isa=isa)
        layout = choice.layout if applied or choice.layout == "nchw" else "nchw (IREE has no rewrite for it)"
        ops.append({
            "op": choice.shape.key, "kind": choice.shape.kind, "work": choice.shape.work,
            "layout": layout, "data_tiling": choice.data_tiling and (applied or choice.layout == "nchw" or not per_op),
            "source": choice.source, "time_us": None if choice.time_us is None else round(choice.time_us, 1),
        })
    # Max pools and depthwise convolutions left NCHW: in schedc's kernels where they can be
    # built and the module stays NCHW (in a channels-last module an NCHW op would stand between
    # transposes)
    pooled = depthwise = 0
    if unavailable is None and plan.mode not in CHANNELS_LAST_MODES:
        pooled = sum(pool_to_kernel(op, isa) for op in pools)
        if options.depthwise:
            depthwise = sum(depthwise_to_kernel(op, isa) for (op, shape), choice in zip(found, plan.ops)
                            if shape.kind == "depthwise" and choice.layout == "nchw")
    context.iree_flags.extend(f for f in plan.iree_flags if f not in context.iree_flags)
    context.records.setdefault("cpu-config", {})["module"] = {
        "database": database.path if database is not None else None,
        "mode": plan.mode, "iree_flags": list(plan.iree_flags), "estimates_us": plan.estimates_us, "ops": ops,
        "kernels_unavailable": unavailable, "kernel_isa": None if unavailable else isa, "max_pools_in_kernel": pooled,
        "depthwise_in_kernel": depthwise,
    }


PASS = PassInfo(
    name="cpu-config",
    summary="choose each convolution's layout and the module's CPU code-generation mode from measured times",
    run=cpu_config,
    options=Options,
    phase=Phase.INPUT,
    implicit_for=("llvm-cpu",),
    after=("split-concat",),
)
