"""torch.compile(backend="schedc") against eager and Inductor, and its disk cache across processes.

    python bench/dynamo.py cache [--models plain_cnn transformer]   # here, on the CPU
    python bench/dynamo.py prepare DIR                              # here: modules for CUDA
    python bench/dynamo.py run DIR                                  # GPU machine: latency

`cache`: for each model, a first process compiles it through torch.compile into an empty cache
folder, a second process runs the same program on that folder. Each reports the time from
`torch.compile` to the end of the first call (dynamo's tracing, the compile or the cache
look-up, the module's load and the call; torch._dynamo is imported before, in both) and the
time spent in the schedc backend alone (compile, or cache look-up and load), and the ratio; a
third process times the same first call with dynamo's own "eager" backend, dynamo's share,
which a second process pays again. Then the same with torch 2.13's experimental ahead-of-time
compile (`torch._dynamo.config.enable_aot_compile`; the schedc backend's result can be saved):
a first process traces, compiles and saves dynamo's result, a second loads it and calls.

`prepare` (needs the compiler): each bench model's dynamo graph, compiled by the schedc backend's
own path (weights frozen inside the backend call, torch-mlir, schedc.compile for cuda with its
kernel configs and replay, execution="graphs"; `--passes` as the backend's `options={"passes":
...}`, e.g. `memory-order,arena-plan{persistent-fills=true}`), as DIR/<model>.vmfb, with the model's weights
as DIR/<model>.pt and DIR/manifest.json (with the shapes of the inputs the module takes). The
GPU machine has another torch (2.11) than this one, so dynamo's graph code and cache keys
differ there: `run` hands each graph dynamo captures there to the backend's runtime half
(schedc.torch.dynamo's FrozenGraph and CompiledGraph, the backend's own call wrapper) with the module
prepared here, after checking that graph takes the same inputs, instead of compiling.

`run` (needs torch with CUDA, iree-base-runtime and numpy; DIR holds all it reads besides this
repository's bench/, examples/ and python/schedc/): batch-1 latency on cuda of eager,
torch.compile's Inductor (mode "default" and "reduce-overhead") and the schedc backend
(`schedc`: results copied once on the device, the backend's default; `schedc_static_outputs`:
the replay's static buffers returned, as mode="reduce-overhead" does), the median of 200 calls after 20 warm-ups, input already on the device, synchronised per call, TF32
off; each output checked against eager. Writes DIR/dynamo.json and prints a table.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))
from timing import median_ms  # noqa: E402

try:
    import schedc  # noqa: F401
except ImportError:  # the GPU machine: the package's source, not an installed schedc
    sys.path.insert(0, str(ROOT / "python"))

import models as bench_models  # noqa: E402


def relative_error(actual, expected) -> float:
    actual, expected = actual.double().cpu(), expected.double().cpu()
    return ((actual - expected).norm() / expected.norm()).item()


def capture_graphs(model, args) -> list:
    """The graphs dynamo captures for `model(*args)` as the backend sees them (FrozenGraph,
    built inside the backend call, as schedc's backend does), with their example inputs."""
    import torch

    from schedc.torch.dynamo import FrozenGraph

    graphs = []

    def capture(gm, example_inputs):
        graphs.append((FrozenGraph.build(gm, example_inputs), list(example_inputs)))
        return gm.forward

    torch._dynamo.reset()
    with torch.no_grad():
        torch.compile(model, backend=capture)(*args)
    return graphs


# -- cache: a second process against the first -----------------------------------------------

_FIRST_CALL = """
import sys, time, json
sys.path.insert(0, {bench!r})
import torch, torch._dynamo  # dynamo's import: a cost of the process, not of the first call
import schedc.torch.dynamo
import models

backend_seconds = []
compile_or_fall_back = schedc.torch.dynamo.compile_or_fall_back


def timed(*args, **kwargs):  # the schedc backend's own share: compile or cache look-up, load
    start = time.perf_counter()
    try:
        return compile_or_fall_back(*args, **kwargs)
    finally:
        backend_seconds.append(time.perf_counter() - start)


schedc.torch.dynamo.compile_or_fall_back = timed
model, args = models.SUITE[{name!r}]()
mode, cache = {mode!r}, {cache!r}
options = {{"fallback": False, "cache_dir": cache}}
if mode.startswith("aot"):  # torch's ahead-of-time compile (experimental in torch 2.13)
    from torch._dynamo.aot_compile import ModelInput

    torch._dynamo.config.enable_aot_compile = True
with torch.no_grad():
    start = time.perf_counter()
    if mode == "compile":
        compiled = torch.compile(model, backend="schedc", options=options)
    elif mode == "eager":  # dynamo with its "eager" backend: the floor a cache hit cannot go below
        compiled = torch.compile(model, backend="eager")
    elif mode == "aot-save":  # trace and compile, then save dynamo's result beside the cache
        compiled = torch.compile(model, fullgraph=True, backend="schedc", options=options)
        compiled._aot_compile([ModelInput(tuple(args), {{}}, [torch.no_grad()])])
        compiled._save_aot_compiled_module(cache + "/dynamo-aot.bin")
    else:  # aot-load: dynamo's saved result, no tracing; the backend's result loads its module
        compiled = torch.compile(model, fullgraph=True, backend="schedc", options=options)
        with open(cache + "/dynamo-aot.bin", "rb") as saved:
            compiled._load_aot_compiled_module(saved.read())
    out = compiled(*args)
    seconds = time.perf_counter() - start
    error = ((out - model(*args)).norm() / model(*args).norm()).item()
print(json.dumps({{"seconds": seconds, "backend_seconds": sum(backend_seconds), "error": error}}))
"""


def first_call(name: str, cache: str, mode: str) -> dict:
    script = _FIRST_CALL.format(bench=str(ROOT / "bench"), name=name, cache=cache, mode=mode)
    run = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    if run.returncode != 0:
        raise SystemExit(f"{name}: the benchmark process failed:\n{run.stderr[-3000:]}")
    return json.loads(run.stdout.strip().splitlines()[-1])


def cache_command(args) -> None:
    print("first call (s): from torch.compile to the end of the first call; backend: in the schedc backend (s);")
    print("dynamo alone: the first call with dynamo's 'eager' backend (s); aot: torch 2.13's experimental")
    print("ahead-of-time compile, 1st process traces, compiles and saves, 2nd loads dynamo's saved result (s)")
    print(
        f"{'model':<14} {'1st process':>11} {'2nd process':>11} {'ratio':>6} {'1st backend':>11} {'2nd backend':>11} "
        f"{'dynamo alone':>12} {'aot 1st':>8} {'aot 2nd':>8} {'ratio':>6}  rel. error"
    )
    for name in args.models:
        cache, aot = tempfile.mkdtemp(prefix="schedc-dynamo-cache-"), tempfile.mkdtemp(prefix="schedc-dynamo-aot-")
        try:
            cold, warm, floor = first_call(name, cache, "compile"), first_call(name, cache, "compile"), first_call(name, "", "eager")
            saved, loaded = first_call(name, aot, "aot-save"), first_call(name, aot, "aot-load")
        finally:
            shutil.rmtree(cache, ignore_errors=True)
            shutil.rmtree(aot, ignore_errors=True)
        print(
            f"{name:<14} {cold['seconds']:>11.2f} {warm['seconds']:>11.2f} {cold['seconds'] / warm['seconds']:>6.1f} "
            f"{cold['backend_seconds']:>11.2f} {warm['backend_seconds']:>11.3f} {floor['seconds']:>12.2f} "
            f"{saved['seconds']:>8.2f} {loaded['seconds']:>8.3f} {saved['seconds'] / loaded['seconds']:>6.1f}  "
            f"{max(r['error'] for r in (cold, warm, saved, loaded)):.1e}",
            flush=True,
        )


# -- prepare (here) and run (GPU machine) ---------------------------------------------------


def prepare_command(args) -> None:
    import torch

    from schedc.torch.dynamo import BackendOptions, compiled_module

    folder = Path(args.dir)
    folder.mkdir(parents=True, exist_ok=True)
    options = BackendOptions(target=args.target, fallback=False, cache_dir=str(folder / "cache"), passes=args.passes)
    manifest = {}
    for name in args.models:
        model, inputs = bench_models.SUITE[name]()
        graphs = capture_graphs(model, inputs)
        if len(graphs) != 1:
            print(f"{name}: skipped, dynamo captured {len(graphs)} graphs (the run maps one graph to one module)")
            continue
        graph, example_inputs = graphs[0]
        path = compiled_module(graph, example_inputs, args.target, options)
        shutil.copyfile(path, folder / f"{name}.vmfb")
        torch.save(model.state_dict(), folder / f"{name}.pt")
        manifest[name] = {
            "module": f"{name}.vmfb", "weights": f"{name}.pt", "target": args.target,
            "execution": options.execution_for(args.target), "passes": args.passes,
            "inputs": [list(example_inputs[i].shape) for i in graph.input_positions], "weights_frozen": len(graph.weights),
        }
        print(f"{name}: {folder / (name + '.vmfb')}")
    shutil.rmtree(folder / "cache", ignore_errors=True)
    (folder / "manifest.json").write_text(json.dumps(manifest, indent=1))


def run_command(args) -> None:
    import torch

    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    on_gpu = args.device == "cuda"
    folder = Path(args.dir)
    manifest = json.loads((folder / "manifest.json").read_text())
    results = {}
    for name, entry in manifest.items():
        if args.models and name not in args.models:
            continue
        model, inputs = bench_models.SUITE[name]()
        model.load_state_dict(torch.load(folder / entry["weights"]))
        model = model.to(args.device).eval()
        inputs = tuple(x.to(args.device) for x in inputs)
        iree_device = "cuda" if on_gpu else "local-task"
        results[name] = measure(model, inputs, folder, entry, iree_device, on_gpu, args.repeats)
        print(name, json.dumps(results[name]), flush=True)
        (folder / "dynamo.json").write_text(json.dumps(results, indent=1))  # a timeout keeps the rows so far
    (folder / "dynamo.json").write_text(json.dumps(results, indent=1))
    passes = {entry.get("passes") for entry in manifest.values()}
    print(f"schedc's modules: passes {', '.join(sorted(p or 'default' for p in passes))}")
    print_table(results)


def prepared_backend(folder: Path, entry: dict, iree_device: str, static_outputs: bool):
    """A dynamo backend that runs the module `prepare` compiled, through schedc's own call
    wrapper (FrozenGraph + CompiledGraph: the weights frozen, the user's tensors passed), under
    this machine's torch, whose dynamo graph may differ in code but must take the same inputs."""
    from schedc.torch.dynamo import CompiledGraph, FrozenGraph

    def backend(gm, example_inputs):
        graph = FrozenGraph.build(gm, example_inputs)
        shapes = [list(example_inputs[i].shape) for i in graph.input_positions]
        if shapes != entry["inputs"]:
            raise RuntimeError(
                f"this torch's dynamo graph takes inputs {shapes} ({len(graph.weights)} weights frozen); "
                f"the prepared module takes {entry['inputs']} ({entry['weights_frozen']} weights frozen)"
            )
        return CompiledGraph(graph, folder / entry["module"], iree_device, entry.get("execution", "streams"), static_outputs)

    return backend


def measure(model, inputs, folder: Path, entry: dict, iree_device: str, on_gpu: bool, repeats: int) -> dict:
    import torch

    with torch.no_grad():
        expected = model(*inputs)
    variants = {
        "eager": lambda: model,
        "inductor": lambda: torch.compile(model),
        "inductor_reduce_overhead": lambda: torch.compile(model, mode="reduce-overhead"),
        "schedc": lambda: torch.compile(model, backend=prepared_backend(folder, entry, iree_device, False)),
        "schedc_static_outputs": lambda: torch.compile(model, backend=prepared_backend(folder, entry, iree_device, True)),
    }
    result = {}
    for variant, make in variants.items():
        torch._dynamo.reset()
        try:
            compiled = make()

            def call():
                compiled(*inputs)
                if on_gpu:
                    torch.cuda.synchronize()

            with torch.no_grad():
                error = relative_error(compiled(*inputs), expected)
                result[variant] = {"ms": median_ms(call, repeats=repeats, warmup=20), "rel_error": error}
        except Exception as e:  # one failing variant must not lose the others' figures
            result[variant] = {"error": f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"}
    return result


def print_table(results: dict) -> None:
    variants = ["eager", "inductor", "inductor_reduce_overhead", "schedc", "schedc_static_outputs"]
    print("median ms per call, batch 1; schedc/inductor: the schedc backend's time over Inductor's default mode")
    print(f"{'model':<14}" + "".join(f"{v:>26}" for v in variants) + f"{'schedc/inductor':>17}")
    for name, result in results.items():
        cells = [f"{result[v]['ms']:.3f}" if "ms" in result.get(v, {}) else "failed" for v in variants]
        ratio = result["schedc"]["ms"] / result["inductor"]["ms"] if "ms" in result["schedc"] and "ms" in result["inductor"] else float("nan")
        print(f"{name:<14}" + "".join(f"{c:>26}" for c in cells) + f"{ratio:>17.2f}")
    for name, result in results.items():
        for variant, row in result.items():
            if "error" in row:
                print(f"{name} {variant}: {row['error']}")


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    commands = parser.add_subparsers(dest="command", required=True)
    cache = commands.add_parser("cache", help="first call: a second process against the first (CPU)")
    cache.add_argument("--models", nargs="+", default=["plain_cnn", "transformer", "resnet18"], choices=sorted(bench_models.SUITE))
    prepare = commands.add_parser("prepare", help="compile the bench models' graphs for cuda into DIR")
    prepare.add_argument("dir")
    prepare.add_argument("--target", default="cuda", help="cuda (default), or llvm-cpu to try `run --device=cpu` here")
    prepare.add_argument("--models", nargs="+", default=sorted(bench_models.SUITE), choices=sorted(bench_models.SUITE))
    prepare.add_argument("--passes", default=None, help="the backend's pass pipeline (options={'passes': ...}); default: schedc's own")
    run = commands.add_parser("run", help="GPU machine: latency of eager, Inductor and schedc")
    run.add_argument("dir")
    run.add_argument("--device", default="cuda", choices=["cuda", "cpu"], help="cpu: a check of the script here (modules prepared with --target=llvm-cpu)")
    run.add_argument("--repeats", type=int, default=200)
    run.add_argument("--models", nargs="+", default=None)
    args = parser.parse_args(argv)
    {"cache": cache_command, "prepare": prepare_command, "run": run_command}[args.command](args)


if __name__ == "__main__":
    main()
