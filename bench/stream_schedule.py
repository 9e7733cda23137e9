"""Concurrent kernels on a CUDA GPU: IREE's default module against schedc's stream schedules.

    python bench/stream_schedule.py prepare build/streams          # here: compile for cuda
    python bench/stream_schedule.py run build/streams streams      # GPU machine, one process
    python bench/stream_schedule.py run build/streams graphs       #   per execution mode
    python bench/stream_schedule.py table build/streams            # the table from both runs

Models (bench/models.py, batch 1): inception, randwire, transformer. Variants: IREE's default
module (no schedc pass), and schedc's memory-order + stream-schedule{mode=min-memory |
balanced | max-concurrency} + arena-plan, each compiled twice: for stream execution (command
buffers replayed on the device's one stream) and for graph execution (--execution=graphs:
a wave's kernels run as parallel graph branches). Latency: median of 200 calls after 20
warm-ups, each call copying the input in and the result out (host sync included). References
on the same GPU: torch eager and torch.compile(mode="reduce-overhead"). Transient bytes: what
each module allocates (stream.resource.alloca sizes, from its own compile).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from timing import load_model, median_ms, save_model  # noqa: E402

from schedc.options import Execution  # noqa: E402

REPEATS, WARMUP = 200, 20

MODELS = ("inception", "randwire", "transformer")
VARIANTS = {
    "iree-default": None,
    "schedc-min-memory": "memory-order,stream-schedule{mode=min-memory streams=8},arena-plan",
    "schedc-balanced": "memory-order,stream-schedule{mode=balanced streams=8},arena-plan",
    "schedc-max-concurrency": "memory-order,stream-schedule{mode=max-concurrency streams=8},arena-plan",
}
EXECUTIONS = Execution.names()  # the modes a module runs in (schedc.options.Execution)


def prepare(folder: Path) -> None:
    from schedc.options import CompileOptions
    from schedc.compiler.driver import compile_with_options
    from schedc.ir.iree import concurrent_groups, transient_allocations
    from schedc.ir.mlirio import read_module
    from schedc.targets import resolve_target

    folder.mkdir(parents=True, exist_ok=True)
    manifest = {}
    for name in MODELS:
        mlir = save_model(folder, name)
        for variant, pipeline in VARIANTS.items():
            for execution in EXECUTIONS:
                options = CompileOptions.for_target(
                    resolve_target("cuda"), passes=pipeline, schedc_passes=pipeline is not None,
                    execution=execution, dump_phases=str(folder / "phases" / f"{name}.{variant}.{execution}"),
                )
                result = compile_with_options(mlir, options)
                path = folder / f"{name}.{variant}.{execution}.vmfb"
                path.write_bytes(result.output)
                stream = read_module(folder / "phases" / f"{name}.{variant}.{execution}" / result.phases["stream"].name)
                schedule = result.records.get("stream-schedule", {}).get("forward$async", {})
                manifest[f"{name}.{variant}.{execution}"] = {
                    "model": name, "variant": variant, "execution": execution,
                    "transient_bytes": sum(s or 0 for s in transient_allocations(stream).get("forward$async", [])),
                    "concurrent_groups": concurrent_groups(stream).get("forward$async", []),
                    "estimated_makespan_us": schedule.get("estimated_makespan_us"),
                    "estimated_peak_bytes": schedule.get("estimated_peak_bytes"),
                }
                print(f"compiled {path.name}", file=sys.stderr, flush=True)
    (folder / "manifest.json").write_text(json.dumps(manifest, indent=1))


def run(folder: Path, execution: str) -> None:
    import torch

    import schedc

    torch.backends.cudnn.allow_tf32 = False
    torch.backends.cuda.matmul.allow_tf32 = False
    manifest = json.loads((folder / "manifest.json").read_text())
    rows = {}
    for name in MODELS:
        model, x = load_model(folder, name)
        x_gpu = torch.from_numpy(x).cuda()
        with torch.no_grad():
            expected = model(x_gpu).cpu().numpy()
            if execution == "streams":  # references, once
                def eager():
                    model(x_gpu).cpu()
                rows[f"{name}.torch-eager"] = {"ms": median_ms(eager, REPEATS, WARMUP)}
                compiled = torch.compile(model, mode="reduce-overhead")
                rows[f"{name}.torch-compile"] = {"ms": median_ms(lambda: compiled(x_gpu).cpu(), REPEATS, 30)}
        for variant in VARIANTS:
            key = f"{name}.{variant}.{execution}"
            module = schedc.load(folder / f"{key}.vmfb", device="cuda", execution=execution)
            actual = module.forward(x)
            error = float(np.abs(actual - expected).max() / max(np.abs(expected).max(), 1e-30))
            rows[key] = {"ms": median_ms(lambda: module.forward(x), REPEATS, WARMUP), "max_rel_error": error, **manifest[key]}
            print(f"{key}: {rows[key]['ms']:.3f} ms, error {error:.2e}", flush=True)
    (folder / f"results.{execution}.json").write_text(json.dumps(rows, indent=1))


def table(folder: Path) -> None:
    rows = {}
    for execution in EXECUTIONS:
        path = folder / f"results.{execution}.json"
        if path.exists():
            rows.update(json.loads(path.read_text()))
    print(f"{'model':<12}{'variant':<24}{'streams ms':>11}{'graphs ms':>11}{'transient B':>13}{'waves>1':>9}{'est us':>9}")
    for name in MODELS:
        for variant in VARIANTS:
            s, g = rows.get(f"{name}.{variant}.streams", {}), rows.get(f"{name}.{variant}.graphs", {})
            waves = sum(1 for w in g.get("concurrent_groups", []) if w > 1)
            est = g.get("estimated_makespan_us")
            print(f"{name:<12}{variant:<24}{s.get('ms', float('nan')):>11.3f}{g.get('ms', float('nan')):>11.3f}"
                  f"{g.get('transient_bytes', 0):>13,}{waves:>9}{est if est is not None else '-':>9}")
        for ref in ("torch-eager", "torch-compile"):
            print(f"{name:<12}{ref:<24}{rows.get(f'{name}.{ref}', {}).get('ms', float('nan')):>11.3f}")
        best = min((rows[k]["ms"], k) for k in rows if k.startswith(f"{name}.schedc-") and "ms" in rows[k])
        default = min(rows[f"{name}.iree-default.{e}"]["ms"] for e in EXECUTIONS if f"{name}.iree-default.{e}" in rows)
        for variant in ("schedc-balanced", "schedc-max-concurrency"):
            g, s = rows.get(f"{name}.{variant}.graphs"), rows.get(f"{name}.{variant}.streams")
            m = rows.get(f"{name}.schedc-min-memory.graphs")
            if g and s and m:
                print(f"  {variant}: graphs vs the same module serialized (streams) {s['ms'] / g['ms']:.2f}x; "
                      f"transient vs min-memory {g['transient_bytes'] / m['transient_bytes']:.2f}x")
        print(f"  best schedc {best[1]} {best[0]:.3f} ms vs IREE default (best mode) {default:.3f} ms: {default / best[0]:.2f}x")
    errors = [r["max_rel_error"] for r in rows.values() if "max_rel_error" in r]
    if errors:
        print(f"max relative error against torch eager, all modules: {max(errors):.2e}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("step", choices=("prepare", "run", "table"))
    parser.add_argument("folder", type=Path)
    parser.add_argument("execution", nargs="?", choices=EXECUTIONS, default="streams")
    args = parser.parse_args()
    if args.step == "prepare":
        prepare(args.folder)
    elif args.step == "run":
        run(args.folder, args.execution)
    else:
        table(args.folder)
    return 0


if __name__ == "__main__":
    sys.exit(main())
