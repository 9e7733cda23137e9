"""Reads IREE's dispatches at the flow phase for kernel configuration: each executable's root
op as a `KernelSignature`, the config written back as `compilation_info`, and standalone
benchmark modules of one dispatch. Reads IR through the bindings; decisions live in
`schedc.decisions.kernel_config`.

An executable at the flow phase:

    flow.executable private @forward_dispatch_2 {
      flow.executable.export public @forward_dispatch_2_matmul_32x384x128_f32 workgroups() ...
      builtin.module {
        func.func @forward_dispatch_2_matmul_32x384x128_f32(%arg0: !iree_tensor_ext.dispatch.tensor<...>, ...) {
          %4 = linalg.fill ...
          %5 = linalg.matmul ins(...) outs(%4 ...)          <- the root op
          %6 = linalg.generic {...} ins(%5, ...)            <- a fused consumer
          ...

IREE's GPU code generation reads `compilation_info` from the root op and configures the
whole dispatch from it (tile and fuse), the same as a per-op override in the input IR.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

from iree.compiler import ir, passmanager

from schedc.ir.costs import loop_ranges
from schedc.ir.iree import defining_op_name
from schedc.decisions.kernel_config import TILED_KINDS, KernelConfig, KernelSignature, map_terms

# linalg ops by the op class they make a dispatch; generics are classified by their body.
_NAMED_KINDS = {
    "linalg.matmul": "matmul",
    "linalg.matmul_transpose_a": "matmul",
    "linalg.matmul_transpose_b": "matmul",
    "linalg.batch_matmul": "batch_matmul",
    "linalg.batch_matmul_transpose_a": "batch_matmul",
    "linalg.batch_matmul_transpose_b": "batch_matmul",
    "linalg.softmax": "softmax",
    "iree_linalg_ext.scatter": "scatter",
}
_KIND_PRIORITY = {"matmul": 0, "batch_matmul": 0, "matmul_like": 0, "conv": 0, "depthwise_conv": 0, "pooling": 1, "softmax": 1, "reduction": 1, "scatter": 1, "elementwise": 2, "copy": 3, "other": 4}
_FLOATS = ("f16", "bf16", "f32", "f64")



@dataclass
class Executable:
    """One flow.executable with one entry function."""

    op: ir.Operation
    symbol: str  # @executable
    entry: str  # @executable::@entry's entry name
    func: ir.Operation  # the entry's func.func


def executables(module: ir.Operation) -> list[Executable]:
    """The module's flow.executables that hold one func.func, in IR order."""
    found = []
    for op in module.regions[0].blocks[0].operations:
        op = op.operation
        if op.name != "flow.executable":
            continue
        funcs = []
        for inner in op.regions[0].blocks[0].operations:
            if inner.operation.name == "builtin.module":
                funcs += [f.operation for f in inner.regions[0].blocks[0].operations if f.operation.name == "func.func"]
        if len(funcs) == 1:
            entry = ir.StringAttr(funcs[0].attributes["sym_name"]).value
            found.append(Executable(op, ir.StringAttr(op.attributes["sym_name"]).value, entry, funcs[0]))
    return found


def linalg_ops(func: ir.Operation) -> list[ir.Operation]:
    """The compute ops of a dispatch body, in order (walk order is preserved by generalization)."""
    ops = []

    def visit(op):
        if op.name.startswith(("linalg.", "iree_linalg_ext.")) and op.name not in ("linalg.yield", "linalg.index", "iree_linalg_ext.yield"):
            ops.append(op.operation)
        return ir.WalkResult.ADVANCE

    func.walk(visit)
    return ops


