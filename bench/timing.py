"""Shared by the bench scripts: the median of repeated calls after warm-up calls, the bench
models (bench/models.py) loaded once per process, and a model saved for a GPU machine."""

from __future__ import annotations

import importlib.util
import statistics
import sys
import time
from pathlib import Path


def bench_models():
    """bench/models.py as the module `bench_models` (torch.compile re-imports model modules
    by name, so it must stay registered under that name)."""
    if "bench_models" in sys.modules:
        return sys.modules["bench_models"]
    spec = importlib.util.spec_from_file_location("bench_models", Path(__file__).resolve().parent / "models.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules["bench_models"] = module
    spec.loader.exec_module(module)
    return module


def save_model(folder: Path, name: str) -> str:
    """A bench model's weights (`name.pt`) and example input (`name.input.npy`) into `folder`,
    for a GPU machine to rebuild it; returns its torch-dialect MLIR."""
    import numpy as np
    import torch

    import schedc

    model, args = bench_models().SUITE[name]()
    torch.save(model.state_dict(), folder / f"{name}.pt")
    np.save(folder / f"{name}.input.npy", args[0].numpy())
    return schedc.import_torch(model, *args)


def load_model(folder: Path, name: str):
    """On the GPU machine: the model `save_model` saved, on cuda in eval mode, and its input
    as a numpy array."""
    import numpy as np
    import torch

    model, _ = bench_models().SUITE[name]()
    model.load_state_dict(torch.load(folder / f"{name}.pt"))
    return model.cuda().eval(), np.load(folder / f"{name}.input.npy")


def median_ms(call, repeats: int = 100, warmup: int = 10) -> float:
    """Median wall time of `call()` in milliseconds (the call itself must synchronise)."""
    return interleaved_median_ms({"call": call}, repeats, warmup)["call"]


def interleaved_median_ms(calls: dict, repeats: int = 100, warmup: int = 10) -> dict:
    """Median wall time in milliseconds of each of `calls` (name -> a call that synchronises),
    timed in rounds of one call each, so that a drift of the machine (clocks, another process)
    falls on all of them alike: modules compared in one process are timed this way."""
    for _ in range(warmup):
        for call in calls.values():
            call()
    times = {name: [] for name in calls}
    for _ in range(repeats):
        for name, call in calls.items():
            start = time.perf_counter()
            call()
            times[name].append((time.perf_counter() - start) * 1e3)
    return {name: statistics.median(values) for name, values in times.items()}


NCU_UNITS_US = {"ns": 1e-3, "nsecond": 1e-3, "us": 1.0, "usecond": 1.0, "ms": 1e3, "msecond": 1e3}


def ncu_kernel_times(text: str) -> list[tuple[str, float]]:
    """(kernel name, microseconds) of each kernel, in launch order, from the CSV that
    `ncu --metrics gpu__time_duration.sum --csv` prints (anything before its header skipped)."""
    import csv
    import io

    rows = list(csv.reader(io.StringIO(text[text.find('"ID"'):])))
    if not rows:
        return []
    header = rows[0]
    name, value, unit = header.index("Kernel Name"), header.index("Metric Value"), header.index("Metric Unit")
    return [(row[name], float(row[value].replace(",", "")) * NCU_UNITS_US[row[unit]]) for row in rows[1:] if len(row) == len(header)]


def marked_calls(call, count: int, warmup: int = 3) -> None:
    """`warmup` calls, then `count` more under the CUDA profiler (ncu --profile-from-start off
    sees only those), each after a marker kernel (`split_by_marker` splits ncu's list there)."""
    import torch

    for _ in range(warmup):
        call()
    torch.cuda.synchronize()
    torch.cuda.profiler.start()
    for _ in range(count):
        torch.cuda._sleep(1000)
        torch.cuda.synchronize()
        call()
        torch.cuda.synchronize()
    torch.cuda.profiler.stop()
