"""What every pass is: a name, a frozen options dataclass, a function over a module, and the
phase it runs in with the passes it needs, as data the driver reads (it never names a pass)."""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from typing import Callable, TextIO

from schedc.phases import phase
from schedc.timing import PhaseTimer


@dataclass
class PassContext:
    """What the driver hands every pass: where printed analyses go, and what they record."""

    out: TextIO = field(default_factory=lambda: sys.stdout)
    # Per-pass findings for reports, e.g. {"memory-order": {"forward": {...}}}.
    records: dict = field(default_factory=dict)
    # The target being compiled for (llvm-cpu, cuda, rocm, vulkan), for cost models.
    target: str = ""
    # The chip code is generated for (sm_80, gfx942, ...), for kernel configs.
    arch: str = ""
    # How the module will run: "graphs" (static replay) or "streams"; "" where not known (schedc-opt).
    execution: str = ""
    # A kernel database chosen by the user (--kernel-db), for kernel-config.
    kernel_database: str = ""
    # Check every decision a pass makes (schedc --verify-plan), whatever its own options say.
    verify: bool = False
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
    # The IR the pass runs on: one of schedc.phases.PHASE_NAMES ("flow": kernels as
    # flow.dispatch; "stream": IREE's stream phase after schedule-allocation; ...).
    phase: str = "flow"
    # Targets whose compiles run this pass even when the pipeline does not name it (code
    # generation settings rather than a schedule); `--no-tuning` turns that off.
    implicit_for: tuple[str, ...] = ()
    # Passes that must run before this one in the same compile (an error when missing).
    requires: tuple[str, ...] = ()
    # Passes that, when the pipeline has them, must run before this one.
    after: tuple[str, ...] = ()
    # Passes that carry this one's decisions further (in a later phase): added to the pipeline
    # when it does not name them.
    followed_by: tuple[str, ...] = ()
    # Flags every iree-compile of a compile with this pass needs.
    iree_flags: tuple[str, ...] = ()
    # Flags that some of its options ask for: options -> flags, in every iree-compile too.
    option_flags: Callable | None = None

    def flags_for(self, options) -> tuple[str, ...]:
        return self.iree_flags + (tuple(self.option_flags(options)) if self.option_flags else ())

    def __post_init__(self):
        phase(self.phase)  # an unknown phase is an error where the pass is defined
