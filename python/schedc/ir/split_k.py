"""A convolution's reduction split into parts over its input channels, a matmul's over K (the
split-k pass's IR side; `schedc.decisions.split_k` decides how many).

    // before: 512 -> 512 channels at 7x7, each output a sum over 512 x 3 x 3
    %y = linalg.conv_2d_nchw_fchw {...} ins(%x, %w : tensor<1x512x9x9xf16>, tensor<512x512x3x3xf16>)
           outs(%bias : tensor<1x512x7x7xf32>) -> tensor<1x512x7x7xf32>
    // after, 8 parts: a grouped convolution into zeros, part g reading channels 64g..64g+63
    // (the image and filter only reshaped), then the parts summed into the bias
    %p = linalg.generic {... (n, g, f, y, x, c, i, j) -> (n, g, c, y + i, x + j), -> (f, g, c, i, j),
           -> (n, g, f, y, x) ...} ins(%x8, %w8 : tensor<1x8x64x9x9xf16>, tensor<512x8x64x3x3xf16>)
           outs(%zeros : tensor<1x8x512x7x7xf32>)
    %y = linalg.generic {... (n, f, y, x, g) -> (n, g, f, y, x), -> (n, f, y, x) ...} ins(%p) outs(%bias)

IREE makes each of the two its own dispatch: the grouped convolution an implicit GEMM with the
parts as its batch, the sum a reduction with the convolution's consumers fused into it. A
matmul's parts are a batched matmul over `(g, rows, columns)`, read through reshapes alone.
"""

from __future__ import annotations

from dataclasses import replace

from iree.compiler import ir

from schedc.decisions.cpu_config import OpShape
from schedc.ir.cpu_ops import op_shape
from schedc.ir.rewrite import inline_in_place, tensor_type as _t

MATMUL_MAPS = ["affine_map<(d0, d1, d2) -> (d0, d2)>", "affine_map<(d0, d1, d2) -> (d2, d1)>", "affine_map<(d0, d1, d2) -> (d0, d1)>"]


def split_conv(op: ir.Operation, parts: int) -> None:
    """Replaces the `linalg.conv_2d_nchw_fchw` `op` by its reduction in `parts` parts (the
    caller checked that its input channels divide: `schedc.decisions.split_k.can_split`)."""
    image, filter_, out = (ir.RankedTensorType(v.type) for v in op.operands)
    n, c, h, w = image.shape
    f, _, kh, kw = filter_.shape
    s0, s1 = (int(v) for v in op.attributes["strides"])
    d0, d1 = (int(v) for v in op.attributes["dilations"])
    ti, tw = image.element_type, filter_.element_type
    cg = c // parts
    image_g, filter_g = _t((n, parts, cg, h, w), ti), _t((f, parts, cg, kh, kw), tw)
    reshape = f"""
  %xg = tensor.expand_shape %x [[0], [1, 2], [3], [4]] output_shape [{n}, {parts}, {cg}, {h}, {w}] : {_t(image.shape, ti)} into {image_g}
  %kg = tensor.expand_shape %k [[0], [1, 2], [3], [4]] output_shape [{f}, {parts}, {cg}, {kh}, {kw}] : {_t(filter_.shape, tw)} into {filter_g}"""
    maps = (f"(n, g, c, y * {s0} + i * {d0}, x * {s1} + j * {d1})", "(f, g, c, i, j)")
    _split(op, parts, reshape, ("%xg", "%kg"), (image_g, filter_g), maps)


