"""Layer by layer on the GPU: each layer of the held-out models compiled alone, its numerics and
its kernel time against torch's for the same op and dtype.

    python bench/layers.py prepare DIR [--models a,b] [--dtypes f32,f16] [--triton [--triton-tf32] [--triton-channels-last]]   # here: compile
    python bench/layers.py run DIR                                          # GPU machine, with ncu
    python bench/layers.py table DIR                                        # the table again

`prepare` runs each held-out model (bench/heldout.py) once on the CPU with hooks on its leaf
modules, in the order they run. A layer is a convolution, linear layer, pooling or norm, with
the elementwise layers right after it that read its output (ReLU, batch norm ...), which IREE
fuses into it. Layers of the same modules and input shape are one. A layer's input is the
activation the model gave it, and its weights come from a seed; the GPU machine finds the same
layers and inputs by running the same models itself, so nothing but the modules travels, and
they keep their weights outside (a parameter archive written there). Each is compiled for cuda
twice: IREE's own kernel configs (`tuning=False`) and schedc's.

`run` runs `measure` under Nsight Compute (`--clock-control none`, gpu__time_duration): after
the numerics and a warm-up, each layer once by torch (CUDA, the same dtype, TF32 off) and once
by each module, a `torch.cuda._sleep` marker kernel before each run; what comes before the
first marker is not timed. Numerics: each module's
output against torch's on the same GPU (max |diff| / max |torch|). Time: the sum of each one's
kernels. The table gives both per layer, and the share of contraction layers whose schedc time
is within 1.5x of torch's.
"""

from __future__ import annotations

import argparse
import copy
import json
import math
import subprocess
import sys
import zlib
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from timing import ncu_kernel_times  # noqa: E402

VARIANTS = {"iree": {"tuning": False}, "schedc": {}}  # module name -> schedc.compile keywords
# `prepare --triton`: also the modules with schedc's Triton kernel on every f16 convolution, and
# with none (IREE's kernels as schedc configures them); "schedc" takes the rule's choice
TRITON = {"schedc-triton": {"passes": "triton-conv{every=true},memory-order,arena-plan"},
          "schedc-iree-conv": {"passes": "triton-conv{enabled=false},memory-order,arena-plan"}}


def add_triton_options(parser, arch: bool = False) -> None:
    """The options that `--triton`'s modules pass on to triton-conv (this script's and
    bench/generalization.py's)."""
    if arch:
        parser.add_argument("--triton-arch", type=int, default=0, choices=(0, 80, 90),
                            help="with --triton: the GPU its kernels are compiled for (triton-conv's arch; 0: the compile's --cuda-arch)")
    parser.add_argument("--triton-tf32", action="store_true",
                        help="with --triton: f32 convolutions in the kernel too, multiplied in TF32 (triton-conv{tf32=true})")
    parser.add_argument("--triton-channels-last", action="store_true",
                        help="with --triton: the kernel reads NHWC images and RSCF filters (triton-conv{layout=nhwc})")


def with_triton_options(passes: str, args) -> str:
    """`passes` with those options added to its triton-conv{...}."""
    extra = ((f" arch={args.triton_arch}" if getattr(args, "triton_arch", 0) else "") + (" tf32=true" if args.triton_tf32 else "")
             + (" layout=nhwc" if args.triton_channels_last else ""))
    return passes.replace("}", extra + "}", 1)


CONTRACTIONS = ("Conv2d", "Linear", "Conv1D")
LAYER_KINDS = CONTRACTIONS + ("MaxPool2d", "AvgPool2d", "AdaptiveAvgPool2d", "BatchNorm2d", "LayerNorm", "LlamaRMSNorm")
FUSED_AFTER = ("ReLU", "ReLU6", "BatchNorm2d", "Hardswish", "SiLU", "GELU", "Sigmoid", "GELUActivation", "NewGELUActivation")
MARKER = "spin_kernel"  # torch.cuda._sleep's kernel: what separates one run from the next in ncu's list


def heldout():
    """The held-out models (bench/heldout.py) and the fitting set (bench/fitting.py), by name."""
    import fitting  # noqa: E402
    import heldout as models  # noqa: E402

    return {**models.HELDOUT, **fitting.FITTING}


def _kind(module) -> str:
    return type(module).__name__


def seed_of(key: str) -> int:
    return zlib.crc32(key.encode())


