"""The IR side of schedc's CUDA convolution kernel (schedc.kernels.triton_conv): which
`linalg.conv_2d_nchw_fchw` ops it can run, and their replacement by a dispatch of the kernel's
PTX through IREE's custom-dispatch path.

A convolution qualifies when its image and filter are f16 or bf16 (or f32, with `tf32`) with
static shapes, one group, and it accumulates in f32 (torch-mlir's form). Its image's zero
padding, when nothing else reads it, is read by the kernel in place (`cpu_ops.absorbed_pad`), so
IREE builds no padded copy. The replacement is

    hal.executable.source private @schedc_conv_<digest> <{objects = PTX}> {
      hal.executable.export public @conv2d ... count(...) { constant grid }
        <workgroup_size = [threads, 1, 1], workgroup_local_memory = bytes>
    }
    %y = flow.dispatch @schedc_conv_<digest>::@conv2d(%image, %filter) -> tensor<NxFxOHxOWxf32>

whose result replaces the op's, or, where only a cast to f16 (bf16) reads that, the cast's (the
kernel then writes the narrow type); and, where the kernel splits the channels in parts or the
op's initial value is not zero, a `linalg.generic` that adds the parts `[SPLIT, N, F, OH, OW]`
into the op's initial value (IREE fuses what reads the result, a batch norm and a ReLU, into
that sum). Channels last (triton-conv{layout=nhwc}), the dispatch reads `linalg.transpose`s of
the image to NHWC and of the filter to RSCF instead.
"""

from __future__ import annotations

from iree.compiler import ir

from schedc.decisions.triton_conv import SHARED_BYTES, ConvSizes, conv_tiles, grid, kernel_constants, left_to_iree, takes_every_f32
from schedc.ir.cpu_ops import absorbed_pad, attribute_pair, top_module, zero_fill
from schedc.ir.rewrite import inline_in_place, tensor_type
from schedc.kernels.triton_conv import CompiledConv, compile_conv, ptx_path

# The generic target: IREE attaches its objects to every cuda variant (sm_80 or other).
CUDA_TARGET = '#hal.executable.target<"cuda", "cuda-nvptx-fb">'


def conv_sizes(op: ir.Operation, f32: bool = False) -> tuple[ConvSizes, ir.Value, ir.Operation | None, ir.Operation | None] | None:
    """(sizes, the image the kernel reads, the pad op it absorbs, the lone cast to f16 or bf16
    that reads its zero-initialised result) for a convolution the kernel runs (f32 ones too where
    `f32`); None for any other op."""
    if op.name != "linalg.conv_2d_nchw_fchw" or len(op.operands) != 3:
        return None
    image, filter_, init = op.operands
    types = [v.type for v in (image, filter_, init)]
    if not all(isinstance(t, ir.RankedTensorType) and t.has_static_shape for t in types):
        return None
    dtype = {"f16": "f16", "bf16": "bf16", **({"f32": "f32"} if f32 else {})}.get(str(types[0].element_type))
    if dtype is None or str(types[1].element_type) != str(types[0].element_type) or str(types[2].element_type) != "f32":
        return None
    pad = absorbed_pad(op)
    source = pad[1] if pad else image
    padding = pad[0] if pad else (0, 0)
    n, c, h, w = source.type.shape
    f, _, r, s = types[1].shape
    _, _, oh, ow = types[2].shape
    strides, dilations = attribute_pair(op, "strides"), attribute_pair(op, "dilations")
    narrowed = truncation(op.results[0]) if zero_fill(init) else None
    out_dtype = str(narrowed.results[0].type.element_type) if narrowed is not None else "f32"
    sizes = ConvSizes(n, c, h, w, f, r, s, oh, ow, strides, padding, dilations, dtype, out_dtype)
    return sizes, source, image.owner.operation if pad else None, narrowed


def truncation(value: ir.Value) -> ir.Operation | None:
    """The elementwise `linalg.generic` that only narrows `value` (f32) to f16 or bf16, when it is
    `value`'s one reader (torch-mlir's cast after an f16 convolution); None otherwise."""
    uses = list(value.uses)
    if len(uses) != 1:
        return None
    reader = uses[0].owner
    if reader.name != "linalg.generic" or len(reader.operands) != 2 or reader.operands[0] != value:
        return None
    if any("parallel" not in str(t) for t in ir.ArrayAttr(reader.attributes["iterator_types"])):
        return None
    identity = str(ir.AffineMap.get_identity(len(value.type.shape), context=value.context))
    if any(str(ir.AffineMapAttr(m).value) != identity for m in ir.ArrayAttr(reader.attributes["indexing_maps"])):
        return None
    body = list(reader.regions[0].blocks[0].operations)
    if [o.name for o in body] != ["arith.truncf", "linalg.yield"] or str(reader.results[0].type.element_type) not in ("f16", "bf16"):
        return None
    return reader


def _executable(name: str, kernel: CompiledConv, workgroups: tuple[int, int, int], path: str) -> str:
    """The kernel's executable. Its bindings are indirect, as IREE's own dispatches' are: a
    replayed command buffer (static-replay) is recorded once and takes the call's buffers."""
    objects = f'#hal.executable.objects<{{{CUDA_TARGET} = [#hal.executable.object<{{path = "{path}"}}>]}}>'
    x, y, z = workgroups
    return f"""
hal.executable.source private @{name} <{{objects = {objects}}}> {{
  hal.executable.export public @{kernel.name} ordinal(0) layout(#hal.pipeline.layout<bindings = [
      #hal.pipeline.binding<storage_buffer, "ReadOnly|Indirect">, #hal.pipeline.binding<storage_buffer, "ReadOnly|Indirect">,
      #hal.pipeline.binding<storage_buffer, Indirect>], flags = Indirect>) count(%device: !hal.device) -> (index, index, index) {{
    %x = arith.constant {x} : index
    %y = arith.constant {y} : index
    %z = arith.constant {z} : index
    hal.return %x, %y, %z : index, index, index
  }} <workgroup_size = [{kernel.threads} : index, 1 : index, 1 : index], workgroup_local_memory = {kernel.shared_bytes}>
}}"""


