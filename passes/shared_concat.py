"""shared-concat: concatenations that extend each other share one buffer.

A DenseNet block concatenates all earlier outputs before each layer; IREE builds every
concatenation anew, copying each piece in, and keeps the pieces alive beside them. Where each
concatenation begins with the previous one's pieces (`schedc.decisions.shared_concat`), the
pass makes one buffer of the last one's size, inserts each piece into it once, and reads every
concatenation as the buffer's leading slice:

    %c1 = tensor.concat dim(1) %x0, %x1 : (tensor<1x24x32x32xf32>, tensor<1x12x32x32xf32>) -> tensor<1x36x32x32xf32>
    ...
    %c2 = tensor.concat dim(1) %x0, %x1, %x2 : (...) -> tensor<1x48x32x32xf32>
into
    %e = tensor.empty() : tensor<1x48x32x32xf32>
    %b0 = tensor.insert_slice %x0 into %e[0, 0, 0, 0] [1, 24, 32, 32] [1, 1, 1, 1]
    %b1 = tensor.insert_slice %x1 into %b0[0, 24, 0, 0] [1, 12, 32, 32] [1, 1, 1, 1]
    %c1 = tensor.extract_slice %b1[0, 0, 0, 0] [1, 36, 32, 32] [1, 1, 1, 1]
    ...
    %b2 = tensor.insert_slice %x2 into %b1[0, 36, 0, 0] [1, 12, 32, 32] [1, 1, 1, 1]    // %c2

IREE stores each piece's kernel into the buffer (`flow.tensor.update`, emplaced) and fuses each
leading slice into its reader's load, so nothing is copied, and a piece that nothing else
reads has no buffer of its own. Values are unchanged. The buffer is as wide as the last
concatenation from the first one on, so where a block is short it can raise the peak: the pass
runs only where named (`--passes "shared-concat,memory-order,arena-plan"`), with the figures in
bench/README.md ("Concatenations in one buffer").
"""

from __future__ import annotations

from dataclasses import dataclass

from iree.compiler import ir

from schedc.decisions.shared_concat import Concatenation, chains, copied_bytes
from schedc.ir.iree import element_bits, function_name, function_ops, ops_named
from schedc.ir.rewrite import extract_slice, insert_slice
from schedc.options import Phase
from schedc.passes.base import PassInfo


@dataclass(frozen=True)
class Options:
    enabled: bool = True  # false: IREE's own concatenations, for comparison


def shared_concat(module, pass_, options: Options, context) -> None:
    if not options.enabled:
        return
    records = context.records.setdefault("shared-concat", {})
    for func in function_ops(module):
        # top-level ones alone: a chain's buffer flows from one concatenation to the next in program order
        ops = [op for op in ops_named(func, "tensor.concat") if op.parent.operation == func.operation]
        ids: dict = {}
        facts = [Concatenation(dim=ir.IntegerAttr(op.attributes["dim"]).value,
                               shape=tuple(ir.RankedTensorType(op.results[0].type).shape),
                               pieces=tuple(ids.setdefault(v, len(ids)) for v in op.operands))
                 for op in ops]
        found = chains(facts)
        saved = 0
        for chain in found:
            element = ir.RankedTensorType(ops[chain[-1]].results[0].type).element_type
            saved += copied_bytes(facts, chain, element_bits(element) // 8)
            _rewrite([ops[i] for i in chain])
        if found:
            records[function_name(func)] = {"chains": [len(c) for c in found], "concatenations": sum(len(c) for c in found),
                                            "copied_bytes_saved": saved}


def _rewrite(chain: list[ir.Operation]) -> None:
    """One buffer of the last concatenation's type; at each concatenation, its new pieces
    inserted, and the concatenation replaced by the buffer's leading slice (the last by the
    buffer itself)."""
    last = chain[-1]
    whole = ir.RankedTensorType(last.results[0].type)
    dim = ir.IntegerAttr(last.attributes["dim"]).value
    buffer, inserted, offset = None, 0, 0
    for op in chain:
        with op.context, op.location, ir.InsertionPoint(op):
            if buffer is None:
                buffer = ir.Operation.create("tensor.empty", results=[whole]).results[0]
            for piece in list(op.operands)[inserted:]:
                buffer = insert_slice(piece, buffer, dim, offset)
                offset += ir.RankedTensorType(piece.type).shape[dim]
            inserted = len(op.operands)
            value = buffer if op == last else extract_slice(buffer, dim, 0, ir.RankedTensorType(op.results[0].type).shape[dim])
        op.results[0].replace_all_uses_with(value)
        op.erase()


PASS = PassInfo(
    name="shared-concat",
    summary="concatenations that extend each other (a DenseNet block's) share one buffer, and IREE copies nothing into them",
    run=shared_concat,
    options=Options,
    phase=Phase.INPUT,
    after=("split-concat",),
)
