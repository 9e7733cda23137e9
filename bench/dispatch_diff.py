"""Which dispatch of a CUDA module computes wrong: every dispatch's outputs on the GPU against the
same dispatch on the host CPU.

    python bench/dispatch_diff.py prepare DIR [--models llama,bert] [--dtypes f16] [--fused] [--variants cpu-split,cuda]   # here
    python bench/dispatch_diff.py run DIR                                                      # GPU machine

`prepare` compiles each held-out model (bench/heldout.py, its weights inside the module) with
IREE's `--iree-flow-trace-dispatch-tensors`, which makes every dispatch print its inputs and
outputs when it runs: for the host CPU with IREE's own code generation (`--no-tuning`, so no
schedc code-generation pass changes the dispatches) as `cpu`, and as `cpu-split` with the
convolutions split as split-k splits them for cuda (the references); and for cuda as `cuda`
(schedc's default pipeline), `cuda-noswap` (mma-operands swapping nothing), `cuda-noarena`
(without schedc's arena), `cuda-iree-split` (split-k's splits, IREE's own kernel configs),
`cuda-iree` and `cuda-iree-noswap` (IREE's own configs, nothing split). A cuda module is
compared with the host module that has its splits. `--fused` adds IREE's aggressive fusion and
generic matmuls (`generalization.FUSION_FLAGS`) to every module. The model's inputs go beside
them as .npy files.

`run`, on a machine with a CUDA GPU and IREE's runtime tools (`iree-run-module`), runs each
module and pairs every dispatch's outputs with the reference's (by the dispatch's name and its
occurrence: both compiles form the same dispatches from the same flow-phase IR), then prints per
module the dispatches whose outputs are off by more than --tolerance (max |diff| / max |cpu|),
first the earliest, where the error starts. Writes DIR/dispatch_diff.json (or $OUT's).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

TRACE = ("--iree-flow-trace-dispatch-tensors",)
NOSWAP = "mma-operands{swap=false},memory-order,arena-plan"
# The host references are compiled for x86-64-v3 (AVX2), not this machine's CPU: they run on the
# GPU machine's, whatever its vector extensions.
PORTABLE_CPU = "x86-64-v3"
VARIANTS = {  # module -> (schedc.compile keywords, IREE device)
    "cpu": ({"target": "llvm-cpu", "cpu": PORTABLE_CPU, "tuning": False}, "local-task"),
    # the host module with cuda's splits (split-k chooses them as for cuda), for the cuda
    # modules that split (REFERENCES)
    "cpu-split": ({"target": "llvm-cpu", "cpu": PORTABLE_CPU, "tuning": False, "passes": "split-k{anywhere=true}"}, "local-task"),
    "cuda": ({"target": "cuda"}, "cuda"),
    "cuda-noswap": ({"target": "cuda", "passes": NOSWAP}, "cuda"),
    # the splits without schedc's arena (IREE's own buffers), and with IREE's own kernel configs:
    # which of them a wrong split dispatch needs (MobileNetV2's f16 1x1 splits, fifteenth session)
    "cuda-noarena": ({"target": "cuda", "passes": "split-k"}, "cuda"),
    "cuda-iree-split": ({"target": "cuda", "tuning": False, "passes": "split-k,memory-order,arena-plan"}, "cuda"),
    "cuda-iree": ({"target": "cuda", "tuning": False}, "cuda"),
    "cuda-iree-noswap": ({"target": "cuda", "tuning": False, "passes": NOSWAP}, "cuda"),
}
# the host module a cuda one is compared with, if not `cpu`: those that split (split-k runs on cuda
# unless --no-tuning leaves it out and no pass list names it)
REFERENCES = {name: "cpu-split" for name in ("cuda", "cuda-noswap", "cuda-noarena", "cuda-iree-split")}
HEADER = re.compile(r"^=== (.+) (inputs|outputs) ===$")


def prepare(args) -> None:
    import schedc
    from generalization import FUSION_FLAGS, _selected, build_model

    folder = Path(args.folder)
    folder.mkdir(parents=True, exist_ok=True)
    flags = [*TRACE, *(FUSION_FLAGS if args.fused else ())]
    manifest = []
    for name, dtype in _selected(args.models, args.dtypes):
        model, inputs = build_model(name, dtype)
        mlir = schedc.import_torch(model, *inputs)
        stem = f"{name}.{dtype}"
        for i, x in enumerate(inputs):
            np.save(folder / f"{stem}.input{i}.npy", x.numpy())
        for variant, (keywords, _) in VARIANTS.items():
            if variant not in args.variants.split(","):
                continue
            schedc.compile(mlir, output=str(folder / f"{stem}.{variant}.vmfb"), iree_flags=flags, **keywords)
            print(f"{stem}.{variant}", flush=True)
        manifest.append({"stem": stem, "inputs": len(inputs), "flags": flags})
    (folder / "manifest.json").write_text(json.dumps(manifest, indent=1) + "\n")


def traced_outputs(text: str) -> list[tuple[str, list[np.ndarray], list[np.ndarray]]]:
    """(dispatch, its input tensors, its output tensors) per dispatch run, in order, from the
    trace's text: a `=== name inputs ===` and a `=== name outputs ===` line, each followed by a
    line `4x64xf32=[1 2 ...][...]` per tensor."""
    runs, pending, current = [], [], None
    for line in text.splitlines():
        header = HEADER.match(line)
        if header:
            if header.group(2) == "inputs":
                pending = []
                current = pending
            else:
                current = []
                runs.append((header.group(1), pending, current))
                pending = []
        elif current is not None and "=" in line:
            shape, _, values = line.partition("=")
            dims = [int(d) for d in shape.split("x")[:-1]]
            flat = np.array(values.replace("[", " ").replace("]", " ").split(), dtype=np.float64)
            current.append(flat.reshape(dims) if flat.size == int(np.prod(dims)) else flat)
    return runs


def traced_run(module: Path, device: str, inputs: list[Path]) -> list[tuple[str, list[np.ndarray], list[np.ndarray]]]:
    command = ["iree-run-module", f"--module={module}", f"--device={device}", "--function=forward",
               *(f"--input=@{p}" for p in inputs)]
    done = subprocess.run(command, capture_output=True, text=True)
    if done.returncode:
        # The error, not the traced tensors before it (a failed run's stderr is mostly those).
        said = [line for line in done.stderr.splitlines() if line.strip() and not HEADER.match(line) and "=[" not in line
                and not line.lstrip().startswith(("[", "-")) and not line.lstrip()[:1].isdigit()]
        raise RuntimeError(f"{' '.join(command)} failed (exit {done.returncode}): {chr(10).join(said[-20:]) or done.stderr[-2000:]}")
    return traced_outputs(done.stderr)  # the traces; stdout has the results, cut short


def relative(actual: np.ndarray, expected: np.ndarray) -> float:
    if actual.shape != expected.shape:
        return float("inf")
    scale = max(float(np.abs(expected).max()) if expected.size else 0.0, 1e-30)
    return float(np.abs(actual - expected).max() / scale) if expected.size else 0.0


def compare(reference, runs) -> list[dict]:
    """Per dispatch run of `runs`, its worst output error against the same dispatch's same
    occurrence in `reference`, and its worst input error: a dispatch whose inputs match and
    whose outputs do not computes wrong; one whose inputs are already off only carries the
    error on."""
    seen: dict[str, int] = {}
    expected = {}
    for name, inputs, outputs in reference:
        expected[(name, seen.get(name, 0))] = (inputs, outputs)
        seen[name] = seen.get(name, 0) + 1
    seen.clear()
    rows = []
    for index, (name, inputs, outputs) in enumerate(runs):
        occurrence = seen.get(name, 0)
        seen[name] = occurrence + 1
        want = expected.get((name, occurrence))
        error = input_error = float("nan")
        if want is not None:
            error = max((relative(a, b) for a, b in zip(outputs, want[1])), default=0.0)
            input_error = max((relative(a, b) for a, b in zip(inputs, want[0])), default=0.0)
        rows.append({"index": index, "dispatch": name.split("::")[-1], "occurrence": occurrence, "error": error,
                     "input_error": input_error})
    return rows


def run(args) -> None:
    folder = Path(args.folder)
    results = {}
    for entry in json.loads((folder / "manifest.json").read_text()):
        stem = entry["stem"]
        inputs = [folder / f"{stem}.input{i}.npy" for i in range(entry["inputs"])]
        references = {}
        for variant, (_, device) in VARIANTS.items():
            if variant.startswith("cpu") or not (folder / f"{stem}.{variant}.vmfb").exists():
                continue  # a reference, or a module not carried to this machine
            host = REFERENCES.get(variant, "cpu")
            if host not in references:
                references[host] = traced_run(folder / f"{stem}.{host}.vmfb", VARIANTS[host][1], inputs)
            rows = compare(references[host], traced_run(folder / f"{stem}.{variant}.vmfb", device, inputs))
            bad = [r for r in rows if not r["error"] <= args.tolerance]
            results[f"{stem}.{variant}"] = {"dispatches": len(rows), "over_tolerance": bad, "last": rows[-1] if rows else None,
                                             "errors": [[r["index"], r["dispatch"], r["input_error"], r["error"]] for r in rows]}
            print(f"{stem} {variant}: {len(rows)} dispatch runs, {len(bad)} off by more than {args.tolerance:g}; "
                  f"the last (the model's output) {rows[-1]['error']:.2e}" if rows else f"{stem} {variant}: no trace", flush=True)
            for row in bad[:args.show]:
                print(f"    #{row['index']} {row['dispatch']} (occurrence {row['occurrence']}): {row['error']:.2e} "
                      f"(its inputs {row['input_error']:.2e})")
    out_dir = Path(os.environ.get("OUT", folder))
    (out_dir / "dispatch_diff.json").write_text(json.dumps(results, indent=1))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="step", required=True)
    p = sub.add_parser("prepare")
    p.add_argument("folder")
    p.add_argument("--models", default=None, help="comma-separated, from bench/heldout.py (default: all)")
    p.add_argument("--dtypes", default="f16")
    p.add_argument("--fused", action="store_true", help="with IREE's aggressive fusion and generic matmuls")
    p.add_argument("--variants", default=",".join(VARIANTS), help="comma-separated modules to build (cpu, the reference, and any of the cuda ones)")
    r = sub.add_parser("run")
    r.add_argument("folder")
    r.add_argument("--tolerance", type=float, default=1e-2)
    r.add_argument("--show", type=int, default=8, help="dispatches listed per module")
    args = parser.parse_args()
    (prepare if args.step == "prepare" else run)(args)


if __name__ == "__main__":
    main()
