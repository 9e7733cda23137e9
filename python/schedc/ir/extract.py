"""Builds `KernelGraph`s from flow-phase IR. Reads IR only; never edits it.

What each op means (a kernel, a fill, a view, a write in place) comes from `schedc.ir.iree`;
this module turns a function body into the graph in four steps: the dependences between its
ops, the buffers its values share, the in-place writes IREE's stream phase adds, and the
numbered buffers and nodes.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from iree.compiler import ir

from schedc.decisions.kernel_graph import Buffer, KernelGraph, Node, repaired_program_order
from schedc.ir.iree import FlowOp, body_ops, emplaced_update, flow_op, function_name, is_tensor, tensor_bytes, update_of


@dataclass
class _Body:
    """A function body as the steps below read it."""

    ops: list[ir.Operation]
    info: list[FlowOp]
    block: ir.Block
    terminator: ir.Operation
    producer: dict  # value -> the index of the op that defines it
    operands: list[list[ir.Value]]  # each op's operands, with the values its regions capture

    @staticmethod
    def of(func: ir.Operation) -> "_Body":
        ops = body_ops(func)
        block = func.regions[0].blocks[0]
        producer = {result: i for i, op in enumerate(ops) for result in op.results}
        return _Body(
            ops=ops,
            info=[flow_op(op) for op in ops],
            block=block,
            terminator=block.operations[len(ops)].operation,
            producer=producer,
            operands=[list(op.operands) + _region_captures(op) for op in ops],
        )


def build_kernel_graph(func: ir.Operation) -> KernelGraph:
    """Analyses one function body (see `schedc.decisions.kernel_graph` for the model)."""
    return analyse_function(func)[0]


def analyse_function(func: ir.Operation) -> tuple[KernelGraph, dict]:
    """The kernel graph of one function body, and the buffer (`Buffer.id`) of each tensor value
    its ops define, for passes that rewrite the values of one buffer (remat)."""
    body = _Body.of(func)
    edges = _dependences(body)
    aliases, cloned_fills, external = _shared_buffers(body)
    _emplace(body, edges, aliases, cloned_fills)
    nodes, buffers, buffer_of = _nodes_and_buffers(body, edges, aliases, cloned_fills, external)
    return KernelGraph(function_name(func), nodes, buffers, frozenset(edges)), buffer_of


def _dependences(body: _Body) -> set[tuple[int, int]]:
    """SSA uses (also from nested regions), and the order of ops with side effects."""
    edges: set[tuple[int, int]] = set()
    last_pinned: int | None = None
    for i, info in enumerate(body.info):
        for operand in body.operands[i]:
            if operand in body.producer and body.producer[operand] != i:
                edges.add((body.producer[operand], i))
        if info.pinned:
            if last_pinned is not None:
                edges.add((last_pinned, i))
            last_pinned = i
    return edges


def _shared_buffers(body: _Body):
    """Groups values into buffers (views, writes in place), and finds the values that live
    outside the transient arena. A write in place into a value with other users copies it
    first; a shared fill is instead cloned for each writer, just before it (`cloned_fills`:
    (writer, fill value) pairs), so the writer does not read the shared one."""
    aliases = _UnionFind()
    cloned_fills: set = set()
    external: list[tuple[ir.Value, str]] = [(arg, "argument") for arg in body.block.arguments if is_tensor(arg)]

    def write_in_place(i: int, target: ir.Value) -> bool:
        if len(list(target.uses)) == 1:
            return True
        if target in body.producer and body.info[body.producer[target]].fill:
            cloned_fills.add((i, target))
        return False

    for i, (op, info) in enumerate(zip(body.ops, body.info)):
        for result, operand in info.views:
            aliases.union(op.operands[operand], op.results[result])
        for result, operand in info.writes_into:
            target = op.operands[operand]
            if write_in_place(i, target):
                aliases.union(target, op.results[result])
        if info.external is not None:
            external.extend((r, info.external) for r in op.results if is_tensor(r))
        if info.sink:
            external.extend((v, "result") for v in op.operands if is_tensor(v))
    external.extend((v, "result") for v in body.terminator.operands if is_tensor(v))
    return aliases, cloned_fills, external


def _emplace(body: _Body, edges: set, aliases: "_UnionFind", cloned_fills: set) -> None:
    """The writes of dispatch results into update targets that IREE's stream phase makes
    (`schedc.ir.iree.emplaced_update`); each adds the dependence IREE adds: the target's
    producer runs before the dispatch."""
    index_of = {op: i for i, op in enumerate(body.ops)}
    succs: dict = {}
    for before, after in edges:
        succs.setdefault(before, []).append(after)
    for i, (op, info) in enumerate(zip(body.ops, body.info)):
        if not info.entry:
            continue
        for result_index in range(len(op.results)):  # IREE stops at the first it cannot place
            update = emplaced_update(op, result_index)
            if update is None:
                break
            target, _ = update_of(update)
            target_producer = body.producer.get(target)
            if (index_of[update], target) in cloned_fills:
                target_producer = None  # a fill of its own, made where it is needed
            if target_producer is not None and target_producer != i:
                if _reaches(succs, i, target_producer):
                    break  # the target needs this dispatch first: IREE cannot move it either
                edges.add((target_producer, i))
                succs.setdefault(target_producer, []).append(i)
            aliases.union(update.results[0], op.results[result_index])


def _nodes_and_buffers(body: _Body, edges, aliases: "_UnionFind", cloned_fills: set, external):
    """Numbers the buffers in order of first definition and makes the nodes."""
    external_kind: dict = {}
    for value, kind in external:
        external_kind.setdefault(aliases.find(value), kind)
    buffer_of: dict = {}  # root value -> buffer id
    buffers: list[Buffer] = []

    def buffer_for(value: ir.Value) -> int:
        root = aliases.find(value)
        if root not in buffer_of:
            buffer_of[root] = len(buffers)
            kind = external_kind.get(root, "transient")
            buffers.append(Buffer(len(buffers), tensor_bytes(root.type), str(root.type), kind))
        return buffer_of[root]

    for arg in body.block.arguments:
        if is_tensor(arg):
            buffer_for(arg)
    # A buffer is defined by the first node that makes one of its values, in the order IREE
    # runs them (program order, with emplaced targets' producers moved up).
    definer: dict[int, int] = {}
    for i in repaired_program_order(len(body.ops), edges):
        for result in body.ops[i].results:
            if is_tensor(result):
                definer.setdefault(buffer_for(result), i)
    node_uses = [
        [buffer_for(v) for v in body.operands[i] if is_tensor(v) and (i, v) not in cloned_fills]
        for i in range(len(body.ops))
    ]
    used = {b for uses in node_uses for b in uses}
    for b, i in definer.items():
        if b not in used and body.info[i].fill and buffers[b].kind == "transient":
            buffers[b] = replace(buffers[b], kind="elided")  # every writer got its own fill
    nodes: list[Node] = []
    for i, (op, info) in enumerate(zip(body.ops, body.info)):
        uses, defines = node_uses[i], []
        for result in op.results:
            if is_tensor(result):
                b = buffer_for(result)
                if definer[b] == i:
                    defines.append(b)
                elif b not in uses:
                    uses.append(b)  # writes into a buffer made earlier (emplaced result)
        nodes.append(Node(
            index=i,
            op=op.name,
            label=info.label,
            is_kernel=info.kernel,
            defines=tuple(dict.fromkeys(defines)),
            uses=tuple(b for b in dict.fromkeys(uses) if b not in defines),
            pinned=info.pinned,
            fill=info.fill,
        ))
    values = {result: buffer_for(result) for op in body.ops for result in op.results if is_tensor(result)}
    return tuple(nodes), tuple(buffers), values


def _region_captures(op: ir.Operation) -> list[ir.Value]:
    """Values defined outside `op` that ops nested in its regions use."""
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
