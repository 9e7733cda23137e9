"""The CPU bench: schedc's llvm-cpu modules against IREE alone, torch eager and torch.compile
(Inductor, CPU) on the bench models (bench/models.py) and the held-out suite (bench/heldout.py),
batch 1, on this machine's cores.

Every timing runs in a process of its own, one after another, so IREE's task runtime and
torch's OpenMP pool never share the cores. IREE alone's module and schedc's are timed in one
process without torch, their calls alternating (the ratio schedc/IREE is that process's, the
median over rounds); eager in another. Each process makes `--calls` calls after warm-up ones
and reports their medians; `--rounds` rounds alternate the two processes (the figures are the
medians of the rounds'), Inductor runs once (its compile is slow). Numerics: schedc's outputs
against eager's.

    python bench/cpu.py                         # every model of both suites
    python bench/cpu.py --models squeezenet1_1,gpt2 --calls 30
    python bench/cpu.py --time-modules A.vmfb B.vmfb INPUTS.npz CALLS      # medians, calls alternating
    python bench/cpu.py --profile-modules A.vmfb B.vmfb INPUTS.npz CALLS   # time inside dispatches

It prints a table, and with --json one JSON line per model to that file.
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

HERE = Path(__file__).resolve().parent


def _factory(name: str):
    sys.path.insert(0, str(HERE))
    import heldout
    from timing import bench_models

    if name in heldout.HELDOUT:
        return heldout.HELDOUT[name], "held-out"
    return bench_models().SUITE[name], "bench"


def _all_models() -> list[str]:
    sys.path.insert(0, str(HERE))
    import heldout
    from timing import bench_models

    return list(bench_models().SUITE) + list(heldout.HELDOUT)


# -- children: one timing each, printing {"ms": median} -----------------------------------------


def _time_modules(paths: list[str], inputs: str, calls: int, outputs: str | None) -> None:
    """IREE modules' median call times, in one process without torch: their calls alternate,
    so a slow spell of the machine falls on all of them and their ratio holds."""
    import numpy as np

    from schedc.runtime.module import load

    modules = [load(path) for path in paths]
    data = np.load(inputs)
    args = [data[f"arg{i}"] for i in range(len(data.files))]
    results = []
    for module in modules:
        for _ in range(3):
            result = module.forward(*args)
        results.append(result)
    times: list[list[float]] = [[] for _ in modules]
    for _ in range(calls):
        for spent, module in zip(times, modules):
            start = time.perf_counter()
            module.forward(*args)
            spent.append(time.perf_counter() - start)
    if outputs:  # the last module's
        values = results[-1] if isinstance(results[-1], (list, tuple)) else [results[-1]]
        np.savez(outputs, **{f"out{i}": np.asarray(v) for i, v in enumerate(values)})
    print(json.dumps({"ms": [statistics.median(t) * 1e3 for t in times]}))


def _time_torch(name: str, mode: str, calls: int, inputs: str, outputs: str | None) -> None:
    import numpy as np
    import torch

    torch.set_num_threads(os.cpu_count() or 1)
    factory, _ = _factory(name)
    model, args = factory()
    fn = torch.compile(model) if mode == "inductor" else model
    data = np.load(inputs)
    args = tuple(torch.from_numpy(data[f"arg{i}"]) for i in range(len(args)))
    with torch.no_grad():
        for _ in range(3):
            result = fn(*args)
        times = []
        for _ in range(calls):
            start = time.perf_counter()
            fn(*args)
            times.append(time.perf_counter() - start)
    if outputs:
        values = result if isinstance(result, (list, tuple)) else [result]
        np.savez(outputs, **{f"out{i}": v.detach().numpy() for i, v in enumerate(values)})
    print(json.dumps({"ms": statistics.median(times) * 1e3}))


def _child(*args: str):
    result = subprocess.run([sys.executable, __file__, *args], capture_output=True, text=True)
    if result.returncode != 0:
        raise RuntimeError(result.stderr.strip().splitlines()[-1] if result.stderr.strip() else f"exit {result.returncode}")
    return json.loads(result.stdout.strip().splitlines()[-1])["ms"]


# -- the parent ---------------------------------------------------------------------------------


def plan_layouts(plan: dict) -> dict[str, int]:
    """How many ops of cpu-config's recorded plan take each layout."""
    layouts: dict[str, int] = {}
    for op in plan.get("ops", []):
        layouts[op["layout"]] = layouts.get(op["layout"], 0) + 1
    return layouts


