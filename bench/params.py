"""Weights outside the module (parameter archives) against weights inlined.

    python bench/params.py compile [--models resnet18,gpt2_small] [--json OUT.json]
    python bench/params.py equal [--models randwire,...] [--gpu-dir DIR]
    python bench/params.py gpu DIR --execution streams|graphs   (on the GPU machine)

`compile`: each model imported twice (`schedc import`, and `schedc import --params`), then
compiled with `schedc --target=llvm-cpu`, each compile in a process of its own: its wall time,
the peak resident memory of its largest process (schedc's, or one of the IREE tools it runs),
the sizes of the MLIR, of the module and of the archive.
  - resnet18: the bench suite's ResNet-18-style net (bench/models.py: narrow, 64x64 input);
  - resnet18_full: ResNet-18's real size (bench/heldout.py's hf_resnet18: Hugging Face's
    ResNetModel, 11.7M parameters, 224x224 input);
  - gpt2_small: Hugging Face's GPT2Model with GPT2Config's defaults, GPT-2 small's size
    (124M parameters, 12 layers, width 768), random weights, 32 tokens.

`equal`: every bench model (bench/models.py SUITE) imported both ways and compiled in the
configurations of bench/same_modules.py that run on a CPU (`cpu`: the default pipeline;
`cpu-split`: split-concat,memory-order,arena-plan; `cpu-remat`:
memory-order,remat{split-fusions=true},arena-plan; `cpu-buckets`: the model imported with a
dynamic batch, compiled with --batch-buckets=1,2), run on local-task on the same input, and the
outputs compared bit for bit. With --gpu-dir, it also compiles each model both ways for cuda
(streams, and --execution=graphs: static-replay) into DIR, with the inputs and the archives,
for `gpu` to run on the H200.

`gpu DIR --execution streams|graphs` (IREE runs the CUDA driver in one mode per process: one
run per mode): loads each module pair, checks the outputs are equal, times both (median of
alternating rounds, in one process), and runs the GPT-2-small-sized decoder whose module
(no weights) is in DIR, with an archive it writes itself from a seed (`schedc params save`),
against torch eager on the same weights.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))
SEQUENCE = 32  # tokens of the decoder's input

EQUAL_CONFIGS = {
    "cpu": [],
    "cpu-split": ["--passes=split-concat,memory-order,arena-plan"],
    "cpu-remat": ["--passes=memory-order,remat{split-fusions=true},arena-plan"],
}
GPU_CONFIGS = {"streams": ["--target=cuda"], "graphs": ["--target=cuda", "--execution=graphs"]}


# -- models (factories for `schedc import FILE.py:FACTORY`) ------------------------------------


def resnet18():
    from timing import bench_models

    return bench_models().SUITE["resnet18"]()


def resnet18_full():
    from heldout import hf_resnet18

    return hf_resnet18()


def gpt2_small():
    """GPT-2 small's architecture (GPT2Config's defaults), random weights from seed 0."""
    import torch
    from transformers import GPT2Config, GPT2Model

    torch.manual_seed(0)
    model = GPT2Model(GPT2Config(attn_implementation="eager"))
    return _LastHidden(model).eval(), (torch.randint(0, 50257, (1, SEQUENCE), generator=torch.Generator().manual_seed(1)),)


def _LastHidden(model):
    import torch

    class LastHidden(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.model = model

        def forward(self, input_ids):
            return self.model(input_ids=input_ids).last_hidden_state

    return LastHidden()


def suite_factory(name: str):
    from timing import bench_models

    return bench_models().SUITE[name]


COMPILE_MODELS = {"resnet18": "resnet18", "resnet18_full": "resnet18_full", "gpt2_small": "gpt2_small"}


# -- compile time and memory -------------------------------------------------------------------


def measured(command: list[str]) -> tuple[float, int]:
    """(seconds, peak resident bytes of the largest process) of `command`, run in a process of
    its own so that its children's peak is its alone."""
    probe = (
        "import resource, subprocess, sys, time, json\n"
        "t = time.perf_counter()\n"
        "r = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)\n"
        "s = time.perf_counter() - t\n"
        "if r.returncode: sys.stderr.write(r.stderr); sys.exit(r.returncode)\n"
        "print(json.dumps([s, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss * 1024]))\n"
    )
    result = subprocess.run([sys.executable, "-c", probe, *command], capture_output=True, text=True)
    if result.returncode:
        raise SystemExit(f"failed: {' '.join(command)}\n{result.stderr}")
    seconds, peak = json.loads(result.stdout)
    return seconds, peak


