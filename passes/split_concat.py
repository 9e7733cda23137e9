"""split-concat: a reduction over a concatenation reads the pieces instead, one after another.

DARTS-style cells concatenate their nodes and reduce the result with a 1x1 convolution. IREE
builds the concatenation as a tensor of its own: every node is copied into it while later nodes
still read the node, and that tensor sets the cell's peak. Reducing over a concatenation is
reducing over its pieces in turn, each partial result the initial value of the next (linalg
reduces in loop order; `schedc.decisions.split_concat`), so at the input phase the pass rewrites

    %cat = tensor.concat dim(1) %n0, %n1 : (tensor<1x32x32x32xf32>, tensor<1x96x32x32xf32>) -> tensor<1x128x32x32xf32>
    %r = linalg.conv_2d_nchw_fchw ins(%cat, %w : tensor<1x128x32x32xf32>, tensor<32x128x1x1xf32>) outs(%bias ...)
into
    %w0 = tensor.extract_slice %w[0, 0, 0, 0] [32, 32, 1, 1] [1, 1, 1, 1]
    %r0 = linalg.conv_2d_nchw_fchw ins(%n0, %w0 : ...) outs(%bias ...)
    %w1 = tensor.extract_slice %w[0, 32, 0, 0] [32, 96, 1, 1] [1, 1, 1, 1]
    %r1 = linalg.conv_2d_nchw_fchw ins(%n1, %w1 : ...) outs(%r0 ...)    // %r1 replaces %r

and likewise a matmul over its K columns, or a `linalg.generic` reducing over the concatenated
dimension (also a chain of `tensor.insert_slice`s into a `tensor.empty`). No FLOPs are added and
nothing runs twice; the concatenation is never built, so a piece can be freed once its partial
reduction and its other readers have run. A concatenation with any other reader, or pieces that
do not tile one dimension, is left as it is.

It runs before cpu-config, which then plans the pieces. With `when=faster` (the default, and on
llvm-cpu in every compile) a split is made where each partial result is no larger than its piece
(`schedc.decisions.split_concat.partials_fit`) and cpu-config's estimate says the module runs no
slower with it (`split_pays`); the others are declined. The reductions split and the ones
declined (why, and both estimates) go to the report.
"""

from __future__ import annotations

from dataclasses import dataclass

from iree.compiler import ir

from schedc.decisions.cpu_config import choose_plan
from schedc.decisions.split_concat import (
    Piece, SplitDecision, collapsed_dimension, iree_build, partials_fit, piece_shapes, split_dimension, split_pays,
)
from schedc.ir.cpu_ops import op_shape, shaped_ops
from schedc.ir.iree import defining_op_name, function_name, function_ops, ops_named, tensor_bytes
from schedc.ir.rewrite import extract_slice

from schedc.options import Phase
from schedc.passes.base import PassInfo
from schedc.passes.cpu_config import database_isa, kernels_unavailable, plan_database

WHEN = ("faster", "always", "never")


@dataclass(frozen=True)
class Options:
    # faster: split where the partial results fit in their pieces and cpu-config's estimate says
    # the module runs no slower (declined, and reported, where not or where it cannot tell);
    # always; never (keeps every concatenation).
    when: str = "faster"

    def __post_init__(self):
        if self.when not in WHEN:
            raise ValueError(f"unknown when '{self.when}'; valid: {', '.join(WHEN)}")


def split_concat(module, pass_, options: Options, context) -> None:
    records = context.records.setdefault("split-concat", {})
    if options.when == "never":
        return
    estimate = None  # made at the first match: most modules have none
    for func in function_ops(module):
        split, declined = 0, []
        for op in ops_named(func, "linalg.generic", *NAMED):
            match = _match(op)
            if match is None:
                continue
            if estimate is None and options.when == "faster":
                estimate = _Estimate(module, context)
            sizes = [size for _, size in match[1]]
            if estimate is not None:
                fits = partials_fit(tensor_bytes(op.results[0].type) or 0, [tensor_bytes(s.type) or 0 for s in match[2]])
                decision = estimate.decide(op, sizes) if fits else SplitDecision(False, "its partial results are larger than its pieces")
                if not decision.split:
                    declined.append({"op": estimate.label(op), "pieces": len(sizes), "reason": decision.reason,
                                     "kept_us": _rounded(decision.kept_us), "split_us": _rounded(decision.split_us)})
                    continue
                estimate.split(op, sizes)
            _rewrite(op, match)
            split += 1
        if split or declined:
            records[function_name(func)] = {"reductions_split": split, **({"declined": declined} if declined else {})}


def _rounded(us: float | None) -> float | None:
    return None if us is None else round(us, 1)