def _kind(named: ir.Operation, generic: ir.Operation) -> str:
    """The op class of a compute op: its name, or for a generic what its loops and body do."""
    name = named.name
    if name in _NAMED_KINDS:
        return _NAMED_KINDS[name]
    if name.startswith("linalg.depthwise_conv"):
        return "depthwise_conv"
    if name.startswith("linalg.conv"):
        return "conv"
    if name.startswith("linalg.pooling"):
        return "pooling"
    if name == "linalg.fill":
        return "copy"
    if generic.name != "linalg.generic" or "iterator_types" not in generic.attributes:
        return "other"
    iterators = iterator_types(generic)
    inputs = _inputs(generic)
    body = [op.operation.name for op in generic.regions[0].blocks[0].operations]
    if "reduction" in iterators:
        multiply_add = any(n in body for n in ("arith.mulf", "arith.muli")) and any(n in body for n in ("arith.addf", "arith.addi"))
        if len(inputs) >= 2 and multiply_add:
            return "matmul_like"
        if _windowed(generic):
            return "pooling"  # a max or sum over a sliding window (max_pool2d, avg_pool2d)
        return "reduction"
    if body == ["linalg.yield"]:
        return "copy"
    return "elementwise"


def _windowed(generic: ir.Operation) -> bool:
    """Whether the generic's first input is read through a sliding window (a map result that
    sums two loops, `d1 * 2 + d3`)."""
    first = str(ir.ArrayAttr(generic.attributes["indexing_maps"])[0])
    terms = map_terms(first)
    return terms is not None and any(len(sums) > 1 for sums in terms)


def iterator_types(generic: ir.Operation) -> list[str]:
    # Printed as #linalg.iterator_type<parallel>; the bindings give no typed accessor.
    return ["reduction" if "reduction" in str(a) else "parallel" for a in ir.ArrayAttr(generic.attributes["iterator_types"])]


def _inputs(generic: ir.Operation) -> list[ir.Value]:
    segments = list(ir.DenseI32ArrayAttr(generic.attributes["operandSegmentSizes"]))
    return list(generic.operands)[: segments[0]]


def _loop_ranges(generic: ir.Operation) -> list[int] | None:
    if any(isinstance(o.type, ir.ShapedType) and not o.type.has_static_shape for o in generic.operands):
        return None
    return loop_ranges(generic)


def _generalized(func: ir.Operation) -> ir.Operation:
    """A copy of the dispatch body with named ops as linalg.generic: one form for every
    root op's loops, maps and iterators."""
    context = func.context
    module = ir.Module.parse(func.get_asm(enable_debug_info=False), context)
    passmanager.PassManager.parse("builtin.module(func.func(linalg-generalize-named-ops))", context).run(module.operation)
    return next(op.operation for op in module.body.operations if op.operation.name == "func.func"), module


def root_index(kinds: list[str]) -> int | None:
    """The root among a dispatch's compute ops: the first of the most telling class
    (contractions and convolutions, then reductions, then elementwise ops)."""
    if not kinds:
        return None
    return min(range(len(kinds)), key=lambda i: (_KIND_PRIORITY.get(kinds[i], 9), i))


