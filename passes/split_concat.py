"""split-concat: a reduction over a concatenation reads the pieces instead, one after another.

DARTS-style cells concatenate their nodes and reduce the result with a 1x1 convolution. IREE
builds the concatenation as a tensor of its own: every node is copied into it while later nodes
still read the node, and that tensor sets the cell's peak. Reducing over a concatenation is
reducing over its pieces in turn, each partial result the initial value of the next (linalg
reduces in loop order; `schedc.decisions.split_concat`), so before dispatch formation the pass rewrites

    %e = tensor.empty() : tensor<1x128x32x32xf32>
    %c0 = tensor.insert_slice %n0 into %e[0, 0, 0, 0] [1, 32, 32, 32] [1, 1, 1, 1]
    ...                                           // %n1..%n3 at channels 32, 64, 96
    %a = tensor.collapse_shape %c3 [[0, 1], [2], [3]] : ... into tensor<128x32x32xf32>
    %r = linalg.generic {maps (d3, d1, d2), (d0, d3), (d0, d1, d2); d3 reduction}
           ins(%a, %w : tensor<128x32x32xf32>, tensor<32x128xf32>) outs(%init)
into
    %w0 = tensor.extract_slice %w[0, 0] [32, 32] [1, 1]
    %r0 = linalg.generic {...} ins(%n0, %w0) outs(%init)
    %w1 = tensor.extract_slice %w[0, 32] [32, 32] [1, 1]
    %r1 = linalg.generic {...} ins(%n1, %w1) outs(%r0)
    ...                                           // %r3 replaces %r

No FLOPs are added and nothing runs twice; the concatenation is never built, so a piece can be
freed once its partial reduction and its other readers have run. A concatenation with any other
reader, or pieces that do not tile one dimension, is left as it is. The count per function goes
to the report.
"""

from __future__ import annotations

from iree.compiler import ir

from schedc.decisions.split_concat import Piece, collapsed_dimension, split_dimension
from schedc.ir.iree import defining_op_name, function_name, function_ops, ops_named

from schedc.options import Phase
from schedc.passes.base import PassInfo

def split_concat(module, pass_, options, context) -> None:
    records = context.records.setdefault("split-concat", {})
    for func in function_ops(module):
        split = sum(_rewrite(op) for op in ops_named(func, "linalg.generic"))
        if split:
            records[function_name(func)] = {"reductions_split": split}


def _rewrite(generic: ir.Operation) -> bool:
    """Splits one reduction when its operands match (see the module docstring)."""
    match = _match(generic)
    if match is None:
        return False
    position, spans, sources, chain, slice_at = match
    operands = list(generic.operands)
    result = generic.results[0]
    previous = operands[-1]
    with ir.InsertionPoint(generic), generic.location:
        for (offset, size), source in zip(spans, sources):
            slices = {index: _extract_slice(operands[index], dim, offset, size) for index, dim in slice_at.items()}
            part = generic.clone(ip=ir.InsertionPoint(generic))
            part.operands[position] = source
            for index, value in slices.items():
                part.operands[index] = value
            part.operands[len(operands) - 1] = previous
            previous = part.results[0]
    result.replace_all_uses_with(previous)
    generic.erase()
    for op in chain:  # collapse_shape, insert_slices last to first, the empty when unshared
        if all(not list(r.uses) for r in op.results):
            op.erase()
    return True


def _match(generic: ir.Operation):
    """(input position, spans, piece values in span order, ops to erase after, {other input
    position: its dimension to slice}) for a reduction over a concatenation; None otherwise."""
    segments = list(ir.DenseI32ArrayAttr(generic.attributes["operandSegmentSizes"]))
    if len(generic.results) != 1 or segments[1] != 1 or ops_named(generic, "linalg.index"):
        return None  # (a body that reads its loop indices would see the pieces' own)
    maps = [ir.AffineMapAttr(a).value for a in ir.ArrayAttr(generic.attributes["indexing_maps"])]
    reductions = {i for i, t in enumerate(ir.ArrayAttr(generic.attributes["iterator_types"])) if "reduction" in str(t)}
    for position in range(segments[0]):
        found = _concatenation(generic.operands[position])
        if found is None:
            continue
        dim, spans, sources, chain = found
        expressions = list(maps[position].results)
        if not isinstance(expressions[dim], ir.AffineDimExpr) or expressions[dim].position not in reductions:
            continue
        loop = expressions[dim].position
        if sum(_uses_dim(e, loop) for e in expressions) != 1:
            continue
        slice_at = _slices_of_others(maps, segments[0], position, loop)
        if slice_at is None:
            continue
        return position, spans, sources, chain, slice_at
    return None


