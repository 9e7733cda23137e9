"""Per-call overhead of static replay on a CUDA GPU, against IREE's default path.

    python bench/replay.py prepare build/replay          # here: compile for cuda (sm_80)
    python bench/replay.py run build/replay streams      # GPU machine: IREE's default path
    python bench/replay.py run build/replay graphs       #   the replayed modules (own process)
    ncu --cache-control none --clock-control none --metrics gpu__time_duration.sum --csv python bench/replay.py \\
        kernels build/replay graphs --key randwire.replay-waves > build/replay/ncu.graphs.randwire.replay-waves.csv
    python bench/replay.py trace build/replay graphs     #   their kernels as the graph runs them
    python bench/replay.py table build/replay            # the table

Kernel times are read from files `ncu.<execution>.<key>,<key>,....csv`: Nsight Compute's CSV of
the `kernels` step for those modules (all of the execution mode's modules without --key). Profile
the replayed modules one --key per process, as above: under Nsight Compute a process that
loaded several replayed modules in turn ended in "double free or corruption" in IREE's
teardown (H200, 2026-11-30).

Models (bench/models.py, batch 1): inception, randwire (branchy), transformer. Variants:
`iree-default` (IREE alone, stream execution: its default path), `replay-serial` (schedc's
memory-order + arena-plan, kernels serialized, replayed with --execution=graphs),
`replay-waves` (the same plus stream-schedule{mode=max-concurrency}: its waves become
parallel branches of the one recorded graph), `replay-fills` (replay-serial plus overlap-fills:
fills beside the kernel before them; `bench/graph_fills.py DIR` times it against replay-serial
in one process), `replay-pinned` (replay-serial with arena-plan{persistent-fills=true}: padded
buffers pinned, their fills run once when the module loads; also in graph_fills.py) and
`replay-waves-pinned` (the same for replay-waves), and `iree-k-serial` / `iree-k-waves` (the two
replays with IREE's own kernel configs, --no-tuning, whose kernels leave most SMs idle). Each
module runs in a process of its own (IREE reads the CUDA driver's mode once per process); a
replayed module that fails is run again on the stream (execution="streams"), to tell the
graph from the module.

Per call: the median of 200 calls after 20 warm-ups, each synchronous (the call returns when
its results are ready), with the input and the result as IREE device arrays (`device`), as
torch CUDA tensors through DLPack (`torch`: the same tensor every call, which the runtime
imports once and the module's kept recording copies in; `alt`: two tensors in turn, which
torch writes into the static input), and from numpy (`numpy`: copy in and out). The
device-array and torch calls are timed interleaved (blocks of 20 calls each, in turn), so that
drift of the machine falls on both; `torch/device` is the ratio of their medians.
Kernel time: Nsight Compute's gpu__time_duration.sum of every kernel of KERNEL_CALLS calls
(`kernels` step; a torch fill before and after a module's calls marks them), per call.
`trace` (any process, no Nsight Compute): each module's kernels as its replayed graph runs
them, through torch.profiler (CUPTI): per call the GPU span, the time any kernel runs (busy),
the dispatches' summed time (more than busy where waves run kernels side by side, and each
runs slower then) and the fills' and copies' (memset/memcpy nodes); span - busy is the GPU
idle between them. Overhead = device-array call time - kernel time, meaningful for modules whose kernels run one
after another (iree-default, replay-serial). Nsight Compute serializes kernels and, by default,
flushes the caches before each (--cache-control all), which made kernels slower than in a
call (negative overheads, measured on the H200 on 2026-11-30): run it with
`--cache-control none --clock-control none`. Host copies of the torch path: the IREE
allocator's host bytes allocated over 50 calls (0: no host copy) and the input's and result's
devices. Numerics: the max relative
error of each module's output against torch eager on the same GPU. References: torch eager and
torch.compile(mode="reduce-overhead") (skip with --no-torch-compile).
"""

from __future__ import annotations

import argparse
import ast
import csv
import io
import json
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from timing import load_model, median_ms, save_model  # noqa: E402

