"""Digests of the modules schedc compiles for the bench models, to show that a change which
should not change code generation (a move, a rename) leaves every module byte for byte as it was.

    python bench/same_modules.py digest OUT.json [--models randwire,darts] [--mlir DIR]
    python bench/same_modules.py compare BEFORE.json AFTER.json

`digest` imports every model of bench/models.py (SUITE, and TRAIN_SUITE as training steps),
writes its torch-dialect MLIR into DIR (default: a temporary folder; an existing DIR/NAME.mlir
is reused, so before and after compile the same input), and compiles it through the `schedc`
command in several configurations that between them run every pass:

  cpu        --target=llvm-cpu, the default pipeline (memory-order, arena-plan)
  cuda       --target=cuda, the default pipeline (kernel-config runs for cuda)
  cuda-graphs --target=cuda --execution=graphs, memory-order, stream-schedule{mode=balanced},
             arena-plan{persistent-fills=true}, overlap-fills (static-replay runs)
  cpu-split  --target=llvm-cpu, split-concat,memory-order,arena-plan (the inference models)
  cpu-remat  --target=llvm-cpu, memory-order,remat{memory-budget=0.8},arena-plan (training steps)

It writes the SHA-256 of each MLIR input and each module into OUT.json. `compare` prints the
configurations whose digests differ and exits 1 if any does.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))
from timing import bench_models  # noqa: E402

INFERENCE_CONFIGS = {
    "cpu": ["--target=llvm-cpu"],
    "cuda": ["--target=cuda"],
    "cuda-graphs": [
        "--target=cuda",
        "--execution=graphs",
        "--passes=memory-order,stream-schedule{mode=balanced},arena-plan{persistent-fills=true},overlap-fills",
    ],
    "cpu-split": ["--target=llvm-cpu", "--passes=split-concat,memory-order,arena-plan"],
}
TRAIN_CONFIGS = {
    "cpu-remat": ["--target=llvm-cpu", "--passes=memory-order,remat{memory-budget=0.8},arena-plan"],
}


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def import_model(name: str, factory, train: bool, mlir_dir: Path) -> Path:
    import schedc

    path = mlir_dir / f"{name}.mlir"
    if not path.exists():
        if train:
            model, inputs, targets, loss = factory()
            text = schedc.import_torch(model, *inputs, train=True, targets=targets, loss=loss)
        else:
            model, args = factory()
            text = schedc.import_torch(model, *args)
        path.write_text(text)
    return path


def digest(out: Path, models: list[str] | None, mlir_dir: Path | None) -> None:
    suites = bench_models()
    work = Path(tempfile.mkdtemp(prefix="schedc-same-"))
    mlir_dir = mlir_dir or work
    mlir_dir.mkdir(parents=True, exist_ok=True)
    jobs = [(n, f, False, INFERENCE_CONFIGS) for n, f in suites.SUITE.items()]
    jobs += [(f"train-{n}", f, True, TRAIN_CONFIGS) for n, f in suites.TRAIN_SUITE.items()]
    digests: dict[str, str] = {}
    for name, factory, train, configs in jobs:
        if models and name not in models:
            continue
        mlir = import_model(name, factory, train, mlir_dir)
        digests[f"{name}/mlir"] = sha256(mlir)
        for config, flags in configs.items():
            vmfb = work / f"{name}.{config}.vmfb"
            run = subprocess.run(["schedc", str(mlir), *flags, "-o", str(vmfb)], capture_output=True, text=True)
            if run.returncode:
                digests[f"{name}/{config}"] = f"failed: {run.stderr.strip().splitlines()[-1:]}"
            else:
                digests[f"{name}/{config}"] = sha256(vmfb)
            print(f"{name:<22} {config:<12} {digests[f'{name}/{config}'][:16]}", flush=True)
    out.write_text(json.dumps(digests, indent=1, sort_keys=True) + "\n")
    print(f"wrote {len(digests)} digests to {out}")


def compare(before: Path, after: Path) -> int:
    old, new = json.loads(before.read_text()), json.loads(after.read_text())
    differ = sorted(k for k in old.keys() | new.keys() if old.get(k) != new.get(k))
    for key in differ:
        print(f"differs: {key}: {old.get(key, '-')[:16]} -> {new.get(key, '-')[:16]}")
    print(f"{len(old.keys() & new.keys()) - len(differ)} of {len(old.keys() | new.keys())} digests the same")
    return 1 if differ else 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    d = sub.add_parser("digest")
    d.add_argument("out", type=Path)
    d.add_argument("--models", help="comma-separated names (train steps as train-NAME)")
    d.add_argument("--mlir", type=Path, help="folder for the imported MLIR (reused when present)")
    c = sub.add_parser("compare")
    c.add_argument("before", type=Path)
    c.add_argument("after", type=Path)
    args = parser.parse_args()
    if args.command == "compare":
        return compare(args.before, args.after)
    digest(args.out, args.models.split(",") if args.models else None, args.mlir)
    return 0


if __name__ == "__main__":
    sys.exit(main())
