"""What every pass is: a name, a frozen options dataclass, and a function over a module."""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from typing import Callable, TextIO

from schedc.timing import PhaseTimer


@dataclass
class PassContext:
    """What the driver hands every pass: where printed analyses go, and what they record."""

    out: TextIO = field(default_factory=lambda: sys.stdout)
    # Per-pass findings for reports, e.g. {"memory-order": {"forward": {...}}}.
    records: dict = field(default_factory=dict)
    # The target being compiled for (llvm-cpu, cuda, rocm, vulkan), for cost models.
    target: str = ""
    # Warnings about the user's IR that do not stop the compile: (location, message).
    warnings: list = field(default_factory=list)
    # Wall time per pass (nested under the driver's phase), for `schedc --timing`.
    timer: PhaseTimer = field(default_factory=PhaseTimer)

    def warn(self, location, message: str) -> None:
        self.warnings.append((location, message))


@dataclass(frozen=True)
class NoOptions:
    pass


@dataclass(frozen=True)
class PassInfo:
    name: str
    summary: str
    # run(module_op, pass_, options, context); reports IR problems with
    # location.emit_error(...) and pass_.signal_pass_failure().
    run: Callable
    options: type = NoOptions
    # The IR the pass runs on: "flow" (kernels as flow.dispatch), or "stream" (IREE's stream
    # phase stopped after schedule-allocation, with stream.resource.pack ops).
    phase: str = "flow"
