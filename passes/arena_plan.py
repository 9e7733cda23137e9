"""arena-plan: schedc's own offsets for every transient slice, in place of IREE's packing.

Runs on IREE's stream phase stopped right after schedule-allocation, where each execution
region's transients are one `stream.resource.pack` (slice lifetimes and sizes). It plans the
offsets with `schedc.decisions.arena_plan.plan_arena` (the smallest of several methods, never worse than
IREE's own layout), replaces the pack with index constants, and records the plan on the
arena's `stream.resource.alloca` as `sched.arena_*` attributes. IREE then continues from there,
so the module's transient allocation is schedc's arena, byte for byte.

    %3:3 = stream.resource.pack slices({[0, 1] = %c64, [1, 2] = %c64}) : index
    // becomes
    %c64 = arith.constant 64 : index  (total), %c0 / %c0 (offsets: the lifetimes do not meet)

A pack it cannot plan (dynamic sizes, a dynamic base offset) keeps IREE's packing, with a
warning that says why; with `strict=true` that is an error.

`persistent-fills=true` (for `--execution=graphs`) pins padded buffers: a slice that a
`stream.cmd.fill` covers first and one dispatch then stores into at constant offsets (IREE's
unfused `tensor.pad`) gets bytes no other slice ever meets, shared only with pads of the same
fill and stores (`schedc.decisions.arena_plan_pads`). Its border then keeps the fill value from call to call, and
the fills are listed on the function (`sched.persistent_fills`) for static-replay, which runs
them once when the module loads instead of on every call. Without static-replay they still run
on every call: the pinned bytes cost memory and change nothing else.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from iree.compiler import ir

from schedc.decisions.arena_plan import MAX_CHECKS, Pad, Plan, Slice, iree_layout, load, pin, plan_arena, verify
from schedc.dialects.sched import ARENA_LOAD, ARENA_METHOD, ARENA_OFFSETS, ARENA_SIZE, PERSISTENT_FILLS
from schedc.ir.iree import (
    RESOURCE_WRITE, Pack, cmd_dispatch_resources, constant_index, enclosing_function_op, executable_bodies, ops_named, packs, symbol_path,
)

from schedc.options import Execution, Phase
from schedc.passes.base import PassInfo


# The largest alignment an arena slice takes: a page of the largest kind GPUs map (2 MiB); an
# alignment of 2**40 built a module that asked for a 3.3 TB arena.
MAX_ALIGNMENT = 2 * 2**20


@dataclass(frozen=True)
class Options:
    alignment: int = 64  # IREE 3.13's buffer offset and range alignment on every target here
    # Work the local and exact searches may do per region (half each), in placement checks (see
    # schedc.decisions.arena_plan): the searches stop on work, so the plan is the same on any machine at any load.
    max_checks: int = MAX_CHECKS
    time_limit: float = 30.0  # seconds per region: a safety net, warned about when it fires
    strict: bool = False  # a pack that cannot be planned fails the compile
    verify: bool = False  # check every plan (no overlap in time and bytes, alignment)
    # Padded buffers get bytes of their own, their fills listed for static-replay to run once.
    persistent_fills: bool = False

    def __post_init__(self):
        if self.alignment <= 0 or self.alignment & (self.alignment - 1) or self.alignment > MAX_ALIGNMENT:
            raise ValueError(f"alignment must be a power of two from 1 to {MAX_ALIGNMENT} bytes, got {self.alignment}")
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
    bodies = executable_bodies(module) if options.persistent_fills else {}
    if options.persistent_fills and context.execution not in (None, Execution.GRAPHS):
        context.warn(module.location, "arena-plan{persistent-fills=true} pins padded buffers so that static replay fills them once; "
                     "without --execution=graphs their fills run on every call and the pinned bytes buy nothing")
    persistent: dict[ir.Operation, list[int]] = {}
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
        pads, fills, execute = _pads(pack, bodies) if options.persistent_fills else ([], {}, None)
        pinning = pin(slices, pads)
        started = time.perf_counter()
        report = plan_arena(list(pinning.slices), options.alignment, options.time_limit, max_checks=options.max_checks)
        seconds = time.perf_counter() - started
        offsets = pinning.offsets(report.plan.offsets)
        # IREE's own layout and LOAD of the slices as they are (pinning is schedc's), for the report.
        iree = iree_layout(slices, options.alignment) if pads else Plan(report.iree_offsets, report.iree_size, "iree")
        least = load(slices, options.alignment) if pads else report.load
        if options.verify or context.verify:
            problems = verify(slices, offsets, options.alignment, report.plan.size) + pinning.problems(slices, offsets)
            if problems:
                pack.op.location.emit_error(f"arena-plan made an invalid plan: {problems[0]}")
                pass_.signal_pass_failure()
                return
        if report.deadline_fired:
            context.warn(pack.op.location, f"arena-plan stopped its search at the time limit ({options.time_limit:g} s) in "
                         f"{pack.function}: the plan may differ between runs; raise time-limit or lower max-checks")
        for alloca in pack.allocas:
            ARENA_SIZE.set(alloca, report.plan.size)
            ARENA_LOAD.set(alloca, least)
            ARENA_METHOD.set(alloca, report.plan.method)
            ARENA_OFFSETS.set(alloca, offsets)
        if fills:
            function = enclosing_function_op(execute)
            number = [e == execute for e in ops_named(function, "stream.cmd.execute")].index(True)
            base = pack.base_offset or 0
            marks = persistent.setdefault(function, [])
            for index in sorted(fills):
                marks += [number, base + report.plan.size, base + offsets[index], slices[index].size]
        pack.replace(offsets, report.plan.size)
        records.setdefault(pack.function, []).append({
            "region": region,
            "slices": len(slices),
            "load_bytes": least,
            "iree_bytes": iree.size,
            "schedc_bytes": report.plan.size,
            "method": report.plan.method,
            "method_bytes": report.sizes,
            "exact_finished": report.exact_finished,
            "deadline_fired": report.deadline_fired,
            "plan_seconds": round(seconds, 4),
            # For the report's arena maps: [start, end, bytes] per slice, and both layouts.
            "lifetimes": [[s.start, s.end, s.size] for s in slices],
            "iree_offsets": list(iree.offsets),
            "schedc_offsets": list(offsets),
            "persistent_fills": len(fills),
            "pinned_bytes": pinning.pinned_bytes,
        })
    for function, marks in persistent.items():
        PERSISTENT_FILLS.set(function, marks)


# ---------------------------------------------------------------------------------------------
# Padded buffers (persistent-fills)

@dataclass(frozen=True)
class _Touch:
    step: int  # commands of one stream.cmd.concurrent share a step (they are not ordered)
    op: ir.Operation
    slice: int
    delta: int  # bytes from the slice's start
    length: int
    kind: str  # "fill", "read", "write"
    binding: int = -1  # a dispatch's resource position


def _slice_ref(value: ir.Value, offsets: dict) -> tuple[int, int] | None:
    """(slice, bytes past its start) of an offset: a pack result, or one plus a constant."""
    if value in offsets:
        return offsets[value], 0
    owner = value.owner
    if isinstance(owner, ir.Block) or owner.name != "arith.addi":
        return None
    a, b = owner.operands
    for base, delta in ((a, b), (b, a)):
        if base in offsets and constant_index(delta) is not None:
            return offsets[base], constant_index(delta)
    return None


def _touches(body: ir.Block, arena: ir.Value, offsets: dict, sizes: list[int]) -> list[_Touch] | None:
    """Every reference of the region's commands to the arena; None where one is not a
    command schedc reads, or its bytes are not within one slice (the region then has no
    pads)."""
    found: list[_Touch] = []
    step = 0

    def add(op, operand, offset, length, kind, binding=-1) -> bool:
        if operand != arena:
            return True
        ref, n = _slice_ref(offset, offsets), constant_index(length)
        if ref is None or n is None or ref[1] < 0 or ref[1] + n > sizes[ref[0]]:
            return False
        found.append(_Touch(step, op, ref[0], ref[1], n, kind, binding))
        return True

    def visit(op: ir.Operation) -> bool:
        if op.name == "stream.cmd.fill":
            target, _, offset, length = list(op.operands)[:4]
            return add(op, target, offset, length, "fill")
        if op.name == "stream.cmd.dispatch":
            return all(
                add(op, r, o, n, "write" if access & RESOURCE_WRITE else "read", position)
                for position, (r, o, n, access) in enumerate(cmd_dispatch_resources(op))
            )
        if op.name == "stream.cmd.copy":
            source, _, source_offset, target, _, target_offset, length = list(op.operands)[:7]
            return add(op, source, source_offset, length, "read") and add(op, target, target_offset, length, "write")
        return all(operand != arena for operand in op.operands)  # anything else must not touch it

    for op in body.operations:
        op = op.operation
        if op.name == "stream.yield":
            continue
        leaves = [op]
        if op.name in _GROUPS:  # its commands are one step: schedc does not order them
            nested = _nested(op)
            if any(o.name not in _COMMANDS + _GROUPS + ("stream.yield",) for o in nested):
                return None
            leaves = [o for o in nested if o.name in _COMMANDS]
        if not all(visit(leaf) for leaf in leaves):
            return None
        step += 1
    return found


_COMMANDS = ("stream.cmd.fill", "stream.cmd.dispatch", "stream.cmd.copy")
_GROUPS = ("stream.cmd.concurrent", "stream.cmd.serial")


def _nested(root: ir.Operation) -> list[ir.Operation]:
    found: list[ir.Operation] = []

    def visit(op):
        if op != root:
            found.append(op.operation)
        return ir.WalkResult.ADVANCE

    root.walk(visit)
    return found


def _store_geometry(dispatch: ir.Operation, binding: int, bodies: dict) -> tuple | None:
    """What a dispatch writes through one binding, when it only stores there at constant
    offsets, sizes and strides (then the same bytes on every call, whatever the data): the
    subspans' offsets and types with each store's geometry. None otherwise (a load of the
    binding, a store at computed offsets, anything else)."""
    entries = ir.ArrayAttr(dispatch.attributes["entry_points"])
    if len(entries) != 1:
        return None
    body = bodies.get(symbol_path(entries[0]))
    if body is None:
        return None
    # The dispatch's resources are the function's !stream.binding arguments, in order.
    bindings = [a for a in body.regions[0].blocks[0].arguments if str(a.type) == "!stream.binding"]
    if binding >= len(bindings):
        return None
    geometry = []
    for use in bindings[binding].uses:
        subspan = use.owner.operation
        if subspan.name != "stream.binding.subspan" or constant_index(subspan.operands[1]) is None:
            return None
        stores = []
        for store_use in subspan.results[0].uses:
            store = store_use.owner.operation
            if store.name != "iree_tensor_ext.dispatch.tensor.store" or store_use.operand_number != 1 or len(store.operands) != 2:
                return None  # a load, or a store with dynamic offsets, sizes or strides
            stores.append(tuple(str(store.attributes[a]) for a in ("static_offsets", "static_sizes", "static_strides")))
        geometry.append((constant_index(subspan.operands[1]), str(subspan.results[0].type), tuple(sorted(stores))))
    return tuple(sorted(geometry)) or None


def _pads(pack: Pack, bodies: dict) -> tuple[list[Pad], dict[int, ir.Operation], ir.Operation | None]:
    """The pack's padded buffers (see the module docstring), the fill of each, and the
    execution region they are in."""
    if len(pack.allocas) != 1:
        return [], {}, None
    arena_value = pack.allocas[0].results[0]
    executes = [u.owner.operation for u in arena_value.uses if u.owner.operation.name == "stream.cmd.execute"]
    others = [u for u in arena_value.uses if u.owner.operation.name not in ("stream.cmd.execute", "stream.resource.dealloca")]
    if len(executes) != 1 or others:
        return [], {}, None
    execute = executes[0]
    view = execute.opview
    position = next(i for i, r in enumerate(view.resource_operands) if r == arena_value)
    body = execute.regions[0].blocks[0]
    offsets = {value: k for k, value in enumerate(pack.op.opview.packed_offsets)}
    touches = _touches(body, body.arguments[position], offsets, [size for _, _, size in pack.slices])
    if touches is None:
        return [], {}, None
    by_slice: dict[int, list[_Touch]] = {}
    for touch in touches:
        by_slice.setdefault(touch.slice, []).append(touch)
    pads, fills = [], {}
    for index, seen in by_slice.items():
        size = pack.slices[index][2]
        fill, writer, readers = seen[0], seen[1] if len(seen) > 1 else None, seen[2:]
        pattern = _constant_text(fill.op.operands[4]) if fill.kind == "fill" else None
        if (
            fill.kind != "fill" or (fill.delta, fill.length) != (0, size) or pattern is None
            or writer is None or writer.kind != "write" or writer.op.name != "stream.cmd.dispatch" or writer.step <= fill.step
            or any(r.kind != "read" or r.step <= writer.step or r.op == writer.op for r in readers)
        ):
            continue
        geometry = _store_geometry(writer.op, writer.binding, bodies)
        if geometry is None:
            continue
        pads.append(Pad(index, (size, pattern, writer.delta, writer.length, geometry)))
        fills[index] = fill.op
    return pads, fills, execute


def _constant_text(value: ir.Value) -> str | None:
    """An arith.constant's value as text (`0 : i8`), None when not a constant."""
    owner = value.owner
    if isinstance(owner, ir.Block) or owner.name != "arith.constant":
        return None
    return str(owner.attributes["value"])


PASS = PassInfo(
    name="arena-plan",
    summary="plan every transient slice's offset in the arena (replaces IREE's slice packing)",
    run=arena_plan,
    options=Options,
    phase=Phase.STREAM,
)
