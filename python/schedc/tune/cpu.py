"""`schedc tune --target=llvm-cpu`: measure each convolution and matmul of a model in every CPU
mode and layout (schedc.decisions.cpu_config), keep the times in a CPU kernel database.

The same three steps as for GPUs; here the compile machine is usually the run machine, so
`schedc tune MODEL.mlir --target=llvm-cpu` runs all three:

    schedc tune prepare MODEL.mlir... --target=llvm-cpu -o tune/   # compile the candidates
    schedc tune bench tune/ --device=local-task                     # time them (runtime only)
    schedc tune merge tune/ --target=llvm-cpu --database=DB.json    # times into the database

`prepare` takes the model to the end of IREE's input phase and, for each distinct op
(`schedc.ir.cpu_ops.shaped_ops`), builds one module per mode holding one function per layout
IREE can build for it (`standalone_module`), compiled with that mode's flags. `bench` calls
each function on seeded random inputs already on the device, checks its outputs against IREE's
own build (plain mode, nchw) and takes the median of `calls` calls. `merge` writes every op's
times, those that matched, into the database, where a later compile finds them by the op's
shape (`CpuDatabase.exact`).
"""

from __future__ import annotations

import json
import statistics
import time
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np

from schedc.decisions.cpu_config import CHANNELS_LAST_MODES, IREE_DEFAULT, MODE_FLAGS, MODES, STACK_FLAG, CpuDatabase, CpuEntry, OpShape, default_database
from schedc.errors import CompileError, SchedcError
from schedc.outputs import check_output_folder, write_output
from schedc.targets import Target
from schedc.tune.bench import _host, open_device, parse_tensor_type, relative_error
from schedc.tune.prepare import MANIFEST, RESULTS, TOLERANCE, Progress, read_manifest, read_results


# What marks a folder as CPU op measurements (a GPU manifest for llvm-cpu, as the runtime-only
# GPU bench's test makes, has none).
MANIFEST_FORMAT = "schedc-cpu-tune/1"


def is_cpu_manifest(manifest: dict) -> bool:
    return manifest.get("format") == MANIFEST_FORMAT


@dataclass(frozen=True)
class CpuTuneOptions:
    target: Target
    iree_flags: tuple[str, ...] = ()
    known: frozenset[str] = frozenset()  # op keys to skip (already in a database)


def _input_module(source: Path, options: CpuTuneOptions):
    """The model at the end of IREE's input phase, parsed."""
    import tempfile

    from iree.compiler import ir

    from schedc.compiler.iree_tools import run_iree_tool
    from schedc.ir.mlirio import parse_module, printable

    with tempfile.TemporaryDirectory(prefix="schedc-tune-") as work:
        output = Path(work) / "input.mlir"
        run_iree_tool("iree-compile", [str(source), *options.target.iree_flags(), *options.iree_flags, "--compile-to=input", "-o", str(output)],
                      what=f"IREE's input conversion of {source}")
        return parse_module(printable(output.read_text()), str(source), ir.Context())


