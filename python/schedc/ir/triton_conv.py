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

With epilogues (triton-conv{epilogues=true}, or the rule's EPILOGUES) the kernel also runs
what follows the convolution elementwise (`epilogue_chain`): its initial value's bias vector,
then each `linalg.generic` that alone reads the result before, whose other operands are vectors
along the output channels (a batch norm's, a bias) or tensors of the output's shape (a
residual), and whose body is arithmetic the kernel knows
(`schedc.kernels.triton_conv.EPILOGUE_OPS`): a batch norm, a residual sum and a ReLU go into the
convolution's own dispatch, as cuDNN's fused epilogues and IREE's own fusions do, instead of a
dispatch of IREE's after it that reads the f32 result again. A split kernel then sums its own
parts (SERIAL_SUM: its counters zeroed before the dispatch, its partial sums a result of their
own), and a kernel whose result a transpose to NHWC reads (the next kernel's image) writes that
layout itself, alone or beside NCHW.
"""

from __future__ import annotations

import math

from iree.compiler import ir

from schedc.decisions import triton_conv as rule
from schedc.decisions.triton_conv import SHARED_BYTES, ConvSizes, conv_tiles, grid, kernel_constants, left_to_iree, takes_every_f32
from schedc.ir.cpu_ops import absorbed_pad, attribute_pair, top_module, zero_fill
from schedc.ir.rewrite import inline_in_place, inline_values, tensor_type
from schedc.kernels.triton_conv import EPILOGUE_OPS, F32_ONLY_OPS, CompiledConv, Epilogue, compile_conv, ptx_path

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


# cmpf's predicates by number (the arith dialect's CmpFPredicate)
_PREDICATES = {1: "oeq", 2: "ogt", 3: "oge", 4: "olt", 5: "ole", 6: "one", 8: "ueq", 9: "ugt", 10: "uge", 11: "ult", 12: "ule", 13: "une"}
_FLOATS = ("f16", "bf16", "f32")


def _map_text(map_attribute) -> str:
    return str(ir.AffineMapAttr(map_attribute).value)


def _identity(rank: int, context) -> str:
    return str(ir.AffineMap.get_identity(rank, context=context))


def _channel_vector(value: ir.Value, map_text: str, shape: list[int], channels: int) -> ir.Value | None:
    """The vector along the output channels (dimension 1 of 4) that `value`, read through
    `map_text`, holds: a tensor whose one non-unit dimension, read as d1, has `channels` values
    (`tensor<64x1x1>` through `(d1, 0, 0)`), or, read whole, a `linalg.broadcast` of a 1-D one
    over dimensions 0, 2 and 3. None otherwise."""
    value_type = ir.RankedTensorType(value.type)
    if str(value_type.element_type) not in _FLOATS or not value_type.has_static_shape:
        return None
    if map_text == _identity(4, value.context):
        owner = value.owner if isinstance(value, ir.OpResult) else None
        if owner is None or owner.name != "linalg.broadcast" or list(owner.attributes["dimensions"]) != [0, 2, 3]:
            return None
        source = owner.operands[0]
        return source if list(ir.RankedTensorType(source.type).shape) == [channels] else None
    results = map_text.partition("-> (")[2].rstrip(")").split(", ")
    if "d1" not in results or value_type.rank != len(results):
        return None
    at = results.index("d1")
    if any(r != "0" for i, r in enumerate(results) if i != at) or list(value_type.shape) != [channels if i == at else 1 for i in range(len(results))]:
        return None
    return value


def _literal(value: ir.Value) -> str | None:
    """A float constant's Python literal (None for anything else, and for infinities and NaN)."""
    owner = value.owner if isinstance(value, ir.OpResult) else None
    if owner is None or owner.name != "arith.constant" or str(value.type) not in _FLOATS:
        return None
    number = ir.FloatAttr(owner.attributes["value"]).value
    return repr(float(number)) if math.isfinite(number) else None


class _Chain:
    """The epilogue read so far: its operands (values, kinds and types) and body steps."""

    def __init__(self, shape: list[int]):
        self.shape = shape
        self.values: list[ir.Value] = []
        self.kinds: list[tuple[str, str]] = []
        self.body: list[tuple[str, ...]] = []

    def operand(self, kind: str, value: ir.Value) -> str:
        for i, known in enumerate(self.values):
            if known == value and self.kinds[i][0] == kind:
                return f"o{i}"
        self.values.append(value)
        self.kinds.append((kind, str(ir.RankedTensorType(value.type).element_type)))
        return f"o{len(self.values) - 1}"

    def step(self, generic: ir.Operation, value: ir.Value, current: str) -> str | None:
        """Adds `generic`, read as the next steps after `value` (named `current`), and returns
        its result's name; None, the chain left as it was, where it is not an elementwise op of
        the output's shape whose other operands and arithmetic the kernel takes."""
        if generic.name != "linalg.generic" or len(generic.results) != 1:
            return None
        result_type = ir.RankedTensorType(generic.results[0].type)
        if list(result_type.shape) != self.shape or str(result_type.element_type) not in _FLOATS:
            return None
        if any("parallel" not in str(t) for t in ir.ArrayAttr(generic.attributes["iterator_types"])):
            return None
        maps = [_map_text(m) for m in ir.ArrayAttr(generic.attributes["indexing_maps"])]
        operands = list(generic.operands)
        identity = _identity(4, value.context)
        if maps[-1] != identity or [o for o in operands[:-1] if o == value] != [value] or operands[-1] == value:
            return None
        if maps[operands.index(value)] != identity:
            return None
        saved = (list(self.values), list(self.kinds), list(self.body))
        block = generic.regions[0].blocks[0]
        names: dict = {}
        for argument, operand, map_text in zip(block.arguments, operands, maps):
            if operand == value:
                names[argument] = current
                continue
            if not list(argument.uses):  # an output the body does not read
                continue
            vector = _channel_vector(operand, map_text, self.shape, self.shape[1])
            operand_type = ir.RankedTensorType(operand.type)
            if vector is not None:
                names[argument] = self.operand("channel", vector)
            elif map_text == identity and list(operand_type.shape) == self.shape and str(operand_type.element_type) in _FLOATS:
                names[argument] = self.operand("tensor", operand)
            else:
                self.values, self.kinds, self.body = saved
                return None
        result = None
        for inner in block.operations:
            if inner.name == "linalg.yield":
                result = names.get(inner.operands[0])
                break
            name = inner.name
            if name == "arith.cmpf":
                name = f"arith.cmpf:{_PREDICATES.get(ir.IntegerAttr(inner.attributes['predicate']).value, '?')}"
            inner_type = str(inner.results[0].type) if len(inner.results) == 1 else ""
            arguments = [names.get(o) or _literal(o) for o in inner.operands]
            if name not in EPILOGUE_OPS or None in arguments or inner_type not in (*_FLOATS, "i1") \
                    or (name in F32_ONLY_OPS and inner_type != "f32"):
                self.values, self.kinds, self.body = saved
                return None
            self.body.append((inner_type, name, *arguments))
            names[inner.results[0]] = f"r{len(self.body) - 1}"
        if result is None or not result.startswith(("r", "acc")):
            self.values, self.kinds, self.body = saved
            return None
        return result


def epilogue_chain(op: ir.Operation) -> tuple[Epilogue, list[ir.Value], list[ir.Operation]] | None:
    """What the kernel runs after the convolution `op` (see the module's doc): (the epilogue,
    its operands' values, and the ops its dispatch replaces: `op`, then each elementwise
    reader in turn; the last one's result is the dispatch's), or None where `op`'s initial value
    is neither zero nor a bias vector's broadcast. (A result that goes into a concatenation is
    written there in place: IREE places the kernel's dispatch result in the concatenation's
    buffer on cuda, as it does its own dispatches'.)"""
    out = ir.RankedTensorType(op.results[0].type)
    chain = _Chain(list(out.shape))
    current = "acc"
    init = op.operands[2]
    if not zero_fill(init):
        bias = _channel_vector(init, _identity(4, op.context), chain.shape, chain.shape[1]) if len(list(init.uses)) == 1 else None
        if bias is None or str(ir.RankedTensorType(bias.type).element_type) != "f32":
            return None
        chain.body.append(("f32", "arith.addf", chain.operand("channel", bias), "acc"))
        current = "r0"
    replaced, value = [op], op.results[0]
    while True:
        users = [use.owner for use in value.uses]
        if len(users) != 1:
            break
        named = chain.step(users[0], value, current)
        if named is None:
            break
        replaced.append(users[0])
        value, current = users[0].results[0], named
    if current != (f"r{len(chain.body) - 1}" if chain.body else "acc"):  # a last op that yields an earlier value
        return None
    return Epilogue(tuple(chain.kinds), tuple(chain.body)), chain.values, replaced


def _executable(name: str, kernel: CompiledConv, workgroups: tuple[int, int, int], path: str, inputs: int = 2, scratch: int = 0,
                outputs: int = 1) -> str:
    """The kernel's executable, of `inputs` read-only bindings, `scratch` read-write ones (a
    serial sum's counters and partial sums) and the `outputs`'. Its bindings are indirect, as
    IREE's own dispatches' are: a replayed command buffer (static-replay) is recorded once and
    takes the call's buffers."""
    objects = f'#hal.executable.objects<{{{CUDA_TARGET} = [#hal.executable.object<{{path = "{path}"}}>]}}>'
    x, y, z = workgroups
    read = '#hal.pipeline.binding<storage_buffer, "ReadOnly|Indirect">, ' * inputs + "#hal.pipeline.binding<storage_buffer, Indirect>, " * scratch
    return f"""
hal.executable.source private @{name} <{{objects = {objects}}}> {{
  hal.executable.export public @{kernel.name} ordinal(0) layout(#hal.pipeline.layout<bindings = [
      {read}{", ".join(["#hal.pipeline.binding<storage_buffer, Indirect>"] * outputs)}], flags = Indirect>) count(%device: !hal.device) -> (index, index, index) {{
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


def _images(image: ir.RankedTensorType, filter_: ir.RankedTensorType, channels_last: bool) -> tuple[str, str, str]:
    """(ops before the dispatch, its image and filter operands, their types). With
    `channels_last` the kernel reads the image transposed to NHWC (IREE fuses the transpose into
    the dispatch that makes the image) and the filter to RSCF (a constant's transpose, which
    IREE evaluates once, at load)."""
    if not channels_last:
        return "", "%x, %w", f"{image}, {filter_}"
    x_text, x_type = _transposed("%x", image, (0, 2, 3, 1), "xt")
    w_text, w_type = _transposed("%w", filter_, (2, 3, 1, 0), "wt")
    return x_text + w_text, "%xt, %wt", f"{x_type}, {w_type}"


def _call(name: str, export: str, image: ir.RankedTensorType, filter_: ir.RankedTensorType, out: ir.RankedTensorType,
          split: int, summed: bool, channels_last: bool = False) -> str:
    """A function of (image, filter, init) -> out: the kernel's dispatch, and where `summed`
    its parts added into init (see `_images` for `channels_last`)."""
    n, f, oh, ow = out.shape
    prologue, args, operands = _images(image, filter_, channels_last)
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


def _epilogue_call(name: str, export: str, image: ir.RankedTensorType, filter_: ir.RankedTensorType, outs: tuple[ir.Type, ...],
                   channels_last: bool, extras: tuple[ir.Type, ...], split: int = 1, counters: int = 0, sums: tuple[int, ...] = ()) -> str:
    """A function of (image, filter, the epilogue's operands...) -> outs (the output, and where a
    second is given the same channels last): the kernel's dispatch. A kernel that sums its
    `split` parts itself takes `counters` zeroed counters (tied to the dispatch) and writes its
    partial sums (`split` x `sums`, the convolution's NCHW shape) as a result before the outputs.
    (Tied, the partial sums from a tensor.empty were hoisted into a constant and copied from it
    for every dispatch.)"""
    prologue, args, operands = _images(image, filter_, channels_last)
    parameters = "".join(f", %e{i}: {t}" for i, t in enumerate(extras))
    args += "".join(f", %e{i}" for i in range(len(extras)))
    operands += "".join(f", {t}" for t in extras)
    results, returned = [str(t) for t in outs], [f"%y#{i}" for i in range(len(outs))]
    if counters:
        count_type = f"tensor<{counters}xi32>"
        prologue += (f"  %counters_e = tensor.empty() : {count_type}\n  %zero = arith.constant 0 : i32\n"
                     f"  %counters = linalg.fill ins(%zero : i32) outs(%counters_e : {count_type}) -> {count_type}\n")
        args, operands = f"{args}, %counters", f"{operands}, {count_type}"
        results = [tensor_type((split, *sums), "f32"), *results, "%counters"]
        returned = [f"%y#{i + 1}" for i in range(len(outs))]
    types = ", ".join(str(t) for t in outs)
    return f"""
func.func private @call(%x: {image}, %w: {filter_}{parameters}) -> ({types}) {{
{prologue}  %y:{len(results)} = flow.dispatch @{name}::@{export}({args}) : ({operands}) -> ({", ".join(results)})
  return {", ".join(returned)} : {types}
}}"""


def rewrite(op: ir.Operation, arch: int, executables: dict[str, str], every: bool = False, tf32: bool = False,
            channels_last: bool = False, epilogues: bool = False) -> dict | None:
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
    fused = epilogues or rule.EPILOGUES
    serial = fused and (epilogues or rule.SERIAL_SUM) and tiles.split > 1  # its parts summed in the kernel
    chain = epilogue_chain(op) if fused and (tiles.split == 1 or serial) else None
    serial = serial and chain is not None
    module = top_module(op)
    transpose = second = None
    if chain is not None:
        epilogue, extras, replaced = chain
        out_type = ir.RankedTensorType(replaced[-1].results[0].type)
        summed, narrowed, out_dtype = False, None, str(out_type.element_type)
        transpose = _to_channels_last(replaced[-1].results[0])
        if transpose is not None:  # the kernel writes what the transpose would have
            out_type = ir.RankedTensorType(transpose.results[0].type)
        else:  # one reader of several a transpose to NHWC: the kernel writes both
            second = _to_channels_last(replaced[-1].results[0], among_others=True)
    else:
        epilogue, extras, replaced = None, [], []
        summed = tiles.split > 1 or not zero_fill(op.operands[2])
        narrowed = cast if not summed else None
        out_type = narrowed.results[0].type if narrowed is not None else op.operands[2].type
        out_dtype = "f32" if tiles.split > 1 else sizes.out_dtype
    kernel = compile_conv(kernel_constants(sizes, tiles, channels_last, transpose is not None), sizes.dtype, out_dtype, tiles.warps,
                          tiles.stages, arch, SHARED_BYTES, epilogue, serial, second is not None)
    path = ptx_path(kernel)
    digest = path.stem.rpartition("-")[2]
    name = executables.get(digest)
    text = ""
    if name is None:
        name = executables[digest] = f"schedc_conv_{digest}"
        text = _executable(name, kernel, grid(sizes, tiles), str(path), 2 + len(extras), 2 if serial else 0, 2 if second is not None else 1)
    if chain is not None:
        outs = (out_type, second.results[0].type) if second is not None else (out_type,)
        counters = grid(sizes, tiles)[0] if serial else 0
        call_text = _epilogue_call(name, kernel.name, image.type, op.operands[1].type, outs, channels_last, tuple(v.type for v in extras),
                                   tiles.split, counters, tuple(op.results[0].type.shape))
    else:
        call_text = _call(name, kernel.name, image.type, op.operands[1].type, out_type, tiles.split, summed, channels_last)
    helper = ir.Module.parse(text + call_text, op.context)
    call = helper.body.operations[len(helper.body.operations) - 1]
    for executable in list(helper.body.operations)[:-1]:
        module.regions[0].blocks[0].append(executable)
    if chain is not None:  # the dispatch takes the last op's place (or its transpose's), and the ops before it go
        init = op.operands[2]
        results = inline_values(call, [image, op.operands[1], *extras], before=replaced[-1])
        if second is not None:
            second.results[0].replace_all_uses_with(results[1])
        (transpose or replaced[-1]).results[0].replace_all_uses_with(results[0])
        for done in [t for t in (transpose, second) if t is not None] + list(reversed(replaced)):
            done.erase()
        if isinstance(init, ir.OpResult) and not list(init.uses):
            init.owner.erase()
    elif narrowed is not None:  # the kernel writes the narrow type: the cast's result is its
        inline_in_place(narrowed, call, [image, op.operands[1], narrowed.operands[1]])
        op.erase()
    else:
        inline_in_place(op, call, [image, op.operands[1], op.operands[2]])
    if pad is not None:
        pad.erase()
    record = {"op": sizes.key, "work": sizes.work, "tiles": [tiles.bm, tiles.bn, tiles.bk, tiles.warps, tiles.stages], "split": tiles.split,
              "padding_read_in_place": pad is not None, "layout": "nhwc" if channels_last else "nchw"}
    if epilogue is not None and epilogue.body:
        record["epilogue"] = {"ops": len(replaced) - 1, "steps": len(epilogue.body), "operands": [kind for kind, _ in epilogue.operands]}
    if transpose is not None or second is not None:
        record["output_layout"] = "nhwc" if transpose is not None else "nchw and nhwc"
    if serial:
        record["parts_summed_in_kernel"] = True
    return record


def _to_channels_last(value: ir.Value, among_others: bool = False) -> ir.Operation | None:
    """The `linalg.transpose` to NHWC that alone reads `value` (the image of a convolution of the
    kernel's that reads channels last), or, `among_others`, the one such transpose among
    several readers; None where there is none."""
    users = [use.owner for use in value.uses]
    found = [u for u in users if u.name == "linalg.transpose" and u.operands[0] == value and list(u.attributes["permutation"]) == [0, 2, 3, 1]]
    if len(found) != 1 or (len(users) == 1) == among_others:
        return None
    return found[0]
