"""arena-plan: schedc's own offsets for every transient slice, in place of IREE's packing.

Runs on IREE's stream phase stopped right after schedule-allocation, where each execution
region's transients are one `stream.resource.pack` (slice lifetimes and sizes). It plans the
offsets with `schedc.arena.plan_arena` (the smallest of several methods, never worse than
IREE's own layout), replaces the pack with index constants, and records the plan on the
arena's `stream.resource.alloca` as `sched.arena_*` attributes. IREE then continues from there,
so the module's transient allocation is schedc's arena, byte for byte.

    %3:3 = stream.resource.pack slices({[0, 1] = %c64, [1, 2] = %c64}) : index
    // becomes
    %c64 = arith.constant 64 : index  (total), %c0 / %c0 (offsets: the lifetimes do not meet)

A pack it cannot plan (dynamic sizes, a dynamic base offset) keeps IREE's packing, with a
warning that says why; with `strict=true` that is an error.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from schedc.arena import MAX_CHECKS, Slice, plan_arena, verify
from schedc.dialects.sched import ARENA_LOAD, ARENA_METHOD, ARENA_OFFSETS, ARENA_SIZE
from schedc.iree_ir import Pack, packs

from ._base import PassInfo


@dataclass(frozen=True)
class Options:
    alignment: int = 64  # IREE 3.13's buffer offset and range alignment on every target here
    # Work the local and exact searches may do per region (half each), in placement checks (see
    # schedc.arena): the searches stop on work, so the plan is the same on any machine at any load.
    max_checks: int = MAX_CHECKS
    time_limit: float = 30.0  # seconds per region: a safety net, warned about when it fires
    strict: bool = False  # a pack that cannot be planned fails the compile
    verify: bool = False  # check every plan (no overlap in time and bytes, alignment)

    def __post_init__(self):
        if self.alignment <= 0 or self.alignment & (self.alignment - 1):
            raise ValueError(f"alignment must be a power of two, got {self.alignment}")
        if self.max_checks < 0:
            raise ValueError(f"max-checks must be >= 0, got {self.max_checks}")
        if not self.time_limit > 0:
            raise ValueError(f"time-limit must be > 0 seconds, got {self.time_limit}")


def why_not_planned(pack: Pack) -> str:
    """Why schedc cannot plan a pack's offsets; empty when it can."""
    if pack.base_offset != 0:
        return "the pack has a dynamic base offset"
    if pack.dynamic_slices:
        return f"{pack.dynamic_slices} of its {len(pack.slices)} slices have dynamic sizes"
    return ""


def arena_plan(module, pass_, options: Options, context) -> None:
    records = context.records.setdefault("arena-plan", {})
    for region, pack in enumerate(packs(module)):
        if not pack.allocas:
            continue  # constants and other lifetimes: not the transient arena
        why = why_not_planned(pack)
        if why:
            if options.strict:
                pack.op.location.emit_error(f"arena-plan cannot plan this pack: {why}")
                pass_.signal_pass_failure()
                return
            context.warn(pack.op.location, f"arena-plan left IREE's packing in place in {pack.function}: {why}")
            continue
        slices = [Slice(*s) for s in pack.slices]
        started = time.perf_counter()
        report = plan_arena(slices, options.alignment, options.time_limit, max_checks=options.max_checks)
        seconds = time.perf_counter() - started
        if options.verify or context.verify:
            problems = verify(slices, report.plan.offsets, options.alignment, report.plan.size)
            if problems:
                pack.op.location.emit_error(f"arena-plan made an invalid plan: {problems[0]}")
                pass_.signal_pass_failure()
                return
        if report.deadline_fired:
            context.warn(pack.op.location, f"arena-plan stopped its search at the time limit ({options.time_limit:g} s) in "
                         f"{pack.function}: the plan may differ between runs; raise time-limit or lower max-checks")
        for alloca in pack.allocas:
            ARENA_SIZE.set(alloca, report.plan.size)
            ARENA_LOAD.set(alloca, report.load)
            ARENA_METHOD.set(alloca, report.plan.method)
            ARENA_OFFSETS.set(alloca, report.plan.offsets)
        pack.replace(report.plan.offsets, report.plan.size)
        records.setdefault(pack.function, []).append({
            "region": region,
            "slices": len(slices),
            "load_bytes": report.load,
            "iree_bytes": report.iree_size,
            "schedc_bytes": report.plan.size,
            "method": report.plan.method,
            "method_bytes": report.sizes,
            "exact_finished": report.exact_finished,
            "deadline_fired": report.deadline_fired,
            "plan_seconds": round(seconds, 4),
            # For the report's arena maps: [start, end, bytes] per slice, and both layouts.
            "lifetimes": [[s.start, s.end, s.size] for s in slices],
            "iree_offsets": list(report.iree_offsets),
            "schedc_offsets": list(report.plan.offsets),
        })


PASS = PassInfo(
    name="arena-plan",
    summary="plan every transient slice's offset in the arena (replaces IREE's slice packing)",
    run=arena_plan,
    options=Options,
    phase="stream",
)
