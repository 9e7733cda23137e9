"""Replacing one op by a function's body: the rewrites schedc writes as MLIR text (a helper
function parsed into a scratch module) or makes with IREE's passes on an outlined copy."""

from __future__ import annotations

from iree.compiler import ir


def tensor_type(shape, element) -> str:
    """The MLIR text of a static tensor type, for the helper functions the rewrites parse."""
    return f"tensor<{'x'.join(map(str, shape))}x{element}>"


def append_functions(module: ir.Module, text: str, context: ir.Context) -> None:
    """Parses `text` and moves its functions into `module` (the caller's passes inline them)."""
    parsed = ir.Module.parse(text, context)  # kept alive while its ops move
    for op in list(parsed.body.operations):
        module.body.append(op)


def inline_in_place(op: ir.Operation, function, arguments: list[ir.Value] | None = None) -> None:
    """Replaces `op` by a copy of `function`'s body, whose arguments are `arguments` (default:
    `op`'s operands) and whose returned values replace `op`'s results (the values its ops'
    regions capture too); `op` is erased."""
    returned = inline_values(function, list(op.operands) if arguments is None else arguments, before=op)
    for result, value in zip(op.results, returned):
        result.replace_all_uses_with(value)
    op.erase()


def inline_values(function, arguments: list[ir.Value], before: ir.Operation | None = None,
                  after: ir.Operation | None = None) -> list[ir.Value]:
    """Copies `function`'s body, whose arguments are `arguments`, in front of `before` (or
    right after `after`) and returns the copies of the values it returns."""
    block = function.regions[0].blocks[0]
    body = list(block.operations)
    mapped: list[tuple[ir.Value, ir.Value]] = list(zip(block.arguments, arguments))

    def lookup(value: ir.Value) -> ir.Value:
        for old, new in mapped:
            if old == value:
                return new
        raise AssertionError("an inlined op uses a value from outside its function")

    def remap_captures(clone: ir.Operation) -> None:
        """Values the clone's regions use from the function body (a constant canonicalization
        hoisted out of a tensor.pad's region) become their copies."""
        for region in clone.regions:
            for block in region.blocks:
                for nested in block.operations:
                    for i, operand in enumerate(nested.operands):
                        for old, new in mapped:
                            if old == operand:
                                nested.operands[i] = new
                    remap_captures(nested)

    place = ir.InsertionPoint(before) if before is not None else ir.InsertionPoint.after(after)
    with place:
        for inner in body[:-1]:
            clone = inner.clone()
            for i, operand in enumerate(inner.operands):
                clone.operands[i] = lookup(operand)
            remap_captures(clone)
            mapped += list(zip(inner.results, clone.results))
    return [lookup(value) for value in body[-1].operands]


def _slice_attributes(offsets: list[int], sizes: list[int], strides: list[int], segments: list[int]) -> dict:
    """A static slice's attributes."""
    return {"static_offsets": ir.DenseI64ArrayAttr.get(list(offsets)), "static_sizes": ir.DenseI64ArrayAttr.get(list(sizes)),
            "static_strides": ir.DenseI64ArrayAttr.get(list(strides)), "operandSegmentSizes": ir.DenseI32ArrayAttr.get(segments)}


def _along(shape: list[int], dim: int, offset: int, size: int) -> tuple[list[int], list[int], list[int]]:
    """The offsets, sizes and strides of the whole `shape` but `size` elements from `offset` along `dim`."""
    offsets, sizes = [0] * len(shape), list(shape)
    offsets[dim], sizes[dim] = offset, size
    return offsets, sizes, [1] * len(shape)


def extract_slice(value: ir.Value, dim: int, offset: int, size: int) -> ir.Value:
    """`tensor.extract_slice` of `size` elements of `value` from `offset` along `dim` (all of
    every other dimension), at the current insertion point."""
    shape = list(ir.RankedTensorType(value.type).shape)
    offsets, sizes, strides = _along(shape, dim, offset, size)
    return _extract(value, offsets, sizes, strides)


def strided_slice(value: ir.Value, sizes: list[int], strides: list[int]) -> ir.Value:
    """`tensor.extract_slice` of `value` from its origin, `sizes` elements every `strides` along
    each dimension, at the current insertion point."""
    return _extract(value, [0] * len(sizes), sizes, strides)


def _extract(value: ir.Value, offsets: list[int], sizes: list[int], strides: list[int]) -> ir.Value:
    result = ir.RankedTensorType.get(list(sizes), ir.RankedTensorType(value.type).element_type)
    return ir.Operation.create("tensor.extract_slice", results=[result], operands=[value],
                               attributes=_slice_attributes(offsets, sizes, strides, [1, 0, 0, 0])).results[0]


def insert_slice(piece: ir.Value, into: ir.Value, dim: int, offset: int) -> ir.Value:
    """`tensor.insert_slice` of `piece` into `into` from `offset` along `dim`, at the current
    insertion point."""
    shape = list(ir.RankedTensorType(into.type).shape)
    size = ir.RankedTensorType(piece.type).shape[dim]
    return ir.Operation.create("tensor.insert_slice", results=[into.type], operands=[piece, into],
                               attributes=_slice_attributes(*_along(shape, dim, offset, size), [1, 1, 0, 0, 0])).results[0]
