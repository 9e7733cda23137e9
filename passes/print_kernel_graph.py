"""print-kernel-graph: print each function's kernel graph and its program-order peak.

For every function with a body it prints the kernels (`flow.dispatch`, `flow.tensor.*`), the
tensors they read and write with their byte sizes and kinds, the kernel-to-kernel edges, and the
peak of live transient bytes when the kernels run in program order. The IR is left unchanged.

    kernel-graph @forward: 2 kernels, 1 edges, 1 transient tensors (512 B)
      kernel k0 @forward_dispatch_0_matmul_4x32x16_f32 reads b0 b1 writes b2
      kernel k1 @forward_dispatch_1_matmul_4x8x32_f32 reads b2 b3 writes b4
      tensor b2 tensor<4x32xf32> 512 B transient live k0..k1
      edge k0 -> k1
      peak 512 B at k0 (program order)
"""

from __future__ import annotations

from schedc.ir.extract import build_kernel_graph
from schedc.decisions.kernel_graph import KernelGraph
from schedc.ir.iree import function_ops, user_function_name

from schedc.passes.base import PassInfo


def format_size(size: int | None) -> str:
    return "? B (dynamic)" if size is None else f"{size} B"


def describe(graph: KernelGraph) -> list[str]:
    """The text print-kernel-graph shows for one function."""
    kernel_id = {n.index: f"k{i}" for i, n in enumerate(graph.kernels)}

    def name(node_index: int) -> str:
        return kernel_id.get(node_index, graph.nodes[node_index].op)

    kernel_edges = graph.kernel_edges()
    transient = graph.transient_buffers()
    transient_bytes = sum(b.size or 0 for b in transient)
    lines = [
        f"kernel-graph @{user_function_name(graph.function)}: {len(graph.kernels)} kernels, {len(kernel_edges)} edges, "
        f"{len(transient)} transient tensors ({transient_bytes} B)"
    ]
    for node in graph.kernels:
        reads = " ".join(f"b{b}" for b in node.uses) or "-"
        writes = " ".join(f"b{b}" for b in node.defines) or "-"
        label = f"@{node.label}" if node.op == "flow.dispatch" else node.label
        lines.append(f"  kernel {kernel_id[node.index]} {label} reads {reads} writes {writes}")
    order = graph.program_order()
    ranges = graph.live_ranges(order)
    touched = {b for n in graph.kernels for b in n.uses + n.defines}
    for buffer in graph.buffers:
        if buffer.id not in touched:
            continue
        line = f"  tensor b{buffer.id} {buffer.type} {format_size(buffer.size)} {buffer.kind}"
        if buffer.id in ranges:
            first, last = ranges[buffer.id]
            line += f" live {name(order[first])}..{name(order[last])}"
        lines.append(line)
    for before, after in kernel_edges:
        lines.append(f"  edge {kernel_id[before]} -> {kernel_id[after]}")
    live = graph.live_bytes(order)
    if live and max(live) > 0:
        step = live.index(max(live))
        lines.append(f"  peak {max(live)} B at {name(order[step])} (program order)")
    else:
        lines.append("  peak 0 B (program order)")
    if graph.has_dynamic_sizes:
        lines.append("  note: tensors of dynamic shape count as 0 B")
    return lines


def print_kernel_graph(module, pass_, options, context) -> None:
    for func in function_ops(module):
        graph = build_kernel_graph(func)
        if not graph.kernels:
            continue  # ABI wrappers: nothing to schedule
        print("\n".join(describe(graph)), file=context.out)


PASS = PassInfo(
    name="print-kernel-graph",
    summary="print each function's kernels, tensors, edges and program-order peak",
    run=print_kernel_graph,
)
