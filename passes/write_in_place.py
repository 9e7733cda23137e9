"""write-in-place: an elementwise kernel writes its result into an input that dies there.

IREE gives every kernel's result a buffer of its own, unless the result is tied to an operand.
An elementwise kernel that is the only reader of a tensor another kernel made can write a result
of the same type over it (`schedc.decisions.write_in_place`): RandWire's node sums (five inputs,
three results), a batch norm and ReLU after schedc's CPU matmul kernel, which IREE cannot fuse
into it. At the flow phase, before memory-order:

    %y = flow.dispatch @conv::@conv(%x, %w) : (...) -> tensor<32x1024xf32>
    %z = flow.dispatch @bn::@bn(%y, %s) : (tensor<32x1024xf32>, tensor<32xf32>) -> tensor<32x1024xf32>
becomes
    %z = flow.dispatch @bn::@bn(%y, %s) : (tensor<32x1024xf32>, tensor<32xf32>) -> %y

and the entry function of `@bn` reads and writes `%y`'s binding (`readwrite`) in place of a
result binding of its own. IREE's stream phase then allocates one buffer for both, and
memory-order's kernel graph sees one buffer (a result tied to an operand with one reader).
Several calls of one executable are tied alike, or not at all. The counts per function go to the
report.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass

from iree.compiler import ir

from schedc.decisions.write_in_place import saved_bytes, shared_ties
from schedc.ir.iree import (bind_in_place, enclosing_function, executable_bodies, in_place_site, ops_named, symbol_path,
                            tensor_bytes, tie_results)
from schedc.passes.base import PassInfo


@dataclass(frozen=True)
class Options:
    enabled: bool = True  # false: every result in a buffer of its own, as IREE does


def write_in_place(module, pass_, options: Options, context) -> None:
    if not options.enabled:
        return
    records = context.records.setdefault("write-in-place", {})
    bodies = executable_bodies(module)
    calls = defaultdict(list)
    for dispatch in ops_named(module, "flow.dispatch"):
        calls[symbol_path(ir.ArrayAttr(dispatch.attributes["entry_points"])[0])].append(dispatch)
    for entry, dispatches in calls.items():
        if entry not in bodies or len(ir.ArrayAttr(dispatches[0].attributes["entry_points"])) != 1:
            continue
        sites = [in_place_site(d, bodies[entry]) for d in dispatches]
        if any(s is None for s in sites):
            continue
        chosen = shared_ties(sites)
        if all(t < 0 for t in chosen):
            continue
        for dispatch in dispatches:
            function = enclosing_function(dispatch)
            found = records.setdefault(function, {"results": 0, "bytes": 0})
            found["results"] += sum(t >= 0 for t in chosen)
            found["bytes"] += saved_bytes(tuple(tensor_bytes(r.type) for r in dispatch.results), chosen)
        bind_in_place(dispatches[0], bodies[entry], chosen)
        for dispatch in dispatches:
            tie_results(dispatch, chosen)


PASS = PassInfo(
    name="write-in-place",
    summary="an elementwise kernel writes its result over an input that nothing else reads, where IREE would allocate a buffer for it",
    run=write_in_place,
    options=Options,
    # after the passes that read executables' bodies as IREE made them (kernel databases key on them)
    after=("kernel-config", "mma-operands"),
)