def _prepare(name: str, work: Path) -> dict:
    """Imports the model, saves its inputs and compiles it with IREE alone and with schedc."""
    import numpy as np

    import schedc
    from schedc.compiler.driver import compile_with_options
    from schedc.options import CompileOptions

    factory, suite = _factory(name)
    model, args = factory()
    np.savez(work / f"{name}.inputs.npz", **{f"arg{i}": a.numpy() for i, a in enumerate(args)})
    text = schedc.import_torch(model, *args)
    row = {"model": name, "suite": suite}
    # IREE alone; schedc before cpu-config (--no-tuning: its compile time is the reference);
    # schedc.
    for label, keywords in (("iree", {"schedc_passes": False}), ("no_tuning", {"tuning": False}), ("schedc", {})):
        start = time.perf_counter()
        result = compile_with_options(text, CompileOptions(target="llvm-cpu", **keywords))
        row[f"{label}_compile_s"] = round(time.perf_counter() - start, 1)
        if label != "no_tuning":
            (work / f"{name}.{label}.vmfb").write_bytes(result.output)
        if label == "schedc":
            plan = result.records.get("cpu-config", {}).get("module", {})
            row["mode"] = plan.get("mode")
            row["layouts"] = plan_layouts(plan)
            row["measured_ops"] = sum(op["source"] == "measured" for op in plan.get("ops", []))
    return row


def bench(names: list[str], calls: int, rounds: int, json_path: Path | None) -> list[dict]:
    from schedc.errors import SchedcError

    rows = []
    with tempfile.TemporaryDirectory(prefix="schedc-cpu-bench-") as folder:
        work = Path(folder)
        for name in names:
            try:
                row = _measure(name, work, calls, rounds)
            except (RuntimeError, SchedcError) as e:  # one model's failure is a row, not the end
                print(f"{name:<16} failed: {str(e).splitlines()[0][:200]}", flush=True)
                continue
            rows.append(row)
            if json_path is not None:
                with json_path.open("a") as f:
                    f.write(json.dumps(row) + "\n")
            _print_row(row)
    return rows


def _measure(name: str, work: Path, calls: int, rounds: int) -> dict:
    """One model's row: its compiles, timings in interleaved rounds, numerics."""
    import numpy as np

    from schedc.tune.bench import relative_error

    row = _prepare(name, work)
    inputs = str(work / f"{name}.inputs.npz")
    times: dict[str, list[float]] = {"iree": [], "schedc": [], "eager": []}
    ratios = []
    for round_ in range(rounds):
        last = round_ == rounds - 1
        iree, ours = _child("--time-modules", str(work / f"{name}.iree.vmfb"), str(work / f"{name}.schedc.vmfb"), inputs, str(calls),
                            *(["--outputs", str(work / f"{name}.schedc.out.npz")] if last else []))
        times["iree"].append(iree)
        times["schedc"].append(ours)
        ratios.append(ours / iree)
        times["eager"].append(_child("--time-torch", name, "eager", str(calls), inputs, *([str(work / f"{name}.eager.out.npz")] if last else [])))
    for key, values in times.items():
        row[f"{key}_ms"] = round(statistics.median(values), 3)
    try:
        row["inductor_ms"] = round(_child("--time-torch", name, "inductor", str(calls), inputs), 3)
    except RuntimeError as e:
        row["inductor_ms"], row["inductor_failure"] = None, str(e)[:200]
    ours, theirs = np.load(work / f"{name}.schedc.out.npz"), np.load(work / f"{name}.eager.out.npz")
    row["rel_err"] = max(relative_error(ours[k], theirs[k]) for k in theirs.files)
    row["vs_eager"] = round(row["schedc_ms"] / row["eager_ms"], 3)
    row["vs_iree"] = round(statistics.median(ratios), 3)  # of the calls that alternated
    row["vs_inductor"] = round(row["schedc_ms"] / row["inductor_ms"], 3) if row["inductor_ms"] else None
    row["compile_ratio"] = round(row["schedc_compile_s"] / row["no_tuning_compile_s"], 2)
    return row


# compile: schedc's compile time over --no-tuning's (schedc's compile before cpu-config)
HEADER = f"{'model':<16} {'suite':<9} {'IREE':>8} {'schedc':>8} {'eager':>8} {'Inductor':>8} {'/eager':>7} {'/IREE':>6} {'/Ind.':>6} {'compile':>7}  {'rel err':>8}  mode, layouts"


def _print_row(row: dict) -> None:
    inductor = f"{row['inductor_ms']:8.2f}" if row["inductor_ms"] else f"{'failed':>8}"
    vs_inductor = f"{row['vs_inductor']:6.2f}" if row["vs_inductor"] else f"{'-':>6}"
    layouts = ", ".join(f"{k} {v}" for k, v in sorted(row["layouts"].items()))
    print(f"{row['model']:<16} {row['suite']:<9} {row['iree_ms']:8.2f} {row['schedc_ms']:8.2f} {row['eager_ms']:8.2f} {inductor} "
          f"{row['vs_eager']:7.2f} {row['vs_iree']:6.2f} {vs_inductor} {row['compile_ratio']:6.2f}x  {row['rel_err']:8.1e}  "
          f"{row['mode']}, {layouts}", flush=True)


