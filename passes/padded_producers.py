"""padded-producers: a padded tensor's producer writes the padded buffer, and the tensor's other
readers read its interior, so IREE needs no copy between the two.

IREE makes a `tensor.pad` a fill and an `insert_slice`, and stores a kernel's result straight
into the padded buffer only when the pad is its sole reader. A ResNet block's input is read by
its first 3x3 convolution (padded) and by the residual sum, so IREE gives it a buffer of its own
and a copy into the padded one: nine copies a call in ResNet-18 f16 on cuda (one left after the
pass: the input image's), ten in SqueezeNet (a 1x1 expansion beside the padded 3x3; two left).
Before dispatch formation (IREE's global optimization has folded unit dimensions) the pass
rewrites

    %y = linalg.generic ... -> tensor<64x56x56xf16>
    %p = tensor.pad %y low[0, 1, 1] high[0, 1, 1] { tensor.yield %zero }
    %c = linalg.generic ins(%p, %w ...)                  // the 3x3 convolution
    %s = linalg.generic ins(%c2, %y ...)                 // the residual sum
into
    %y = linalg.generic ... -> tensor<64x56x56xf16>
    %f = linalg.fill ins(%zero) outs(tensor.empty() : tensor<64x58x58xf16>)
    %p = tensor.insert_slice %y into %f[0, 1, 1] [64, 56, 56] [1, 1, 1]
    %p1 = tensor.expand_shape %p [[0, 1], [2], [3]] output_shape [1, 64, 58, 58]
    %yi = tensor.extract_slice %p1[0, 0, 1, 1] [1, 64, 56, 56] [1, 1, 1, 1] : ... to tensor<64x56x56xf16>
    %c = linalg.generic ins(%p, %w ...)
    %s = linalg.generic ins(%c2, %yi ...)

IREE then stores the producer's dispatch into the padded buffer and folds the slice into the
residual sum's load. The slice reads through the reshape because canonicalization folds a slice
of the `insert_slice` itself back into `%y`, which would make `%y` a second reader again (and
shifting the reader's indexing map by the padding instead crashes IREE 3.13's dispatch formation
for a contraction, in `inferConvolutionDims`).

A concatenation that a pad alone reads (a SqueezeNet fire's output before its max pool) is the
same copy one level up: IREE stores the pieces into the concatenation's buffer and copies all of
it into the padded one. The pieces are inserted into the padded buffer instead:

    %c0 = tensor.insert_slice %a into %empty[0, 0, 0, 0] [1, 64, 55, 55] [1, 1, 1, 1]
    %c1 = tensor.insert_slice %b into %c0[0, 64, 0, 0] [1, 64, 55, 55] [1, 1, 1, 1]
    %c = tensor.collapse_shape %c1 [[0, 1], [2], [3]]
    %p = tensor.pad %c low[0, 0, 0] high[0, 2, 2] { tensor.yield %ninf }
becomes
    %f = linalg.fill ins(%ninf) outs(tensor.empty() : tensor<128x57x57xf16>)
    %p0 = tensor.insert_slice %a into %f[0, 0, 0] [64, 55, 55] [1, 1, 1]
    %p = tensor.insert_slice %b into %p0[64, 0, 0] [64, 55, 55] [1, 1, 1]

IREE 3.13 stores the first piece's kernel straight into the padded buffer (an insert into a
fill) and copies each later piece in: half of SqueezeNet's copy is left. (Padding each piece on
its own and concatenating the padded pieces, which are contiguous, made IREE copy all four.)

Which sources qualify: `schedc.decisions.padded_producers`. The counts per function go to the
report.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from iree.compiler import ir

from schedc.decisions.padded_producers import PaddedConcatenation, PaddedSource, concatenation_qualifies, qualifies
from schedc.ir.iree import function_name, function_ops, ops_named
from schedc.ir.rewrite import inline_values, tensor_type as _tensor
from schedc.options import Phase
from schedc.passes.base import PassInfo


@dataclass(frozen=True)
class Options:
    enabled: bool = True  # false: IREE's copies, for comparison (the pass runs implicitly on cuda)


def padded_producers(module, pass_, options: Options, context) -> None:
    if not options.enabled:
        return
    records = context.records.setdefault("padded-producers", {})
    for func in function_ops(module):
        pads = ops_named(func, "tensor.pad")
        chosen = [pad for pad in pads if qualifies(_facts(pad))]  # collect, then rewrite
        concatenations = [(pad, *found) for pad in pads for found in [_concatenation(pad)]
                          if found is not None and concatenation_qualifies(found[0])]
        for pad in chosen:
            _rewrite(pad)
        for pad, facts, inserts in concatenations:
            _rewrite_concatenation(pad, facts, inserts)
        if chosen or concatenations:
            records[function_name(func)] = {"pads_written_by_producers": len(chosen),
                                            "concatenations_written_padded": len(concatenations)}


def _padding_value(pad: ir.Operation) -> ir.Attribute | None:
    """The constant a pad pads with, or None when it yields anything else."""
    block = pad.regions[0].blocks[0]
    yielded = list(block.operations)[-1].operands[0]
    if not isinstance(yielded, ir.OpResult) or yielded.owner.operation.name != "arith.constant":
        return None
    return yielded.owner.operation.attributes["value"]


def _static(pad: ir.Operation, name: str) -> tuple[int, ...]:
    return tuple(ir.DenseI64ArrayAttr(pad.attributes[name]))


def _facts(pad: ir.Operation) -> PaddedSource:
    source = pad.operands[0]
    no = PaddedSource((), (), (), False, 0, ())
    if len(pad.operands) != 1 or _padding_value(pad) is None or not isinstance(source, ir.OpResult):
        return no  # dynamic padding, a computed padding value, or a block argument
    producer = source.owner.operation
    readers = [use.owner for use in source.uses]
    if producer.parent != pad.parent or any(r.operation.parent != pad.parent for r in readers):
        return no
    return PaddedSource(
        shape=tuple(ir.RankedTensorType(source.type).shape),
        low=_static(pad, "static_low"),
        high=_static(pad, "static_high"),
        produced_by_kernel=producer.name.startswith("linalg."),
        pads=sum(r.name == "tensor.pad" for r in readers),
        other_readers=tuple(_reader_kind(r, source) for r in readers if r.name != "tensor.pad"),
    )


def _reader_kind(reader: ir.Operation, source: ir.Value) -> str:
    """How `reader` reads `source`, as `schedc.decisions.padded_producers.READER_KINDS` names it."""
    if reader.name == "tensor.extract_slice":
        return "slice" if len(reader.operands) == 1 else "dynamic slice"
    if not reader.name.startswith("linalg.") or "operandSegmentSizes" not in reader.attributes:
        return reader.name
    inputs = ir.DenseI32ArrayAttr(reader.attributes["operandSegmentSizes"])[0]
    if any(i >= inputs for i, operand in enumerate(reader.operands) if operand == source):
        return "output"
    if reader.name != "linalg.generic" or any("reduction" in str(t) for t in ir.ArrayAttr(reader.attributes["iterator_types"])):
        return "linalg"
    maps = [ir.AffineMapAttr(a).value for a in ir.ArrayAttr(reader.attributes["indexing_maps"])]
    return "elementwise" if all(_in_order(m) for m in maps) else "permuted elementwise"


def _in_order(map_: ir.AffineMap) -> bool:
    """An identity or a broadcast: loop dimensions only, in increasing order."""
    positions = [e.position if isinstance(e, ir.AffineDimExpr) else -1 for e in map_.results]
    return all(p >= 0 for p in positions) and positions == sorted(set(positions))


def _list(values) -> str:
    return ", ".join(str(v) for v in values)


def _rewrite(pad: ir.Operation) -> None:
    source = pad.operands[0]
    source_type = ir.RankedTensorType(source.type)
    shape, element = tuple(source_type.shape), source_type.element_type
    low, high = _static(pad, "static_low"), _static(pad, "static_high")
    padded = tuple(s + lo + hi for s, lo, hi in zip(shape, low, high))
    groups = "[[0, 1]" + "".join(f", [{d + 1}]" for d in range(1, len(shape))) + "]"
    text = f"""
