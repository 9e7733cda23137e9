"""Speed on models nobody tuned for: the held-out suite (bench/heldout.py), f32 and f16.

    python bench/generalization.py coverage [--models a,b] [--dtypes f32,f16]
    python bench/generalization.py prepare DIR [--models a,b] [--dtypes f32,f16]   # here
    python bench/generalization.py run DIR [--repeats 200]                         # CUDA machine
    python bench/generalization.py dispatches TUNE_DIR   # after schedc tune prepare + bench

`coverage` compiles each model for cuda and prints, per model and dtype, the share of its
contraction work (the iterations of every matmul's and convolution's root op) whose config came
from the kernel database, from schedc's heuristic, and from IREE's default, and the number of
such dispatches. The held-out models' kernels are never in the database, so its column should
read 0%.

`prepare` writes, per model and dtype, the weights and the example input, and three CUDA
modules: `iree` (IREE's own kernel configs, replayed), `schedc-streams`
and `schedc-graphs` (schedc's default pipeline and kernel configs, stream execution and
replay). `run`, on a machine with a CUDA GPU and iree-base-runtime (no compiler), rebuilds each
model from bench/heldout.py with the saved weights, and times at batch 1, in one process per
execution mode (IREE reads the CUDA mode once per process): torch eager,
torch.compile (Inductor, default and mode="reduce-overhead"), and the three modules; each
median of `--repeats` calls, with the host synchronised, and each module's output checked
against eager on the same GPU. It prints a table and writes DIR/results.json.

`dispatches` reads a folder that `schedc tune prepare` (here, on held-out models) and
`schedc tune bench` (on the GPU) filled, and prints per dispatch the measured time of IREE's
own config, of the heuristic's choice and of the fastest candidate whose outputs matched, with
the heuristic's ratio to the fastest; then the share of dispatches within 1.25x of it. Tuning
results of held-out models are for this comparison only: they never go into the built-in
database (`schedc tune merge` is not run on them).
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent
sys.path.insert(0, str(ROOT))

TILED = ("matmul", "batch_matmul", "matmul_like", "conv", "depthwise_conv")
VARIANTS = {  # module name -> (schedc.compile keywords, execution at run time)
    "iree": ({"tuning": False, "execution": "graphs"}, "graphs"),
    "schedc-streams": ({"execution": "streams"}, "streams"),
    "schedc-graphs": ({"execution": "graphs"}, "graphs"),
}


def heldout():
    import heldout as models  # noqa: E402  (bench/heldout.py)

    return models.HELDOUT


def _selected(names: str | None, dtypes: str) -> list[tuple[str, str]]:
    chosen = names.split(",") if names else list(heldout())
    return [(name, dtype) for name in chosen for dtype in dtypes.split(",")]


def import_model(name: str, dtype: str):
    import schedc
    from schedc.torch.importer import convert_precision

    model, args = heldout()[name]()
    if dtype != "f32":
        model, args = convert_precision(model, args, dtype)
    return model, args, schedc.import_torch(model, *args)


def coverage_row(records: dict) -> dict:
    kernels = [k for k in records["kernel-config"]["module"]["kernels"] if k["kind"] in TILED]
    total = sum(k["work"] for k in kernels) or 1
    shares = {source: sum(k["work"] for k in kernels if k["source"] == source) / total for source in ("database", "heuristic", "iree")}
    return {"dispatches": len(kernels), **shares, "iree_dispatches": [k["dispatch"] for k in kernels if k["source"] == "iree"]}


def coverage(args) -> None:
    from schedc.compiler.driver import compile_with_options
    from schedc.options import CompileOptions

    print(f"{'model':<16} {'dtype':<5} {'dispatches':>10} {'database':>9} {'heuristic':>10} {'IREE':>7}")
    for name, dtype in _selected(args.models, args.dtypes):
        _, _, mlir = import_model(name, dtype)
        result = compile_with_options(mlir, CompileOptions(target="cuda", emit="flow"))
        row = coverage_row(result.records)
        print(f"{name:<16} {dtype:<5} {row['dispatches']:>10} {row['database']:>9.1%} {row['heuristic']:>10.1%} {row['iree']:>7.1%}")
        for dispatch in row["iree_dispatches"]:
            print(f"    IREE's default: {dispatch}")


def prepare(args) -> None:
    import numpy as np
    import torch

    import schedc

    folder = Path(args.folder)
    folder.mkdir(parents=True, exist_ok=True)
    manifest = []
    for name, dtype in _selected(args.models, args.dtypes):
        model, inputs, mlir = import_model(name, dtype)
        stem = f"{name}.{dtype}"
        torch.save(model.state_dict(), folder / f"{stem}.pt")
        np.save(folder / f"{stem}.input.npy", inputs[0].float().numpy() if inputs[0].is_floating_point() else inputs[0].numpy())
        for variant, (keywords, _) in VARIANTS.items():
            started = time.perf_counter()
            schedc.compile(mlir, target="cuda", output=str(folder / f"{stem}.{variant}.vmfb"), **keywords)
            print(f"{stem}.{variant}: compiled in {time.perf_counter() - started:.1f} s", flush=True)
        manifest.append({"model": name, "dtype": dtype})
    (folder / "manifest.json").write_text(json.dumps(manifest, indent=1) + "\n")


def _median_ms(call, repeats: int) -> float:
    """bench/timing.py's median, of a call that ends with the GPU synchronised."""
    import torch

    from timing import median_ms

    def synchronised():
        call()
        torch.cuda.synchronize()

    return median_ms(synchronised, repeats)


