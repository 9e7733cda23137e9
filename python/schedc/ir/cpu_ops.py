"""The input phase's convolutions and matmuls as plain data, and IREE's rewrites applied to one
op at a time (the CPU config pass's IR side).

At the end of IREE's input conversion a torch model's convolutions and matmuls are linalg's
named ops (`linalg.conv_2d_nchw_fchw`, `linalg.depthwise_conv_2d_nchw_chw`, `linalg.matmul`,
`linalg.batch_matmul`). `op_shape` reads one as a `schedc.decisions.cpu_config.OpShape`.

IREE's layout rewrites are passes over whole functions: channels-last
(`iree-preprocessing-convert-conv-to-channels-last`), im2col
(`iree-global-opt-convert-conv2d-to-img2col`, what `--iree-global-opt-use-im2col-for-convs`
runs) and Winograd (`iree-linalg-ext-convert-conv2d-to-winograd`) change every convolution
they see. `rewrite_op` applies one to a single op: the op is
outlined into a function of its own, IREE's pass runs there, and the result is inlined back in
its place. Its interface stays: NCHW in and out, with transposes around a channels-last
convolution that IREE's global optimization cancels between neighbours.
"""

from __future__ import annotations

from iree.compiler import ir, passmanager
from iree.compiler.dialects import arith, func, linalg, tensor

from schedc.decisions.cpu_config import OpShape
from schedc.ir.iree import element_bits, function_ops, ops_named

CONVOLUTIONS = ("linalg.conv_2d_nchw_fchw", "linalg.depthwise_conv_2d_nchw_chw")
MATMULS = ("linalg.matmul", "linalg.batch_matmul")
# IREE's pass that rewrites a convolution into each layout (schedc.decisions.cpu_config.LAYOUTS).
LAYOUT_PASSES = {
    "nhwc": "iree-preprocessing-convert-conv-to-channels-last",
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
    if name == "linalg.depthwise_conv_2d_nchw_chw":
        return OpShape("depthwise", dtype, batch=image[0], cin=image[1], cout=out[1], h=image[2], w=image[3],
                       kh=filter_[1], kw=filter_[2], stride=strides, dilation=dilations, groups=image[1])
    return OpShape("conv", dtype, batch=image[0], cin=image[1], cout=out[1], h=image[2], w=image[3],
                   kh=filter_[2], kw=filter_[3], stride=strides, dilation=dilations)


def shaped_ops(module: ir.Operation) -> list[tuple[ir.Operation, OpShape]]:
    """Every convolution and matmul of the module's functions with a static shape, in order."""
    found = []
    for function in function_ops(module):
        for op in ops_named(function, *CONVOLUTIONS, *MATMULS):
            shape = op_shape(op)
            if shape is not None:
                found.append((op, shape))
    return found


def _outline(op: ir.Operation, into: ir.Module, name: str, zero_init: bool = False) -> func.FuncOp:
    """A copy of `op` as the whole body of a new function `name` in `into`: its operands are
    the function's arguments, its results the function's. With `zero_init`, its output
    operand (the last, for these ops) is a zero-filled tensor made inside the function, as a
    model's is, rather than an argument: the function then reads only its inputs."""
    operands = list(op.operands)
    arguments = operands[:-1] if zero_init else operands
    with ir.InsertionPoint(into.body):
        function = func.FuncOp(name, ([v.type for v in arguments], [r.type for r in op.results]))
        block = function.add_entry_block()
        with ir.InsertionPoint(block):
            values = list(block.arguments)
            if zero_init:
                init = operands[-1].type
                empty = tensor.EmptyOp(init.shape, init.element_type).result
                zero = arith.ConstantOp(init.element_type, 0.0 if isinstance(init.element_type, ir.FloatType) else 0).result
                values.append(linalg.fill(zero, outs=[empty]))
            copy = op.clone()
            for i, value in enumerate(values):
                copy.operands[i] = value
            func.ReturnOp(list(copy.results))
    return function


def _rewrite_function(module: ir.Module, function: func.FuncOp, op_name: str, layout: str) -> bool:
    """Runs IREE's pass for `layout` over `module`; whether it rewrote `function`'s op (named
    `op_name`: IREE's passes leave the ops they do not handle as they were)."""
    passmanager.PassManager.parse(f"builtin.module(func.func({LAYOUT_PASSES[layout]},canonicalize,cse))").run(module.operation)
    return op_name not in [o.name for o in function.regions[0].blocks[0].operations]


def rewrite_op(op: ir.Operation, layout: str) -> bool:
    """Rewrites one convolution into `layout` with IREE's own pass (LAYOUT_PASSES); returns
    whether IREE changed it (its passes skip the ops they do not handle)."""
    operands = list(op.operands)
    with op.context, op.location:
        outlined = ir.Module.create()
        function = _outline(op, outlined, "outlined")
        if not _rewrite_function(outlined, function, op.name, layout):
            return False
        body = list(function.regions[0].blocks[0].operations)
        # Inline: clone each op before the original, its operands mapped from the outlined
        # function's arguments and earlier clones to the original's values.
        mapped: list[tuple[ir.Value, ir.Value]] = list(zip(function.regions[0].blocks[0].arguments, operands))

        def lookup(value: ir.Value) -> ir.Value:
            for old, new in mapped:
                if old == value:
                    return new
            raise AssertionError("an outlined op uses a value from outside its function")

        with ir.InsertionPoint(op):
            for inner in body[:-1]:
                clone = inner.clone()
                for i, operand in enumerate(inner.operands):
                    clone.operands[i] = lookup(operand)
                mapped += list(zip(inner.results, clone.results))
        for result, returned in zip(op.results, body[-1].operands):
            result.replace_all_uses_with(lookup(returned))
        op.erase()
    return True


def standalone_module(op: ir.Operation, layouts: tuple[str, ...]) -> tuple[str, list[str]]:
    """A module of one public function per layout, each `op` alone in that layout (nchw:
    as it is) on a zero-filled output, for timing them apart (`schedc tune --target=llvm-cpu`);
    returns its text and the layouts IREE could build (a layout IREE leaves unchanged is
    dropped)."""
    built = []
    with op.context, op.location:
        module = ir.Module.create()
        for layout in layouts:
            scratch = ir.Module.create()
            function = _outline(op, scratch, layout, zero_init=True)
            if layout != "nchw" and not _rewrite_function(scratch, function, op.name, layout):
                continue
            module.body.append(function.operation)  # moved out of the scratch module
            built.append(layout)
        return str(module), built