REPEATS, WARMUP, KERNEL_CALLS, TRACE_CALLS = 200, 20, 5, 20
MODELS = ("inception", "randwire", "transformer")
SERIAL, WAVES = "memory-order,arena-plan", "memory-order,stream-schedule{mode=max-concurrency streams=8},arena-plan"
VARIANTS = {  # name -> (schedc pipeline or None for IREE alone, execution, schedc's kernel configs)
    "iree-default": (None, "streams", False),
    "replay-serial": (SERIAL, "graphs", True),
    "replay-waves": (WAVES, "graphs", True),
    "replay-fills": (SERIAL + ",overlap-fills", "graphs", True),  # replay-serial with its fills beside kernels
    # replay-serial with padded buffers pinned in the arena, their fills run once at load
    "replay-pinned": (SERIAL + "{persistent-fills=true}", "graphs", True),
    "replay-waves-pinned": (WAVES + "{persistent-fills=true}", "graphs", True),  # the same for replay-waves
    "iree-k-serial": (SERIAL, "graphs", False),  # the same with IREE's own kernel configs (--no-tuning)
    "iree-k-waves": (WAVES, "graphs", False),
}


def prepare(folder: Path) -> None:
    from schedc.options import CompileOptions
    from schedc.compiler.driver import compile_with_options
    from schedc.targets import resolve_target

    folder.mkdir(parents=True, exist_ok=True)
    manifest = {}
    for name in MODELS:
        mlir = save_model(folder, name)
        for variant, (pipeline, execution, tuning) in VARIANTS.items():
            options = CompileOptions.for_target(resolve_target("cuda"), passes=pipeline, schedc_passes=pipeline is not None, execution=execution, tuning=tuning)
            result = compile_with_options(mlir, options)
            (folder / f"{name}.{variant}.vmfb").write_bytes(result.output)
            manifest[f"{name}.{variant}"] = {"execution": execution, **result.records.get("static-replay", {}).get("forward$async", {})}
            print(f"compiled {name}.{variant}", file=sys.stderr, flush=True)
    (folder / "manifest.json").write_text(json.dumps(manifest, indent=1))


def _variants(execution: str) -> list[str]:
    return [v for v, (_, e, _) in VARIANTS.items() if e == execution]


def _host_bytes(module) -> int:
    """IREE's count of host bytes allocated so far (-1 where the statistics say nothing)."""
    try:
        return int(ast.literal_eval(module.allocator_statistics())["host_bytes_allocated"])
    except (ValueError, SyntaxError, KeyError, TypeError):
        return -1


def run(folder: Path, execution: str, torch_compile: bool, numpy: bool = True, keys: list[str] | None = None) -> None:
    """Each module in a process of its own (a crash in one loses only its row); torch's
    references in this one. `keys`: only those modules (default: all of the mode)."""
    import subprocess

    rows = {}
    for name in MODELS:
        for variant in _variants(execution):
            key = f"{name}.{variant}"
            if keys and key not in keys:
                continue
            extra = [] if numpy else ["--no-numpy"]
            done = subprocess.run([sys.executable, __file__, "run-one", str(folder), execution, "--key", key, *extra])
            result = folder / f"result.{key}.json"
            if done.returncode == 0 and result.exists():
                rows[key] = json.loads(result.read_text())
            else:
                rows[key] = {"error": f"exit code {done.returncode}"}
                if execution == "graphs":  # is it the graph replay, or the module? run it on the stream
                    again = subprocess.run([sys.executable, __file__, "run-one", str(folder), "streams", "--key", key, *extra])
                    if again.returncode == 0 and result.exists():
                        rows[key]["on_stream"] = json.loads(result.read_text())
                    else:
                        rows[key]["on_stream"] = {"error": f"exit code {again.returncode}"}
            print(f"{key}: {rows[key]}", flush=True)
            (folder / f"results.{execution}.json").write_text(json.dumps(rows, indent=1))
    if execution == "streams":
        rows.update(_references(folder, torch_compile))
        (folder / f"results.{execution}.json").write_text(json.dumps(rows, indent=1))


def _references(folder: Path, torch_compile: bool) -> dict:
    import torch

    torch.backends.cudnn.allow_tf32 = False
    torch.backends.cuda.matmul.allow_tf32 = False
    rows = {}
    for name in MODELS:
        model, x = load_model(folder, name)
        x_gpu = torch.from_numpy(x).cuda()
        with torch.no_grad():
            rows[f"{name}.torch-eager"] = {"device_ms": median_ms(lambda: (model(x_gpu), torch.cuda.synchronize()), REPEATS, WARMUP)}
            if torch_compile:
                compiled = torch.compile(model, mode="reduce-overhead")
                rows[f"{name}.torch-compile"] = {"device_ms": median_ms(lambda: (compiled(x_gpu), torch.cuda.synchronize()), REPEATS, 30)}
        print(f"{name}: {rows[f'{name}.torch-eager']} {rows.get(f'{name}.torch-compile')}", flush=True)
    return rows


