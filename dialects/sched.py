"""Typed accessors for the `sched.*` discardable attributes (documented in sched.md).

Attributes, not ops: IREE's passes keep discardable attributes on the ops they leave in place,
and drop them where they rewrite, so schedc's decisions never block IREE's lowering.
"""

from __future__ import annotations

from dataclasses import dataclass

from iree.compiler import ir


@dataclass(frozen=True)
class SchedAttr:
    """One `sched.<name>` attribute of a fixed kind ("int", "ints" or "str")."""

    name: str
    kind: str
    doc: str

    def get(self, op: ir.Operation):
        op = op.operation
        if self.name not in op.attributes:
            return None
        attr = op.attributes[self.name]
        if self.kind == "int":
            return ir.IntegerAttr(attr).value
        if self.kind == "ints":
            return list(ir.DenseI64ArrayAttr(attr))
        if self.kind == "float":
            return ir.FloatAttr(attr).value
        return ir.StringAttr(attr).value

    def set(self, op: ir.Operation, value) -> None:
        op = op.operation
        with op.context, ir.Location.unknown():
            if self.kind == "int":
                op.attributes[self.name] = ir.IntegerAttr.get(ir.IntegerType.get_signless(64), int(value))
            elif self.kind == "ints":
                op.attributes[self.name] = ir.DenseI64ArrayAttr.get([int(v) for v in value])
            elif self.kind == "float":
                op.attributes[self.name] = ir.FloatAttr.get(ir.F64Type.get(), float(value))
            else:
                op.attributes[self.name] = ir.StringAttr.get(str(value))


POSITION = SchedAttr("sched.position", "int", "a kernel's position in the chosen order")
STRATEGY = SchedAttr("sched.strategy", "str", "on a function: the ordering strategy that won")
STREAM = SchedAttr("sched.stream", "int", "the stream a kernel is scheduled on")
WAVE = SchedAttr("sched.wave", "int", "the concurrent wave a kernel runs in")
ARENA_SIZE = SchedAttr("sched.arena_size", "int", "on a transient alloca: the arena's bytes")
ARENA_LOAD = SchedAttr("sched.arena_load", "int", "on a transient alloca: the most bytes alive at once")
ARENA_METHOD = SchedAttr("sched.arena_method", "str", "on a transient alloca: the planner method that won")
ARENA_OFFSETS = SchedAttr("sched.arena_offsets", "ints", "on a transient alloca: each slice's offset")

KERNEL_TIME_US = SchedAttr("sched.kernel_time_us", "float", "on an executable's entry function: its measured time")

WAVES = SchedAttr("sched.waves", "ints", "on a function: each flow.dispatch's wave, in order")
PERSISTENT_FILLS = SchedAttr(
    "sched.persistent_fills", "ints",
    "on a function: fills whose bytes no other slice meets, as (execution region, arena bytes, offset, length) "
    "fours; static-replay runs them once, when the module loads",
)