func.func private @padded(%y: {_tensor(shape, element)}) -> ({_tensor(padded, element)}, {_tensor(shape, element)}) {{
  %v = arith.constant {_padding_value(pad)}
  %e = tensor.empty() : {_tensor(padded, element)}
  %f = linalg.fill ins(%v : {element}) outs(%e : {_tensor(padded, element)}) -> {_tensor(padded, element)}
  %p = tensor.insert_slice %y into %f[{_list(low)}] [{_list(shape)}] [{_list([1] * len(shape))}] : {_tensor(shape, element)} into {_tensor(padded, element)}
  %p1 = tensor.expand_shape %p {groups} output_shape [1, {_list(padded)}] : {_tensor(padded, element)} into {_tensor((1,) + padded, element)}
  %yi = tensor.extract_slice %p1[0, {_list(low)}] [1, {_list(shape)}] [{_list([1] * (len(shape) + 1))}] : {_tensor((1,) + padded, element)} to {_tensor(shape, element)}
  return %p, %yi : {_tensor(padded, element)}, {_tensor(shape, element)}
}}"""
    others = [use.owner for use in source.uses if use.owner.name != "tensor.pad"]
    with pad.context, pad.location:
        helper = ir.Module.parse(text)
        padded_value, interior = inline_values(helper.body.operations[0], [source], after=source.owner.operation)
    pad.results[0].replace_all_uses_with(padded_value)
    pad.erase()
    for reader in others:
        kind = _reader_kind(reader, source)
        if kind == "slice":  # a strided 1x1 convolution's input: the same slice, moved
            offsets = [o + lo for o, lo in zip(_static(reader, "static_offsets"), low)]
            reader.attributes["static_offsets"] = ir.DenseI64ArrayAttr.get(offsets)
            reader.operands[0] = padded_value
        elif kind == "elementwise":
            _shift(reader, source, padded_value, low)
        else:
            for i, operand in enumerate(list(reader.operands)):
                if operand == source:
                    reader.operands[i] = interior
    if not list(interior.uses):
        for op in (interior.owner, interior.owner.operands[0].owner):  # the slice, then its reshape
            op.erase()


def _concatenation(pad: ir.Operation) -> tuple[PaddedConcatenation, list[ir.Operation]] | None:
    """The facts of a pad whose source is a concatenation (a chain of static `insert_slice`s,
    perhaps reshaped), and the chain's inserts from the last one back; None for any other pad."""
    value = pad.operands[0]
    if len(pad.operands) != 1 or _padding_value(pad) is None or not isinstance(value, ir.OpResult):
        return None
    read_once = len(list(value.uses)) == 1
    groups = None
    if value.owner.operation.name == "tensor.collapse_shape":
        reshape = value.owner.operation
        groups = [[ir.IntegerAttr(d).value for d in ir.ArrayAttr(g)] for g in ir.ArrayAttr(reshape.attributes["reassociation"])]
        value = reshape.operands[0]
        read_once = read_once and len(list(value.uses)) == 1
    inserts = []
    while isinstance(value, ir.OpResult) and value.owner.operation.name == "tensor.insert_slice" and len(value.owner.operation.operands) == 2:
        if inserts:
            read_once = read_once and len(list(value.uses)) == 1
        inserts.append(value.owner.operation)
        value = inserts[-1].operands[1]
    if not inserts:
        return None
    whole = tuple(ir.RankedTensorType(inserts[0].results[0].type).shape)
    groups = groups or [[d] for d in range(len(whole))]
    kept = [next((d for d in g if whole[d] != 1), g[-1]) for g in groups]  # the dimension a group keeps
    fit = all(whole[d] == 1 for g, k in zip(groups, kept) for d in g if d != k)
    pieces = []
    for insert in reversed(inserts):
        offsets, sizes = _static(insert, "static_offsets"), _static(insert, "static_sizes")
        piece = (tuple(offsets[k] for k in kept), tuple(sizes[k] for k in kept))
        fit = fit and tuple(ir.RankedTensorType(insert.operands[0].type).shape) == piece[1]
        pieces.append(piece)
    into_empty = isinstance(value, ir.OpResult) and value.owner.operation.name == "tensor.empty"
    facts = PaddedConcatenation(
        shape=tuple(whole[k] for k in kept), low=_static(pad, "static_low"), high=_static(pad, "static_high"),
        pieces=tuple(pieces), into_empty=into_empty, pieces_fit=fit, read_once=read_once)
    return facts, inserts


