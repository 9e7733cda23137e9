"""Row reductions on the GPU: softmaxes and layer norms whose rows no lane step divides, with
IREE's own config (one thread per row) and reduction-config's (a subgroup per row).

    python bench/rows.py prepare DIR     # here: each shape with IREE's config, the chosen one, and every forced one
    python bench/rows.py run DIR         # on the GPU machine, under Nsight Compute
    python bench/rows.py table DIR       # the table again

The shapes are synthetic: none is a held-out model's (bench/heldout.py: ViT's softmax over 197
keys is judged in bench/generalization.py). `prepare` compiles each shape in f16 and f32 with
IREE's config (`tuning=False`), with schedc's (the config reduction-config chooses), and with
every forced lane tile (2, 4, 8 elements) and subgroup count (1, 2, 4). `run` rebuilds the same
layers, checks each module's output against torch's on the GPU, and times each once under ncu
(`--clock-control none`, gpu__time_duration, the sum of a run's kernels; a `torch.cuda._sleep`
marker before each) beside torch's own kernel.
"""

from __future__ import annotations

import argparse
import itertools
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from layers import measured_under_ncu, module_calls, reinit, seed_of  # noqa: E402

# (op, shape): a softmax over the last dimension, or a layer norm over it
SHAPES = [
    ("softmax", (3, 145, 145)), ("softmax", (4, 50, 50)), ("softmax", (12, 77, 77)), ("softmax", (8, 300, 300)),
    ("softmax", (2, 577, 577)), ("softmax", (16, 1000)), ("softmax", (4, 5003)),
    ("layernorm", (145, 390)), ("layernorm", (77, 1000)), ("layernorm", (300, 100)),
]
DTYPES = ("f16", "f32")
FORCED = [(thread, subgroups) for thread in (2, 4, 8) for subgroups in (1, 2, 4)]


def _name(op: str, shape, dtype: str) -> str:
    return f"{op}.{'x'.join(map(str, shape))}.{dtype}"


def _layer(op: str, shape, dtype: str):
    import torch

    layer = torch.nn.Softmax(dim=-1) if op == "softmax" else torch.nn.LayerNorm(shape[-1])
    reinit(layer, seed_of(_name(op, shape, dtype)))
    generator = torch.Generator().manual_seed(seed_of(_name(op, shape, dtype) + ".x"))
    x = 3 * torch.randn(*shape, generator=generator)
    dt = {"f16": torch.float16, "f32": torch.float32}[dtype]
    return layer.to(dt).eval(), x.to(dt)


def _variants() -> dict[str, dict]:
    """Module name -> schedc.compile keywords (prepare's alone: the GPU machine, which has no
    compiler, reads the names from rows.json)."""
    from schedc.passes import DEFAULT_PIPELINE

    forced = {f"t{t}s{s}": {"passes": f"reduction-config{{thread={t} subgroups={s}}},{DEFAULT_PIPELINE}"} for t, s in FORCED}
    chosen = {"passes": f"reduction-config,{DEFAULT_PIPELINE}"}
    return {"iree": {"tuning": False}, "schedc": chosen, **forced}


def prepare(args) -> None:
    import schedc
    from schedc.compiler.driver import compile_with_options
    from schedc.options import CompileOptions

    folder = Path(args.folder)
    (folder / "modules").mkdir(parents=True, exist_ok=True)
    manifest = []
    for (op, shape), dtype in itertools.product(SHAPES, DTYPES):
        name = _name(op, shape, dtype)
        layer, x = _layer(op, shape, dtype)
        archive = folder / "modules" / f"{name}.irpa"  # written by the import, not kept: run writes its own
        mlir = schedc.import_torch(layer, x, params=str(archive))
        archive.unlink(missing_ok=True)
        for variant, keywords in _variants().items():
            if variant != "schedc":
                schedc.compile(mlir, target="cuda", output=str(folder / "modules" / f"{name}.{variant}.vmfb"), **keywords)
        result = compile_with_options(mlir, CompileOptions(target="cuda", **_variants()["schedc"]))  # and what reduction-config chose
        (folder / "modules" / f"{name}.schedc.vmfb").write_bytes(result.output)
        configured = result.records.get("reduction-config", {}).get("module", {}).get("configured", [])
        chosen = configured[0]["config"] if configured else "IREE's own"
        manifest.append({"name": name, "op": op, "shape": list(shape), "dtype": dtype, "chosen": chosen, "variants": list(_variants())})
        print(f"{name}: {chosen}", flush=True)
    (folder / "rows.json").write_text(json.dumps(manifest, indent=1) + "\n")


def measure(args) -> None:
    """On the GPU, under ncu: numerics, then one profiled run of each module and of torch."""
    import torch

    from schedc.torch.parameters import save_params

    folder = Path(args.folder)
    manifest = json.loads((folder / "rows.json").read_text())
    runs, errors = [], {}
    with torch.no_grad():
        for entry in manifest:
            layer, x = _layer(entry["op"], tuple(entry["shape"]), entry["dtype"])
            archive = folder / "modules" / f"{entry['name']}.irpa" if next(layer.parameters(), None) is not None else None
            if archive is not None:  # a softmax has no weights, and a module without parameters refuses an archive
                save_params(layer, str(archive))
            modules = {variant: folder / "modules" / f"{entry['name']}.{variant}.vmfb" for variant in entry["variants"]}
            calls, errors[entry["name"]] = module_calls(layer.cuda(), x.cuda(), archive, modules)
            runs.append((entry["name"], calls))
        order = []
        for name, calls in runs:
            for label, call in calls.items():
                torch.cuda._sleep(1000)
                call()
                torch.cuda.synchronize()
                order.append([name, label])
    (folder / "rows.numerics.json").write_text(json.dumps({"order": order, "errors": errors}, indent=1))


def run(args) -> None:
    folder = Path(args.folder)
    measured, found = measured_under_ncu(__file__, folder, "rows")
    if len(found) != len(measured["order"]):
        sys.exit(f"ncu listed {len(found)} runs between markers, measure made {len(measured['order'])}: see {folder / 'rows.ncu.csv'}")
    times: dict[str, dict[str, float]] = {}
    for (name, label), kernels in zip(measured["order"], found):
        times.setdefault(name, {})[label] = round(sum(us for _, us in kernels), 2)
    results = {name: {"us": times[name], "errors": measured["errors"][name]} for name in times}
    (folder / "rows.results.json").write_text(json.dumps(results, indent=1) + "\n")
    table(folder, results)


def table(folder: Path, results: dict | None = None) -> None:
    results = results or json.loads((folder / "rows.results.json").read_text())
    manifest = json.loads((folder / "rows.json").read_text())
    forced = [f"t{t}s{s}" for t, s in FORCED]
    print("| layer | torch us | IREE us | schedc us | schedc's config | fastest forced | us | schedc/torch | max error |")
    print("|---|---|---|---|---|---|---|---|---|")
    for entry in manifest:
        r = results[entry["name"]]
        us = r["us"]
        best = min(forced, key=lambda v: us[v])
        print(f"| {entry['name']} | {us['torch']:.1f} | {us['iree']:.1f} | {us['schedc']:.1f} | {entry['chosen']} | {best} | {us[best]:.1f} | "
              f"{us['schedc'] / us['torch']:.2f} | {max(r['errors'].values()):.1e} |")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("step", choices=("prepare", "run", "measure", "table"))
    parser.add_argument("folder")
    args = parser.parse_args()
    {"prepare": prepare, "run": run, "measure": measure, "table": lambda a: table(Path(a.folder))}[args.step](args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