def schedc_command() -> list[str]:
    return [sys.executable, "-m", "schedc.tools.schedc"]


def cmd_compile(args) -> None:
    rows = []
    with tempfile.TemporaryDirectory(prefix="schedc-params-") as folder:
        work = Path(folder)
        for name in args.models:
            factory = f"{__file__}:{COMPILE_MODELS[name]}"
            inline, external, archive = work / f"{name}.mlir", work / f"{name}.ext.mlir", work / f"{name}.irpa"
            import_inline = measured([*schedc_command(), "import", factory, "-o", str(inline)])
            import_external = measured([*schedc_command(), "import", factory, "-o", str(external), f"--params={archive}"])
            row = {"model": name, "mlir_inline": inline.stat().st_size, "mlir_external": external.stat().st_size,
                   "archive": archive.stat().st_size, "import_inline_s": import_inline[0], "import_external_s": import_external[0]}
            for kind, source in (("external", external), ("inline", inline)):
                module = work / f"{name}.{kind}.vmfb"
                seconds, peak = measured([*schedc_command(), str(source), "--target=llvm-cpu", "-o", str(module)])
                row.update({f"compile_{kind}_s": seconds, f"peak_{kind}": peak, f"module_{kind}": module.stat().st_size})
                print(f"{name} {kind}: {seconds:.1f} s, peak {peak / 2**20:.0f} MiB, module {module.stat().st_size / 2**20:.2f} MiB", flush=True)
            rows.append(row)
    print_compile_table(rows)
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=1))


def print_compile_table(rows) -> None:
    mib = 2**20
    print("\n| model | MLIR inline / external | module inline / external | archive | compile inline | compile external | speed-up | peak memory inline / external |")
    print("|---|---|---|---|---|---|---|---|")
    for r in rows:
        print(f"| {r['model']} | {r['mlir_inline'] / mib:.1f} / {r['mlir_external'] / mib:.2f} MiB | {r['module_inline'] / mib:.1f} / "
              f"{r['module_external'] / mib:.2f} MiB | {r['archive'] / mib:.1f} MiB | {r['compile_inline_s']:.1f} s | "
              f"{r['compile_external_s']:.1f} s | {r['compile_inline_s'] / r['compile_external_s']:.1f}x | "
              f"{r['peak_inline'] / mib:.0f} / {r['peak_external'] / mib:.0f} MiB |")


# -- outputs equal, inlined and external -------------------------------------------------------


