"""What the report costs on the benchmark models, against the compile itself.

    python bench/report.py [--models densenet,randwire] [--repeats 3]

Every model (bench/models.py) is imported, then compiled for the host CPU to a module with
schedc's default pipeline and the report (the median of `--repeats` compiles). Columns:
  compile s      the compile with the JSON report, less the report's own phases (median)
  baseline s     the report's own phases: IREE's stream phase once more, without schedc (its
                 two iree-opt halves), and reading both stream phases (from the phase timer)
  records s      building the records the pictures need (live bytes in both orders, the
                 kernel graph) on the model's kernel graphs, as memory-order does
  html s         rendering the HTML page from the JSON report
  html %         (records + html) / compile: what the HTML report adds to a compile that
                 writes the JSON report
  report %       (baseline + records + html) / compile: the whole report, HTML included
  KiB            the page's size
The shares come from phases timed inside one compile, so they hold on a busy machine where
two whole compiles differ by more than the report costs.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))
from timing import bench_models  # noqa: E402


def records_seconds(flow_path: Path, repeats: int) -> float:
    """Median time to build memory-order's report records on the model's kernel graphs."""
    from schedc.ir.extract import build_kernel_graph
    from schedc.ir.iree import function_ops
    from schedc.ir.mlirio import read_module
    from schedc.decisions.memory_order import best_order
    from schedc.decisions.kernel_graph import kernel_graph_record, live_timeline

    module = read_module(flow_path)
    graphs = [g for g in (build_kernel_graph(f) for f in function_ops(module)) if g.kernels]
    orders = [best_order(g).order for g in graphs]
    times = []
    for _ in range(repeats):
        started = time.perf_counter()
        for graph, order in zip(graphs, orders):
            live_timeline(graph, graph.program_order())
            live_timeline(graph, order)
            kernel_graph_record(graph, order)
        times.append(time.perf_counter() - started)
    return statistics.median(times)


def measure(name: str, factory, repeats: int, work: Path) -> dict:
    import schedc
    from schedc.options import CompileOptions
    from schedc.compiler.driver import compile_with_options
    from schedc.report.html import render_html
    from schedc.targets import resolve_target

    model, args = factory()
    mlir = schedc.import_torch(model, *args)
    target = resolve_target("llvm-cpu")
    compiles, baseline = [], []
    report = None
    for _ in range(repeats):
        result = compile_with_options(mlir, CompileOptions.for_target(target, report=True, dump_phases=str(work / name)))
        phases = [e for e in result.timer.entries if e.depth == 0]
        baseline.append(sum(e.seconds for e in phases if e.name.startswith("report:")))
        compiles.append(sum(e.seconds for e in phases) - baseline[-1])
        report = result.report
        flow = work / name / result.phases["flow"].name  # the dumped flow phase
    records = records_seconds(flow, repeats)
    renders, page = [], ""
    for _ in range(repeats):
        started = time.perf_counter()
        page = render_html(report)
        renders.append(time.perf_counter() - started)
    return {
        "model": name,
        "compile_s": statistics.median(compiles),
        "baseline_s": statistics.median(baseline),
        "records_s": records,
        "html_s": statistics.median(renders),
        "kib": len(page.encode()) / 1024,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--models", help="comma-separated names from bench/models.py (default: all)")
    parser.add_argument("--repeats", type=int, default=3, help="compiles of each kind per model (median)")
    args = parser.parse_args()
    suite = bench_models().SUITE
    names = args.models.split(",") if args.models else list(suite)
    print(f"{'model':<13}{'compile s':>10}{'baseline s':>11}{'records s':>10}{'html s':>8}{'html %':>8}{'report %':>9}{'KiB':>7}")
    with tempfile.TemporaryDirectory() as tmp:
        for name in names:
            r = measure(name, suite[name], args.repeats, Path(tmp))
            html_share = 100 * (r["records_s"] + r["html_s"]) / r["compile_s"]
            report_share = 100 * (r["baseline_s"] + r["records_s"] + r["html_s"]) / r["compile_s"]
            print(f"{r['model']:<13}{r['compile_s']:>10.2f}{r['baseline_s']:>11.2f}{r['records_s']:>10.3f}"
                  f"{r['html_s']:>8.3f}{html_share:>7.2f}%{report_share:>8.1f}%{r['kib']:>7.0f}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