def split_conv_rows(op: ir.Operation, parts: int) -> None:
    """Replaces the `linalg.conv_2d_nchw_fchw` `op` by its reduction in `parts` parts over its
    window's rows (the caller checked that they divide: `schedc.decisions.split_k.window_parts`):
    part g sums window rows g*R..g*R+R-1, R = rows / parts. For a weight gradient, whose
    window is the forward output's plane and whose output is the 3x3 filter."""
    image, filter_, _ = (ir.RankedTensorType(v.type) for v in op.operands)
    f, c, kh, kw = filter_.shape
    rows = kh // parts
    s0, s1 = (int(v) for v in op.attributes["strides"])
    d0, d1 = (int(v) for v in op.attributes["dilations"])
    # the filter's rows as (part, row within it): every loop a plain index of some operand
    filter_g = _t((f, c, parts, rows, kw), filter_.element_type)
    reshape = f"""
  %kg = tensor.expand_shape %k [[0], [1], [2, 3], [4]] output_shape [{f}, {c}, {parts}, {rows}, {kw}] : {_t(filter_.shape, filter_.element_type)} into {filter_g}"""
    maps = (f"(n, c, y * {s0} + (g * {rows} + i) * {d0}, x * {s1} + j * {d1})", "(f, c, g, i, j)")
    types = (_t(image.shape, image.element_type), filter_g)
    _split(op, parts, reshape, ("%x", "%kg"), types, maps)


def split_matmul(op: ir.Operation, parts: int) -> None:
    """Replaces the `linalg.matmul` `op` (rows x K times K x N) by its reduction in `parts`
    parts over K (the caller checked that K divides: `schedc.decisions.split_k.matmul_parts`):
    part g multiplies columns g*Kg..g*Kg+Kg-1 of the rows by the same rows of the right side.
    An input that torch-mlir widened from f16 to accumulate in f32 (`widened_source`) is read
    narrow and widened in the parts' body, as a split convolution's is.

    The rows pass an `iree_tensor_ext.compute_barrier.end` before their reshape: without it
    IREE moves the reshape up through the elementwise ops that make them (a layer norm's), which
    then no longer fuse with their reductions (GPT-2 f16: 38 -> 61 dispatches for 8 split
    matmuls; 46 with the barrier, one sum each). IREE removes its barriers itself when it forms
    dispatches (`util.optimization_barrier` did the same here, but stayed in the host code,
    where each split the call's submission with a wait)."""
    sources = [widened_source(v) or v for v in op.operands[:2]]
    (m, k), (_, n) = (ir.RankedTensorType(v.type).shape for v in sources)
    ta, tb = (ir.RankedTensorType(v.type).element_type for v in sources)
    kg = k // parts
    a_g, b_g = _t((m, parts, kg), ta), _t((parts, kg, n), tb)
    reshape = f"""
  %xb = iree_tensor_ext.compute_barrier.end %x : {_t((m, k), ta)} -> {_t((m, k), ta)}
  %xg = tensor.expand_shape %xb [[0], [1, 2]] output_shape [{m}, {parts}, {kg}] : {_t((m, k), ta)} into {a_g}
  %kg = tensor.expand_shape %k [[0, 1], [2]] output_shape [{parts}, {kg}, {n}] : {_t((k, n), tb)} into {b_g}"""
    _split(op, parts, reshape, ("%xg", "%kg"), (a_g, b_g), ("(r, g, c)", "(g, c, o)"),
           arguments=[*sources, op.operands[2]], parallel=("g", "r", "o"), reductions=("c",))


def matmul_shape(op: ir.Operation) -> OpShape | None:
    """A plain `linalg.matmul` as plain data, its element type that of the inputs it reads
    before torch-mlir widened them (an f16 Linear layer accumulates in f32: its matmul reads
    f32 widenings of f16 tensors). None for a matmul of other maps (a transposed form) or of
    mixed inputs."""
    if "indexing_maps" in op.attributes and [str(m) for m in ir.ArrayAttr(op.attributes["indexing_maps"])] != MATMUL_MAPS:
        return None
    shape = op_shape(op)
    sources = [widened_source(v) or v for v in op.operands[:2]]
    elements = {str(ir.RankedTensorType(v.type).element_type) for v in sources}
    if shape is None or len(elements) != 1:
        return None
    return replace(shape, dtype=elements.pop())