def run_one(folder: Path, execution: str, key: str, numpy: bool = True) -> None:
    import iree.runtime as rt
    import torch

    import schedc

    torch.backends.cudnn.allow_tf32 = False
    torch.backends.cuda.matmul.allow_tf32 = False
    name = key.split(".")[0]
    model, x = load_model(folder, name)
    x_gpu = torch.from_numpy(x).cuda()
    with torch.no_grad():
        expected = model(x_gpu).cpu().numpy()
    module = schedc.load(folder / f"{key}.vmfb", device="cuda", execution=execution)
    # The torch calls' own instance of the module (a VM context of its own): a replayed module
    # keeps one recording for the input buffers it is called with, which calls on device
    # arrays and on torch tensors, timed in turn, would otherwise take from each other.
    tmodule = schedc.load(folder / f"{key}.vmfb", device="cuda", execution=execution)
    x_device = rt.asdevicearray(module.device, x)
    scale = max(float(np.abs(expected).max()), 1e-30)
    row = {"execution": execution}
    try:  # numpy in and out (through the runtime's pinned host buffers on a replayed module)
        if not numpy:
            raise schedc.SchedcError("not measured (--no-numpy)")
        row["numpy_ms"] = median_ms(lambda: module.forward(x), REPEATS, WARMUP)
        row["max_rel_error_numpy"] = float(np.abs(module.forward(x) - expected).max()) / scale
    except schedc.SchedcError as e:
        row.update(numpy_ms=float("nan"), max_rel_error_numpy=float("nan"), numpy_error=str(e))
    try:
        others, turn = [x_gpu.clone(), x_gpu.clone()], [0]

        def torch_alternating():  # a tensor other than the last call's: torch writes it into the static input
            turn[0] ^= 1
            return tmodule.forward(others[turn[0]])

        calls = {"device_ms": lambda: module.forward(x_device), "torch_ms": lambda: tmodule.forward(x_gpu), "torch_alternating_ms": torch_alternating}
        calls.update(_static_input_calls(module, tmodule, x_gpu))
        row.update(zip(calls, interleaved_medians(list(calls.values()))))
        row["torch_over_device"] = row["torch_ms"] / row["device_ms"]
        row["queue_copy_ms"] = _queue_copy_ms(module, x_device)
        before = _host_bytes(tmodule)
        for _ in range(50):
            result = tmodule.forward(x_gpu)
        row["torch_host_bytes"] = _host_bytes(tmodule) - before
        row["torch_result_device"] = str(result.device)
        row["torch_result_static"] = result.data_ptr() == tmodule.forward(x_gpu).data_ptr()  # the static buffer, no copy
        stream = torch.cuda.current_stream()
        row["stream_sync_ms"] = median_ms(stream.synchronize, REPEATS, WARMUP)  # the torch path's one wait, alone
        if tmodule.forward._static_inputs:  # the torch path's copy into the static input and its wait, alone
            static = tmodule.forward._static_inputs[1][0]
            row["copy_sync_ms"] = median_ms(lambda: (static.copy_(x_gpu), stream.synchronize()), REPEATS, WARMUP)
            row["kernel_copy_sync_ms"] = median_ms(lambda: (torch.mul(x_gpu, 1, out=static), stream.synchronize()), REPEATS, WARMUP)
        row["max_rel_error"] = float(np.abs(result.cpu().numpy() - expected).max()) / scale
    except (schedc.SchedcError, RuntimeError) as e:
        row["torch_error"] = str(e)
        row["device_ms"] = median_ms(lambda: module.forward(x_device), REPEATS, WARMUP)
        row.update(torch_ms=float("nan"), torch_host_bytes=-1, max_rel_error=row["max_rel_error_numpy"])
    (folder / f"result.{key}.json").write_text(json.dumps(row))