def prepare(models: list[str], folder: str, options: CpuTuneOptions, isa: str, modes: tuple[str, ...] = MODES) -> dict:
    """Compiles, for every distinct convolution and matmul of `models`, one module per mode
    (of `modes`; plain comes first, whose nchw build is the outputs' reference): a function per
    layout the op may take there. In a channels-last mode a convolution is measured as IREE
    builds it inside a run of them (NHWC in and out: `nhwc` in the manifest), and as schedc's
    NHWC kernel runs it there (`gemm`), the rest as they are."""
    if modes[0] != IREE_DEFAULT[0]:
        raise SchedcError(f"the modes measured start with {IREE_DEFAULT[0]} (the reference), not {modes[0]}")
    from schedc.ir.cpu_ops import channels_last_interior_module, shaped_ops, standalone_inputs, standalone_module

    if options.target.name != "llvm-cpu":
        raise SchedcError(f"CPU tuning is for llvm-cpu, not '{options.target.name}'")
    out = Path(folder)
    check_output_folder(folder, "tuning folder")
    out.mkdir(parents=True, exist_ok=True)
    jobs: dict[str, dict] = {}
    for model in models:
        module = _input_module(Path(model), options)
        for op, shape in shaped_ops(module.operation):
            if shape.key in jobs or shape.key in options.known:
                continue
            # The copy fills its output with zeros, so every layout is exact on it, Winograd too.
            text, layouts = standalone_module(op, replace(shape, accumulates=False).layouts())
            # a convolution schedc's NHWC kernel runs in the mode: timed there too
            kernel = shape.kind == "conv" and "gemm" in shape.layouts(CHANNELS_LAST_MODES[0]) and "gemm" in layouts
            # a channels-last mode's module: its text and layouts (none: the standalone one's nchw)
            interior, inside = (channels_last_interior_module(op, kernel) if shape.kind == "conv" else None) or (None, ["nchw"])
            jobs[shape.key] = {
                "name": f"k{len(jobs):03d}", "model": str(model), "shape": shape.to_json(),
                "operands": [str(v.type) for v in standalone_inputs(op)],
                "layouts": {mode: inside if mode in CHANNELS_LAST_MODES else layouts for mode in modes},
                "nhwc": [mode for mode in CHANNELS_LAST_MODES if interior is not None],
                "texts": {"": text, **({"nhwc": interior} if interior is not None else {})},
            }
    progress = Progress(len(jobs) * len(modes), "compiling candidates")
    kernels = []
    for job in jobs.values():
        sources = {}
        for variant, text in job.pop("texts").items():
            sources[variant] = out / f"{job['name']}{'.' + variant if variant else ''}.mlir"
            sources[variant].write_text(text)
        job["modules"], job["failed"] = {}, {}
        for mode in modes:
            vmfb = out / f"{job['name']}.{mode}.vmfb"
            try:
                _compile(sources["nhwc" if mode in job["nhwc"] else ""], vmfb, mode, options)
                job["modules"][mode] = vmfb.name
            except CompileError as e:
                job["failed"][mode] = str(e).splitlines()[1][:300] if "\n" in str(e) else str(e)[:300]
            progress.step(job["shape"]["kind"])
        kernels.append(job)
    progress.close()
    manifest = {"format": MANIFEST_FORMAT, "target": "llvm-cpu", "arch": options.target.arch, "isa": isa, "models": [str(m) for m in models],
                "kernels": kernels}
    write_output(str(out / MANIFEST), json.dumps(manifest, indent=1) + "\n")
    return manifest


def _compile(source: Path, output: Path, mode: str, options: CpuTuneOptions) -> None:
    from schedc.compiler.iree_tools import run_iree_tool

    flags = [*options.target.iree_flags(), *options.iree_flags, *MODE_FLAGS[mode], STACK_FLAG]
    run_iree_tool("iree-compile", [str(source), *flags, "-o", str(output)], what=f"IREE's {mode} build of {source.name}")


def bench(folder: str, device: str = "local-task", calls: int = 100, warmup: int = 5, progress=None) -> dict:
    """Times every function of every candidate module in `folder`; writes results.json."""
    import iree.runtime as rt

    out = Path(folder)
    manifest = read_manifest(folder)
    if not is_cpu_manifest(manifest):
        raise SchedcError(f"{folder} holds GPU candidates: bench it with 'schedc tune bench {folder}'")
    config = open_device(device, folder)
    started = time.perf_counter()
    results: dict[str, dict] = {}
    for number, kernel in enumerate(manifest["kernels"]):
        rng = np.random.default_rng(number + 1)
        types = [parse_tensor_type(t) for t in kernel["operands"]]
        host_inputs = [rng.standard_normal(shape).astype(dtype) for shape, dtype in types]
        results[kernel["name"]] = _bench_op(rt, config, out, kernel, host_inputs, calls, warmup)
        if progress is not None:
            progress(number + 1, len(manifest["kernels"]), kernel["name"])
    document = {"device": device, "calls": calls, "seconds": round(time.perf_counter() - started, 1), "kernels": results}
    write_output(str(out / RESULTS), json.dumps(document, indent=1) + "\n")
    return document


