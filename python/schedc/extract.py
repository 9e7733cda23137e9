"""Builds `KernelGraph`s from flow-phase IR. Reads IR only; never edits it."""

from __future__ import annotations

from dataclasses import replace

from iree.compiler import ir

from .graph import Buffer, KernelGraph, Node, repaired_program_order

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
# Ops that make a fresh tensor from nothing: IREE clones them for each in-place writer.
_FILL_OPS = {"flow.tensor.splat", "flow.tensor.empty"}
_PURE_PREFIXES = ("arith.", "flow.", "util.global.load", "util.null")


def function_ops(module: ir.Operation) -> list[ir.Operation]:
    """The module's functions with a body (`util.func` and `func.func`), in order."""
    functions = []
    for op in module.regions[0].blocks[0].operations:
        op = op.operation
        if op.name in ("util.func", "func.func") and len(op.regions[0].blocks) > 0:
            functions.append(op)
    return functions


def ops_named(root: ir.Operation, name: str) -> list[ir.Operation]:
    """Every op called `name` nested in `root`, collected before anyone edits the IR."""
    found: list[ir.Operation] = []

    def visit(op):
        if op.name == name:
            found.append(op.operation)
        return ir.WalkResult.ADVANCE

    root.walk(visit)
    return found


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
    inner_ops: list = []
    inner_values: set = set()

    def visit(inner):
        inner_ops.append(inner.operation)
        inner_values.update(inner.operation.results)
        for region in inner.operation.regions:
            for block in region.blocks:
                inner_values.update(block.arguments)
        return ir.WalkResult.ADVANCE

    for region in op.regions:
        for block in region.blocks:
            inner_values.update(block.arguments)
            for inner in block.operations:
                inner.operation.walk(visit)
    return [v for inner in inner_ops for v in inner.operands if v not in inner_values]


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


def _is_pinned(op: ir.Operation) -> bool:
    """Ops with side effects keep their order relative to each other."""
    if op.name == "util.global.load":
        return "is_immutable" not in op.attributes  # a mutable global may be stored to
    if op.name == "flow.tensor.trace":
        return True
    return not (is_kernel_op(op) or op.name.startswith(_PURE_PREFIXES))


def _single_user(value: ir.Value):
    uses = list(value.uses)
    return uses[0].owner.operation if len(uses) == 1 else None


def _emplaceable_update(op: ir.Operation, result_index: int):
    """The `flow.tensor.update` IREE writes this dispatch result into, if any.

    IREE's stream phase (EmplaceAllocations) makes a dispatch write its result straight into
    the target of the update that is the result's only user (views between them vanish in
    the stream phase), when the result is not already tied, and moves the target's producer
    before the dispatch. Concatenations of branch outputs become one buffer that way.
    """
    if _tied_operand(op, result_index) is not None:
        return None
    value = op.results[result_index]
    while True:
        user = _single_user(value)
        if user is None:
            return None
        if user.name in _VIEW_OPS:
            value = user.results[0]
            continue
        if user.name == "flow.tensor.update" and user.operands[_named_operand_index(user, "update")] == value:
            return user
        return None


def _reaches(succs: dict, start: int, goal: int) -> bool:
    stack, seen = [start], set()
    while stack:
        n = stack.pop()
        if n == goal:
            return True
        if n not in seen:
            seen.add(n)
            stack.extend(succs.get(n, ()))
    return False