def _load(folder: Path, name: str, dtype: str):
    import numpy as np
    import torch

    model, _ = heldout()[name]()
    torch_dtype = {"f32": torch.float32, "f16": torch.float16, "bf16": torch.bfloat16}[dtype]
    if dtype != "f32":
        model = model.to(torch_dtype)
    model.load_state_dict(torch.load(folder / f"{name}.{dtype}.pt"))
    array = np.load(folder / f"{name}.{dtype}.input.npy")
    x = torch.from_numpy(array).cuda()
    if x.is_floating_point():
        x = x.to(torch_dtype)
    return model.cuda().eval(), x


def _error(result, reference) -> float:
    result, reference = result.float(), reference.float()
    return float((result - reference).abs().max() / max(reference.abs().max(), 1e-6))


def run_one(folder: Path, name: str, dtype: str, execution: str, repeats: int) -> dict:
    """In a fresh process: torch's references (streams process) and the modules of `execution`."""
    import torch

    import schedc

    model, x = _load(folder, name, dtype)
    rows = {}
    with torch.no_grad():
        reference = model(x)
        if execution == "streams":
            rows["eager"] = {"ms": _median_ms(lambda: model(x), repeats)}
            for mode in ("default", "reduce-overhead"):
                torch._dynamo.reset()
                compiled = torch.compile(model, mode=None if mode == "default" else mode)
                try:
                    compiled(x)
                    rows[f"inductor-{mode}"] = {"ms": _median_ms(lambda: compiled(x), repeats), "error": _error(compiled(x), reference)}
                except Exception as e:  # a reference that fails is reported, not fatal
                    rows[f"inductor-{mode}"] = {"failed": str(e).splitlines()[0][:200]}
        for variant, (_, mode) in VARIANTS.items():
            if mode != execution:
                continue
            module = schedc.load(str(folder / f"{name}.{dtype}.{variant}.vmfb"), device="cuda", execution=mode)
            output = module.forward(x, copy=True)
            rows[variant] = {"ms": _median_ms(lambda: module.forward(x), repeats), "error": _error(output, reference)}
    return rows