def _profile_modules(paths: list[str], inputs: str, calls: int) -> None:
    """Each module's time inside its dispatches per call, from IREE's own profiler
    (`iree-benchmark-module --device_profiling_mode=host-execution`, then `iree-profile
    statistics`): the sum over dispatches of each one's wall time, without the time the task
    system spends between them (on this VM a worker sometimes takes a 4 ms scheduler tick to
    wake, which moves whole-call medians by 20-30%). Also per kind of dispatch (schedc's kernels
    by export, IREE's by the op its name ends in)."""
    import re

    import numpy as np

    folder = Path(tempfile.mkdtemp(prefix="schedc-profile-"))
    data = np.load(inputs)
    flags = []
    for i in range(len(data.files)):
        np.save(folder / f"arg{i}.npy", data[f"arg{i}"])
        flags.append(f"--input=@{folder / f'arg{i}.npy'}")
    line = re.compile(r"^\s*host_execute (\S+)\s+count=(\d+) total=([\d.]+) (ns|us|ms|s)\b")
    scale = {"ns": 1e-6, "us": 1e-3, "ms": 1.0, "s": 1e3}
    rows = []
    for path in paths:
        profile = folder / "p.ireeprof"
        subprocess.run(["iree-benchmark-module", f"--module={path}", "--device=local-task", "--function=forward", *flags,
                        f"--benchmark_min_time={calls}x", "--device_profiling_mode=host-execution",
                        f"--device_profiling_output={profile}"], check=True, capture_output=True)
        statistics_text = subprocess.run(["iree-profile", "statistics", str(profile)], check=True, capture_output=True, text=True).stdout
        kinds: dict[str, float] = {}
        for found in map(line.match, statistics_text.splitlines()):
            if found:
                name = re.sub(r"^.*\$async_dispatch_\d+_", "", found.group(1))
                kind = re.sub(r"_[0-9x]+(_f32|_f16)?$", "", name)
                kinds[kind] = kinds.get(kind, 0.0) + float(found.group(3)) * scale[found.group(4)] / calls
        rows.append({"module": path, "dispatch_ms": round(sum(kinds.values()), 3),
                     "by_kind_ms": {k: round(v, 3) for k, v in sorted(kinds.items(), key=lambda kv: -kv[1])}})
    print(json.dumps(rows, indent=1))


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == "--time-modules":  # MODULE... INPUTS CALLS [--outputs FILE]
        argv = sys.argv[2:]
        outputs = argv[argv.index("--outputs") + 1] if "--outputs" in argv else None
        argv = argv[:argv.index("--outputs")] if "--outputs" in argv else argv
        return _time_modules(argv[:-2], argv[-2], int(argv[-1]), outputs)
    if len(sys.argv) > 1 and sys.argv[1] == "--profile-modules":  # MODULE... INPUTS CALLS
        return _profile_modules(sys.argv[2:-2], sys.argv[-2], int(sys.argv[-1]))
    if len(sys.argv) > 1 and sys.argv[1] == "--time-torch":
        return _time_torch(sys.argv[2], sys.argv[3], int(sys.argv[4]), sys.argv[5], sys.argv[6] if len(sys.argv) > 6 else None)
    p = argparse.ArgumentParser(description="schedc on llvm-cpu against IREE alone, torch eager and Inductor")
    p.add_argument("--models", help="comma-separated (default: bench/models.py's and bench/heldout.py's)")
    p.add_argument("--calls", type=int, default=30, help="timed calls per process (median)")
    p.add_argument("--rounds", type=int, default=3, help="interleaved rounds of the IREE, schedc and eager processes")
    p.add_argument("--json", help="a file to append each model's row to, as JSON")
    args = p.parse_args()
    names = args.models.split(",") if args.models else _all_models()
    print(f"{os.cpu_count()} cores; ms per call, median of {args.calls} calls (of {args.rounds} rounds' medians but Inductor's)")
    print(HEADER)
    rows = bench(names, args.calls, args.rounds, Path(args.json) if args.json else None)
    if rows:
        print(f"median schedc/eager {statistics.median(r['vs_eager'] for r in rows):.2f}, "
              f"median schedc/IREE {statistics.median(r['vs_iree'] for r in rows):.2f}")


if __name__ == "__main__":
    main()
