"""Split-K on the GPU: deep convolutions and matmuls with few outputs, their reduction in 1-16 parts.

    python bench/split_k.py prepare DIR [--shapes window|pointwise|matmul]   # here: each shape, once per part count
    python bench/split_k.py run DIR        # on the GPU machine, under Nsight Compute
    python bench/split_k.py fit DIR        # here: the rule's constants from the FIT shapes, judged on HELDOUT
    python bench/split_k.py table DIR      # the table again, with the rule's current picks

Each shape is a layer, Conv2d (bias on) + ReLU, at batch 1 (`--shapes matmul`: Linear + ReLU
over a batch of rows, f16 only; HELDOUT_MATMUL the held-out transformers' and ConvNeXt's
splittable Linear layers). FIT is synthetic (channel counts
and sizes no held-out model has); HELDOUT is ResNet-18's 3x3 convolutions (bench/heldout.py's
hf_resnet18), never fitted on. `prepare` compiles every shape with the split-k pass forced to
each part count its channels allow (`split-k{parts=P}`; 1: not split), weights outside the
module. `run` rebuilds the same layers from their seeds, checks each module's output against
torch's (TF32 off), and times each once under ncu (`--clock-control none`,
gpu__time_duration, the sum of a run's kernels; a `torch.cuda._sleep` marker before each):
torch's cuDNN kernels with TF32 off and, for f32, on (torch's default for convolutions, what
reduce-overhead runs). `fit` takes the rule's constants (schedc.decisions.split_k) that make
its picks on FIT closest to the fastest part count, then prints HELDOUT's picks with them.
"""

from __future__ import annotations

import argparse
import itertools
import json
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from layers import measured_under_ncu, module_calls, reinit, seed_of  # noqa: E402

# (input channels, output channels, output size, window, stride)
FIT = [
    (96, 96, 24, 3, 1), (160, 160, 20, 3, 1), (192, 192, 12, 3, 1), (192, 192, 24, 3, 1),
    (320, 320, 10, 3, 1), (384, 384, 6, 3, 1), (384, 384, 12, 3, 1), (448, 448, 8, 3, 1),
    (640, 640, 5, 3, 1), (768, 768, 6, 3, 1), (768, 768, 3, 3, 1), (192, 192, 12, 5, 1),
    (96, 192, 24, 3, 2), (192, 384, 12, 3, 2), (384, 768, 6, 3, 2), (320, 640, 5, 3, 2),
]
HELDOUT = [  # hf_resnet18's 3x3 convolutions
    (64, 64, 56, 3, 1), (128, 128, 28, 3, 1), (256, 256, 14, 3, 1), (512, 512, 7, 3, 1),
    (64, 128, 28, 3, 2), (128, 256, 14, 3, 2), (256, 512, 7, 3, 2),
]
# 1x1 convolutions (matmuls over the image's pixels), measured apart (`prepare --shapes pointwise`)
FIT_POINTWISE = [
    (768, 128, 6, 1, 1), (1280, 192, 5, 1, 1), (640, 96, 10, 1, 1), (1024, 256, 6, 1, 1),
    (512, 384, 12, 1, 1), (384, 768, 8, 1, 1), (1536, 256, 4, 1, 1), (896, 144, 9, 1, 1),
]
HELDOUT_POINTWISE = [  # hf_mobilenet_v2's and squeezenet1_1's
    (960, 160, 7, 1, 1), (576, 96, 14, 1, 1), (960, 320, 7, 1, 1), (384, 64, 14, 1, 1),
    (512, 1000, 13, 1, 1), (512, 64, 13, 1, 1),
]
# Linear layers (rows, K, N), f16: synthetic (none a held-out model's shape), K 256-4,096
FIT_MATMUL = [
    (32, 1024, 256), (48, 2048, 512), (80, 768, 320), (96, 1536, 384), (128, 512, 512),
    (160, 1280, 160), (256, 256, 256), (40, 256, 640), (112, 256, 1024), (72, 384, 768),
    (16, 4096, 1024), (100, 384, 1152), (24, 512, 2048), (144, 2560, 640),
]
HELDOUT_MATMUL = [  # gpt2's, bert's (the same), vit's and convnext's (llama's 688 divides into no whole parts)
    (64, 256, 768), (64, 256, 256), (64, 256, 1024), (64, 1024, 256),
    (197, 192, 768), (197, 768, 192), (196, 768, 192), (49, 1536, 384), (49, 384, 1536),
]
SHAPES = {"window": (FIT, HELDOUT), "pointwise": (FIT_POINTWISE, HELDOUT_POINTWISE), "matmul": (FIT_MATMUL, HELDOUT_MATMUL)}
PARTS = (1, 2, 4, 8, 16)
DTYPES = ("f16", "f32")


def _is_matmul(shape) -> bool:
    return len(shape) == 3


def _name(shape, dtype) -> str:
    if _is_matmul(shape):
        rows, k, n = shape
        return f"m{rows}.k{k}.n{n}.{dtype}"
    cin, cout, size, k, s = shape
    return f"c{cin}-{cout}.o{size}.k{k}s{s}.{dtype}"


