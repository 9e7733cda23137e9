"""Timing for the bench scripts: the median of repeated calls after warm-up calls."""

from __future__ import annotations

import statistics
import time


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