def widened_source(value: ir.Value) -> ir.Value | None:
    """The narrower tensor `value` is an elementwise `arith.extf` of (a `linalg.generic` of
    identity maps whose body only widens), or None."""
    if not isinstance(value, ir.OpResult) or value.owner.operation.name != "linalg.generic":
        return None
    generic = value.owner.operation
    if len(generic.operands) != 2 or len(generic.results) != 1:
        return None
    maps = [str(m) for m in ir.ArrayAttr(generic.attributes["indexing_maps"])]
    if len(set(maps)) != 1:
        return None
    body = list(generic.regions[0].blocks[0].operations)
    if len(body) != 2 or body[0].name != "arith.extf" or body[1].operands[0] != body[0].results[0]:
        return None
    if body[0].operands[0] != generic.regions[0].blocks[0].arguments[0]:
        return None
    source = generic.operands[0]
    if ir.RankedTensorType(source.type).shape != ir.RankedTensorType(value.type).shape:
        return None
    return source


def _split(op: ir.Operation, parts: int, reshape: str, inputs: tuple[str, str], types: tuple[str, str], maps: tuple[str, str],
           arguments: list[ir.Value] | None = None, parallel=("n", "g", "f", "y", "x"), reductions=("c", "i", "j")) -> None:
    """The split's IR: the parts (a generic reading `inputs` through `maps` over the loops
    `parallel` + `reductions`, the part `g` among the first) into zeros, then their sum into
    the op's own output. `arguments`: the split's inputs and output (default: `op`'s)."""
    arguments = list(op.operands) if arguments is None else arguments
    x_t, k_t, out = (ir.RankedTensorType(v.type) for v in arguments)
    ti, tw, ta = x_t.element_type, k_t.element_type, out.element_type

    def widened(value: str, element) -> tuple[str, str]:
        if element == ta:
            return "", value
        return f"%{value[1:]}w = arith.extf {value} : {element} to {ta}\n    ", f"%{value[1:]}w"

    widen_a, a = widened("%a", ti)
    widen_b, b = widened("%b", tw)
    out_loops = [d for d in parallel if d != "g"]
    parts_t = _t(tuple(parts if d == "g" else out.shape[out_loops.index(d)] for d in parallel), ta)
    loops = f"({', '.join(parallel + reductions)})"
    part_map, out_map = f"({', '.join(parallel)})", f"({', '.join(out_loops)})"
    sum_loops = f"({', '.join(out_loops + ['g'])})"
    iterators = ", ".join(['"parallel"'] * len(parallel) + ['"reduction"'] * len(reductions))
    sum_iterators = ", ".join(['"parallel"'] * len(out_loops) + ['"reduction"'])
    out_t = _t(out.shape, ta)
    text = f"""
func.func private @split(%x: {_t(x_t.shape, ti)}, %k: {_t(k_t.shape, tw)}, %init: {out_t}) -> {out_t} {{{reshape}
  %zero = arith.constant 0.0 : {ta}
  %pe = tensor.empty() : {parts_t}
  %pz = linalg.fill ins(%zero : {ta}) outs(%pe : {parts_t}) -> {parts_t}
  %p = linalg.generic {{indexing_maps = [affine_map<{loops} -> {maps[0]}>,
                                        affine_map<{loops} -> {maps[1]}>, affine_map<{loops} -> {part_map}>],
                       iterator_types = [{iterators}]}}
      ins({inputs[0]}, {inputs[1]} : {types[0]}, {types[1]}) outs(%pz : {parts_t}) {{
  ^bb0(%a: {ti}, %b: {tw}, %o: {ta}):
    {widen_a}{widen_b}%m = arith.mulf {a}, {b} : {ta}
    %s = arith.addf %o, %m : {ta}
    linalg.yield %s : {ta}
  }} -> {parts_t}
  %r = linalg.generic {{indexing_maps = [affine_map<{sum_loops} -> {part_map}>, affine_map<{sum_loops} -> {out_map}>],
                       iterator_types = [{sum_iterators}]}}
      ins(%p : {parts_t}) outs(%init : {out_t}) {{
  ^bb0(%a: {ta}, %o: {ta}):
    %s = arith.addf %o, %a : {ta}
    linalg.yield %s : {ta}
  }} -> {out_t}
  return %r : {out_t}
}}"""
    with op.context, op.location:
        helper = ir.Module.parse(text)
        inline_in_place(op, helper.body.operations[0], arguments)