def run(args) -> None:
    folder = Path(args.folder)
    manifest = json.loads((folder / "manifest.json").read_text())
    results = {}
    for entry in manifest:
        name, dtype = entry["model"], entry["dtype"]
        rows = {}
        for execution in ("streams", "graphs"):
            command = [sys.executable, __file__, "one", str(folder), name, dtype, execution, str(args.repeats)]
            done = subprocess.run(command, capture_output=True, text=True)
            if done.returncode:
                rows[f"{execution}-process"] = {"failed": (done.stderr.strip().splitlines() or ["?"])[-1][:300]}
                continue
            rows.update(json.loads(done.stdout.strip().splitlines()[-1]))
        results[f"{name}.{dtype}"] = rows
        print(_table_row(f"{name}.{dtype}", rows), flush=True)
    (folder / "results.json").write_text(json.dumps(results, indent=1) + "\n")
    print(f"wrote {folder / 'results.json'}")


COLUMNS = ("eager", "inductor-default", "inductor-reduce-overhead", "iree", "schedc-streams", "schedc-graphs")


def _table_row(label: str, rows: dict) -> str:
    cells = []
    for column in COLUMNS:
        row = rows.get(column, {})
        cells.append(f"{row['ms']:.3f}" if "ms" in row else "failed" if "failed" in row else "-")
    ro = rows.get("inductor-reduce-overhead", {}).get("ms")
    graphs = rows.get("schedc-graphs", {}).get("ms")
    ratio = f"{graphs / ro:.2f}x" if ro and graphs else "-"
    errors = max((r.get("error", 0.0) for r in rows.values()), default=0.0)
    return f"{label:<22} " + " ".join(f"{c:>10}" for c in cells) + f" {ratio:>8} {errors:>9.1e}"


def dispatches(args) -> None:
    from schedc.decisions.kernel_config import KernelSignature
    from schedc.tune.prepare import matched_candidates

    folder = Path(args.folder)
    manifest = json.loads((folder / "manifest.json").read_text())
    results = json.loads((folder / "results.json").read_text())["kernels"]
    print(f"{'dispatch':<62} {'IREE us':>9} {'heur. us':>9} {'best us':>9} {'heur/best':>9}")
    ratios = []
    for kernel in manifest["kernels"]:
        sig = KernelSignature.from_json(kernel["signature"])
        times = {function: time_us for function, _, time_us in matched_candidates(kernel, results.get(kernel["name"], []))}
        if "c0" not in times:
            continue
        # prepare measures IREE's own config (c0), then the heuristic's (c1), then candidates.
        heuristic = times.get("c1") if len(kernel["configs"]) > 1 else None
        best = min(times.values())
        ratio = heuristic / best if heuristic else None
        if ratio is not None:
            ratios.append(ratio)
        name = sig.name.split("_dispatch_")[-1][:60]
        print(f"{name:<62} {times['c0']:>9.2f} {heuristic or 0:>9.2f} {best:>9.2f} {ratio or 0:>9.2f}")
    if ratios:
        within = sum(r <= 1.25 for r in ratios) / len(ratios)
        print(f"the heuristic's choice within 1.25x of the fastest measured candidate: {within:.0%} of {len(ratios)} dispatches "
              f"(median ratio {statistics.median(ratios):.2f})")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    for command in ("coverage", "prepare"):
        p = sub.add_parser(command)
        if command == "prepare":
            p.add_argument("folder")
        p.add_argument("--models", help="comma-separated, from bench/heldout.py (default: all)")
        p.add_argument("--dtypes", default="f32,f16")
    r = sub.add_parser("run")
    r.add_argument("folder")
    r.add_argument("--repeats", type=int, default=200)
    d = sub.add_parser("dispatches")
    d.add_argument("folder")
    one = sub.add_parser("one")  # one process of `run`
    for name in ("folder", "name", "dtype", "execution"):
        one.add_argument(name)
    one.add_argument("repeats", type=int)
    args = parser.parse_args()
    if args.command == "coverage":
        coverage(args)
    elif args.command == "prepare":
        prepare(args)
    elif args.command == "dispatches":
        dispatches(args)
    elif args.command == "run":
        print(f"{'model':<22} " + " ".join(f"{c[:10]:>10}" for c in COLUMNS) + f" {'graphs/RO':>8} {'max error':>9}")
        run(args)
    else:
        print(json.dumps(run_one(Path(args.folder), args.name, args.dtype, args.execution, args.repeats)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
