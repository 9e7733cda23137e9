"""schedc's memory passes on the benchmark suite, measured against IREE's real allocation.

    python bench/memory.py [--models randwire,darts] [--synthetic 1000,10000] [--slices 1000]

Every model (bench/models.py) is imported and compiled for the host CPU three times: with
memory-order alone, with schedc's default pipeline (memory-order, arena-plan), and with no
schedc pass at all (IREE alone).

Table 1, memory-order:
  kernels        dispatches and flow.tensor ops in the model's main function
  program est    schedc's estimate of the peak of live transient bytes in program order
  schedc est     the same for the order memory-order chose (and the strategy)
  optimum        the exact search's optimum, where it finished (or where the lower bound
                 proves a heuristic's order optimal)
  bound, gap     the proven lower bound on any order's peak (the optimum where known), and
                 schedc est / bound - 1: how far from the optimum the order may be
  IREE LOAD      the most bytes alive at once in IREE's own pack of schedc's module (read after
                 IREE's schedule-allocation): it equals `schedc est` when the model is right
  IREE / +order  IREE's transient allocation alone (on the model as imported) and with
                 memory-order (and split-concat and cpu-config, which every llvm-cpu compile
                 runs), their ratio
  pass s         the memory-order pass's time on that function
Table 2, arena-plan (after memory-order), per model's main function:
  LOAD           the most bytes alive at once in its execution regions (the lower bound)
  IREE packs     IREE's own packing of the same slices; schedc: schedc's arena (the method)
  module         the transient bytes the compiled module allocates (from the emitted stream IR)
  IREE alone     IREE's transient allocation without any schedc pass, and schedc's ratio to it
  plan s         the planner's time
Then the memory-order pass on synthetic kernel graphs and the planner on synthetic slice sets.
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))
from timing import bench_models  # noqa: E402


def iree_alone_bytes(text) -> dict[str, int]:
    """Each function's transient bytes with IREE alone on the model as imported (no schedc pass
    at all): the reports' "IREE alone" starts after the input phase's passes (split-concat,
    cpu-config), which change the tensors IREE allocates."""
    from schedc.options import CompileOptions
    from schedc.compiler.driver import compile_with_options
    from schedc.targets import resolve_target

    result = compile_with_options(text, CompileOptions.for_target(resolve_target("llvm-cpu"), schedc_passes=False, emit="stream", report=True))
    return {name: e["iree_transient_bytes"]["with_schedc"] for name, e in result.report["functions"].items()}


def measure_model(name: str, factory, work: Path) -> dict:
    import schedc
    from schedc.options import CompileOptions
    from schedc.compiler.driver import compile_with_options
    from schedc.ir.iree import packs, user_function_name
    from schedc.compiler.iree_tools import run_iree_tool
    from schedc.ir.mlirio import read_module
    from schedc.compiler.phases import pipeline_until
    from schedc.targets import resolve_target

    model, args = factory()
    mlir = schedc.import_torch(model, *args)
    target = resolve_target("llvm-cpu")
    ordered = compile_with_options(mlir, CompileOptions.for_target(target, passes="memory-order", emit="flow", report=True, dump_phases=str(work / name)))
    full = compile_with_options(mlir, CompileOptions.for_target(target, emit="stream", report=True))
    (function, entry), = [(f, e) for f, e in ordered.report["functions"].items() if "memory-order" in e]
    order, iree = entry["memory-order"], entry["iree_transient_bytes"]
    allocated = work / f"{name}.allocation.mlir"
    (scheduled,) = (work / name).glob("*-flow-schedc.mlir")
    run_iree_tool("iree-opt", [str(scheduled), f"--pass-pipeline={pipeline_until('stream')}", "-o", str(allocated)], what="IREE's allocation")
    iree_load = max((p.load for p in packs(read_module(allocated)) if user_function_name(p.function) == function), default=0)
    arenas = full.report["functions"][function].get("arena-plan", [])
    module_bytes = full.report["functions"][function]["iree_transient_bytes"]["with_schedc"]
    iree_alone = iree_alone_bytes(mlir)[function]
    return {
        "model": name,
        "kernels": order["kernels"],
        "program_est": order["program_peak_bytes"],
        "schedc_est": order["peak_bytes"],
        "strategy": order["strategy"],
        "optimum": order["optimum_bytes"],
        "bound": order["lower_bound_bytes"],
        "iree_load": iree_load,
        "iree_without": iree_alone,
        "iree_with_order": iree["with_schedc"],
        "pass_s": order["pass_seconds"],
        "load": sum(a["load_bytes"] for a in arenas),
        "iree_packed": sum(a["iree_bytes"] for a in arenas),
        "schedc_arena": sum(a["schedc_bytes"] for a in arenas),
        "arena_method": "+".join(sorted({a["method"] for a in arenas})) or "-",
        "module_bytes": module_bytes,
        "plan_s": sum(a["plan_seconds"] for a in arenas),
    }


def synthetic_slices(count: int, seed: int = 0):
    """`count` transient slices with random lifetimes (up to 40 steps) and sizes (4 KiB - 1 MiB)."""
    from schedc.decisions.arena_plan import Slice

    rng = random.Random(seed)
    slices = []
    for _ in range(count):
        start = rng.randint(0, count)
        slices.append(Slice(start, start + rng.randint(0, 40), rng.choice([4096, 16384, 65536, 262144, 1 << 20]) + 64 * rng.randint(0, 3)))
    return slices


def measure_planner(count: int, repeats: int) -> dict:
    from schedc.decisions.arena_plan import plan_arena

    slices = synthetic_slices(count)
    times, report = [], None
    for _ in range(repeats):
        started = time.perf_counter()
        report = plan_arena(slices, 64)
        times.append(time.perf_counter() - started)
    return {"slices": count, "median_s": statistics.median(times), "load": report.load, "iree": report.iree_size,
            "schedc": report.plan.size, "method": report.plan.method}


def synthetic_flow_ir(kernels: int, seed: int = 0, width: int = 16) -> str:
    """A function of `kernels` dispatches wired as a random layered DAG: each kernel reads one
    to three tensors of the last few layers; sizes vary from 4 KiB to 1 MiB."""
    rng = random.Random(seed)
    lines = ["util.func public @synthetic(%arg0: tensor<1024xf32>) -> tensor<1024xf32> {"]
    produced = ["%arg0"]
    types = {"%arg0": "tensor<1024xf32>"}
    for k in range(kernels):
        window = produced[-width:]
        operands = rng.sample(window, min(len(window), rng.randint(1, 3)))
        elements = rng.choice([1024, 4096, 16384, 65536, 262144])
        name, result_type = f"%v{k}", f"tensor<{elements}xf32>"
        operand_types = ", ".join(types[o] for o in operands)
        lines.append(f"  {name} = flow.dispatch @ex::@k{k}({', '.join(operands)}) : ({operand_types}) -> {result_type}")
        produced.append(name)
        types[name] = result_type
    last = produced[-1]
    lines.append(f"  %out = flow.dispatch @ex::@sink({last}) : ({types[last]}) -> tensor<1024xf32>")
    lines.append("  util.return %out : tensor<1024xf32>")
    lines.append("}")
    return "\n".join(lines) + "\n"


def measure_synthetic(kernels: int, repeats: int) -> dict:
    from iree.compiler import ir

    from schedc.ir.mlirio import parse_module
    from schedc.passes import REGISTRY, PassContext
    from schedc.compiler.pipeline import parse_pipeline, run_pipeline

    text = synthetic_flow_ir(kernels)
    times, record = [], None
    for _ in range(repeats):
        module = parse_module(text, f"synthetic-{kernels}.mlir", ir.Context())
        context = PassContext()
        started = time.perf_counter()
        run_pipeline(module, parse_pipeline("memory-order", REGISTRY), REGISTRY, context)
        times.append(time.perf_counter() - started)
        record = context.records["memory-order"]["synthetic"]
    return {"kernels": kernels, "median_s": statistics.median(times), "strategy": record["strategy"],
            "program_est": record["program_peak_bytes"], "schedc_est": record["peak_bytes"], "optimum": record["optimum_bytes"],
            "bound": record["lower_bound_bytes"]}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--models", help="comma-separated names from bench/models.py (default: all)")
    parser.add_argument("--synthetic", default="1000,10000", help="kernel counts of synthetic graphs ('' for none)")
    parser.add_argument("--slices", default="1000", help="slice counts of synthetic arenas ('' for none)")
    parser.add_argument("--repeats", type=int, default=3, help="runs of each synthetic measurement (median)")
    args = parser.parse_args()
    suite = bench_models().SUITE
    names = args.models.split(",") if args.models else list(suite)
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for name in names:
            rows.append(measure_model(name, suite[name], Path(tmp)))
            print(f"measured {name}", file=sys.stderr, flush=True)
    print("memory-order (host CPU; bytes)")
    print(f"{'model':<13}{'kernels':>8}{'program est':>13}{'schedc est':>12}{'strategy':>10}{'optimum':>11}{'bound':>11}{'gap':>7}"
          f"{'IREE LOAD':>11}{'IREE':>11}{'+order':>11}{'ratio':>7}{'pass s':>8}")
    for r in rows:
        optimum = f"{r['optimum']:,}" if r["optimum"] is not None else "-"
        gap = r["schedc_est"] / r["bound"] - 1 if r["bound"] else 0.0
        print(f"{r['model']:<13}{r['kernels']:>8}{r['program_est']:>13,}{r['schedc_est']:>12,}{r['strategy']:>10}{optimum:>11}{r['bound']:>11,}{gap:>7.1%}"
              f"{r['iree_load']:>11,}{r['iree_without']:>11,}{r['iree_with_order']:>11,}{r['iree_with_order'] / r['iree_without']:>7.3f}{r['pass_s']:>8.2f}")
    print("\narena-plan after memory-order (host CPU; bytes)")
    print(f"{'model':<13}{'LOAD':>11}{'IREE packs':>12}{'/LOAD':>7}{'schedc':>11}{'/LOAD':>7}{'method':>10}{'module':>11}"
          f"{'IREE alone':>12}{'schedc/IREE':>13}{'plan s':>8}")
    for r in rows:
        load = r["load"] or 1
        print(f"{r['model']:<13}{r['load']:>11,}{r['iree_packed']:>12,}{r['iree_packed'] / load:>7.3f}{r['schedc_arena']:>11,}{r['schedc_arena'] / load:>7.3f}"
              f"{r['arena_method']:>10}{r['module_bytes']:>11,}{r['iree_without']:>12,}{r['module_bytes'] / r['iree_without']:>13.3f}{r['plan_s']:>8.3f}")
    sizes = [int(s) for s in args.synthetic.split(",") if s]
    if sizes:
        print(f"\n{'synthetic kernels':<18}{'pass s (median)':>16}{'strategy':>10}{'program est':>13}{'schedc est':>12}{'optimum':>12}{'bound':>12}")
        for size in sizes:
            r = measure_synthetic(size, args.repeats)
            optimum = f"{r['optimum']:,}" if r["optimum"] is not None else "-"
            print(f"{r['kernels']:<18}{r['median_s']:>16.3f}{r['strategy']:>10}{r['program_est']:>13,}{r['schedc_est']:>12,}{optimum:>12}{r['bound']:>12,}", flush=True)
    counts = [int(s) for s in args.slices.split(",") if s]
    if counts:
        print(f"\n{'synthetic slices':<18}{'plan s (median)':>16}{'LOAD':>14}{'IREE packs':>14}{'schedc':>14}{'method':>10}")
        for count in counts:
            r = measure_planner(count, args.repeats)
            print(f"{r['slices']:<18}{r['median_s']:>16.3f}{r['load']:>14,}{r['iree']:>14,}{r['schedc']:>14,}{r['method']:>10}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
