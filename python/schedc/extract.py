"""Builds `KernelGraph`s from flow-phase IR. Reads IR only; never edits it."""

from __future__ import annotations

from iree.compiler import ir

from .graph import Buffer, KernelGraph, Node

# Ops whose results are views of an operand's buffer: result i aliases operand ALIAS_OPERAND.
_VIEW_OPS = {"flow.tensor.reshape": 0, "flow.tensor.bitcast": 0}
# Ops that write into their target in place: the result is the target's buffer.
_IN_PLACE_OPS = {"flow.tensor.update": "target", "flow.tensor.store": "target"}
# Ops that only order or hand over tensors; results alias operands one to one.
_PASS_THROUGH_OPS = {"hal.tensor.barrier", "hal.tensor.alias", "hal.tensor.transients"}
# Ops whose tensor results live outside the transient arena.
_EXTERNAL_RESULT_OPS = {
    "util.global.load": "constant",
    "flow.tensor.constant": "constant",
    "arith.constant": "constant",
    "hal.tensor.import": "argument",
}
# Ops whose tensor operands leave the function: their buffers are results, not transients.
_RESULT_SINKS = {"util.return", "func.return", "hal.tensor.export"}
_PURE_PREFIXES = ("arith.", "flow.", "util.global.load", "util.null")


def function_ops(module: ir.Operation) -> list[ir.Operation]:
    """The module's functions with a body (`util.func` and `func.func`), in order."""
    functions = []
    for op in module.regions[0].blocks[0].operations:
        op = op.operation
        if op.name in ("util.func", "func.func") and len(op.regions[0].blocks) > 0:
            functions.append(op)
    return functions


def function_name(func: ir.Operation) -> str:
    return ir.StringAttr(func.attributes["sym_name"]).value


def body_ops(func: ir.Operation) -> list[ir.Operation]:
    """The function body's ops in program order, without the terminator."""
    return [op.operation for op in func.regions[0].blocks[0].operations][:-1]


def is_kernel_op(op: ir.Operation) -> bool:
    return op.name == "flow.dispatch" or op.name.startswith("flow.tensor.")


def tensor_bytes(type_: ir.Type) -> int | None:
    """Bytes of a ranked tensor as IREE stores it; None for dynamic shapes."""
    if not isinstance(type_, ir.RankedTensorType):
        return None
    tensor = type_
    if not tensor.has_static_shape:
        return None
    bits = element_bits(tensor.element_type)
    count = 1
    for dim in tensor.shape:
        count *= dim
    return (count * bits + 7) // 8


def element_bits(element: ir.Type) -> int:
    if isinstance(element, ir.IntegerType):
        return 8 if element.width == 1 else element.width  # i1 is stored a byte per element
    if isinstance(element, ir.IndexType):
        return 64
    if isinstance(element, ir.ComplexType):
        return 2 * element_bits(element.element_type)
    if isinstance(element, ir.FloatType):
        return element.width
    raise ValueError(f"unsupported element type {element}")


def is_tensor(value: ir.Value) -> bool:
    return isinstance(value.type, ir.RankedTensorType)


def dispatch_label(op: ir.Operation) -> str:
    entry = ir.ArrayAttr(op.attributes["entry_points"])[0]
    return str(entry).split("::")[-1].lstrip("@").strip('"')


def _tied_operand(op: ir.Operation, result_index: int) -> int | None:
    """The operand index a `flow.dispatch` result is tied to (written in place), if any."""
    if "tied_operands" not in op.attributes:
        return None
    tied = [ir.IntegerAttr(a).value for a in ir.ArrayAttr(op.attributes["tied_operands"])]
    if result_index >= len(tied) or tied[result_index] < 0:
        return None
    segments = list(ir.DenseI32ArrayAttr(op.attributes["operandSegmentSizes"]))
    return segments[0] + tied[result_index]  # tied indices skip the workload operands


def _named_operand_index(op: ir.Operation, name: str) -> int:
    """Index of a named single operand (e.g. `target`) in the op's operand list."""
    view = op.opview
    value = getattr(view, name)
    for i, operand in enumerate(op.operands):
        if operand == value:
            return i
    raise ValueError(f"{op.name} has no operand {name}")


def _region_operands(op: ir.Operation) -> list[ir.Value]:
    """Values from outside that ops nested in `op`'s regions use."""
    captured = []

    def visit(inner):
        for operand in inner.operands:
            captured.append(operand)
        return ir.WalkResult.ADVANCE

    for region in op.regions:
        for block in region.blocks:
            for inner in block.operations:
                inner.operation.walk(visit)
    return captured


