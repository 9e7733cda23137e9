"""Reads IREE's configured executables (the end of its executable-configurations phase) as
`RowDispatch` data and writes row-reduction configs back (`schedc.decisions.kernel_config.rows`
decides them). An executable there:

    hal.executable private @forward_dispatch_10 {
      hal.executable.variant public @cuda_nvptx_fb target(...) {
        builtin.module {
          func.func @forward_dispatch_10_softmax_3x197x197xf32_generic() attributes {
              translation_info = #iree_codegen.translation_info<pipeline = #iree_gpu.pipeline<TileAndFuse> ...>} {
            %6 = linalg.generic {... ["parallel", "parallel", "reduction"]} ...       <- the row's max
            %8 = linalg.generic {...} ... attrs = {lowering_config = ...}              <- IREE's root: the sum
            %9 = linalg.generic {... ["parallel", "parallel", "parallel"]} ...         <- the division
"""

from __future__ import annotations

from dataclasses import dataclass

from iree.compiler import ir

from schedc.decisions.kernel_config.rows import RowConfig, RowDispatch, lowering_configs, translation_info
from schedc.ir.dispatches import iterator_types, linalg_ops
from schedc.ir.iree import element_bits, ops_named


@dataclass
class ConfiguredDispatch:
    entry: str
    func: ir.Operation
    ops: list[ir.Operation]  # the compute ops, in order


def configured_dispatches(module: ir.Operation) -> list[ConfiguredDispatch]:
    """Every executable entry function that IREE gave a translation_info."""
    found = []
    for func in ops_named(module, "func.func"):
        if "translation_info" not in func.attributes:
            continue
        ops = [op for op in linalg_ops(func) if op.name != "linalg.fill"]
        found.append(ConfiguredDispatch(ir.StringAttr(func.attributes["sym_name"]).value, func, ops))
    return found


def _pipeline(func: ir.Operation) -> str:
    text = str(func.attributes["translation_info"])
    start = text.find("pipeline<")
    return text[start + len("pipeline<"): text.find(">", start)] if start >= 0 else ""


def row_dispatch(dispatch: ConfiguredDispatch) -> RowDispatch | None:
    """The dispatch as a row reduction, or None: every op a linalg.generic of one result over
    the same static loops, reducing (if at all) only the innermost one, each operand read or
    written in loop order (the whole nest, or it without the row)."""
    if not dispatch.ops or any(op.name != "linalg.generic" or len(op.results) != 1 for op in dispatch.ops):
        return None
    loops, kinds, bits, root = None, [], [], None
    for i, op in enumerate(dispatch.ops):
        iterators = iterator_types(op)
        if not iterators or "reduction" in iterators[:-1]:  # a 0-d op has no row
            return None
        maps = [ir.AffineMapAttr(a).value for a in ir.ArrayAttr(op.attributes["indexing_maps"])]
        ranges = {}
        for operand, amap in zip(op.operands, maps):
            if not isinstance(operand.type, ir.ShapedType):
                continue
            if not operand.type.has_static_shape:
                return None
            dims = [e.position if isinstance(e, ir.AffineDimExpr) else None for e in amap.results]
            if dims not in (list(range(amap.n_dims)), list(range(amap.n_dims - 1))):
                return None
            ranges.update(zip(dims, operand.type.shape))
            if len(dims) == amap.n_dims:
                bits.append(element_bits(operand.type.element_type))
        shape = tuple(ranges.get(d) for d in range(len(iterators)))
        if None in shape or (loops is not None and shape != loops):
            return None
        loops = shape
        kinds.append(iterators[-1] if iterators[-1] == "reduction" else "elementwise")
        if "lowering_config" in op.attributes:
            root = i
    if root is None or not bits:
        return None
    return RowDispatch(loops, tuple(kinds), root, min(bits), _pipeline(dispatch.func))


def apply_row_config(dispatch: ConfiguredDispatch, row: RowDispatch, config: RowConfig) -> None:
    with dispatch.func.context:
        dispatch.func.attributes["translation_info"] = ir.Attribute.parse(translation_info(config))
        for op, text in zip(dispatch.ops, lowering_configs(row, config)):
            op.attributes["lowering_config"] = ir.Attribute.parse(text)