def cmd_equal(args) -> None:
    import numpy as np

    import schedc
    from timing import bench_models

    gpu = Path(args.gpu_dir) if args.gpu_dir else None
    if gpu:
        gpu.mkdir(parents=True, exist_ok=True)
    rows = []
    with tempfile.TemporaryDirectory(prefix="schedc-params-") as folder:
        work = Path(folder)
        for name in args.models:
            model, example = bench_models().SUITE[name]()
            archive = str(work / f"{name}.irpa")
            sources = {"inline": schedc.import_torch(model, *example), "external": schedc.import_torch(model, *example, params=archive)}
            x = [t.numpy() for t in example]
            for config, flags in EQUAL_CONFIGS.items():
                outputs = {}
                for kind, mlir in sources.items():
                    vmfb = schedc_compile(mlir, flags, work / f"{name}.{config}.{kind}")
                    module = schedc.load(vmfb, params=archive if kind == "external" else None)
                    outputs[kind] = _as_list(module.forward(*x))
                rows.append((name, config, _bitwise_equal(outputs["inline"], outputs["external"])))
                print(f"{name} {config}: {'bit for bit' if rows[-1][2] else 'DIFFERENT'}", flush=True)
            # batch buckets: the model imported with a dynamic batch, both ways
            bucket_sources = {"inline": schedc.import_torch(model, *example, dynamic_batch=True),
                              "external": schedc.import_torch(model, *example, dynamic_batch=True, params=archive)}
            outputs = {}
            for kind, mlir in bucket_sources.items():
                vmfb = schedc_compile(mlir, ["--batch-buckets=1,2"], work / f"{name}.buckets.{kind}")
                module = schedc.load(vmfb, params=archive if kind == "external" else None)
                outputs[kind] = _as_list(module.forward(*x))
            rows.append((name, "cpu-buckets", _bitwise_equal(outputs["inline"], outputs["external"])))
            print(f"{name} cpu-buckets: {'bit for bit' if rows[-1][2] else 'DIFFERENT'}", flush=True)
            if gpu:
                np.save(gpu / f"{name}.input.npy", x[0])
                schedc.save_params(model, str(gpu / f"{name}.irpa"))
                for config, flags in GPU_CONFIGS.items():
                    for kind, mlir in sources.items():
                        schedc_compile(mlir, flags, work / f"{name}.{config}.{kind}", gpu)
    print("\n| model | " + " | ".join([*EQUAL_CONFIGS, "cpu-buckets"]) + " |")
    print("|---|" + "---|" * (len(EQUAL_CONFIGS) + 1))
    for name in args.models:
        cells = ["equal" if same else "**different**" for model_name, _, same in rows if model_name == name]
        print(f"| {name} | " + " | ".join(cells) + " |")
    if gpu:
        decoder, example = gpt2_small()
        mlir = schedc.import_torch(decoder, *example, params=str(work / "gpt2_small.irpa"))
        for config, flags in GPU_CONFIGS.items():
            schedc_compile(mlir, flags, work / f"gpt2_small.{config}.external", gpu)
        (gpu / "models.json").write_text(json.dumps(args.models))
    if not all(same for _, _, same in rows):
        raise SystemExit(1)


def schedc_compile(mlir: str, flags: list[str], stem: Path, into: Path | None = None) -> str:
    """Compiles `mlir` (written to STEM.mlir) to STEM.vmfb, or to the folder `into`."""
    source = Path(str(stem) + ".mlir")
    module = str((into / stem.name) if into else stem) + ".vmfb"
    source.write_text(mlir)
    subprocess.run([*schedc_command(), str(source), *flags, "-o", module], check=True, stderr=subprocess.DEVNULL)
    return module


def _as_list(results) -> list:
    import numpy as np

    return [np.asarray(r) for r in (results if isinstance(results, tuple) else (results,))]


def _bitwise_equal(a: list, b: list) -> bool:
    return len(a) == len(b) and all(x.shape == y.shape and x.dtype == y.dtype and x.tobytes() == y.tobytes() for x, y in zip(a, b))


# -- on the GPU machine ------------------------------------------------------------------------


def cmd_gpu(args) -> None:
    import numpy as np
    import torch

    import schedc

    folder, config = Path(args.folder), args.execution
    names = json.loads((folder / "models.json").read_text())
    print("| model | execution | outputs | inline ms | external ms | external / inline |")
    print("|---|---|---|---|---|---|")
    for name in names:
        x = torch.from_numpy(np.load(folder / f"{name}.input.npy")).cuda()
        modules = {kind: schedc.load(str(folder / f"{name}.{config}.{kind}.vmfb"), device="cuda",
                                     params=str(folder / f"{name}.irpa") if kind == "external" else None)
                   for kind in ("inline", "external")}
        out = {kind: modules[kind].forward(x, copy=True).cpu().numpy() for kind in modules}
        # On the GPU the external module transforms its weights at load, on the device, where
        # the inlined one had them folded at compile time on the host: rounding may differ.
        difference = float(np.abs(out["inline"] - out["external"]).max() / max(np.abs(out["inline"]).max(), 1e-30))
        same = "bit for bit" if out["inline"].tobytes() == out["external"].tobytes() else f"max diff {difference:.1e} (rel.)"
        times = alternating_ms({kind: (lambda m=m: m.forward(x)) for kind, m in modules.items()})
        print(f"| {name} | {config} | {same} | {times['inline']:.3f} | {times['external']:.3f} | "
              f"{times['external'] / times['inline']:.3f} |", flush=True)
    gpt2_on_gpu(folder, config)


