"""The input phase's convolutions and matmuls as plain data, and IREE's rewrites applied to one
op at a time (the CPU config pass's IR side).

At the end of IREE's input conversion a torch model's convolutions and matmuls are linalg's
named ops (`linalg.conv_2d_nchw_fchw`, `linalg.depthwise_conv_2d_nchw_chw`, `linalg.matmul`,
`linalg.batch_matmul`). `op_shape` reads one as a `schedc.decisions.cpu_config.OpShape`.

IREE's layout rewrites are passes over whole functions: im2col
(`iree-global-opt-convert-conv2d-to-img2col`, what `--iree-global-opt-use-im2col-for-convs`
runs) and Winograd (`iree-linalg-ext-convert-conv2d-to-winograd`) change every convolution
they see. `rewrite_op` applies one to a single op: the op is outlined into a function of its
own, IREE's pass runs there, and the result is inlined back in its place, the function's
interface (NCHW in and out) unchanged. An im2col convolution's bias is added after its
matmul (`_bias_after`). The `nhwc` layout of a depthwise convolution is
schedc's own rewrite (`_depthwise_to_nhwc`), applied the same way. (Channels-last is a mode, not a layout: see
schedc.decisions.cpu_config.)
"""

from __future__ import annotations

import numpy as np
from iree.compiler import ir, passmanager
from iree.compiler.dialects import arith, func, linalg, tensor

from schedc.decisions.cpu_config import OpShape
from schedc.ir.iree import element_bits, function_ops, ops_named
from schedc.ir.rewrite import append_functions, inline_in_place

CONVOLUTIONS = ("linalg.conv_2d_nchw_fchw", "linalg.depthwise_conv_2d_nchw_chw")
MATMULS = ("linalg.matmul", "linalg.batch_matmul")
# IREE's pass that rewrites a convolution into each layout (schedc.decisions.cpu_config.LAYOUTS).
LAYOUT_PASSES = {
    "im2col": "iree-global-opt-convert-conv2d-to-img2col",
    "winograd": "iree-linalg-ext-convert-conv2d-to-winograd{replace-all-convs}",
}


def _shape(value: ir.Value) -> tuple[int, ...] | None:
    type_ = value.type
    if not isinstance(type_, ir.RankedTensorType) or not type_.has_static_shape:
        return None
    return tuple(type_.shape)


def _pair(op: ir.Operation, name: str) -> tuple[int, int]:
    if name not in op.attributes:
        return (1, 1)
    return tuple(int(v) for v in op.attributes[name])


def _element(value: ir.Value) -> str:
    element = value.type.element_type
    kind = "f" if isinstance(element, ir.FloatType) else "i"
    return "bf16" if str(element) == "bf16" else f"{kind}{element_bits(element)}"


def _zero_fill(value: ir.Value) -> bool:
    """Whether `value` is a `linalg.fill` of a constant zero."""
    if not isinstance(value, ir.OpResult) or value.owner.operation.name != "linalg.fill":
        return False
    scalar = value.owner.operation.operands[0]
    if not isinstance(scalar, ir.OpResult) or scalar.owner.operation.name != "arith.constant":
        return False
    attr = scalar.owner.operation.attributes["value"]
    return (isinstance(attr, ir.FloatAttr) and attr.value == 0.0) or (isinstance(attr, ir.IntegerAttr) and attr.value == 0)