def _concatenation(value: ir.Value):
    """(dimension of `value`, spans, piece values, ops that build it) when `value` is a
    concatenation (maybe collapsed) that nothing else reads, with pieces of `value`'s shape."""
    if not _single_use(value):
        return None
    collapse, tensor = None, value
    if defining_op_name(value) == "tensor.collapse_shape":
        collapse = value.owner.operation
        tensor = collapse.operands[0]
        if not _single_use(tensor):
            return None
    inserts, current = [], tensor
    while defining_op_name(current) == "tensor.insert_slice":
        insert = current.owner.operation
        if len(insert.operands) != 2 or (inserts and not _single_use(current)):
            return None
        inserts.append(insert)
        current = insert.operands[1]
    if not inserts or defining_op_name(current) != "tensor.empty":  # an empty has no data: others may share it
        return None
    shape = tuple(ir.RankedTensorType(tensor.type).shape)
    pieces = [Piece(*(tuple(ir.DenseI64ArrayAttr(op.attributes[f"static_{k}"])) for k in ("offsets", "sizes", "strides"))) for op in inserts]
    if any(ir.ShapedType.get_dynamic_size() in p.offsets + p.sizes + p.strides for p in pieces):
        return None
    split = split_dimension(shape, pieces)
    if split is None:
        return None
    dim, spans = split
    if collapse is not None:
        groups = [list(ir.ArrayAttr(g)) for g in ir.ArrayAttr(collapse.attributes["reassociation"])]
        dim_after = collapsed_dimension(dim, shape, [[ir.IntegerAttr(i).value for i in g] for g in groups])
        if dim_after is None:
            return None
        dim, shape = dim_after, tuple(ir.RankedTensorType(value.type).shape)
    by_offset = {piece.offsets[split[0]]: op.operands[0] for piece, op in zip(pieces, inserts)}
    sources = [by_offset[offset] for offset, _ in spans]
    for (_, size), source in zip(spans, sources):
        if tuple(ir.RankedTensorType(source.type).shape) != shape[:dim] + (size,) + shape[dim + 1:]:
            return None  # a piece of another rank or layout than the reduction reads
    chain = ([collapse] if collapse is not None else []) + inserts + [current.owner.operation]
    return dim, spans, sources, chain


def _slices_of_others(maps, inputs: int, position: int, loop: int) -> dict[int, int] | None:
    """{input position: dimension} of the other inputs that index `loop` (sliced per piece);
    None when one reads it other than as a whole dimension, or the output reads it."""
    slice_at = {}
    for index in range(inputs):
        if index == position:
            continue
        expressions = list(maps[index].results)
        dims = [d for d, e in enumerate(expressions) if _uses_dim(e, loop)]
        if not dims:
            continue
        if len(dims) != 1 or not isinstance(expressions[dims[0]], ir.AffineDimExpr):
            return None
        slice_at[index] = dims[0]
    if any(_uses_dim(e, loop) for e in maps[inputs].results):
        return None
    return slice_at


def _uses_dim(expression, loop: int) -> bool:
    if isinstance(expression, ir.AffineDimExpr):
        return expression.position == loop
    if isinstance(expression, ir.AffineBinaryExpr):
        return _uses_dim(expression.lhs, loop) or _uses_dim(expression.rhs, loop)
    return False


def _single_use(value: ir.Value) -> bool:
    return len(list(value.uses)) == 1


def _extract_slice(value: ir.Value, dim: int, offset: int, size: int) -> ir.Value:
    shape = list(ir.RankedTensorType(value.type).shape)
    offsets, sizes = [0] * len(shape), list(shape)
    offsets[dim], sizes[dim] = offset, size
    result = ir.RankedTensorType.get(sizes, ir.RankedTensorType(value.type).element_type)
    op = ir.Operation.create(
        "tensor.extract_slice", results=[result], operands=[value],
        attributes={
            "static_offsets": ir.DenseI64ArrayAttr.get(offsets),
            "static_sizes": ir.DenseI64ArrayAttr.get(sizes),
            "static_strides": ir.DenseI64ArrayAttr.get([1] * len(shape)),
            "operandSegmentSizes": ir.DenseI32ArrayAttr.get([1, 0, 0, 0]),
        },
    )
    return op.results[0]


PASS = PassInfo(
    name="split-concat",
    summary="reductions over a concatenation read its pieces in turn, so it is never built",
    run=split_concat,
    phase=Phase.PREPROCESSING,
)