def _bench_op(rt, config, out: Path, kernel: dict, host_inputs, calls: int, warmup: int) -> dict:
    """Each candidate's outputs against IREE's own build, then `calls` rounds that time one
    call of every candidate in turn (a slow spell of the machine then falls on all of them),
    and each one's median."""
    inputs = [rt.asdevicearray(config.device, a) for a in host_inputs]
    measured, candidates, reference = {}, {}, None
    for mode, file in kernel["modules"].items():
        vm_module = rt.VmModule.mmap(config.vm_instance, str(out / file))
        functions = rt.SystemContext(vm_modules=[vm_module], config=config).modules[vm_module.name]
        nhwc = mode in kernel["nhwc"]  # its image comes and its result goes in NHWC
        args = [rt.asdevicearray(config.device, host_inputs[0].transpose(0, 2, 3, 1).copy()), *inputs[1:]] if nhwc else inputs
        for layout in kernel["layouts"][mode]:
            name = f"{mode}/{layout}"
            try:
                outputs = _host(functions[layout](*args))
            except (RuntimeError, ValueError) as e:
                measured[name] = {"time_us": None, "error": None, "failure": str(e).splitlines()[0][:300]}
                continue
            outputs = [o.transpose(0, 3, 1, 2) for o in outputs] if nhwc else outputs
            reference = outputs if reference is None else reference  # plain/nchw, IREE's own build, comes first
            measured[name] = {"error": max((relative_error(o, r) for o, r in zip(outputs, reference)), default=0.0)}
            candidates[name] = (functions[layout], args)
    times: dict[str, list[float]] = {name: [] for name in candidates}
    for round_ in range(warmup + calls):
        for name, (function, args) in candidates.items():
            start = time.perf_counter()
            function(*args)
            if round_ >= warmup:
                times[name].append(time.perf_counter() - start)
    for name, spent in times.items():
        measured[name]["time_us"] = round(statistics.median(spent) * 1e6, 2)
    return measured


def entries(manifest: dict, results: dict) -> list[CpuEntry]:
    """Each op's times that ran and matched IREE's own build within the element type's
    tolerance; an op whose own build did not run gives none."""
    found = []
    for kernel in manifest["kernels"]:
        shape = OpShape.from_json(kernel["shape"])
        measured = results.get(kernel["name"], {})
        if measured.get("/".join(IREE_DEFAULT), {}).get("time_us") is None:
            continue
        tolerance = TOLERANCE.get(shape.dtype, 1e-4)
        times = {k: m["time_us"] for k, m in measured.items() if m.get("time_us") is not None and m["error"] <= tolerance}
        found.append(CpuEntry(shape, times))
    return found


def merge(folder: str, database_path: str | None, isa: str, keys: tuple[str, ...] = ()) -> tuple[CpuDatabase, list[CpuEntry], str]:
    """Adds a benched folder's measured ops to a CPU database (by default the built-in one
    for `isa`, the host's). With `keys` ("mode/layout"), an op the database holds gets only
    those times, its others kept as they were measured."""
    manifest = read_manifest(folder)
    if not is_cpu_manifest(manifest):
        raise SchedcError(f"{folder} holds GPU candidates, not CPU op measurements: merge it with --target={manifest.get('target')}")
    results = read_results(folder, f"'schedc tune bench {folder}'")
    if not isinstance(manifest.get("isa"), str):
        raise SchedcError(f"{folder}/manifest.json: not a CPU tuning manifest (no isa)")
    if manifest["isa"] != isa:
        raise SchedcError(f"{folder} was measured on {manifest['isa']}, not {isa}")
    path = database_path or str(builtin_path(isa))
    database = CpuDatabase.load(path) if Path(path).exists() else (default_database(isa) if database_path is None else None)
    if database is not None and database.isa != isa:
        raise SchedcError(f"{path} holds times for {database.isa}, not {isa}")
    database = database or CpuDatabase(isa)
    kept = entries(manifest, results)
    for entry in kept:
        known = database.exact(entry.shape)
        if keys and known is not None:
            entry = CpuEntry(known.shape, {**known.times_us, **{k: t for k, t in entry.times_us.items() if k in keys}})
        database.add(entry)
    database.save(path)
    return database, kept, path


def builtin_path(isa: str) -> Path:
    return Path(__file__).resolve().parent.parent / "kernel_db" / f"cpu-{isa}.json"
