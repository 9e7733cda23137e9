"""A convolution's reduction split into parts over its input channels (the split-k pass's IR
side; `schedc.decisions.split_k` decides how many).

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
parts as its batch, the sum a reduction with the convolution's consumers fused into it.
"""

from __future__ import annotations

from iree.compiler import ir

from schedc.ir.rewrite import inline_in_place, tensor_type as _t


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


def _split(op: ir.Operation, parts: int, reshape: str, inputs: tuple[str, str], types: tuple[str, str], maps: tuple[str, str]) -> None:
    """The split's IR: the parts (a generic reading `inputs` through `maps` over the loops
    (n, g, f, y, x, c, i, j)) into zeros, then their sum into the op's own output."""
    image, filter_, out = (ir.RankedTensorType(v.type) for v in op.operands)
    n = image.shape[0]
    f, _, kh, kw = filter_.shape
    oh, ow = out.shape[2:]
    ti, tw, ta = image.element_type, filter_.element_type, out.element_type

    def widened(value: str, element) -> tuple[str, str]:
        if element == ta:
            return "", value
        return f"%{value[1:]}w = arith.extf {value} : {element} to {ta}\n    ", f"%{value[1:]}w"

    widen_a, a = widened("%a", ti)
    widen_b, b = widened("%b", tw)
    parts_t = _t((n, parts, f, oh, ow), ta)
    loops8 = "(n, g, f, y, x, c, i, j)"
    text = f"""
func.func private @split(%x: {_t(image.shape, ti)}, %k: {_t(filter_.shape, tw)}, %init: {_t(out.shape, ta)}) -> {_t(out.shape, ta)} {{{reshape}
  %zero = arith.constant 0.0 : {ta}
  %pe = tensor.empty() : {parts_t}
  %pz = linalg.fill ins(%zero : {ta}) outs(%pe : {parts_t}) -> {parts_t}
  %p = linalg.generic {{indexing_maps = [affine_map<{loops8} -> {maps[0]}>,
                                        affine_map<{loops8} -> {maps[1]}>, affine_map<{loops8} -> (n, g, f, y, x)>],
                       iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]}}
      ins({inputs[0]}, {inputs[1]} : {types[0]}, {types[1]}) outs(%pz : {parts_t}) {{
  ^bb0(%a: {ti}, %b: {tw}, %o: {ta}):
    {widen_a}{widen_b}%m = arith.mulf {a}, {b} : {ta}
    %s = arith.addf %o, %m : {ta}
    linalg.yield %s : {ta}
  }} -> {parts_t}
  %r = linalg.generic {{indexing_maps = [affine_map<(n, f, y, x, g) -> (n, g, f, y, x)>, affine_map<(n, f, y, x, g) -> (n, f, y, x)>],
                       iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]}}
      ins(%p : {parts_t}) outs(%init : {_t(out.shape, ta)}) {{
  ^bb0(%a: {ta}, %o: {ta}):
    %s = arith.addf %o, %a : {ta}
    linalg.yield %s : {ta}
  }} -> {_t(out.shape, ta)}
  return %r : {_t(out.shape, ta)}
}}"""
    with op.context, op.location:
        helper = ir.Module.parse(text)
        inline_in_place(op, helper.body.operations[0])