def build_kernel_graph(func: ir.Operation) -> KernelGraph:
    """Analyses one function body (see `schedc.graph` for the model)."""
    ops = body_ops(func)
    block = func.regions[0].blocks[0]
    terminator = block.operations[len(ops)].operation
    producer: dict = {}  # value -> node index
    for i, op in enumerate(ops):
        for result in op.results:
            producer[result] = i

    # 1. Dependences: SSA uses (also from nested regions) and the order of side effects.
    operands_of = [list(op.operands) + _region_operands(op) for op in ops]
    edges: set[tuple[int, int]] = set()
    last_pinned: int | None = None
    for i, op in enumerate(ops):
        for operand in operands_of[i]:
            if operand in producer and producer[operand] != i:
                edges.add((producer[operand], i))
        if _is_pinned(op):
            if last_pinned is not None:
                edges.add((last_pinned, i))
            last_pinned = i

    # 2. Group tensor values into buffers.
    aliases = _UnionFind()
    index_of = {op: i for i, op in enumerate(ops)}
    cloned_fills: set = set()  # (node, fill value) pairs IREE turns into a fill of its own

    def write_in_place(op: ir.Operation, target: ir.Value) -> bool:
        """Whether IREE writes `op`'s result into `target`'s buffer (copy-on-write otherwise).

        A target with other users is copied first; a shared fill (splat, empty) is instead
        cloned for each writer, just before it, so the writer does not read the shared one.
        """
        if len(list(target.uses)) == 1:
            return True
        if target in producer and ops[producer[target]].name in _FILL_OPS:
            cloned_fills.add((index_of[op], target))
        return False
    external_values: list[tuple[ir.Value, str]] = []
    for arg in block.arguments:
        if is_tensor(arg):
            external_values.append((arg, "argument"))
    for op in ops:
        tensor_results = [r for r in op.results if is_tensor(r)]
        if op.name in _VIEW_OPS:
            for r in tensor_results:
                aliases.union(op.operands[_VIEW_OPS[op.name]], r)
        elif op.name in _IN_PLACE_OPS:
            target = op.operands[_named_operand_index(op, _IN_PLACE_OPS[op.name])]
            if write_in_place(op, target):
                for r in tensor_results:
                    aliases.union(target, r)
        elif op.name in _PASS_THROUGH_OPS:
            for operand, r in zip(op.operands, op.results):
                if is_tensor(r):
                    aliases.union(operand, r)
        elif op.name == "flow.dispatch":
            for i, r in enumerate(op.results):
                tied = _tied_operand(op, i)
                if tied is None:
                    continue
                source = op.operands[tied]
                if write_in_place(op, source):
                    aliases.union(source, r)
        elif not is_kernel_op(op):
            kind = _EXTERNAL_RESULT_OPS.get(op.name, "external")
            external_values.extend((r, kind) for r in tensor_results)
        if op.name in _RESULT_SINKS:
            external_values.extend((v, "result") for v in op.operands if is_tensor(v))
    external_values.extend((v, "result") for v in terminator.operands if is_tensor(v))

    # 3. In-place writes IREE makes of dispatch results into update targets (see above); each
    #    adds the dependence IREE adds: the target's producer runs before the dispatch.
    succs: dict = {}
    for before, after in edges:
        succs.setdefault(before, []).append(after)
    for i, op in enumerate(ops):
        if op.name != "flow.dispatch":
            continue
        for result_index in range(len(op.results)):  # IREE stops at the first it cannot place
            update = _emplaceable_update(op, result_index)
            if update is None:
                break
            target = update.operands[_named_operand_index(update, "target")]
            target_producer = producer.get(target)
            if (index_of[update], target) in cloned_fills:
                target_producer = None  # a fill of its own, made where it is needed
            if target_producer is not None and target_producer != i:
                if _reaches(succs, i, target_producer):
                    break  # the target needs this dispatch first: IREE cannot move it either
                edges.add((target_producer, i))
                succs.setdefault(target_producer, []).append(i)
            aliases.union(update.results[0], op.results[result_index])

    external_kind: dict = {}
    for value, kind in external_values:
        external_kind.setdefault(aliases.find(value), kind)

    # 4. Number the buffers in order of first definition, and make the nodes.
    buffer_of: dict = {}  # root value -> buffer id
    buffers: list[Buffer] = []

    def buffer_for(value: ir.Value) -> int:
        root = aliases.find(value)
        if root not in buffer_of:
            buffer_of[root] = len(buffers)
            kind = external_kind.get(root, "transient")
            buffers.append(Buffer(len(buffers), tensor_bytes(root.type), str(root.type), kind))
        return buffer_of[root]

    for arg in block.arguments:
        if is_tensor(arg):
            buffer_for(arg)
    # A buffer is defined by the first node that makes one of its values, in the order IREE
    # runs them (program order, with emplaced targets' producers moved up).
    definer: dict[int, int] = {}
    for i in repaired_program_order(len(ops), edges):
        for result in ops[i].results:
            if is_tensor(result):
                definer.setdefault(buffer_for(result), i)
    used: set[int] = set()
    node_uses: list[list[int]] = []
    for i, op in enumerate(ops):
        uses = [buffer_for(v) for v in operands_of[i] if is_tensor(v) and (i, v) not in cloned_fills]
        node_uses.append(uses)
        used.update(uses)
    for b, i in definer.items():
        if b not in used and ops[i].name in _FILL_OPS and buffers[b].kind == "transient":
            buffers[b] = replace(buffers[b], kind="elided")  # every writer got its own fill
    nodes: list[Node] = []
    for i, op in enumerate(ops):
        uses = node_uses[i]
        defines = []
        for result in op.results:
            if is_tensor(result):
                b = buffer_for(result)
                if definer[b] == i:
                    defines.append(b)
                elif b not in uses:
                    uses.append(b)  # writes into a buffer made earlier (emplaced result)
        label = dispatch_label(op) if op.name == "flow.dispatch" else op.name
        nodes.append(
            Node(
                index=i,
                op=op.name,
                label=label,
                is_kernel=is_kernel_op(op),
                defines=tuple(dict.fromkeys(defines)),
                uses=tuple(b for b in dict.fromkeys(uses) if b not in defines),
                pinned=_is_pinned(op),
                location=str(op.location),
            )
        )
    return KernelGraph(function_name(func), tuple(nodes), tuple(buffers), frozenset(edges))
