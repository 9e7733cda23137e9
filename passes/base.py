"""What every pass is: a name, a frozen options dataclass, a function over a module, and the
phase it runs in with the passes it needs, as data the driver reads (it never names a pass)."""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from typing import Callable, TextIO

from schedc.options import CompileOptions, Execution, Phase, TargetName


@dataclass
class PassContext:
    """What the driver hands every pass: where printed analyses go, what they record, and the
    compile's options that passes read (`from_options`: the CompileOptions fields marked with
    a `context` attribute). Made by hand (schedc-opt, tests), the compile's options are unknown."""

    out: TextIO = field(default_factory=lambda: sys.stdout)
    # Per-pass findings for reports, e.g. {"memory-order": {"forward": {...}}}.
    records: dict = field(default_factory=dict)
    # The target being compiled for, for cost models; None where not known (schedc-opt).
    target: TargetName | None = None
    # The chip code is generated for (sm_80, gfx942, ...), for kernel configs.
    arch: str = ""
    # How the module will run (graphs: static replay); None where not known (schedc-opt).
    execution: Execution | None = None
    # A kernel database chosen by the user (--kernel-db), for kernel-config.
    kernel_database: str = ""
    # f32 convolutions in TF32 (schedc --tf32): triton-conv takes them, whatever its own options say.
    tf32: bool = False
    # Check every decision a pass makes (schedc --verify-plan), whatever its own options say.
    verify: bool = False
    # Warnings about the user's IR that do not stop the compile: (location, message).
    warnings: list = field(default_factory=list)
    # IREE flags a pass's decision asks the rest of the compile to take (cpu-config's mode:
    # data tiling, micro-kernels); the driver adds them to every later iree-compile.
    iree_flags: list = field(default_factory=list)
    # Wall time per pass (a schedc.compiler.timing.PhaseTimer, nested under the driver's
    # phase), for `schedc --timing`; None: not timed.
    timer: object = None
    # The names of the passes this compile runs (the driver's pipeline), for a pass that
    # leaves an op to a later one; empty where not known (schedc-opt).
    passes: tuple = ()

    @staticmethod
    def from_options(options: CompileOptions, **fields) -> "PassContext":
        """The context of a compile with `options` (and `fields`, such as `out` and `timer`)."""
        target = options.resolved_target
        return PassContext(
            target=options.target, arch=target.arch, execution=options.execution,
            kernel_database=options.kernel_db or "", verify=options.verify_plan, tf32=options.tf32, **fields,
        )

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
    # The IR the pass runs on (Phase.FLOW: kernels as flow.dispatch; Phase.STREAM: IREE's
    # stream phase after schedule-allocation; ...; schedc.compiler.phases says where each is).
    phase: Phase = Phase.FLOW
    # Targets whose compiles run this pass even when the pipeline does not name it (code
    # generation settings rather than a schedule); `--no-tuning` turns that off, except for a
    # pass that is `always` (a correction of IREE's code, not a tuning).
    implicit_for: tuple[str, ...] = ()
    always: bool = False
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
        if self.phase not in Phase.names():  # an unknown phase is an error where the pass is defined
            raise ValueError(f"unknown phase '{self.phase}'; phases: {', '.join(Phase.names())}")
        object.__setattr__(self, "phase", Phase(self.phase))
