"""The wide graph of issue 11: 700 parallel branches of 4 kernels (2,800 kernels), compiled for
the host CPU by IREE alone and with schedc's default pipeline.

    python bench/wide_graph.py [--branches 700] [--depth 4] [--repeats 1] [--report] [--keep DIR]

Prints IREE's compile time alone and schedc's (default pipeline, no report), what schedc adds
(the goal: at most 25% of IREE's own time), the time of each pass as it records it, how each
search stopped, and the estimated peak against program order (the goal: never worse). With
--report, one more compile with --report gives IREE's transient bytes with and without schedc.
Each branch is a chain of matrix-vector products with its own weights, so IREE neither fuses
nor deduplicates them: every product is one dispatch.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def wide_graph_mlir(branches: int, depth: int, width: int = 64) -> str:
    """linalg on tensors: x -> `branches` chains of `depth` matvecs -> the sum of their ends.
    Each matvec reads its own weights, a slice of the argument %w, so that IREE neither fuses
    nor merges the chains (constant weights would be folded into the kernels)."""
    vector, matrix = f"tensor<{width}xf32>", f"tensor<{width}x{width}xf32>"
    weights = f"tensor<{branches}x{depth}x{width}x{width}xf32>"
    lines = [f"func.func @wide(%x: {vector}, %w: {weights}) -> {vector} {{",
             "  %zero = arith.constant 0.0 : f32",
             f"  %empty = tensor.empty() : {vector}",
             f"  %acc = linalg.fill ins(%zero : f32) outs(%empty : {vector}) -> {vector}"]
    ends = []
    for b in range(branches):
        value = "%x"
        for d in range(depth):
            weight = f"%w{b}_{d}"
            lines.append(f"  {weight} = tensor.extract_slice %w[{b}, {d}, 0, 0] [1, 1, {width}, {width}] [1, 1, 1, 1] : {weights} to {matrix}")
            lines.append(f"  %v{b}_{d} = linalg.matvec ins({weight}, {value} : {matrix}, {vector}) outs(%acc : {vector}) -> {vector}")
            value = f"%v{b}_{d}"
        ends.append(value)
    total = ends[0]
    for i, end in enumerate(ends[1:]):
        lines.append(f"  %s{i} = arith.addf {total}, {end} : {vector}")
        total = f"%s{i}"
    lines.append(f"  return {total} : {vector}")
    lines.append("}")
    return "\n".join(lines) + "\n"


def wide_kernel_graph(branches: int, depth: int):
    """The same shape as a KernelGraph made by hand (x, the chains, one join), for the searches
    alone."""
    from schedc.decisions.kernel_graph import Buffer, KernelGraph, Node

    nodes, buffers, edges, tails = [Node(0, "flow.dispatch", "x", True, (0,), ())], [Buffer(0, 256, "t", "transient")], [], []
    for b in range(branches):
        previous = 0
        for d in range(depth):
            v = len(nodes)
            buffers.append(Buffer(v, 256, "t", "transient"))
            nodes.append(Node(v, "flow.dispatch", f"k{b}_{d}", True, (v,), (previous,)))
            edges.append((previous, v))
            previous = v
        tails.append(previous)
    join = len(nodes)
    buffers.append(Buffer(join, 0, "t", "result"))
    nodes.append(Node(join, "flow.dispatch", "join", True, (join,), tuple(tails)))
    edges += [(t, join) for t in tails]
    return KernelGraph("wide", tuple(nodes), tuple(buffers), frozenset(edges))


def deadline_overshoot(branches: int, depth: int, limit_s: float) -> None:
    """The safety net on its own: searches given work budgets far too large for `limit_s`, and
    how long they really took (the goal: within 10% of the limit)."""
    import random

    from schedc.decisions.arena_plan import Slice, plan_arena
    from schedc.decisions.memory_order import OrderLimits, best_order

    graph = wide_kernel_graph(branches, depth)
    started = time.perf_counter()
    decision = best_order(graph, "auto", OrderLimits(exact_limit=10**6, max_states=10**12, time_limit_s=limit_s))
    seconds = time.perf_counter() - started
    print(f"memory-order search, time limit {limit_s:g} s, unbounded work: {seconds:.2f} s "
          f"({seconds / limit_s - 1:+.1%}), fired: {decision.deadline_fired}, kept '{decision.strategy}'")
    rng = random.Random(0)
    slices = []
    for _ in range(400):
        start = rng.randint(0, 400)
        slices.append(Slice(start, start + rng.randint(0, 40), rng.choice([4096, 16384, 65536, 262144, 1 << 20]) + 64 * rng.randint(0, 3)))
    started = time.perf_counter()
    report = plan_arena(slices, 64, time_limit_s=limit_s, max_checks=10**15)
    seconds = time.perf_counter() - started
    print(f"arena-plan search (400 slices), time limit {limit_s:g} s, unbounded work: {seconds:.2f} s "
          f"({seconds / limit_s - 1:+.1%}), fired: {report.deadline_fired}, kept '{report.plan.method}'")


def timed_compile(source: Path, work: Path, name: str, schedc_passes: bool, report: bool = False):
    from schedc.options import CompileOptions
    from schedc.compiler.driver import compile_with_options
    from schedc.targets import resolve_target

    options = CompileOptions.for_target(resolve_target("llvm-cpu"), schedc_passes=schedc_passes, report=report)
    started = time.perf_counter()
    result = compile_with_options(source, options)
    seconds = time.perf_counter() - started
    (work / f"{name}.vmfb").write_bytes(result.output)
    return seconds, result


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--branches", type=int, default=700)
    parser.add_argument("--depth", type=int, default=4)
    parser.add_argument("--repeats", type=int, default=1, help="compiles of each kind (the median is printed)")
    parser.add_argument("--report", action="store_true", help="one more compile, with a report of IREE's transient bytes")
    parser.add_argument("--keep", help="write the input and both modules into this folder")
    parser.add_argument("--deadline", type=float, default=2.0, help="time limit for the safety-net check (seconds)")
    args = parser.parse_args()
    sys.path.insert(0, str(ROOT / "python"))

    work = Path(args.keep) if args.keep else Path(tempfile.mkdtemp(prefix="wide-graph-"))
    work.mkdir(parents=True, exist_ok=True)
    source = work / "wide.mlir"
    source.write_text(wide_graph_mlir(args.branches, args.depth))
    iree_times, schedc_times, result = [], [], None
    for _ in range(args.repeats):
        iree_times.append(timed_compile(source, work, "iree", schedc_passes=False)[0])
        seconds, result = timed_compile(source, work, "schedc", schedc_passes=True)
        schedc_times.append(seconds)
    iree_s, schedc_s = statistics.median(iree_times), statistics.median(schedc_times)

    order = result.records["memory-order"]["wide"]
    arenas = result.records.get("arena-plan", {}).get("wide", [])
    pass_s = order["pass_seconds"] + sum(a["plan_seconds"] for a in arenas)
    print(f"wide graph: {args.branches} branches x {args.depth} kernels; {order['kernels']} kernels in @wide")
    print(f"IREE alone                 {iree_s:8.1f} s  (to .vmfb, median of {args.repeats})")
    print(f"schedc's default pipeline  {schedc_s:8.1f} s  = {schedc_s / iree_s:.3f}x IREE alone "
          f"({(schedc_s - iree_s) / iree_s:+.1%}; goal: <= +25%)")
    print(f"  memory-order pass        {order['pass_seconds']:8.2f} s  strategy '{order['strategy']}', "
          f"searches {json.dumps(order['searches'])}, deadline fired: {order['deadline_fired']}")
    for a in arenas:
        print(f"  arena-plan region {a['region']:<6} {a['plan_seconds']:8.2f} s  {a['slices']} slices, method '{a['method']}', "
              f"deadline fired: {a['deadline_fired']}")
    print(f"  the passes' own time     {pass_s:8.2f} s  = {pass_s / iree_s:.1%} of IREE alone")
    verdict = "not worse" if order["peak_bytes"] <= order["program_peak_bytes"] else "WORSE"
    print(f"estimated peak: program order {order['program_peak_bytes']:,} B, schedc {order['peak_bytes']:,} B ({verdict})")
    deadline_overshoot(args.branches, args.depth, args.deadline)
    if args.report:
        _, reported = timed_compile(source, work, "report", schedc_passes=True, report=True)
        iree = reported.report["functions"]["wide"].get("iree_transient_bytes") or {}
        if iree:
            print(f"IREE transient bytes: without schedc {iree['without_schedc']:,} B, with schedc {iree['with_schedc']:,} B")
    print(f"files in {work}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
