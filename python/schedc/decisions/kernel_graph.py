"""The kernel graph: a function's ops, the buffers between them, and their live bytes.

Pure data, built from IR by `schedc.ir.extract` and read by every scheduling pass. Nothing here
touches MLIR, so orders and plans over it can be tested on graphs made by hand.

Model (what IREE does with a flow-phase function):
- Every op of the function body is a node, in program order; kernels are the `flow.dispatch`
  and `flow.tensor.*` ops, the rest (imports, exports, constants, global loads) hold no
  transient memory of their own.
- SSA values are grouped into buffers: views (`flow.tensor.reshape`, `flow.tensor.bitcast`,
  `hal.tensor.barrier`), in-place updates (`flow.tensor.update` / `flow.tensor.store` into their
  target) and dispatch results tied to an operand share the buffer they alias.
- A buffer is transient when none of its values is a function argument, a constant or global,
  an imported tensor, or a function result: those live outside the transient arena.
- A transient buffer is live from the node that defines it to its last use, both included.
"""

from __future__ import annotations

from dataclasses import dataclass

from schedc.decisions.liveness import live_per_step, peak, ranges


@dataclass(frozen=True)
class Buffer:
    id: int
    size: int | None  # bytes; None when a dimension is dynamic
    type: str  # the tensor type of the value that defines it
    kind: str  # "transient", "argument", "constant", "result" or "external"

    @property
    def transient(self) -> bool:
        return self.kind == "transient"


@dataclass(frozen=True)
class Node:
    index: int  # position in program order
    op: str  # the op's name, e.g. "flow.dispatch"
    label: str  # what a user recognises: the dispatch's entry point, or the op name
    is_kernel: bool
    defines: tuple[int, ...]  # buffers this node creates
    uses: tuple[int, ...]  # buffers this node reads or writes in place
    pinned: bool = False  # has side effects: keeps its order relative to other pinned nodes
    fill: bool = False  # makes a fresh tensor from nothing (flow.tensor.splat, flow.tensor.empty)


@dataclass(frozen=True)
class KernelGraph:
    function: str
    nodes: tuple[Node, ...]
    buffers: tuple[Buffer, ...]
    edges: frozenset[tuple[int, int]]  # (before, after): data dependences and side-effect order

    # -- structure ---------------------------------------------------------------------------

    def predecessors(self) -> list[list[int]]:
        preds: list[list[int]] = [[] for _ in self.nodes]
        for before, after in self.edges:
            preds[after].append(before)
        return [sorted(p) for p in preds]

    def successors(self) -> list[list[int]]:
        succs: list[list[int]] = [[] for _ in self.nodes]
        for before, after in self.edges:
            succs[before].append(after)
        return [sorted(s) for s in succs]

    @property
    def kernels(self) -> list[Node]:
        return [n for n in self.nodes if n.is_kernel]

    def kernel_edges(self) -> list[tuple[int, int]]:
        """Edges between kernels, following paths through non-kernel nodes."""
        succs = self.successors()
        result = set()
        for kernel in self.kernels:
            stack, seen = list(succs[kernel.index]), set()
            while stack:
                n = stack.pop()
                if n in seen:
                    continue
                seen.add(n)
                if self.nodes[n].is_kernel:
                    result.add((kernel.index, n))
                else:
                    stack.extend(succs[n])
        return sorted(result)

    # -- memory ------------------------------------------------------------------------------

    def transient_buffers(self) -> list[Buffer]:
        return [b for b in self.buffers if b.transient]

    def is_order(self, order: list[int]) -> bool:
        """Whether `order` lists every node once and respects every edge."""
        if sorted(order) != list(range(len(self.nodes))):
            return False
        position = {n: i for i, n in enumerate(order)}
        return all(position[a] < position[b] for a, b in self.edges)

    def program_order(self) -> list[int]:
        """The order IREE runs the nodes in when schedc changes nothing (see
        `repaired_program_order` and `sink_fills`)."""
        return sink_fills(self, repaired_program_order(len(self.nodes), self.edges))

    def live_ranges(self, order: list[int] | None = None, step_of=None) -> dict[int, tuple[int, int]]:
        """Each transient buffer's [first, last] step in `order` (program order by default);
        `step_of` maps a node to its step (default: its position in the order)."""
        order = self.program_order() if order is None else order
        transient = {b.id for b in self.buffers if b.transient}
        touches = (
            (step_of[n] if step_of else step, self.nodes[n].defines + self.nodes[n].uses) for step, n in enumerate(order)
        )
        return {b: span for b, span in ranges(touches).items() if b in transient}

    def intervals(self, order: list[int] | None = None, step_of=None) -> list[tuple[int, int, int]]:
        """(first, last, bytes) of each transient buffer; dynamic sizes count as 0."""
        return [(first, last, self.buffers[b].size or 0) for b, (first, last) in self.live_ranges(order, step_of).items()]

    def live_bytes(self, order: list[int] | None = None) -> list[int]:
        """Transient bytes alive at each step of `order`; dynamic sizes count as 0."""
        order = self.program_order() if order is None else order
        return live_per_step(self.intervals(order), len(order))

    def peak_bytes(self, order: list[int] | None = None) -> int:
        return peak(self.intervals(order))

    @property
    def has_dynamic_sizes(self) -> bool:
        return any(b.size is None for b in self.buffers if b.transient)


