"""What recomputation costs in time on a CUDA GPU: the bench training steps with and without
remat, and the RandWire and DARTS inference nets with and without split fusions, timed on the
device.

    python bench/remat_gpu.py prepare DIR [--models cnn,...]   # here: compile for cuda (sm_80), save the arguments
    python3 bench/remat_gpu.py run DIR [--models cnn,...]      # GPU machine (iree-base-runtime, torch with CUDA)

Modules: bench/models.py's TRAIN_SUITE (cnn, transformer) compiled with memory-order and
arena-plan (`default`), with remat at budgets 0.8 and 0.6 between them (each with its JSON
report, which holds the transient bytes, copies and extra FLOPs), and with the weight gradients'
convolutions whole (`whole-gradients`: `split-k{window=false}`; split over their window rows by
default since this bench timed it); `prepare` also saves each
model's weights (DIR/<model>.pt). `run`: PyTorch eager's forward+backward on the GPU with those
weights, timed and kept as the reference; then each module's `train_step` on device-resident
arguments, median of 200 calls after 20 (each call waits for its last gradient), the worst
max |diff| / max |ref| of its results (updated buffers, loss, gradients) against PyTorch's, and
against the default module's. The inference nets
(bench/models.py's randwire and darts, batch 1) are compiled with the default pipeline
(`default`), with `remat{split-fusions=true}` (`split`), with it at the lowest reachable
budget (`split-lowest`), with split-concat before memory-order (`split-concat`) and with both
(`split-concat-fusions`), and timed the same way on `forward`. Prints a line per module and
writes DIR/train_gpu.json (or $OUT/train_gpu.json when OUT is set).
"""

from __future__ import annotations

import json
import os
import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from timing import median_ms  # noqa: E402

MODELS = ("cnn", "transformer")
VARIANTS = {
    "default": "memory-order,arena-plan",
    "remat0.8": "memory-order,remat{memory-budget=0.8},arena-plan",
    "remat0.6": "memory-order,remat{memory-budget=0.6},arena-plan",
    "whole-gradients": "split-k{window=false},memory-order,arena-plan",
}
INFERENCE = ("randwire", "darts")
INFERENCE_VARIANTS = {
    "default": "memory-order,arena-plan",
    "split": "memory-order,remat{split-fusions=true},arena-plan",
    "split-lowest": "memory-order,remat{split-fusions=true memory-budget=1},arena-plan",
    "split-concat": "split-concat,memory-order,arena-plan",
    "split-concat-fusions": "split-concat,memory-order,remat{split-fusions=true},arena-plan",
}


def prepare(folder: Path, chosen: set[str]) -> None:
    import models
    import torch

    import schedc

    folder.mkdir(parents=True, exist_ok=True)
    for name in (m for m in MODELS if m in chosen):
        model, inputs, targets, loss = models.TRAIN_SUITE[name]()
        torch.save(model.state_dict(), folder / f"{name}.pt")  # the GPU's torch reference loads them
        text = schedc.import_torch(model, *inputs, train=True, targets=targets, loss=loss)
        arguments = [p.detach().numpy() for p in model.parameters()] + [b.numpy().copy() for b in model.buffers()]
        np.savez(folder / f"{name}.args.npz", *arguments, *[t.numpy() for t in inputs + targets])
        compile_variants(text, name, VARIANTS, folder)
    for name in (m for m in INFERENCE if m in chosen):
        model, inputs = models.SUITE[name]()
        torch.save(model.state_dict(), folder / f"{name}.pt")
        np.savez(folder / f"{name}.args.npz", *[t.numpy() for t in inputs])
        compile_variants(schedc.import_torch(model, *inputs), name, INFERENCE_VARIANTS, folder)


def compile_variants(text: str, name: str, variants: dict, folder: Path) -> None:
    import schedc

    for variant, passes in variants.items():
        vmfb = schedc.compile(text, target="cuda", passes=passes, report=str(folder / f"{name}.{variant}.json"))
        (folder / f"{name}.{variant}.vmfb").write_bytes(vmfb)
        print(name, variant, flush=True)