def reinit(layer, seed: int) -> None:
    """Weights from `seed` alone, in f32 (convert after): a weight N(0, 1/fan_in), a norm's
    scale about 1, biases and shifts small, a batch norm's running variance about 1."""
    import torch

    generator = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for name, tensor in sorted(layer.state_dict(keep_vars=True).items()):
            if not tensor.is_floating_point():
                continue
            noise = torch.randn(tensor.shape, generator=generator, dtype=torch.float32)
            leaf = name.rsplit(".", 1)[-1]
            if leaf == "running_var":
                value = 1 + 0.1 * noise.abs()
            elif tensor.dim() >= 2:
                value = noise / math.sqrt(max(1, tensor[0].numel()))
            elif leaf == "weight":  # a norm's scale
                value = 1 + 0.1 * noise
            else:
                value = 0.1 * noise
            tensor.data = value


def record_layers(model, args) -> list[tuple[list, object]]:
    """(modules, input) of each layer as the model runs on `args`, in order."""
    import torch

    calls, keep = [], []

    def before(module, inputs):
        x = inputs[0] if len(inputs) == 1 else None
        if isinstance(x, torch.Tensor) and x.is_floating_point():
            calls.append([module, x.detach().clone(), id(x), None])

    def after(module, inputs, output):
        if calls and calls[-1][0] is module and isinstance(output, torch.Tensor):
            calls[-1][3] = id(output)
            keep.append(output)  # alive until the end: no id is reused

    leaves = [m for m in model.modules() if not list(m.children())]
    handles = [m.register_forward_pre_hook(before) for m in leaves] + [m.register_forward_hook(after) for m in leaves]
    try:
        with torch.no_grad():
            model(*args)
    finally:
        for handle in handles:
            handle.remove()
    layers: list[tuple[list, object, int]] = []
    for module, x, in_id, out_id in calls:
        kind = _kind(module)
        if layers and kind in FUSED_AFTER and layers[-1][2] == in_id and _kind(layers[-1][0][0]) in CONTRACTIONS + ("BatchNorm2d",):
            layers[-1][0].append(module)
            layers[-1] = (layers[-1][0], layers[-1][1], out_id)
        elif kind in LAYER_KINDS:
            layers.append(([module], x, out_id))
    return [(modules, x) for modules, x, _ in layers]


def layer_key(modules: list, x) -> str:
    return " | ".join(repr(m) for m in modules) + f" @ {tuple(x.shape)} {str(x.dtype).removeprefix('torch.')}"


def distinct_layers(model, args) -> list[dict]:
    """The model's layers, one of each (modules, input shape, dtype): {key, module, input}."""
    import torch

    seen, result = set(), []
    for modules, x in record_layers(model, args):
        key = layer_key(modules, x)
        if key in seen:
            continue
        seen.add(key)
        layer = torch.nn.Sequential(*(copy.deepcopy(m) for m in modules)).eval()
        for m in layer.modules():
            if hasattr(m, "inplace"):
                m.inplace = False
        result.append({"key": key, "module": layer, "input": x})
    return result


def seeded(layer, seed: int, dtype):
    """The layer's weights from `seed` (in f32), then in `dtype`."""
    import torch

    layer = copy.deepcopy(layer).to(torch.float32)
    reinit(layer, seed)
    return layer.to(dtype).eval()


TORCH_DTYPES = {"f32": "float32", "f16": "float16", "bf16": "bfloat16"}


def model_layers(name: str, dtype: str) -> list[dict]:
    """The distinct layers of held-out (or fitting) model `name` in `dtype`, each with its seeded weights:
    the same list here and on the GPU machine."""
    import torch

    from schedc.torch.importer import convert_precision

    model, inputs = heldout()[name]()
    if dtype != "f32":
        model, inputs = convert_precision(model, inputs, dtype)
    layers = distinct_layers(model.eval(), inputs)
    for index, layer in enumerate(layers):  # a seed by position: torch's reprs change between versions
        layer["seed"] = seed_of(f"{name}.{dtype}.{index}")
        layer["module"] = seeded(layer["module"], layer["seed"], getattr(torch, TORCH_DTYPES[dtype]))
    return layers


