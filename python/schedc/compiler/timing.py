"""Wall time per compile phase and per schedc pass, and progress on a terminal.

The driver's phase loop wraps each IREE command (`_Steps.advance`) and each stop for schedc's
passes (`_Steps.run_passes`) in `timer.phase(name)`; the pass pipeline wraps each pass the same
way (the timer travels on `PassContext`), so passes nest under the stop that runs them.
`schedc --timing` prints the result the way MLIR's `--mlir-timing` does. With a `progress`
stream (the CLI gives stderr when it is a terminal), the name of each phase is shown on one
status line as it starts, and the line is erased when the compile ends; without one, nothing
is printed.
"""

from __future__ import annotations

import time
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TextIO


@dataclass
class PhaseTime:
    name: str
    depth: int  # 0: a phase of the compile; 1: a pass inside it
    seconds: float


class PhaseTimer:
    def __init__(self, progress: TextIO | None = None):
        self.entries: list[PhaseTime] = []  # in the order the phases started
        self._depth = 0
        self._progress = progress
        self._started = time.perf_counter()

    @contextmanager
    def phase(self, name: str):
        entry = PhaseTime(name, self._depth, 0.0)
        self.entries.append(entry)
        if self._progress is not None and self._depth == 0:
            elapsed = time.perf_counter() - self._started
            self._progress.write(f"\r\033[Kschedc [{elapsed:5.1f} s] {name} ...")
            self._progress.flush()
        self._depth += 1
        started = time.perf_counter()
        try:
            yield
        finally:
            entry.seconds = time.perf_counter() - started
            self._depth -= 1

    def finish(self) -> None:
        """Erases the status line, so the terminal holds only what the compile printed."""
        if self._progress is not None:
            self._progress.write("\r\033[K")
            self._progress.flush()

    @property
    def total_seconds(self) -> float:
        return time.perf_counter() - self._started

    def as_records(self) -> list[dict]:
        return [{"name": e.name, "depth": e.depth, "seconds": round(e.seconds, 4)} for e in self.entries]


def timing_report(entries: list[PhaseTime], total: float) -> str:
    """The table `--timing` prints, laid out like MLIR's `--mlir-timing`."""
    rule = "===" + "-" * 73 + "==="
    lines = [rule, "schedc execution time report".center(len(rule)).rstrip(), rule]
    lines.append(f"  Total Execution Time: {total:.4f} seconds")
    lines.append("")
    lines.append("  ----Wall Time----  ----Name----")
    for e in entries:
        share = 100 * e.seconds / total if total > 0 else 0.0
        lines.append(f"  {e.seconds:8.4f} ({share:5.1f}%)  {'  ' * e.depth}{e.name}")
    lines.append(f"  {total:8.4f} (100.0%)  Total")
    return "\n".join(lines)