def gpt2_on_gpu(folder: Path, config: str) -> None:
    """GPT-2 small's module (no weights) with an archive written here from seed 0 (once per
    folder), against torch eager on the same weights."""
    import torch

    import schedc

    archive = folder / "gpt2_small.seed0.irpa"
    if not archive.exists():
        started = time.perf_counter()
        subprocess.run([*schedc_command(), "params", "save", f"{__file__}:gpt2_small", "--seed", "0", "-o", str(archive)], check=True)
        print(f"\ngpt2_small: archive written here from seed 0 in {time.perf_counter() - started:.1f} s "
              f"({archive.stat().st_size / 2**20:.0f} MiB)")
    model, (ids,) = gpt2_small()
    model, ids = model.cuda(), ids.cuda()
    with torch.no_grad():
        expected = model(ids)
        eager = median_of_rounds(lambda: model(ids))
    path = folder / f"gpt2_small.{config}.external.vmfb"
    started = time.perf_counter()
    module = schedc.load(str(path), device="cuda", params=str(archive))
    loaded = time.perf_counter() - started
    got = module.forward(ids, copy=True)
    error = float((got - expected).abs().max() / expected.abs().max())
    ms = median_of_rounds(lambda: module.forward(ids))
    print(f"gpt2_small {config}: module {path.stat().st_size / 2**20:.2f} MiB, load {loaded:.2f} s, "
          f"max error {error:.2e} (relative to max |y|), {ms:.3f} ms; torch eager {eager:.3f} ms")


def alternating_ms(calls: dict, rounds: int = 15, per_round: int = 20) -> dict:
    """Median per-call ms of each callable, in rounds that alternate between them."""
    import torch

    for call in calls.values():
        for _ in range(5):
            call()
    torch.cuda.synchronize()
    samples = {kind: [] for kind in calls}
    for _ in range(rounds):
        for kind, call in calls.items():
            torch.cuda.synchronize()
            start = time.perf_counter()
            for _ in range(per_round):
                call()
            torch.cuda.synchronize()
            samples[kind].append((time.perf_counter() - start) * 1e3 / per_round)
    return {kind: statistics.median(values) for kind, values in samples.items()}


def median_of_rounds(call) -> float:
    return alternating_ms({"one": call})["one"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    steps = parser.add_subparsers(dest="step", required=True)
    compile_ = steps.add_parser("compile")
    compile_.add_argument("--models", default=",".join(COMPILE_MODELS))
    compile_.add_argument("--json")
    equal = steps.add_parser("equal")
    equal.add_argument("--models", default=None)
    equal.add_argument("--gpu-dir")
    gpu = steps.add_parser("gpu")
    gpu.add_argument("folder")
    gpu.add_argument("--execution", choices=list(GPU_CONFIGS), required=True)
    args = parser.parse_args()
    if args.step == "compile":
        args.models = args.models.split(",")
        cmd_compile(args)
    elif args.step == "equal":
        from timing import bench_models

        args.models = args.models.split(",") if args.models else list(bench_models().SUITE)
        cmd_equal(args)
    else:
        cmd_gpu(args)


if __name__ == "__main__":
    os.environ.setdefault("PYTHONWARNINGS", "ignore")
    main()