def signature(executable: Executable) -> tuple[KernelSignature, ir.Operation] | None:
    """The executable's signature and its root op (in the executable itself); None where the
    body has no static compute op to configure."""
    named = linalg_ops(executable.func)
    if not named:
        return None
    generic_func, keep_alive = _generalized(executable.func)
    generic = linalg_ops(generic_func)
    if len(generic) != len(named):
        return None  # generalization changed the op structure: do not guess
    kinds = [_kind(n, g) for n, g in zip(named, generic)]
    # A scatter whose indices may repeat (an accumulating index_put) keeps IREE's own code: one
    # update per thread would race on a repeated index.
    kinds = [k if k != "scatter" or _unique_indices(n) else "other" for k, n in zip(kinds, named)]
    index = root_index(kinds)
    root, root_generic = named[index], generic[index]
    if kinds[index] == "scatter" and isinstance(root.operands[0].type, ir.ShapedType) and root.operands[0].type.has_static_shape:
        # Its loops are its updates' dimensions, each one update (iree_linalg_ext.scatter's
        # iteration domain); no indexing maps.
        loops = tuple(root.operands[0].type.shape)
        iterators, maps = ("parallel",) * len(loops), ()
    elif root_generic.name != "linalg.generic":
        loops, iterators, maps = (), (), ()
    else:
        ranges = _loop_ranges(root_generic)
        if ranges is None:
            return None
        loops, iterators = tuple(ranges), tuple(iterator_types(root_generic))
        maps = tuple(str(a) for a in ir.ArrayAttr(root_generic.attributes["indexing_maps"]))
    shapes = tuple(tuple(v.type.shape) for v in root.operands if isinstance(v.type, ir.ShapedType) and v.type.has_static_shape)
    # The type the kernel computes in: its first tensor operand's (an f16 matmul accumulating
    # in f32 is an f16 kernel, which IREE maps to tensor cores).
    shaped = [v.type for v in list(root.operands) + list(root.results) if isinstance(v.type, ir.ShapedType)]
    element = str(shaped[0].element_type) if shaped else ""
    results = [v.type for v in root.results if isinstance(v.type, ir.ShapedType)]
    result_type = str(results[0].element_type) if results else ""
    _strip_schedc_attributes(generic_func)
    _zero_inlined_weights(generic_func)
    body = generic_func.get_asm(enable_debug_info=False).replace(executable.entry, "entry")
    key = hashlib.sha256(body.encode()).hexdigest()[:20]
    fused = tuple(n.name for i, n in enumerate(named) if i != index)
    contractions = sum(k in TILED_KINDS for k in kinds)
    chained = contractions > 1 or (root_generic.name == "linalg.generic" and _init_is_loaded(root_generic))
    sig = KernelSignature(key, kinds[index], root.name, loops, iterators, maps, shapes, element, fused, executable.entry, chained,
                          result_type if result_type != element else "")
    del keep_alive
    return sig, root


def _unique_indices(scatter: ir.Operation) -> bool:
    attrs = scatter.attributes
    return "unique_indices" in attrs and ir.BoolAttr(attrs["unique_indices"]).value


def _init_is_loaded(generic: ir.Operation) -> bool:
    """Whether a reduction's initial value is read from a binding rather than made in the
    dispatch (by a fill, or an op that broadcasts a bias)."""
    if "reduction" not in iterator_types(generic):
        return False
    segments = list(ir.DenseI32ArrayAttr(generic.attributes["operandSegmentSizes"]))
    init = list(generic.operands)[segments[0]]
    return (defining_op_name(init) or "").endswith("dispatch.tensor.load")


def _strip_schedc_attributes(func: ir.Operation) -> None:
    """Drops what kernel-config writes (the config, sched.* attributes), so a configured
    dispatch keeps its key."""
    doomed = []

    def visit(op):
        for i in range(len(op.attributes)):
            name = op.attributes[i].name
            if name == "compilation_info" or name.startswith("sched."):
                doomed.append((op.operation, name))
        return ir.WalkResult.ADVANCE

    func.walk(visit)
    for op, name in doomed:
        del op.attributes[name]


def _zero_inlined_weights(func: ir.Operation) -> None:
    """Inlined weights (`dense_resource` blobs, renamed whenever a body is parsed again) as
    zeros of their type: a kernel's key hashes its code and shapes, not its data."""
    blobs = []

    def visit(op):
        if op.name == "arith.constant" and isinstance(op.results[0].type, ir.RankedTensorType):
            if not isinstance(op.attributes["value"], ir.DenseElementsAttr):  # a resource blob
                blobs.append(op.operation)
        return ir.WalkResult.ADVANCE

    func.walk(visit)
    with func.context, ir.Location.unknown():
        for op in blobs:
            tensor = op.results[0].type
            element = tensor.element_type
            zero = ir.FloatAttr.get(element, 0.0) if isinstance(element, ir.FloatType) else ir.IntegerAttr.get(element, 0)
            op.attributes["value"] = ir.DenseElementsAttr.get_splat(tensor, zero)