def op_shape(op: ir.Operation) -> OpShape | None:
    """The op's shape as plain data; None for an op of another kind or with dynamic sizes."""
    name = op.name
    shapes = [_shape(v) for v in op.operands]
    if name not in CONVOLUTIONS + MATMULS or any(s is None for s in shapes) or len(shapes) < 3:
        return None
    dtype = _element(op.operands[0])
    if name in MATMULS:
        a, b, _ = shapes
        batch = a[0] if name == "linalg.batch_matmul" else 1
        m, k = a[-2:]
        n = b[-1]
        return OpShape("matmul", dtype, batch=batch, m=m, n=n, k=k)
    image, filter_, out = shapes
    strides, dilations = _pair(op, "strides"), _pair(op, "dilations")
    accumulates = not _zero_fill(op.operands[2])
    if name == "linalg.depthwise_conv_2d_nchw_chw":
        return OpShape("depthwise", dtype, batch=image[0], cin=image[1], cout=out[1], h=image[2], w=image[3],
                       kh=filter_[1], kw=filter_[2], stride=strides, dilation=dilations, groups=image[1], accumulates=accumulates)
    return OpShape("conv", dtype, batch=image[0], cin=image[1], cout=out[1], h=image[2], w=image[3],
                   kh=filter_[2], kw=filter_[3], stride=strides, dilation=dilations, accumulates=accumulates)


def shaped_ops(module: ir.Operation) -> list[tuple[ir.Operation, OpShape]]:
    """Every convolution and matmul of the module's functions with a static shape, in order."""
    found = []
    for function in function_ops(module):
        for op in ops_named(function, *CONVOLUTIONS, *MATMULS):
            shape = op_shape(op)
            if shape is not None:
                found.append((op, shape))
    return found


def _is_constant(value: ir.Value) -> bool:
    """A weight: a constant, or a load of a global (a parameter kept in an archive, which
    IREE's hoisting transforms once, at load, as it folds a constant's at compile time)."""
    return isinstance(value, ir.OpResult) and value.owner.operation.name in ("arith.constant", "util.global.load")


def _weight_copy(value: ir.Value) -> ir.Value:
    """A standalone module's copy of a weight: the constant itself; for a global's load, a
    constant of its type (the values do not change a kernel's time, its shape does)."""
    op = value.owner.operation
    if op.name == "arith.constant":
        return op.clone().results[0]
    type_ = ir.RankedTensorType(value.type)
    element = type_.element_type
    if isinstance(element, (ir.F32Type, ir.F16Type)):
        dtype = np.float32 if isinstance(element, ir.F32Type) else np.float16
        data = (np.random.default_rng(0).standard_normal(type_.shape) * 0.01).astype(dtype)
        return arith.ConstantOp(type_, ir.DenseElementsAttr.get(data, type=type_)).result
    one = ir.FloatAttr.get(element, 0.01) if isinstance(element, ir.FloatType) else ir.IntegerAttr.get(element, 1)
    return arith.ConstantOp(type_, ir.DenseElementsAttr.get_splat(type_, one)).result


def standalone_inputs(op: ir.Operation) -> list[ir.Value]:
    """The operands a standalone copy of `op` takes as arguments: not its output (a zero fill
    made inside) and not its weights (copied in: IREE folds their transposes and transforms
    at compile time, as it does in the model)."""
    return [v for v in list(op.operands)[:-1] if not _is_constant(v)]


def _outline(op: ir.Operation, into: ir.Module, name: str, standalone: bool = False) -> func.FuncOp:
    """A copy of `op` as the whole body of a new function `name` in `into`: its operands are
    the function's arguments, its results the function's. `standalone`: only the operands
    `standalone_inputs` names are arguments; the output is zero-filled inside, as a model's is,
    and constants are copied in."""
    operands = list(op.operands)
    arguments = standalone_inputs(op) if standalone else operands
    with ir.InsertionPoint(into.body):
        function = func.FuncOp(name, ([v.type for v in arguments], [r.type for r in op.results]))
        block = function.add_entry_block()
        with ir.InsertionPoint(block):
            given = iter(block.arguments)
            values = []
            for i, operand in enumerate(operands):
                if not standalone or (i < len(operands) - 1 and not _is_constant(operand)):
                    values.append(next(given))
                elif i < len(operands) - 1:
                    values.append(_weight_copy(operand))
                else:
                    init = operand.type
                    empty = tensor.EmptyOp(init.shape, init.element_type).result
                    zero = arith.ConstantOp(init.element_type, 0.0 if isinstance(init.element_type, ir.FloatType) else 0).result
                    values.append(linalg.fill(zero, outs=[empty]))
            copy = op.clone()
            for i, value in enumerate(values):
                copy.operands[i] = value
            func.ReturnOp(list(copy.results))
    return function


