"""overlap-fills: a fill runs beside the command before it when they share no byte.

Runs on IREE's stream phase after schedule-allocation (after arena-plan, whose offsets are
constants). In an execution region's serial body each command waits for the one before it; a
`stream.cmd.fill` (a memset node of a replayed CUDA graph) whose byte range meets none of the
bytes the command before it reads or writes joins that command in one `stream.cmd.concurrent`
(or the concurrent group before it). The decision is `schedc.decisions.overlap_fills.groups`; here the ranges
are read from the commands (a dispatch's resources, offsets and lengths; a fill's target) and
the fills are moved. A command whose ranges are not constants is never overlapped.

    stream.cmd.dispatch @a::@a {ro %arena[%c0 for %c64], wo %arena[%c64 for %c64]}
    stream.cmd.fill %c0_i8, %arena[%c128 for %c64]
    // becomes
    stream.cmd.concurrent {
      stream.cmd.dispatch @a::@a {...}
      stream.cmd.fill %c0_i8, %arena[%c128 for %c64]
    }

A pipeline names it (`memory-order,arena-plan,overlap-fills`); it pays where the command before
a fill leaves the GPU room for it: on the H200 (`python bench/graph_fills.py DIR`), RandWire's
replayed call took 9.4 us less (1.03x), and inception's, whose fills sit beside convolutions
that fill every SM, 2.1 us more (0.99x). So --execution=graphs does not add it.
"""

from __future__ import annotations

from iree.compiler import ir
from iree.compiler.dialects import stream

from schedc.ir.iree import cmd_dispatch_resources, constant_index, defining_op_name, enclosing_function, ops_named
from schedc.decisions.overlap_fills import Command, Range, groups

from schedc.options import Phase
from schedc.passes.base import PassInfo

_ARITHMETIC = {"arith.addi": lambda a, b: a + b, "arith.subi": lambda a, b: a - b, "arith.muli": lambda a, b: a * b}


def _index(value: ir.Value) -> int | None:
    """A constant index, through the integer arithmetic arena-plan's offsets are made of."""
    constant = constant_index(value)
    if constant is not None:
        return constant
    fold = _ARITHMETIC.get(defining_op_name(value))
    if fold is None:
        return None
    a, b = (_index(v) for v in value.owner.operands)
    return None if a is None or b is None else fold(a, b)


def _ranges(op: ir.Operation) -> tuple[Range, ...] | None:
    """The bytes a command touches, as (resource, offset, length); None where not known."""
    if op.name == "stream.cmd.fill":
        target, _, offset, length = list(op.operands)[:4]
        found = [(target, _index(offset), _index(length))]
    elif op.name == "stream.cmd.dispatch":
        found = [(r, _index(o), _index(n)) for r, o, n, _ in cmd_dispatch_resources(op)]
    elif op.name == "stream.cmd.concurrent":
        found = []
        for inner in op.regions[0].blocks[0].operations:
            if inner.operation.name == "stream.yield":
                continue
            ranges = _ranges(inner.operation)
            if ranges is None:
                return None
            found.extend(ranges)
        return tuple(found)
    else:
        return None
    if any(o is None or n is None for _, o, n in found):
        return None
    return tuple(found)


def _commands(body: ir.Block) -> list[ir.Operation]:
    return [op.operation for op in body.operations if op.operation.name != "stream.yield"]


def _concurrent_before(op: ir.Operation) -> ir.Operation:
    """A stream.cmd.concurrent holding `op` (made just before it when `op` is not one)."""
    if op.name == "stream.cmd.concurrent":
        return op
    with ir.InsertionPoint(op), op.location:
        group = stream.CmdConcurrentOp()
    block = group.regions[0].blocks.append()
    with ir.InsertionPoint(block), op.location:
        stream.YieldOp([], [])
    op.move_before(block.operations[0])
    return group.operation


def _terminator(group: ir.Operation) -> ir.Operation:
    return list(group.regions[0].blocks[0].operations)[-1].operation


def overlap_fills(module, pass_, options, context) -> None:
    records = context.records.setdefault("overlap-fills", {})
    for execute in ops_named(module, "stream.cmd.execute"):
        body = execute.regions[0].blocks[0]
        commands = _commands(body)
        decided = groups([Command(op.name == "stream.cmd.fill", _ranges(op)) for op in commands])
        moved = 0
        for members in decided:
            if len(members) < 2:
                continue
            group = _concurrent_before(commands[members[0]])
            for index in members[1:]:
                commands[index].move_before(_terminator(group))
            moved += len(members) - 1
        fills = sum(op.name == "stream.cmd.fill" for op in commands)
        if fills:
            entry = records.setdefault(enclosing_function(execute), {"fills": 0, "overlapped": 0})
            entry["fills"] += fills
            entry["overlapped"] += moved


PASS = PassInfo(
    name="overlap-fills",
    summary="run each fill beside the command before it when they share no byte (a replayed graph's memsets off its critical path)",
    run=overlap_fills,
    phase=Phase.STREAM,
    after=("arena-plan",),
)