def _static_input_calls(module, tmodule, x_gpu) -> dict:
    """For a replayed module that offers its static input buffers: the torch call that imports
    its tensor through DLPack instead of writing it there (the module copies it in:
    `torch_import_ms`, on the torch calls' instance), and a call on device arrays that already
    are the static buffers (no copy at all: `in_place_ms`)."""
    import iree.runtime as rt

    for instance in (module, tmodule):
        instance.forward(x_gpu)  # the first torch call looks the static inputs up
    static, function = module.forward._static_inputs, tmodule.forward
    if not static or not function._static_inputs:
        return {}
    in_place = rt.DeviceArray(module.device, static[0][0])

    def torch_import():
        kept = function._static_inputs
        function._static_inputs = False
        try:
            function(x_gpu)
        finally:
            function._static_inputs = kept

    return {"torch_import_ms": torch_import, "in_place_ms": lambda: module.forward(in_place)}


def _queue_copy_ms(module, x_device) -> float:
    """One IREE queue copy of the input's size and a wait for it, as the call makes it."""
    import iree.runtime as rt

    device, source = module.device, x_device._buffer_view.get_buffer()
    target = device.allocator.allocate_buffer(
        memory_type=rt.MemoryType.DEVICE_LOCAL, allowed_usage=rt.BufferUsage.DEFAULT | rt.BufferUsage.TRANSFER,
        allocation_size=source.byte_length())
    semaphore, value = device.create_semaphore(0), [0]

    def copy():
        value[0] += 1
        done = rt.HalFence.create_at(semaphore, value[0])
        device.queue_copy(source, target, rt.HalFence.create_at(semaphore, value[0] - 1), done)
        done.wait()

    return median_ms(copy, REPEATS, WARMUP)