def run(folder: Path, chosen: set[str]) -> None:
    import torch

    torch.backends.cuda.matmul.allow_tf32 = False  # an f32 reference, as the modules compute
    torch.backends.cudnn.allow_tf32 = False
    results = {}
    cases = [(name, VARIANTS, "train_step") for name in MODELS] + [(name, INFERENCE_VARIANTS, "forward") for name in INFERENCE]
    cases = [case for case in cases if case[0] in chosen]
    for name, variants, function in cases:
        expected = torch_eager(folder, name, function == "train_step", results)
        arguments = list(np.load(folder / f"{name}.args.npz").values())
        results.update(time_modules(folder, name, variants, function, arguments, expected))
    out_dir = Path(os.environ.get("OUT", folder))
    (out_dir / "train_gpu.json").write_text(json.dumps(results, indent=1))


def time_modules(folder: Path, name: str, variants: dict, function: str, arguments: list, expected: list) -> dict:
    """Each variant's median time on device-resident arguments, its worst error against
    PyTorch's results on this GPU, and its largest difference from the default module's."""
    import iree.runtime as rt

    import schedc
    from remat import worst_error

    results, default = {}, None
    for variant in variants:
        if not (folder / f"{name}.{variant}.vmfb").exists():
            continue  # not prepared (or not carried to this machine)
        module = schedc.load(str(folder / f"{name}.{variant}.vmfb"), device="cuda")
        on_device = [rt.asdevicearray(module.device, a) for a in arguments]
        call = module[function]
        for _ in range(20):
            out = call(*on_device)
        times = []
        for _ in range(200):
            started = time.perf_counter()
            out = call(*on_device)
            out = out if isinstance(out, (tuple, list)) else (out,)
            np.asarray(out[-1].to_host())  # the last result: the call is done
            times.append(time.perf_counter() - started)
        host = [np.asarray(o.to_host()) for o in out]
        default = default or host
        results[f"{name}.{variant}"] = {
            "median_ms": statistics.median(times) * 1e3,
            "max_rel_error_vs_torch": worst_error(host, expected),
            "max_rel_diff_vs_default": worst_error(host, default),
        }
        print(name, variant, json.dumps(results[f"{name}.{variant}"]), flush=True)
    return results


def torch_eager(folder: Path, name: str, train: bool, results: dict) -> list:
    """PyTorch's results on this GPU with the weights `prepare` saved (a training step's
    updated buffers, loss and gradients; an inference net's output), and its median time
    into `results`."""
    import copy

    import models
    import torch
    from remat import eager_step

    if train:
        model, inputs, targets, loss = models.TRAIN_SUITE[name]()
        model.load_state_dict(torch.load(folder / f"{name}.pt"))
        model = model.cuda()
        inputs, targets = [t.cuda() for t in inputs], [t.cuda() for t in targets]
        expected = eager_step(copy.deepcopy(model), inputs, targets, loss)

        def call():
            model.zero_grad(set_to_none=True)
            loss(model(*inputs), *targets).backward()
            torch.cuda.synchronize()
    else:
        model, inputs = models.SUITE[name]()
        model.load_state_dict(torch.load(folder / f"{name}.pt"))
        model, inputs = model.cuda().eval(), [t.cuda() for t in inputs]
        with torch.no_grad():
            expected = [model(*inputs).cpu().numpy()]

        def call():
            with torch.no_grad():
                model(*inputs)
            torch.cuda.synchronize()

    results[f"{name}.torch_eager"] = {"median_ms": median_ms(call, repeats=200, warmup=20)}
    print(name, "torch eager", json.dumps(results[f"{name}.torch_eager"]), flush=True)
    return expected


def main() -> int:
    import argparse

    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("step", choices=("prepare", "run"))
    parser.add_argument("folder")
    parser.add_argument("--models", default=",".join(MODELS + INFERENCE), help=f"comma-separated, from {', '.join(MODELS + INFERENCE)}")
    args = parser.parse_args()
    chosen = set(args.models.split(","))
    if chosen - set(MODELS + INFERENCE):
        parser.error(f"unknown models: {', '.join(sorted(chosen - set(MODELS + INFERENCE)))}")
    (prepare if args.step == "prepare" else run)(Path(args.folder), chosen)
    return 0


if __name__ == "__main__":
    sys.exit(main())
