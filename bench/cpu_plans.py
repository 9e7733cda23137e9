"""Two CPU plans of the same models, timed against each other: schedc's default pipeline ("after")
and another pipeline ("before", e.g. cpu-config on an older database or with another rule),
beside IREE alone, in one process per round whose calls alternate (`bench/cpu.py
--time-modules`), so a slow spell of this noisy machine falls on all three.

    python bench/cpu_plans.py --before "cpu-config{database=OLD.json im2col-min-gain=1},memory-order,arena-plan" \
        [--models demo,hf_resnet18,unet] [--calls 20] [--rounds 3]

`demo` is the bundled example (examples/models.py:staged_branches); the other names are
bench/models.py's and bench/heldout.py's. Per model: ms per call (medians of the rounds'
medians), after/before, each plan's mode and layouts, and each plan's transient bytes against
IREE alone's (`--summary`'s figures).
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import cpu as cpu_bench  # noqa: E402

DEFAULT_MODELS = "demo,hf_resnet18,squeezenet1_1,shufflenet_v2,hf_mobilenet_v2,convnext,vit,unet,inception,densenet,randwire,darts,mobilenet_v2,plain_cnn,resnet18"


def _model(name: str):
    if name == "demo":
        sys.path.insert(0, str(HERE.parent / "examples"))
        import models as examples

        return (*examples.staged_branches(), "example")
    factory, suite = cpu_bench._factory(name)
    return (*factory(), suite)


def _compile(text: str, keywords: dict) -> tuple[bytes, str, str]:
    """The module, its plan (mode and layouts) and its transient bytes (schedc's, IREE alone's: the
    report's, as `--summary` prints them)."""
    from schedc.compiler.driver import compile_with_options
    from schedc.options import CompileOptions

    result = compile_with_options(text, CompileOptions(target="llvm-cpu", summary=keywords.get("schedc_passes", True), **keywords))
    plan = result.records.get("cpu-config", {}).get("module", {})
    layouts = cpu_bench.plan_layouts(plan)
    described = f"{plan.get('mode')}; " + ", ".join(f"{k} {v}" for k, v in sorted(layouts.items())) if plan else "IREE's build"
    functions = (result.report or {}).get("functions", {}).values()
    bytes_ = [f["iree_transient_bytes"] for f in functions if "iree_transient_bytes" in f]
    transients = (f"{sum(b['with_schedc'] for b in bytes_):,} B (IREE alone {sum(b['without_schedc'] for b in bytes_):,})" if bytes_ else "-")
    return result.output, described, transients


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", required=True, help="the pipeline to time schedc's default against")
    parser.add_argument("--models", default=DEFAULT_MODELS)
    parser.add_argument("--calls", type=int, default=20)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    import numpy as np

    import schedc

    print(f"| model | suite | IREE alone ms | before ms | after ms | after/before | before's plan | after's plan | before's transients | after's transients |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    with tempfile.TemporaryDirectory(prefix="schedc-cpu-plans-") as folder:
        work = Path(folder)
        for name in args.models.split(","):
            model, inputs, suite = _model(name)
            np.savez(work / f"{name}.inputs.npz", **{f"arg{i}": a.numpy() for i, a in enumerate(inputs)})
            text = schedc.import_torch(model, *inputs)
            plans, transients = {}, {}
            for label, keywords in (("iree", {"schedc_passes": False}), ("before", {"passes": args.before}), ("after", {})):
                module, plans[label], transients[label] = _compile(text, keywords)
                (work / f"{name}.{label}.vmfb").write_bytes(module)
            times: dict[str, list[float]] = {"iree": [], "before": [], "after": []}
            for _ in range(args.rounds):
                done = subprocess.run([sys.executable, str(HERE / "cpu.py"), "--time-modules", *(str(work / f"{name}.{label}.vmfb") for label in times),
                                       str(work / f"{name}.inputs.npz"), str(args.calls)], capture_output=True, text=True)
                if done.returncode:
                    sys.exit(f"{name}: timing failed: {done.stderr.strip()[-500:]}")
                for label, ms in zip(times, json.loads(done.stdout.strip().splitlines()[-1])["ms"]):
                    times[label].append(ms)
            ms = {label: statistics.median(values) for label, values in times.items()}
            print(f"| {name} | {suite} | {ms['iree']:.2f} | {ms['before']:.2f} | {ms['after']:.2f} | {ms['after'] / ms['before']:.2f} | "
                  f"{plans['before']} | {plans['after']} | {transients['before']} | {transients['after']} |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
