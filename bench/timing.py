"""Shared by the bench scripts: the median of repeated calls after warm-up calls, and the
bench models (bench/models.py) loaded once per process."""

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


def median_ms(call, repeats: int = 100, warmup: int = 10) -> float:
    """Median wall time of `call()` in milliseconds (the call itself must synchronise)."""
    for _ in range(warmup):
        call()
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        call()
        times.append((time.perf_counter() - start) * 1e3)
    return statistics.median(times)