class _UnionFind:
    def __init__(self):
        self.parent: dict = {}

    def find(self, x):
        self.parent.setdefault(x, x)
        while self.parent[x] != x:
            self.parent[x] = self.parent[self.parent[x]]
            x = self.parent[x]
        return x

    def union(self, a, b):
        ra, rb = self.find(a), self.find(b)
        if ra != rb:
            self.parent[rb] = ra


def build_kernel_graph(func: ir.Operation) -> KernelGraph:
    """Analyses one function body (see `schedc.graph` for the model)."""
    ops = body_ops(func)
    terminator = func.regions[0].blocks[0].operations[len(ops)].operation
    producer: dict = {}  # value -> node index
    for i, op in enumerate(ops):
        for result in op.results:
            producer[result] = i

    # 1. Group tensor values into buffers.
    aliases = _UnionFind()
    external_kind: dict = {}  # root value -> kind, filled after unions
    external_values: list[tuple[ir.Value, str]] = []
    for arg in func.regions[0].blocks[0].arguments:
        if is_tensor(arg):
            external_values.append((arg, "argument"))
    for op in ops:
        tensor_results = [r for r in op.results if is_tensor(r)]
        if op.name in _VIEW_OPS:
            for r in tensor_results:
                aliases.union(op.operands[_VIEW_OPS[op.name]], r)
        elif op.name in _IN_PLACE_OPS:
            target = op.operands[_named_operand_index(op, _IN_PLACE_OPS[op.name])]
            for r in tensor_results:
                aliases.union(target, r)
        elif op.name in _PASS_THROUGH_OPS:
            for operand, r in zip(op.operands, op.results):
                if is_tensor(r):
                    aliases.union(operand, r)
        elif op.name == "flow.dispatch":
            for i, r in enumerate(op.results):
                tied = _tied_operand(op, i)
                if tied is not None:
                    aliases.union(op.operands[tied], r)
        elif not is_kernel_op(op):
            kind = _EXTERNAL_RESULT_OPS.get(op.name, "external")
            external_values.extend((r, kind) for r in tensor_results)
        for operand in op.operands:
            if is_tensor(operand) and op.name in _RESULT_SINKS:
                external_values.append((operand, "result"))
    for operand in terminator.operands:
        if is_tensor(operand):
            external_values.append((operand, "result"))
    for value, kind in external_values:
        external_kind.setdefault(aliases.find(value), kind)

    # 2. Number the buffers in order of first definition.
    buffer_of: dict = {}  # root value -> buffer id
    buffers: list[Buffer] = []

    def buffer_for(value: ir.Value) -> int:
        root = aliases.find(value)
        if root not in buffer_of:
            buffer_of[root] = len(buffers)
            kind = external_kind.get(root, "transient")
            buffers.append(Buffer(len(buffers), tensor_bytes(root.type), str(root.type), kind))
        return buffer_of[root]

    for arg in func.regions[0].blocks[0].arguments:
        if is_tensor(arg):
            buffer_for(arg)

    # 3. Nodes and edges.
    nodes: list[Node] = []
    edges: set[tuple[int, int]] = set()
    last_pinned: int | None = None
    for i, op in enumerate(ops):
        operands = list(op.operands) + _region_operands(op)
        uses = []
        for operand in operands:
            if operand in producer and producer[operand] != i:
                edges.add((producer[operand], i))
            if is_tensor(operand):
                uses.append(buffer_for(operand))
        defines = []
        for result in op.results:
            if not is_tensor(result):
                continue
            b = buffer_for(result)
            if b in uses:
                continue  # a view or in-place result: the buffer already exists
            defines.append(b)
        pinned = not (is_kernel_op(op) or op.name.startswith(_PURE_PREFIXES))
        if pinned:
            if last_pinned is not None:
                edges.add((last_pinned, i))
            last_pinned = i
        label = dispatch_label(op) if op.name == "flow.dispatch" else op.name
        nodes.append(
            Node(
                index=i,
                op=op.name,
                label=label,
                is_kernel=is_kernel_op(op),
                defines=tuple(dict.fromkeys(defines)),
                uses=tuple(dict.fromkeys(uses)),
                pinned=pinned,
                location=str(op.location),
            )
        )
    return KernelGraph(function_name(func), tuple(nodes), tuple(buffers), frozenset(edges))