def _rewrite_function(module: ir.Module, function: func.FuncOp, op_name: str, layout: str, biased: bool = False) -> bool:
    """Runs IREE's pass for `layout` over `module` (for `nhwc`, schedc's own rewrite);
    whether it rewrote `function`'s op (named `op_name`: IREE's passes leave the ops they do
    not handle as they were). `biased`: the op's initial value is not a zero fill."""
    if layout == "nhwc":
        if not _depthwise_to_nhwc(module, function):
            return False
        passes = "inline,symbol-dce,func.func(canonicalize,cse)"
    else:
        if layout == "im2col" and biased:
            _bias_after(module, function, op_name)
        passes = f"inline,symbol-dce,func.func({LAYOUT_PASSES[layout]},canonicalize,cse)"
    passmanager.PassManager.parse(f"builtin.module({passes})").run(module.operation)
    return op_name not in [o.name for o in function.regions[0].blocks[0].operations]


def _bias_after(module: ir.Module, function: func.FuncOp, op_name: str) -> None:
    """`function`'s convolution accumulating into a zero fill, its initial value (a broadcast
    bias) added after it (by a call the caller's passes inline). With the bias as the initial
    value of an im2col matmul, data tiling packs the broadcast bias in an initializer, and IREE
    took 3.7 s to compile one of them (ConvNeXt's 96x784; the whole model without it: 5 s)."""
    conv = next((o for o in function.regions[0].blocks[0].operations if o.name == op_name), None)
    if conv is None:
        return
    kind = ir.RankedTensorType(conv.operands[-1].type)
    if not isinstance(kind.element_type, ir.FloatType):
        return
    t = f"tensor<{'x'.join(map(str, kind.shape))}x{kind.element_type}>"
    dims = ", ".join(f"d{i}" for i in range(kind.rank))
    identity = f"affine_map<({dims}) -> ({dims})>"
    helper = f"""
func.func private @schedc_bias_after(%y: {t}, %b: {t}) -> {t} {{
  %e = tensor.empty() : {t}
  %r = linalg.generic {{indexing_maps = [{identity}, {identity}, {identity}], iterator_types = [{", ".join(['"parallel"'] * kind.rank)}]}}
      ins(%y, %b : {t}, {t}) outs(%e : {t}) {{
  ^bb0(%a: {kind.element_type}, %c: {kind.element_type}, %o: {kind.element_type}):
    %s = arith.addf %a, %c : {kind.element_type}
    linalg.yield %s : {kind.element_type}
  }} -> {t}
  return %r : {t}
}}"""
    append_functions(module, helper, conv.context)
    init = conv.operands[-1]
    with ir.InsertionPoint(conv), conv.location:
        zero = arith.ConstantOp(kind.element_type, 0.0).result
        filled = linalg.fill(zero, outs=[tensor.EmptyOp(kind.shape, kind.element_type).result])
        unbiased = conv.clone()
        unbiased.operands[len(conv.operands) - 1] = filled
        call = func.CallOp([kind], ir.FlatSymbolRefAttr.get("schedc_bias_after"), [unbiased.results[0], init])
    conv.results[0].replace_all_uses_with(call.results[0])
    conv.erase()