class _Estimate:
    """The module's convolutions and matmuls as the compile will plan them, kept up to date as
    reductions are split, so each decision sees the ones before it. The database is the
    compile's (--kernel-db) or the one built in for the host's ISA."""

    def __init__(self, module, context):
        self.ops = shaped_ops(module)
        self.plan, self.missing = None, ""
        if (context.target or "llvm-cpu") != "llvm-cpu":
            self.missing = f"no time estimate on target {context.target} (split-concat{{when=always}} splits regardless)"
            return
        database = plan_database("", context)
        if database is None:
            self.missing = f"no CPU kernel database for {database_isa()}"
        elif "cpu-config" in context.passes:  # its planner, as it will plan the module
            kernels = kernels_unavailable(database_isa(), context.arch) is None
            self.plan = lambda shapes: choose_plan(shapes, database, kernels=kernels)
        else:  # IREE's own build of every op (--no-tuning)
            self.plan = lambda shapes: iree_build(shapes, database)

    def index(self, op) -> int | None:
        return next((i for i, (other, _) in enumerate(self.ops) if other is not None and other == op), None)

    def label(self, op) -> str:
        shape = op_shape(op)
        return shape.key if shape is not None else op.name

    def decide(self, op, sizes: list[int]) -> SplitDecision:
        index = self.index(op)
        if self.plan is None:
            return SplitDecision(False, self.missing)
        if index is None:
            return SplitDecision(False, "no time estimate for it")
        return split_pays([shape for _, shape in self.ops], index, sizes, self.plan)

    def split(self, op, sizes: list[int]) -> None:
        index = self.index(op)
        if index is not None:
            pieces = piece_shapes(self.ops[index][1], sizes)
            self.ops[index:index + 1] = [(None, shape) for shape in pieces]


def _rewrite(generic: ir.Operation, match) -> None:
    """Splits one reduction whose operands match (see the module docstring)."""
    position, spans, sources, chain, slice_at = match
    operands = list(generic.operands)
    result = generic.results[0]
    previous = operands[-1]
    with ir.InsertionPoint(generic), generic.location:
        for (offset, size), source in zip(spans, sources):
            slices = {index: extract_slice(operands[index], dim, offset, size) for index, dim in slice_at.items()}
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


# Named reductions over one operand's dimension: {op: (operand, its dimension reduced, {other
# operand: its dimension indexed by the same loop})}. linalg reduces in loop order there too.
NAMED = {
    "linalg.conv_2d_nchw_fchw": (0, 1, {1: 1}),
    "linalg.conv_2d_nhwc_hwcf": (0, 3, {1: 2}),
    "linalg.matmul": (0, 1, {1: 0}),
    "linalg.batch_matmul": (0, 2, {1: 1}),
}
DEFAULT_MAPS = {
    "linalg.matmul": ["(d0, d1, d2) -> (d0, d2)", "(d0, d1, d2) -> (d2, d1)", "(d0, d1, d2) -> (d0, d1)"],
    "linalg.batch_matmul": ["(d0, d1, d2, d3) -> (d0, d1, d3)", "(d0, d1, d2, d3) -> (d0, d3, d2)", "(d0, d1, d2, d3) -> (d0, d1, d2)"],
}


def _match(generic: ir.Operation):
    """(input position, spans, piece values in span order, ops to erase after, {other input
    position: its dimension to slice}) for a reduction over a concatenation; None otherwise."""
    if generic.name in NAMED:
        return _match_named(generic)
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


def _match_named(op: ir.Operation):
    """`_match` for a named reduction (NAMED) with no maps of its own beyond the defaults."""
    position, dim, slice_at = NAMED[op.name]
    if len(op.results) != 1:
        return None
    if "indexing_maps" in op.attributes:  # a matmul's: only its default ones (not transposed, not broadcast)
        maps = [str(ir.AffineMapAttr(a).value) for a in ir.ArrayAttr(op.attributes["indexing_maps"])]
        if maps != DEFAULT_MAPS.get(op.name):
            return None
    found = _concatenation(op.operands[position])
    if found is None or found[0] != dim:
        return None
    _, spans, sources, chain = found
    return position, spans, sources, chain, slice_at


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
    if defining_op_name(tensor) == "tensor.concat":
        return _concat_op(tensor, collapse)
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


def _concat_op(tensor: ir.Value, collapse):
    """`_concatenation` for a `tensor.concat` (the input phase's form, torch's cat)."""
    if collapse is not None:
        return None  # (its pieces would need collapsing too)
    concat = tensor.owner.operation
    dim = ir.IntegerAttr(concat.attributes["dim"]).value
    shape = tuple(ir.RankedTensorType(tensor.type).shape)
    sources = list(concat.operands)
    sizes = [ir.RankedTensorType(s.type).shape[dim] for s in sources]
    if len(sources) < 2 or ir.ShapedType.get_dynamic_size() in sizes + list(shape):
        return None
    return dim, [(sum(sizes[:i]), size) for i, size in enumerate(sizes)], sources, [concat]


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


PASS = PassInfo(
    name="split-concat",
    summary="reductions over a concatenation read its pieces in turn, so it is never built",
    run=split_concat,
    options=Options,
    phase=Phase.INPUT,
    implicit_for=("llvm-cpu",),
)