def apply_config(root: ir.Operation, config: KernelConfig) -> None:
    """Writes the config on the root op, where IREE's GPU configuration reads it."""
    with root.context:
        root.attributes["compilation_info"] = ir.Attribute.parse(config.attribute())


# -- standalone benchmark modules ----------------------------------------------------------


@dataclass(frozen=True)
class DispatchSite:
    """How a model calls an executable: tensor operand and result types, as text, and which
    results are written into an operand."""

    executable: str
    entry: str
    operand_types: tuple[str, ...]
    result_types: tuple[str, ...]
    # Per result, the operand it is written into in place (IREE's tied results: a kernel
    # writing its slice of a concatenation), or -1.
    tied: tuple[int, ...] = ()

    @property
    def benchmarkable(self) -> bool:
        return all(_float_tensor(t) for t in self.operand_types + self.result_types)


def _float_tensor(type_text: str) -> bool:
    """`tensor<4x8xf32>` and the rank-0 `tensor<f32>`: a tensor of floats."""
    return type_text.startswith("tensor<") and type_text[len("tensor<"):].rstrip(">").rsplit("x", 1)[-1] in _FLOATS


def dispatch_sites(module: ir.Operation) -> dict[str, DispatchSite]:
    """The first call of each executable with static tensors only and no workload operands
    (what a standalone benchmark can reproduce), by executable."""
    sites: dict[str, DispatchSite] = {}

    def visit(op):
        if op.name != "flow.dispatch":
            return ir.WalkResult.ADVANCE
        op = op.operation
        entry = ir.ArrayAttr(op.attributes["entry_points"])[0]
        symbol = ir.SymbolRefAttr(entry)
        executable, name = symbol.value[0], symbol.value[-1]
        segments = list(ir.DenseI32ArrayAttr(op.attributes["operandSegmentSizes"]))
        tied = [ir.IntegerAttr(t).value for t in ir.ArrayAttr(op.attributes["tied_operands"])] if "tied_operands" in op.attributes else []
        static = all(isinstance(v.type, ir.RankedTensorType) and v.type.has_static_shape for v in list(op.operands) + list(op.results))
        if executable not in sites and segments[0] == 0 and sum(segments[2:]) == 0 and static:
            tied = tied or [-1] * len(op.results)
            sites[executable] = DispatchSite(executable, name, tuple(str(v.type) for v in op.operands), tuple(str(r.type) for r in op.results), tuple(tied))
        return ir.WalkResult.ADVANCE

    module.walk(visit)
    return sites


def benchmark_module(executable: Executable, site: DispatchSite, configs: list[KernelConfig | None]) -> str:
    """MLIR text of a module with one function per config, `@c<i>(operands) -> results`,
    each dispatching its own copy of the executable (config None: IREE's own choice).

    The copies are printed as one module, so the constants a dispatch body holds inline
    (`dense_resource` blobs) come along in its resource section."""
    context = executable.op.context
    functions = []
    with context, ir.Location.unknown():
        holder = ir.Module.create()
        for i, config in enumerate(configs):
            copy = executable.op.clone(ir.InsertionPoint(holder.body))
            copy.attributes["sym_name"] = ir.StringAttr.get(f"k{i}")
            if config is not None:
                found = signature(Executable(copy, f"k{i}", executable.entry, _entry_function(copy)))
                if found is None:
                    raise ValueError(f"{executable.symbol}: no root op to configure in its copy")
                apply_config(found[1], config)
            functions.append(_benchmark_function(i, site))
        text = holder.operation.get_asm(enable_debug_info=False)
    module, brace, resources = text.partition("\n{-#")
    body_end = module.rstrip().rfind("}")
    return module[:body_end] + "\n".join(functions) + "\n}\n" + (brace + resources if brace else "")