def _rewrite_concatenation(pad: ir.Operation, facts: PaddedConcatenation, inserts: list[ir.Operation]) -> None:
    """The pieces of the concatenation `pad` reads go into the padded buffer at the pad's offsets."""
    padded_type = ir.RankedTensorType(pad.results[0].type)
    padded, element = tuple(padded_type.shape), padded_type.element_type
    pieces = [insert.operands[0] for insert in reversed(inserts)]
    arguments = ", ".join(f"%a{i}: {piece.type}" for i, piece in enumerate(pieces))
    lines = [f"%p0 = linalg.fill ins(%v : {element}) outs(%e : {_tensor(padded, element)}) -> {_tensor(padded, element)}"]
    # IREE 3.13 stores only the first piece's kernel straight into the padded buffer (an insert
    # into the fill); each later one is copied in (`slow_memcpy`): the largest piece goes first
    largest_first = sorted(range(len(pieces)), key=lambda i: -math.prod(facts.pieces[i][1]))
    for j, i in enumerate(largest_first):
        offsets, sizes = facts.pieces[i]
        moved = [o + lo for o, lo in zip(offsets, facts.low)]
        lines.append(f"%p{j + 1} = tensor.insert_slice %a{i} into %p{j}[{_list(moved)}] [{_list(sizes)}] [{_list([1] * len(sizes))}]"
                     f" : {pieces[i].type} into {_tensor(padded, element)}")
    body = "\n  ".join(lines)
    text = f"""
func.func private @padded({arguments}) -> {_tensor(padded, element)} {{
  %v = arith.constant {_padding_value(pad)}
  %e = tensor.empty() : {_tensor(padded, element)}
  {body}
  return %p{len(pieces)} : {_tensor(padded, element)}
}}"""
    with pad.context, pad.location:
        helper = ir.Module.parse(text)
        (written,) = inline_values(helper.body.operations[0], pieces, before=pad)
    source = pad.operands[0]
    pad.results[0].replace_all_uses_with(written)
    pad.erase()
    if source.owner.operation.name == "tensor.collapse_shape":
        source.owner.operation.erase()
    for insert in inserts:  # from the last one back: each is unused once its reader is gone
        insert.erase()


def _shift(reader: ir.Operation, source: ir.Value, padded: ir.Value, low: tuple[int, ...]) -> None:
    """An elementwise `reader` reads `padded` where it read `source`, its indexing map moved by
    the low padding."""
    maps = [ir.AffineMapAttr(a).value for a in ir.ArrayAttr(reader.attributes["indexing_maps"])]
    for i, operand in enumerate(list(reader.operands)):
        if operand != source:
            continue
        moved = [ir.AffineAddExpr.get(e, ir.AffineConstantExpr.get(lo)) if lo else e for e, lo in zip(maps[i].results, low)]
        maps[i] = ir.AffineMap.get(maps[i].n_dims, maps[i].n_symbols, moved)
        reader.operands[i] = padded
    reader.attributes["indexing_maps"] = ir.ArrayAttr.get([ir.AffineMapAttr.get(m) for m in maps])


PASS = PassInfo(
    name="padded-producers",
    summary="on cuda, a padded tensor's producer writes the padded buffer and its other readers read the interior, so IREE copies nothing between them",
    run=padded_producers,
    options=Options,
    phase=Phase.PREPROCESSING,
    implicit_for=("cuda",),
)