def _transposed(value: str, type_: ir.RankedTensorType, permutation: tuple[int, ...], into: str) -> tuple[str, str]:
    """The text of a `linalg.transpose` of `value` into `%into`, and its result's type."""
    shape = [type_.shape[i] for i in permutation]
    result = tensor_type(shape, type_.element_type)
    text = (f"  %{into}_e = tensor.empty() : {result}\n"
            f"  %{into} = linalg.transpose ins({value} : {type_}) outs(%{into}_e : {result}) permutation = {list(permutation)}\n")
    return text, result


def _call(name: str, export: str, image: ir.RankedTensorType, filter_: ir.RankedTensorType, out: ir.RankedTensorType,
          split: int, summed: bool, channels_last: bool = False) -> str:
    """A function of (image, filter, init) -> out: the kernel's dispatch, and where `summed`
    its parts added into init. With `channels_last` the kernel reads the image transposed to
    NHWC (IREE fuses the transpose into the dispatch that makes the image) and the filter to
    RSCF (a constant's transpose, which IREE evaluates once, at load)."""
    n, f, oh, ow = out.shape
    args, operands = "%x, %w", f"{image}, {filter_}"
    prologue = ""
    if channels_last:
        x_text, x_type = _transposed("%x", image, (0, 2, 3, 1), "xt")
        w_text, w_type = _transposed("%w", filter_, (2, 3, 1, 0), "wt")
        prologue, args, operands = x_text + w_text, "%xt, %wt", f"{x_type}, {w_type}"
    if not summed:
        return f"""
func.func private @call(%x: {image}, %w: {filter_}, %init: {out}) -> {out} {{
{prologue}  %y = flow.dispatch @{name}::@{export}({args}) : ({operands}) -> {out}
  return %y : {out}
}}"""
    parts = f"tensor<{split}x{n}x{f}x{oh}x{ow}xf32>"
    return f"""
func.func private @call(%x: {image}, %w: {filter_}, %init: {out}) -> {out} {{
{prologue}  %p = flow.dispatch @{name}::@{export}({args}) : ({operands}) -> {parts}
  %y = linalg.generic {{indexing_maps = [affine_map<(d0, d1, d2, d3, d4) -> (d4, d0, d1, d2, d3)>,
                                        affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3)>],
                        iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]}}
      ins(%p : {parts}) outs(%init : {out}) {{
  ^bb0(%in: f32, %acc: f32):
    %s = arith.addf %acc, %in : f32
    linalg.yield %s : f32
  }} -> {out}
  return %y : {out}
}}"""


def rewrite(op: ir.Operation, arch: int, executables: dict[str, str], every: bool = False, tf32: bool = False,
            channels_last: bool = False) -> dict | None:
    """Replaces the convolution `op` by a dispatch of the kernel compiled for sm_`arch`; the
    kernel's executable joins the module once per distinct kernel (`executables`: digest ->
    symbol). Returns what was decided (`left_to_iree` where the rule leaves `op` to IREE, unless
    `every`), or None where `op` does not qualify; f32 convolutions qualify where `tf32`, and the
    kernel takes every one (`takes_every_f32`)."""
    found = conv_sizes(op, f32=tf32)
    if found is None:
        return None
    sizes, image, pad, cast = found
    reason = None if every or takes_every_f32(sizes) else left_to_iree(sizes)
    if reason is not None:
        return {"op": sizes.key, "left_to_iree": reason}
    tiles = conv_tiles(sizes)
    out_dtype = "f32" if tiles.split > 1 else sizes.out_dtype
    kernel = compile_conv(kernel_constants(sizes, tiles, channels_last), sizes.dtype, out_dtype, tiles.warps, tiles.stages, arch, SHARED_BYTES)
    path = ptx_path(kernel)
    digest = path.stem.rpartition("-")[2]
    module = top_module(op)
    summed = tiles.split > 1 or not zero_fill(op.operands[2])
    narrowed = cast if not summed else None
    out_type = narrowed.results[0].type if narrowed is not None else op.operands[2].type
    name = executables.get(digest)
    text = ""
    if name is None:
        name = executables[digest] = f"schedc_conv_{digest}"
        text = _executable(name, kernel, grid(sizes, tiles), str(path))
    helper = ir.Module.parse(text + _call(name, kernel.name, image.type, op.operands[1].type, out_type, tiles.split, summed, channels_last), op.context)
    call = helper.body.operations[len(helper.body.operations) - 1]
    for executable in list(helper.body.operations)[:-1]:
        module.regions[0].blocks[0].append(executable)
    if narrowed is not None:  # the kernel writes the narrow type: the cast's result is its
        inline_in_place(narrowed, call, [image, op.operands[1], narrowed.operands[1]])
        op.erase()
    else:
        inline_in_place(op, call, [image, op.operands[1], op.operands[2]])
    if pad is not None:
        pad.erase()
    return {"op": sizes.key, "work": sizes.work, "tiles": [tiles.bm, tiles.bn, tiles.bk, tiles.warps, tiles.stages], "split": tiles.split,
            "padding_read_in_place": pad is not None, "layout": "nhwc" if channels_last else "nchw"}