def interleaved_medians(calls, repeats: int = REPEATS, block: int = 20) -> list[float]:
    """Median ms of each call, timed in turn in blocks of `block` calls after WARMUP each."""
    import statistics
    import time

    for call in calls:
        for _ in range(WARMUP):
            call()
    times = [[] for _ in calls]
    for _ in range(repeats // block):
        for call, spent in zip(calls, times):
            for _ in range(block):
                start = time.perf_counter()
                call()
                spent.append((time.perf_counter() - start) * 1e3)
    return [statistics.median(spent) for spent in times]


def kernels(folder: Path, execution: str, keys: list[str]) -> None:
    """KERNEL_CALLS calls of each module between two torch fills (for Nsight Compute)."""
    import iree.runtime as rt
    import torch

    import schedc

    marker = torch.empty(1, device="cuda")
    for key in keys:
        x = np.load(folder / f"{key.split('.')[0]}.input.npy")
        module = schedc.load(folder / f"{key}.vmfb", device="cuda", execution=execution)
        x_device = rt.asdevicearray(module.device, x)
        module.forward(x_device)  # the first call, outside the counted ones
        torch.cuda.synchronize()
        marker.fill_(1.0)
        for _ in range(KERNEL_CALLS):
            module.forward(x_device)
        marker.fill_(2.0)
        torch.cuda.synchronize()
        print(f"profiled {key}", file=sys.stderr, flush=True)


def trace(folder: Path, execution: str, keys: list[str]) -> None:
    """Per module, TRACE_CALLS calls under torch.profiler (CUPTI traces every kernel of the
    process, a replayed graph's included, as the graph runs them): per call the GPU span (first
    kernel's start to last kernel's end), the time any kernel runs (busy: the union of their
    intervals), the dispatches' summed time and the fills' and copies' (CUDA runs memset and
    memcpy nodes as kernels named memset*/memcpy*). Medians into trace.<key>.json.

    One module per process: in a process's second profile the memset and memcpy nodes were
    missing from the trace (H200, 2026-11-30)."""
    import statistics
    import subprocess
    import tempfile

    import iree.runtime as rt
    import torch
    from torch.profiler import ProfilerActivity, profile

    import schedc

    if len(keys) > 1:
        for key in keys:
            subprocess.run([sys.executable, __file__, "trace", str(folder), execution, "--key", key])
        return
    for key in keys:
        x = np.load(folder / f"{key.split('.')[0]}.input.npy")
        module = schedc.load(folder / f"{key}.vmfb", device="cuda", execution=execution)
        x_device = rt.asdevicearray(module.device, x)
        for _ in range(WARMUP):
            module.forward(x_device)
        torch.cuda.synchronize()
        with profile(activities=[ProfilerActivity.CUDA]) as prof:
            for _ in range(TRACE_CALLS):
                module.forward(x_device)
            torch.cuda.synchronize()
        with tempfile.TemporaryDirectory() as work:  # the chrome trace holds kernels no torch op launched
            prof.export_chrome_trace(f"{work}/trace.json")
            events = json.loads(Path(f"{work}/trace.json").read_text())["traceEvents"]
        kernels = sorted(((e["ts"], e["ts"] + e["dur"], e["name"]) for e in events if e.get("cat") == "kernel"))
        per_call = len(kernels) // TRACE_CALLS
        calls = [kernels[i * per_call:(i + 1) * per_call] for i in range(TRACE_CALLS)]
        row = {"events_per_call": per_call, **{name: statistics.median(f(c) for c in calls) for name, f in _TRACE_FIGURES.items()}}
        (folder / f"trace.{key}.json").write_text(json.dumps(row))
        print(f"traced {key}: {row}", file=sys.stderr, flush=True)


def _busy_us(kernels) -> float:
    """The time any of the (start, end, name) kernels runs: the union of their intervals."""
    total, start, end = 0.0, kernels[0][0], kernels[0][1]
    for s, e, _ in kernels[1:]:
        if s > end:
            total, start = total + end - start, s
        end = max(end, e)
    return total + end - start


def _is_fill_or_copy(name: str) -> bool:
    return name.startswith(("memset", "memcpy"))


_TRACE_FIGURES = {  # us per call, from one call's (start, end, name) kernels in start order
    "span_us": lambda c: max(e for _, e, _ in c) - c[0][0],
    "busy_us": _busy_us,
    "dispatch_us": lambda c: sum(e - s for s, e, n in c if not _is_fill_or_copy(n)),
    "fill_copy_us": lambda c: sum(e - s for s, e, n in c if _is_fill_or_copy(n)),
}


def kernel_times(csv_path: Path, keys: list[str]) -> dict[str, dict]:
    """Per module: kernels per call and the sum of their gpu__time_duration per call (us).

    Between the two fills around a module's counted calls: its kernels (names with
    `dispatch`); before the first fill, its first call."""
    text = csv_path.read_text()
    start = text.find('"ID"')
    rows = list(csv.DictReader(io.StringIO(text[start:]))) if start >= 0 else []
    segments, current = [], None
    for row in rows:
        if row.get("Metric Name") != "gpu__time_duration.sum":
            continue
        name = row["Kernel Name"]
        if "FillFunctor" in name:
            if current is None:
                current = []
            else:
                segments.append(current)
                current = None
            continue
        if current is None or "dispatch" not in name:
            continue
        value = float(row["Metric Value"].replace(",", ""))
        unit = row.get("Metric Unit", "ns")
        current.append(value / 1000.0 if unit.startswith("n") else value if unit.startswith("u") else value * 1000.0)
    return {
        key: {"kernels_per_call": len(segment) / KERNEL_CALLS, "kernel_us": sum(segment) / KERNEL_CALLS}
        for key, segment in zip(keys, segments)
    }


def table(folder: Path) -> None:
    rows, kernel = {}, {}
    for execution in ("streams", "graphs"):
        path = folder / f"results.{execution}.json"
        if path.exists():
            rows.update(json.loads(path.read_text()))
    for ncu in sorted(folder.glob("ncu.*.csv")):  # ncu.<execution>.<key,key,...>.csv
        kernel.update(kernel_times(ncu, ncu.name.split(".", 2)[2][: -len(".csv")].split(",")))
    print("ms per call (median): device = the same IREE device array in and out every call; torch = the same CUDA")
    print("tensor every call (imported once, copied in by the module's kept recording); alt = two CUDA tensors in turn,")
    print("written into the static inputs by torch; import = CUDA tensors imported through DLPack, never written by torch;")
    print("in-place = device arrays that are the static inputs (no copy). overhead = call - kernel sum (us); copy = one")
    print("IREE queue copy and its wait (us); t-copy = torch's copy into the static input and the stream's wait (us), alone")
    columns = ("device", "torch", "alt", "import", "in-place", "numpy")
    print(f"{'model':<12}{'variant':<15}" + "".join(f"{c:>9}" for c in columns) + f"{'kernels':>8}{'kernel us':>10}"
          + "".join(f"{'ovh ' + c:>13}" for c in columns[:5]) + f"{'copy us':>8}{'t-copy us':>10}{'host B':>7}{'rel err':>9}")
    keys = ("device_ms", "torch_ms", "torch_alternating_ms", "torch_import_ms", "in_place_ms", "numpy_ms")
    for name in MODELS:
        for variant in VARIANTS:
            row, k = rows.get(f"{name}.{variant}"), kernel.get(f"{name}.{variant}", {})
            if row is None:
                continue
            if "error" in row:
                print(f"{name:<12}{variant:<15} failed: {row['error']}; on the stream: {row.get('on_stream')}")
                continue
            kernel_us = k.get("kernel_us", float("nan"))
            times = [row.get(key, float("nan")) for key in keys]
            print(f"{name:<12}{variant:<15}" + "".join(f"{t:>9.3f}" for t in times) + f"{k.get('kernels_per_call', 0):>8.0f}{kernel_us:>10.1f}"
                  + "".join(f"{t * 1000 - kernel_us:>13.1f}" for t in times[:5])
                  + f"{row.get('queue_copy_ms', float('nan')) * 1000:>8.1f}{row.get('copy_sync_ms', float('nan')) * 1000:>10.1f}"
                  + f"{row['torch_host_bytes']:>7}{row['max_rel_error']:>9.1e}")
        for ref in ("torch-eager", "torch-compile"):
            if f"{name}.{ref}" in rows:
                print(f"{name:<12}{ref:<15}{rows[f'{name}.{ref}']['device_ms']:>10.3f}")
        serial, waves = rows.get(f"{name}.replay-serial"), rows.get(f"{name}.replay-waves")
        if serial and waves and "device_ms" in serial and "device_ms" in waves:
            print(f"  waves replayed vs serial replay: {serial['device_ms'] / waves['device_ms']:.2f}x; torch tensors vs "
                  f"device arrays: {serial['torch_ms'] / serial['device_ms']:.3f}x (serial), {waves['torch_ms'] / waves['device_ms']:.3f}x (waves)")
        serial, pinned = rows.get(f"{name}.replay-serial"), rows.get(f"{name}.replay-pinned")
        if serial and pinned and "device_ms" in serial and "device_ms" in pinned:
            print(f"  fills run once (replay-pinned) vs serial replay: {serial['device_ms'] / pinned['device_ms']:.3f}x; torch tensors "
                  f"vs device arrays: {pinned['torch_ms'] / pinned['device_ms']:.3f}x")
            waves = rows.get(f"{name}.replay-waves-pinned")
            if waves and "device_ms" in waves:
                print(f"  fills run once: waves vs serial replay {pinned['device_ms'] / waves['device_ms']:.2f}x")
        serial, waves = rows.get(f"{name}.iree-k-serial"), rows.get(f"{name}.iree-k-waves")
        if serial and waves and "device_ms" in serial and "device_ms" in waves:
            print(f"  with IREE's own kernel configs: waves vs serial replay {serial['device_ms'] / waves['device_ms']:.2f}x")
        for variant in VARIANTS:
            path = folder / f"trace.{name}.{variant}.json"
            if path.exists():
                t = json.loads(path.read_text())
                print(f"  traced in the graph, {variant}: span {t['span_us']:.1f} us, busy {t['busy_us']:.1f}, dispatches "
                      f"{t['dispatch_us']:.1f}, fills and copies {t['fill_copy_us']:.1f}, idle {t['span_us'] - t['busy_us']:.1f}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("step", choices=("prepare", "run", "run-one", "kernels", "trace", "table"))
    parser.add_argument("folder", type=Path)
    parser.add_argument("execution", nargs="?", choices=("streams", "graphs"), default="graphs")
    parser.add_argument("--key", action="append", default=[], help="run, run-one, kernels, trace: MODEL.VARIANT (default: all of the mode)")
    parser.add_argument("--no-torch-compile", action="store_true", help="skip the torch.compile reference")
    parser.add_argument("--no-numpy", action="store_true", help="run, run-one: skip the numpy-in, numpy-out calls")
    args = parser.parse_args()
    if args.step == "prepare":
        prepare(args.folder)
    elif args.step == "run":
        run(args.folder, args.execution, not args.no_torch_compile, not args.no_numpy, args.key)
    elif args.step == "run-one":
        run_one(args.folder, args.execution, args.key[0], not args.no_numpy)
    elif args.step == "kernels":
        keys = args.key or [f"{name}.{variant}" for name in MODELS for variant in _variants(args.execution)]
        kernels(args.folder, args.execution, keys)
    elif args.step == "trace":
        trace(args.folder, args.execution, args.key or [f"{name}.{variant}" for name in MODELS for variant in _variants(args.execution)])
    else:
        table(args.folder)
    return 0


if __name__ == "__main__":
    sys.exit(main())