def prepare(args) -> None:
    import schedc

    folder = Path(args.folder)
    (folder / "layers").mkdir(parents=True, exist_ok=True)
    manifest = []
    triton = {name: {"passes": with_triton_options(keywords["passes"], args)} for name, keywords in TRITON.items()}
    variants = {**VARIANTS, **(triton if args.triton else {})}
    for name in args.models.split(","):
        for dtype in args.dtypes.split(","):
            for index, entry in enumerate(model_layers(name, dtype)):
                stem = f"{name}.{dtype}.{index}"
                layer, x, seed = entry["module"], entry["input"], entry["seed"]
                archive = folder / "layers" / f"{stem}.irpa"  # written by the import, not kept: run writes its own
                mlir = schedc.import_torch(layer, x, params=str(archive))
                archive.unlink(missing_ok=True)
                for variant, keywords in variants.items():
                    schedc.compile(mlir, target="cuda", output=str(folder / "layers" / f"{stem}.{variant}.vmfb"), **keywords)
                kinds = [_kind(m) for m in layer]
                manifest.append({"stem": stem, "model": name, "dtype": dtype, "kinds": kinds, "shape": list(x.shape),
                                 "seed": seed, "key": entry["key"], "contraction": kinds[0] in CONTRACTIONS, "variants": list(variants)})
                print(f"{stem}: {'+'.join(kinds)} {list(x.shape)}", flush=True)
    (folder / "layers.json").write_text(json.dumps(manifest, indent=1) + "\n")
    print(f"{len(manifest)} layers in {folder / 'layers.json'}")


def relative_error(actual, expected) -> float:
    """max |actual - expected| / max |expected|, in f32."""
    expected = expected.float()
    return float((actual.float() - expected).abs().max() / max(float(expected.abs().max()), 1e-30))


def module_calls(layer, x, archive, modules: dict[str, Path]) -> tuple[dict, dict]:
    """On the GPU: torch's call of `layer` on `x` and each module's (by label, its weights from
    `archive`, None for none), each called once to warm it; and each module's error against
    torch's output."""
    import torch

    import schedc

    reference = layer(x)
    calls, errors = {"torch": (lambda: layer(x))}, {}
    for label, path in modules.items():
        module = schedc.load(str(path), device="cuda", params=str(archive) if archive else None)
        errors[label] = relative_error(module.forward(x, copy=True), reference)
        calls[label] = lambda module=module: module.forward(x)
    for call in calls.values():  # warm: first calls load and allocate
        call()
    torch.cuda.synchronize()
    return calls, errors


def measure(args) -> None:
    """On the GPU, under ncu or not: numerics, then one profiled run of every layer."""
    import torch

    from schedc.torch.parameters import save_params

    torch.backends.cudnn.allow_tf32 = False
    torch.backends.cuda.matmul.allow_tf32 = False
    folder = Path(args.folder)
    manifest = json.loads((folder / "layers.json").read_text())
    found: dict[str, dict] = {}
    for name, dtype in dict.fromkeys((e["model"], e["dtype"]) for e in manifest):
        found.update({f"{name}.{dtype}.{index}": layer for index, layer in enumerate(model_layers(name, dtype))})
    runs, numerics = [], {}
    with torch.no_grad():
        for entry in manifest:
            stem = entry["stem"]
            found_layer = found.get(stem)
            if found_layer is None or [_kind(m) for m in found_layer["module"]] != entry["kinds"] or list(found_layer["input"].shape) != entry["shape"]:
                sys.exit(f"{stem}: this machine's {entry['model']} has no layer {'+'.join(entry['kinds'])} of input {entry['shape']}")
            archive = folder / "layers" / f"{stem}.irpa" if found_layer["module"].state_dict() else None  # pooling: no weights
            if archive:
                save_params(found_layer["module"], str(archive))
            layer, x = found_layer["module"].cuda(), found_layer["input"].cuda()
            calls, errors = module_calls(layer, x, archive, {variant: folder / "layers" / f"{stem}.{variant}.vmfb" for variant in entry.get("variants", VARIANTS)})
            numerics[stem] = errors
            runs.append((stem, calls))
        for stem, calls in runs:
            for call in calls.values():
                torch.cuda._sleep(1000)
                call()
                torch.cuda.synchronize()
    (folder / "layers.numerics.json").write_text(json.dumps({"order": [[stem, list(calls)] for stem, calls in runs], "errors": numerics}, indent=1))


def split_by_marker(kernels: list[tuple[str, float]]) -> list[list[tuple[str, float]]]:
    """ncu's kernels in launch order -> the runs between markers (a run after each marker;
    what comes before the first is not timed)."""
    runs: list[list[tuple[str, float]]] = []
    for name, us in kernels:
        if MARKER in name:
            runs.append([])
        elif runs:
            runs[-1].append((name, us))
    return runs