def _layer(shape, dtype):
    """The layer and its input, weights from the shape's seed."""
    import torch

    generator = torch.Generator().manual_seed(seed_of(_name(shape, dtype) + ".x"))
    if _is_matmul(shape):
        rows, k, n = shape
        layer = torch.nn.Sequential(torch.nn.Linear(k, n), torch.nn.ReLU())
        x = torch.randn(1, rows, k, generator=generator)
    else:
        cin, cout, size, k, s = shape
        layer = torch.nn.Sequential(torch.nn.Conv2d(cin, cout, k, stride=s, padding=k // 2), torch.nn.ReLU())
        x = torch.randn(1, cin, size * s, size * s, generator=generator)
    reinit(layer, seed_of(_name(shape, dtype)))
    dt = {"f16": torch.float16, "f32": torch.float32}[dtype]
    return layer.to(dt).eval(), x.to(dt)


def _shape_data(shape, dtype):
    from schedc.decisions.cpu_config import OpShape

    if _is_matmul(shape):
        rows, k, n = shape
        return OpShape("matmul", dtype, m=rows, k=k, n=n)
    cin, cout, size, k, s = shape
    pad = k // 2
    return OpShape("conv", dtype, cin=cin, cout=cout, h=size * s + 2 * pad, w=size * s + 2 * pad, kh=k, kw=k, stride=(s, s))


def _parts(shape, dtype) -> list[int]:
    from schedc.decisions.split_k import can_split, matmul_parts

    data = _shape_data(shape, dtype)
    if _is_matmul(shape):
        return [p for p in PARTS if p == 1 or matmul_parts(data, p) == p]
    return [p for p in PARTS if p == 1 or can_split(data, p)]


def prepare(args) -> None:
    import schedc
    from schedc.passes import DEFAULT_PIPELINE

    folder = Path(args.folder)
    (folder / "modules").mkdir(parents=True, exist_ok=True)
    manifest = []
    fit_shapes, held_shapes = SHAPES[args.shapes]
    for suite, shapes in (("fit", fit_shapes), ("heldout", held_shapes)):
        for shape, dtype in itertools.product(shapes, ("f16",) if args.shapes == "matmul" else DTYPES):
            name = _name(shape, dtype)
            layer, x = _layer(shape, dtype)
            archive = folder / "modules" / f"{name}.irpa"  # written by the import, not kept: run writes its own
            mlir = schedc.import_torch(layer, x, params=str(archive))
            archive.unlink(missing_ok=True)
            parts = _parts(shape, dtype)
            for p in parts:
                schedc.compile(mlir, target="cuda", passes=f"split-k{{parts={p}}},{DEFAULT_PIPELINE}",
                               output=str(folder / "modules" / f"{name}.p{p}.vmfb"))
            manifest.append({"name": name, "suite": suite, "shape": list(shape), "dtype": dtype, "parts": parts})
            print(f"{name}: parts {parts}", flush=True)
    (folder / "split_k.json").write_text(json.dumps(manifest, indent=1) + "\n")


def measure(args) -> None:
    """On the GPU, under ncu: numerics, then one profiled run of each module and of torch."""
    import torch

    from schedc.torch.parameters import save_params

    folder = Path(args.folder)
    manifest = json.loads((folder / "split_k.json").read_text())
    runs, errors = [], {}
    with torch.no_grad():
        for entry in manifest:
            layer, x = _layer(tuple(entry["shape"]), entry["dtype"])
            archive = folder / "modules" / f"{entry['name']}.irpa"
            save_params(layer, str(archive))
            torch.backends.cudnn.allow_tf32 = False
            modules = {f"p{p}": folder / "modules" / f"{entry['name']}.p{p}.vmfb" for p in entry["parts"]}
            calls, errors[entry["name"]] = module_calls(layer.cuda(), x.cuda(), archive, modules)
            runs.append((entry["name"], entry["dtype"], calls))
        torch.cuda.synchronize()
        order = []
        for name, dtype, calls in runs:
            for tf32 in ((False, True) if dtype == "f32" else (False,)):
                torch.backends.cudnn.allow_tf32 = tf32
                who = {"torch_tf32": calls["torch"]} if tf32 else calls
                for label, call in who.items():
                    torch.cuda._sleep(1000)
                    call()
                    torch.cuda.synchronize()
                    order.append([name, label])
    (folder / "split_k.numerics.json").write_text(json.dumps({"order": order, "errors": errors}, indent=1))


def run(args) -> None:
    folder = Path(args.folder)
    log = folder / "split_k.ncu.csv"
    measured, found = measured_under_ncu(__file__, folder, "split_k")
    if len(found) != len(measured["order"]):
        sys.exit(f"ncu listed {len(found)} runs between markers, measure made {len(measured['order'])}: see {log}")
    times: dict[str, dict[str, float]] = {}
    for (name, label), kernels in zip(measured["order"], found):
        times.setdefault(name, {})[label] = round(sum(us for _, us in kernels), 2)
    results = {name: {"us": times[name], "errors": measured["errors"][name]} for name in times}
    (folder / "split_k.results.json").write_text(json.dumps(results, indent=1) + "\n")
    table(folder, results)


def _pick(entry, *constants: int) -> int:
    """The rule's part count for `entry` with the given constants: (SPLIT_OUTPUTS, MAX_PARTS),
    or for a matmul (MATMUL_SPLIT_OUTPUTS, MATMUL_MIN_K)."""
    from schedc.decisions import split_k

    shape = _shape_data(tuple(entry["shape"]), entry["dtype"])
    if not _is_matmul(entry["shape"]):
        return split_k.split_parts(shape, *constants)
    from sweep import _with_constants

    outputs, min_k = constants
    return _with_constants(("MATMUL_MIN_K",), (min_k,), lambda: split_k.matmul_parts(shape, split_outputs=outputs))


def table(folder: Path, results: dict) -> None:
    manifest = json.loads((folder / "split_k.json").read_text())
    print("| layer | suite | torch | torch TF32 | " + " | ".join(f"{p} parts" for p in PARTS) + " | rule | rule/best | rule/torch | max error |")
    print("|" + "---|" * (len(PARTS) + 8))
    for entry in manifest:
        r = results[entry["name"]]
        us = r["us"]
        pick = _pick(entry, *_constants(manifest))
        parted = {p: us.get(f"p{p}") for p in PARTS}
        best = min(v for v in parted.values() if v is not None)
        cells = [f"{v:.1f}" if v is not None else "" for v in parted.values()]
        tf32 = f"{us['torch_tf32']:.1f}" if "torch_tf32" in us else ""
        print(f"| {entry['name']} | {entry['suite']} | {us['torch']:.1f} | {tf32} | "
              + " | ".join(cells) + f" | {pick} | {parted[pick] / best:.2f} | {parted[pick] / us['torch']:.2f} | {max(r['errors'].values()):.1e} |")


def _constants(manifest: list[dict]) -> tuple[int, int]:
    """The rule's constants for the folder's shapes: the matmuls' (`--shapes matmul`), the 1x1
    ones' (`--shapes pointwise`) or the others'."""
    from schedc.decisions.split_k import MATMUL_MIN_K, MATMUL_SPLIT_OUTPUTS, MAX_PARTS, POINTWISE_SPLIT_OUTPUTS, SPLIT_OUTPUTS

    if all(_is_matmul(entry["shape"]) for entry in manifest):
        return MATMUL_SPLIT_OUTPUTS, MATMUL_MIN_K
    pointwise = all(entry["shape"][3] == 1 for entry in manifest)
    return (POINTWISE_SPLIT_OUTPUTS if pointwise else SPLIT_OUTPUTS), MAX_PARTS


def fit(args) -> None:
    folder = Path(args.folder)
    results = json.loads((folder / "split_k.results.json").read_text())
    manifest = json.loads((folder / "split_k.json").read_text())

    def loss(entries, constants) -> float:  # the geometric mean of pick / fastest
        ratios = []
        for entry in entries:
            us = results[entry["name"]]["us"]
            parted = {p: us[f"p{p}"] for p in entry["parts"]}
            ratios.append(parted[_pick(entry, *constants)] / min(parted.values()))
        return statistics.geometric_mean(ratios)

    fit_entries = [e for e in manifest if e["suite"] == "fit"]
    held = [e for e in manifest if e["suite"] == "heldout"]
    matmuls = all(_is_matmul(e["shape"]) for e in manifest)
    seconds = (256, 384, 512, 768, 1024) if matmuls else (2, 4, 8, 16)  # the least K split, or the most parts
    grid = [(o * 1024, m) for o in (16, 32, 64, 128, 256, 512, 1024, 2048) for m in seconds]
    # Ties go to the bounds that split least: the fewest outputs, then the fewest parts or the longest K.
    best = min(grid, key=lambda c: (round(loss(fit_entries, c), 4), c[0], -c[1] if matmuls else c[1]))
    current = _constants(manifest)
    print(f"current constants {current}: FIT {loss(fit_entries, current):.3f}x the fastest (geometric mean), HELDOUT {loss(held, current):.3f}x")
    print(f"fitted on FIT {best}: FIT {loss(fit_entries, best):.3f}x, HELDOUT {loss(held, best):.3f}x")
    never = (0, 1 << 30) if all(_is_matmul(e["shape"]) for e in manifest) else (0, 1)
    print(f"never split: FIT {loss(fit_entries, never):.3f}x, HELDOUT {loss(held, never):.3f}x")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    for name in ("prepare", "measure", "run", "fit", "table"):
        command = sub.add_parser(name)
        command.add_argument("folder")
        if name == "prepare":
            command.add_argument("--shapes", choices=tuple(SHAPES), default="window", help="window convolutions (FIT, HELDOUT), 1x1 ones or Linear layers (f16)")
    args = parser.parse_args()
    if args.command == "table":
        folder = Path(args.folder)
        table(folder, json.loads((folder / "split_k.results.json").read_text()))
        return
    {"prepare": prepare, "measure": measure, "run": run, "fit": fit}[args.command](args)


if __name__ == "__main__":
    main()