def sink_fills(graph: KernelGraph, order: list[int]) -> list[int]:
    """`order` with each fill (a fresh splat or empty tensor) moved to just before its first
    user. IREE's stream phase makes a fill where it is first needed, whatever the order says,
    so this is the order it runs; it never raises the live bytes."""
    succs = graph.successors()
    position = {node: step for step, node in enumerate(order)}
    anchor: dict[int, int] = {}  # a moved fill -> the node it now runs just before
    for node in reversed(order):  # a fill's users that are fills are placed first
        made = set(graph.nodes[node].defines)
        # Only fills whose successors all read them: other edges order side effects.
        if graph.nodes[node].fill and succs[node] and all(made & set(graph.nodes[s].uses) for s in succs[node]):
            anchor[node] = min((anchor.get(s, s) for s in succs[node]), key=position.get)
    before: dict[int, list[int]] = {}
    for node in order:
        if node in anchor:
            before.setdefault(anchor[node], []).append(node)
    result: list[int] = []
    for node in order:
        if node not in anchor:
            result.extend(before.get(node, ()))
            result.append(node)
    return result


def repaired_program_order(count: int, edges) -> list[int]:
    """Program order, with each node's missing predecessors moved up to just before it.

    Program order is topological for SSA, but the dependences IREE adds when it writes a
    result in place (see `schedc.ir.extract`) can point backwards; IREE then moves the producer up
    just before its first new user, and so does this.
    """
    preds: list[list[int]] = [[] for _ in range(count)]
    for before, after in edges:
        preds[after].append(before)
    placed = [False] * count
    order: list[int] = []
    for root in range(count):
        stack = [(root, iter(sorted(preds[root])))]
        while stack:
            node, pending = stack[-1]
            if placed[node]:
                stack.pop()
                continue
            advanced = False
            for p in pending:
                if not placed[p]:
                    stack.append((p, iter(sorted(preds[p]))))
                    advanced = True
                    break
            if not advanced:
                stack.pop()
                placed[node] = True
                order.append(node)
    return order


# -- plain records of a graph, for the report ------------------------------------------------


def live_timeline(graph: KernelGraph, order: list[int]) -> dict:
    """The kernels of `order` and the transient bytes alive while each runs (the liveness
    model of `schedc.decisions.liveness`, through `KernelGraph.live_bytes`), for the memory timeline."""
    live = graph.live_bytes(order)
    steps = [(graph.nodes[n].label, live[step]) for step, n in enumerate(order) if graph.nodes[n].is_kernel]
    return {"kernels": [label for label, _ in steps], "live_bytes": [size for _, size in steps]}


def kernel_graph_record(graph: KernelGraph, order: list[int], extra: dict[int, dict] | None = None) -> dict:
    """The kernels (in `order`) and the edges between them, with what the report's kernel
    graph shows on hover: the dispatch, its tensors and bytes; `extra` adds fields per node."""
    kernels = [n for n in order if graph.nodes[n].is_kernel]
    index = {n: i for i, n in enumerate(kernels)}
    nodes = []
    for n in kernels:
        node = graph.nodes[n]
        results = [graph.buffers[b] for b in node.defines]
        entry = {
            "label": node.label,
            "op": node.op,
            "bytes": sum(b.size or 0 for b in results),
            "results": [b.type for b in results],
            "operands": [graph.buffers[b].type for b in node.uses],
        }
        entry.update((extra or {}).get(n, {}))
        nodes.append(entry)
    edges = sorted([index[a], index[b]] for a, b in graph.kernel_edges())
    return {"nodes": nodes, "edges": edges}