def _depthwise_to_nhwc(module: ir.Module, function: func.FuncOp) -> bool:
    """Replaces `function`'s NCHW depthwise convolution by a call of an NHWC one between
    transposes (inlined by the caller's passes). The image's and the filter's transposes are
    kept apart from the convolution by optimization barriers: without them IREE folds them
    back into its maps and builds the NCHW convolution again (a 7x7 one of 48 channels at
    56x56: 2.2 ms in NCHW, 4.6 with the filter's transpose folded in, 0.53 with all three
    apart; iree-benchmark-module on this 2-core machine). The result's transpose needs none:
    without its barrier ConvNeXt ran as fast (22.6-24.4 ms against 24.0-24.2, alternating)
    with 10,354,176 B of transients instead of 12,461,568 (bench/README.md, CPU)."""
    conv = next((o for o in function.regions[0].blocks[0].operations if o.name == "linalg.depthwise_conv_2d_nchw_chw"), None)
    if conv is None:
        return False
    image, filter_, out = (ir.RankedTensorType(v.type) for v in conv.operands)
    n, c, h, w = image.shape
    _, oh, ow = out.shape[1:]
    kh, kw = filter_.shape[1:]
    t = str(image.element_type)
    strides, dilations = conv.attributes["strides"], conv.attributes["dilations"]
    helper = f"""
func.func private @schedc_depthwise_nhwc(%x: tensor<{n}x{c}x{h}x{w}x{t}>, %k: tensor<{c}x{kh}x{kw}x{t}>, %o: tensor<{n}x{c}x{oh}x{ow}x{t}>) -> tensor<{n}x{c}x{oh}x{ow}x{t}> {{
  %xe = tensor.empty() : tensor<{n}x{h}x{w}x{c}x{t}>
  %xt = linalg.transpose ins(%x : tensor<{n}x{c}x{h}x{w}x{t}>) outs(%xe : tensor<{n}x{h}x{w}x{c}x{t}>) permutation = [0, 2, 3, 1]
  %xb = util.optimization_barrier %xt : tensor<{n}x{h}x{w}x{c}x{t}>
  %ke = tensor.empty() : tensor<{kh}x{kw}x{c}x{t}>
  %kt0 = linalg.transpose ins(%k : tensor<{c}x{kh}x{kw}x{t}>) outs(%ke : tensor<{kh}x{kw}x{c}x{t}>) permutation = [1, 2, 0]
  %kt = util.optimization_barrier %kt0 : tensor<{kh}x{kw}x{c}x{t}>
  %oe = tensor.empty() : tensor<{n}x{oh}x{ow}x{c}x{t}>
  %ot = linalg.transpose ins(%o : tensor<{n}x{c}x{oh}x{ow}x{t}>) outs(%oe : tensor<{n}x{oh}x{ow}x{c}x{t}>) permutation = [0, 2, 3, 1]
  %y = linalg.depthwise_conv_2d_nhwc_hwc {{dilations = {dilations}, strides = {strides}}}
    ins(%xb, %kt : tensor<{n}x{h}x{w}x{c}x{t}>, tensor<{kh}x{kw}x{c}x{t}>) outs(%ot : tensor<{n}x{oh}x{ow}x{c}x{t}>) -> tensor<{n}x{oh}x{ow}x{c}x{t}>
  %re = tensor.empty() : tensor<{n}x{c}x{oh}x{ow}x{t}>
  %r = linalg.transpose ins(%y : tensor<{n}x{oh}x{ow}x{c}x{t}>) outs(%re : tensor<{n}x{c}x{oh}x{ow}x{t}>) permutation = [0, 3, 1, 2]
  return %r : tensor<{n}x{c}x{oh}x{ow}x{t}>
}}"""
    append_functions(module, helper, conv.context)
    with ir.InsertionPoint(conv), conv.location:
        call = func.CallOp([out], ir.FlatSymbolRefAttr.get("schedc_depthwise_nhwc"), list(conv.operands))
    conv.results[0].replace_all_uses_with(call.results[0])
    conv.erase()
    return True


# IREE 3.13's data-tiling hint: once any op of a module carries it, IREE data-tiles exactly the
# ops that do (its own annotation, every matmul, runs only where none does).
DATA_TILING_HINT = "iree.opt.data_tiling"


