"""memory-order on the benchmark suite: estimates, IREE's real transient allocation, pass time.

    python bench/memory_order.py [--models randwire,darts] [--synthetic 1000,10000]

Per model (imported from bench/models.py, compiled for the host CPU):
  kernels        dispatches and flow.tensor ops in the model's main function
  program est    schedc's estimate of the peak of live transient bytes in program order
  schedc est     the same for the order memory-order chose (and the strategy)
  optimum        the exact search's optimum, where it finished
  IREE LOAD      the most bytes alive at once in IREE's own pack of schedc's module (read after
                 IREE's schedule-allocation): it equals `schedc est` when the model is right
  IREE without / IREE with   IREE's transient allocation (stream.resource.alloca) without and
                 with schedc, and their ratio
  pass s         the memory-order pass's time on that function
Then the pass time on synthetic kernel graphs of the given sizes (random layered DAGs).
"""

from __future__ import annotations

import argparse
import importlib.util
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def bench_models():
    spec = importlib.util.spec_from_file_location("bench_models", ROOT / "bench" / "models.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def measure_model(name: str, factory, work: Path) -> dict:
    import schedc
    from schedc.driver import CompileOptions, compile_with_options
    from schedc.iree_tools import STREAM_UNTIL_ALLOCATION, run_iree_opt
    from schedc.stream_ir import packed_regions
    from schedc.targets import resolve_target

    model, args = factory()
    mlir = schedc.import_torch(model, *args)
    options = CompileOptions(resolve_target("llvm-cpu"), emit="flow", report=True, dump_phases=str(work / name))
    result = compile_with_options(mlir, options)
    (function, entry), = [(f, e) for f, e in result.report["functions"].items() if "memory-order" in e]
    order, iree = entry["memory-order"], entry["iree_transient_bytes"]
    allocated = work / f"{name}.allocation.mlir"
    run_iree_opt([str(work / name / "2-flow-schedc.mlir"), f"--pass-pipeline={STREAM_UNTIL_ALLOCATION}", "-o", str(allocated)], what="IREE's allocation")
    iree_load = max((r.load for r in packed_regions(allocated.read_text()) if r.function == function), default=0)
    return {
        "model": name,
        "kernels": order["kernels"],
        "program_est": order["program_peak_bytes"],
        "schedc_est": order["peak_bytes"],
        "strategy": order["strategy"],
        "optimum": order["optimum_bytes"],
        "iree_load": iree_load,
        "iree_without": iree["without_schedc"],
        "iree_with": iree["with_schedc"],
        "pass_s": order["pass_seconds"],
    }


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

    from schedc.irio import parse_module
    from schedc.passes import REGISTRY, PassContext
    from schedc.pipeline import parse_pipeline, run_pipeline

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
            "program_est": record["program_peak_bytes"], "schedc_est": record["peak_bytes"], "optimum": record["optimum_bytes"]}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--models", help="comma-separated names from bench/models.py (default: all)")
    parser.add_argument("--synthetic", default="1000,10000", help="sizes of synthetic graphs ('' for none)")
    parser.add_argument("--repeats", type=int, default=3, help="runs of the pass on each synthetic graph (median)")
    args = parser.parse_args()
    suite = bench_models().SUITE
    names = args.models.split(",") if args.models else list(suite)
    print(f"{'model':<12}{'kernels':>8}{'program est':>13}{'schedc est':>12}{'strategy':>10}{'optimum':>11}"
          f"{'IREE LOAD':>11}{'IREE without':>14}{'IREE with':>11}{'ratio':>7}{'pass s':>8}")
    with tempfile.TemporaryDirectory() as tmp:
        for name in names:
            r = measure_model(name, suite[name], Path(tmp))
            optimum = f"{r['optimum']:,}" if r["optimum"] is not None else "-"
            print(f"{r['model']:<12}{r['kernels']:>8}{r['program_est']:>13,}{r['schedc_est']:>12,}{r['strategy']:>10}{optimum:>11}"
                  f"{r['iree_load']:>11,}{r['iree_without']:>14,}{r['iree_with']:>11,}{r['iree_with'] / r['iree_without']:>7.3f}{r['pass_s']:>8.2f}",
                  flush=True)
    sizes = [int(s) for s in args.synthetic.split(",") if s]
    if sizes:
        print(f"\n{'synthetic kernels':<18}{'pass s (median)':>16}{'strategy':>10}{'program est':>13}{'schedc est':>12}{'optimum':>12}")
        for size in sizes:
            r = measure_synthetic(size, args.repeats)
            optimum = f"{r['optimum']:,}" if r["optimum"] is not None else "-"
            print(f"{r['kernels']:<18}{r['median_s']:>16.3f}{r['strategy']:>10}{r['program_est']:>13,}{r['schedc_est']:>12,}{optimum:>12}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
