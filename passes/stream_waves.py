"""stream-waves: make IREE's concurrent regions the waves stream-schedule chose.

Runs on IREE's stream phase after its async pipeline (`stream.async.execute` regions, ops in
schedc's order, IREE's own waves turned off by stream-schedule), before allocation. The
function's `sched.waves` (one wave index per flow.dispatch, in order, written by
stream-schedule; IREE drops attributes on the ops it converts, not on functions) maps onto the
`stream.async.dispatch` ops in order; each wave of two or more becomes one
`stream.async.concurrent` (fills that a wave's kernels write into join the wave before it, as
IREE's own scheduling does), so the module's `stream.cmd.concurrent` groups are schedc's.

A function whose dispatches no longer match the recorded waves (IREE merged or added
dispatches) keeps IREE's serial order, with a warning.
"""

from __future__ import annotations

from iree.compiler import ir
from iree.compiler.dialects import stream

from schedc.dialects.sched import WAVES
from schedc.ir.iree import (
    async_tied_operand,
    function_name,
    function_ops,
    is_async_dispatch,
    is_fill,
    is_resource,
    ops_named,
    resource_size,
)

from schedc.options import Phase
from schedc.passes.base import PassInfo


def _inside(op: ir.Operation, region_owner: ir.Operation) -> bool:
    parent = op.parent
    while parent is not None:
        if parent == region_owner:
            return True
        parent = parent.parent
    return False


def wrap_concurrent(group: list[ir.Operation]) -> ir.Operation:
    """Moves `group` (contiguous, independent ops of one block) into a stream.async.concurrent."""
    members = set(group)
    captured: list[ir.Value] = []
    for op in group:
        for operand in op.operands:
            if is_resource(operand) and (isinstance(operand.owner, ir.Block) or operand.owner not in members) and operand not in captured:
                captured.append(operand)
    escaping: list[ir.Value] = []
    for op in group:
        for result in op.results:
            if any(use.owner.operation not in members for use in result.uses):
                escaping.append(result)
    captured_sizes = [resource_size(v, group) for v in captured]
    escaping_sizes = [resource_size(v, group) for v in escaping]
    sources = [async_tied_operand(value) for value in escaping]
    tied = [captured.index(source) if source is not None and source in captured else -1 for source in sources]
    with ir.InsertionPoint(group[0]), group[0].location:
        tied_attr = ir.ArrayAttr.get([ir.IntegerAttr.get(ir.IndexType.get(), t) for t in tied]) if any(t >= 0 for t in tied) else None
        wave = stream.AsyncConcurrentOp([v.type for v in escaping], captured, captured_sizes, escaping_sizes, tied_operands=tied_attr)
    block = wave.regions[0].blocks.append(*[v.type for v in captured], arg_locs=[group[0].location] * len(captured))
    with ir.InsertionPoint(block), group[0].location:
        yield_op = stream.YieldOp(escaping, escaping_sizes)
    for op in group:
        op.move_before(yield_op)
        for index, operand in enumerate(op.operands):
            if operand in captured:
                op.operands[index] = block.arguments[captured.index(operand)]
    for value, result in zip(escaping, wave.results):
        for use in list(value.uses):
            owner = use.owner.operation
            if owner != yield_op.operation and not _inside(owner, wave.operation):
                owner.operands[use.operand_number] = result
    return wave.operation


def _waves_of_execute(execute: ir.Operation, waves_left: list[int]) -> list[list[ir.Operation]] | None:
    """Groups the execute region's ops by wave; None when the dispatches do not match."""
    body = execute.regions[0].blocks[0]
    ops = [op.operation for op in body.operations]
    wave_of: dict = {}
    for op in ops:
        if is_async_dispatch(op):
            if not waves_left:
                return None
            wave_of[op] = waves_left.pop(0)
    # A fill joins the wave before the first wave that writes into it.
    for op in ops:
        if is_fill(op):
            consumers = [wave_of[u.owner.operation] for u in op.results[0].uses if u.owner.operation in wave_of]
            if consumers and min(consumers) > 0:
                wave_of[op] = min(consumers) - 1
    groups: dict[int, list[ir.Operation]] = {}
    for op in ops:
        if op in wave_of:
            groups.setdefault(wave_of[op], []).append(op)
    return [groups[w] for w in sorted(groups) if len(groups[w]) > 1]


def _make_contiguous(group: list[ir.Operation]) -> bool:
    """Moves fills next to the rest of their wave; False if other ops sit in between."""
    anchor = next(op for op in group if not is_fill(op))
    for op in group:
        if is_fill(op):
            op.move_before(anchor)
    ordered = sorted(group, key=lambda op: _position(op))
    positions = [_position(op) for op in ordered]
    return positions == list(range(positions[0], positions[0] + len(positions)))


def _position(op: ir.Operation) -> int:
    block_parent = op.parent
    for index, other in enumerate(block_parent.regions[0].blocks[0].operations):
        if other.operation == op:
            return index
    raise ValueError("op not in its parent's first block")


def stream_waves(module, pass_, options, context) -> None:
    records = context.records.setdefault("stream-waves", {})
    for func in function_ops(module):
        if WAVES.get(func) is None:
            continue
        name = function_name(func)
        waves_left = list(WAVES.get(func))
        realized, planned = [], 0
        for execute in ops_named(func, "stream.async.execute"):
            groups = _waves_of_execute(execute, waves_left)
            if groups is None:
                break
            for group in groups:
                planned += 1
                if _make_contiguous(group):
                    wrap_concurrent(sorted(group, key=_position))
                    realized.append(len(group))
        if waves_left or planned != len(realized):
            context.warn(func.location, f"stream-waves realized {len(realized)} of the planned waves; the rest run one kernel at a time")
        records[name] = {"concurrent_waves": len(realized), "ops_per_wave": realized}


PASS = PassInfo(
    name="stream-waves",
    summary="turn stream-schedule's waves into IREE's concurrent regions (stream phase)",
    run=stream_waves,
    phase=Phase.STREAM_ASYNC,
    requires=("stream-schedule",),
)