def measured_under_ncu(script: str, folder: Path, name: str) -> tuple[dict, list[list[tuple[str, float]]]]:
    """Runs `script measure folder` under Nsight Compute: what it wrote to
    folder/NAME.numerics.json, and the kernels of each run between its markers (the log in
    folder/NAME.ncu.csv). Every kernel of the process is listed (an NVTX range is per thread,
    and IREE may launch from its own): the markers say where the timed runs start."""
    log = folder / f"{name}.ncu.csv"
    command = ["ncu", "--clock-control", "none", "--metrics", "gpu__time_duration.sum", "--csv",
               "--log-file", str(log), sys.executable, script, "measure", str(folder)]
    done = subprocess.run(command, capture_output=True, text=True)
    if done.returncode:
        sys.exit(f"measure failed under ncu:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}")
    measured = json.loads((folder / f"{name}.numerics.json").read_text())
    return measured, split_by_marker(ncu_kernel_times(log.read_text()))


def run(args) -> None:
    folder = Path(args.folder)
    log = folder / "layers.ncu.csv"
    measured, found = measured_under_ncu(__file__, folder, "layers")
    wanted = sum(len(who) for _, who in measured["order"])
    if len(found) != wanted:
        sys.exit(f"ncu listed {len(found)} runs between markers, measure made {wanted}: see {log}")
    runs = iter(found)
    times = {}
    for stem, who in measured["order"]:
        times[stem] = {w: sum(us for _, us in next(runs)) for w in who}
    results = {stem: {"errors": measured["errors"][stem], "us": times[stem]} for stem in times}
    (folder / "layers.results.json").write_text(json.dumps(results, indent=1) + "\n")
    table(args)


def table(args) -> None:
    folder = Path(args.folder)
    manifest = {e["stem"]: e for e in json.loads((folder / "layers.json").read_text())}
    results = json.loads((folder / "layers.results.json").read_text())
    triton = any("schedc-triton" in row["us"] for row in results.values())
    extra = f" {'no-tri us':>9} {'triton us':>9} {'triton/torch':>12}" if triton else ""
    print(f"{'layer':<24} {'kinds':<26} {'input':<18} {'err IREE':>9} {'err schedc':>10} {'torch us':>9} {'IREE us':>8} {'schedc us':>9} {'schedc/torch':>12}{extra}")
    within, within_triton = {}, {}
    for stem, row in results.items():
        entry = manifest[stem]
        us, errors = row["us"], row["errors"]
        ratio = us["schedc"] / us["torch"] if us["torch"] else float("inf")
        extra = ""
        if "schedc-triton" in us:
            triton_ratio = us["schedc-triton"] / us["torch"] if us["torch"] else float("inf")
            extra = f" {us.get('schedc-iree-conv', float('nan')):>9.1f} {us['schedc-triton']:>9.1f} {triton_ratio:>11.2f}x"
            if entry["contraction"]:
                within_triton.setdefault(entry["dtype"], []).append(triton_ratio <= 1.5)
        if entry["contraction"]:
            within.setdefault(entry["dtype"], []).append(ratio <= 1.5)
        shape = "x".join(map(str, entry["shape"]))
        print(f"{stem:<24} {'+'.join(entry['kinds'])[:26]:<26} {shape:<18} {errors['iree']:>9.1e} {errors['schedc']:>10.1e} "
              f"{us['torch']:>9.1f} {us['iree']:>8.1f} {us['schedc']:>9.1f} {ratio:>11.2f}x{extra}")
    for label, shares in (("schedc", within), ("schedc with triton-conv", within_triton)):
        for dtype, flags in sorted(shares.items()):
            print(f"{label}, {dtype}: {sum(flags)} of {len(flags)} contraction layers ({sum(flags) / len(flags):.0%}) within 1.5x of torch's kernels")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("step", choices=("prepare", "run", "measure", "table"))
    parser.add_argument("folder")
    parser.add_argument("--models", default="squeezenet1_1,shufflenet_v2,hf_resnet18,hf_mobilenet_v2")
    parser.add_argument("--dtypes", default="f32,f16")
    parser.add_argument("--triton", action="store_true",
                        help="prepare: also the modules with schedc's Triton kernel on every f16 convolution, and with none")
    add_triton_options(parser)
    args = parser.parse_args()
    {"prepare": prepare, "run": run, "measure": measure, "table": table}[args.step](args)


if __name__ == "__main__":
    main()