def _mark_contractions(function: func.FuncOp) -> None:
    """Gives every linalg op of `function` with a reduction loop IREE's data-tiling hint (IREE
    encodes only the matmuls among them)."""
    for candidate in function.regions[0].blocks[0].operations:
        named = candidate.name in ("linalg.matmul", "linalg.batch_matmul")
        iterators = candidate.attributes["iterator_types"] if "iterator_types" in candidate.attributes else None
        if named or (candidate.name == "linalg.generic" and iterators is not None and "reduction" in str(iterators)):
            candidate.attributes[DATA_TILING_HINT] = ir.UnitAttr.get()


def rewrite_op(op: ir.Operation, layout: str, data_tiling: bool = False) -> bool:
    """Rewrites one convolution into `layout` with IREE's own pass (LAYOUT_PASSES; `nhwc`:
    schedc's); returns whether it changed (the passes skip the ops they do not handle). An
    im2col convolution's initial value other than zero is added after it (`_bias_after`).
    `data_tiling`: the matmul it becomes (or a matmul left in `nchw`) gets IREE's hint."""
    with op.context, op.location:
        if layout == "nchw":
            if data_tiling:
                op.attributes[DATA_TILING_HINT] = ir.UnitAttr.get()
            return data_tiling
        outlined = ir.Module.create()
        function = _outline(op, outlined, "outlined")
        if not _rewrite_function(outlined, function, op.name, layout, biased=not _zero_fill(op.operands[-1])):
            return False
        if data_tiling:
            _mark_contractions(function)
        inline_in_place(op, function)
    return True


def standalone_module(op: ir.Operation, layouts: tuple[str, ...]) -> tuple[str, list[str]]:
    """A module of one public function per layout, each `op` alone in that layout (nchw:
    as it is) on a zero-filled output and its constants, for timing them apart (`schedc tune --target=llvm-cpu`);
    returns its text and the layouts IREE could build (a layout IREE leaves unchanged is
    dropped)."""
    built = []
    with op.context, op.location:
        module = ir.Module.create()
        for layout in layouts:
            scratch = ir.Module.create()
            function = _outline(op, scratch, layout, standalone=True)
            if layout != "nchw" and not _rewrite_function(scratch, function, op.name, layout):
                continue
            module.body.append(function.operation)  # moved out of the scratch module
            built.append(layout)
        return str(module), built


CHANNELS_LAST_PASS = "iree-preprocessing-convert-conv-to-channels-last"


def channels_last_interior_module(op: ir.Operation) -> str | None:
    """A module whose function `nchw` is the convolution `op` as IREE's channels-last mode
    builds it inside a run of such convolutions: NHWC in and out (between neighbours IREE
    cancels the transposes), its filter a transposed constant. None where IREE's channels-last
    pass leaves the op alone (depthwise).

    Timed alone with its transposes, a channels-last convolution measured 12x IREE's NCHW
    build; inside a ResNet-18 the mode ran it 3.9x faster than IREE alone."""
    with op.context, op.location:
        module = ir.Module.create()
        function = _outline(op, module, "nchw", standalone=True)
        block = function.regions[0].blocks[0]
        passmanager.PassManager.parse(f"builtin.module(func.func({CHANNELS_LAST_PASS},canonicalize,cse))").run(module.operation)
        ops = list(block.operations)
        image = block.arguments[0]
        into = [o for o in ops if o.name == "linalg.transpose" and list(o.operands)[0] == image]
        returned = ops[-1].operands[0]
        out = returned.owner.operation if isinstance(returned, ir.OpResult) else None
        if len(into) != 1 or out is None or out.name != "linalg.transpose":
            return None
        # The image arrives in NHWC, the result leaves in NHWC: the transposes go.
        nhwc_image = into[0].results[0]
        image.set_type(nhwc_image.type)
        nhwc_image.replace_all_uses_with(image)
        into[0].erase()
        result = out.operands[0]
        ops[-1].operands[0] = result
        out.erase()
        inputs = [a.type for a in block.arguments]
        function.attributes["function_type"] = ir.TypeAttr.get(ir.FunctionType.get(inputs, [result.type]))
        module.operation.verify()
        return str(module)