def _entry_function(executable_op: ir.Operation) -> ir.Operation:
    for inner in executable_op.regions[0].blocks[0].operations:
        if inner.operation.name == "builtin.module":
            return next(f.operation for f in inner.regions[0].blocks[0].operations if f.operation.name == "func.func")
    raise ValueError("executable without a body")


def _benchmark_function(i: int, site: DispatchSite) -> str:
    arguments = ", ".join(f"%a{j}: {t}" for j, t in enumerate(site.operand_types))
    operands = ", ".join(f"%a{j}" for j in range(len(site.operand_types)))
    results = ", ".join(site.result_types)
    tied = site.tied or (-1,) * len(site.result_types)
    dispatched = ", ".join(f"%a{t}" if t >= 0 else r for t, r in zip(tied, site.result_types))
    count = len(site.result_types)
    value = "%r" if count == 1 else f"%r:{count}"
    returned = "%r" if count == 1 else ", ".join(f"%r#{j}" for j in range(count))
    return (
        f"  func.func @c{i}({arguments}) -> ({results}) {{\n"
        f"    {value} = flow.dispatch @k{i}::@{site.entry}({operands}) : ({', '.join(site.operand_types)}) -> ({dispatched})\n"
        f"    return {returned} : {results}\n  }}"
    )


def benchmark_module_from_text(text: str, keep: list[int]) -> str:
    """A benchmark module with only the candidates `keep` (their k<i> and c<i> keep their
    numbers, so results still name the config they measured)."""
    context = ir.Context()
    module = ir.Module.parse(text, context)
    names = {f"k{i}" for i in keep} | {f"c{i}" for i in keep}
    doomed = [op.operation for op in module.body.operations if ir.StringAttr(op.operation.attributes["sym_name"]).value not in names]
    for op in doomed:
        op.erase()
    return module.operation.get_asm(enable_debug_info=False)


def swap_first_inputs(generic: ir.Operation) -> None:
    """Swaps a linalg.generic's two inputs: the operands, their indexing maps and the body's
    two block arguments (each use of one becomes a use of the other), so it computes the same.
    The two inputs must have the same element type."""
    first, second = _inputs(generic)[:2]
    generic.operands[0], generic.operands[1] = second, first
    maps = list(ir.ArrayAttr(generic.attributes["indexing_maps"]))
    with generic.context:
        generic.attributes["indexing_maps"] = ir.ArrayAttr.get([maps[1], maps[0], *maps[2:]])
    block = generic.regions[0].blocks[0]
    a, b = block.arguments[0], block.arguments[1]
    uses_a = [(use.owner, use.operand_number) for use in a.uses]
    uses_b = [(use.owner, use.operand_number) for use in b.uses]
    for owner, index in uses_a:
        owner.operands[index] = b
    for owner, index in uses_b:
        owner.operands[index] = a


def mma_swap_candidates(executable: Executable) -> list[ir.Operation]:
    """The executable's contractions whose inputs `swap_inputs_for_mma` would swap (two inputs
    of one element type, a multiply-add body, plain loop indices in every map)."""
    from schedc.decisions.kernel_config import map_terms
    from schedc.decisions.mma_operands import swap_inputs_for_mma

    found = []
    for op in linalg_ops(executable.func):
        if op.name != "linalg.generic" or _kind(op, op) != "matmul_like":
            continue
        inputs = _inputs(op)
        if len(inputs) != 2 or not all(isinstance(v.type, ir.ShapedType) for v in inputs):
            continue
        elements = {str(v.type.element_type) for v in inputs}
        if len(elements) != 1:
            continue
        maps = [map_terms(str(a)) for a in ir.ArrayAttr(op.attributes["indexing_maps"])]
        if any(m is None for m in maps) or len(maps) != 3:
            continue
        if swap_inputs_for_mma(maps[2], maps[0], maps[1], elements.pop()):
            found.append(op)
    return found
