"""The phases of a compile: the points where schedc stops IREE's compiler to run its passes.

IREE's compiler runs its own phases in order (`iree-compile --compile-to=` / `--compile-from=`,
`IREE_PHASES`). A schedc phase is a point in that sequence: the end of one of IREE's phases
(`--compile-to=` stops there), or a point inside one, which IREE's pass driver `iree-opt`
reaches by running the phase's passes up to it. A pass names its phase on its registry entry;
the driver stops IREE at every phase that has passes, runs them, and resumes IREE from there
(`steps_between`), so a pass in any phase below plugs in through its registry entry alone.

    phase           IR the passes see
    input           linalg on tensors as IREE's input conversion leaves it, before preprocessing
    preprocessing   linalg on tensors after global optimization, before dispatch formation
    flow            kernels as flow.dispatch ops (dispatch regions formed)
    stream-async    stream.async.execute regions, before allocation (inside IREE's stream phase)
    stream          after schedule-allocation: a stream.resource.pack per region's transients
    configurations  executables with the code-generation configs IREE chose, before it generates code
    hal             executables for the target, and the HAL ops that record and run them
"""

from __future__ import annotations

from dataclasses import dataclass

from schedc.options import Phase

# IREE 3.13's phases, in the order iree-compile runs them, after "source": the IR as the user
# gave it (torch, or any input IREE takes), before IREE's input conversion.
IREE_PHASES = (
    "source", "input", "abi", "preprocessing", "global-optimization", "dispatch-creation", "flow", "stream",
    "executable-sources", "executable-configurations", "executable-targets", "hal", "vm", "end",
)

# IREE 3.13's stream phase (Dialect/Stream/Transforms/Passes.cpp) in three parts: up to its
# async pipeline; schedule-allocation, which makes one `stream.resource.pack` per execution
# region and does not yet pack it (layout-slices does); and the rest of the phase. Running the
# three in order is what `--compile-to=stream` does from the flow phase.
_STREAM_UNTIL_ASYNC = ("iree-stream-tensor-transformation-pipeline", "iree-stream-async-transformation-pipeline")
_STREAM_ALLOCATION = ("iree-stream-schedule-allocation",)
_PER_CALLABLE = "iree-stream-pack-constants,iree-stream-layout-slices,canonicalize"
_STREAM_AFTER_ALLOCATION = (
    f"util.initializer({_PER_CALLABLE})", f"util.func({_PER_CALLABLE})",
    "iree-util-propagate-subranges", "iree-stream-automatic-reference-counting",
    "iree-stream-cleanup-pipeline", "iree-stream-verify-lowering-to-cmd",
    "iree-stream-optimization-pipeline", "iree-stream-cleanup-pipeline", "symbol-dce",
)


@dataclass(frozen=True)
class PhaseStop:
    """Where schedc stops IREE for the passes of one phase."""

    name: Phase  # what a pass's registry entry names
    summary: str
    iree_phase: str  # IREE's phase that ends at this point, or that holds it
    # A point inside `iree_phase`: the iree-opt passes from the previous point inside it (or
    # from its start) to this one. Empty: the end of `iree_phase`.
    inner: tuple[str, ...] = ()
    file: str = ""  # the name of its IR in --dump-phases (default: the phase's name)

    @property
    def label(self) -> str:
        return self.file or self.name


PHASES = (
    PhaseStop(Phase.INPUT, "linalg on tensors as IREE's input conversion leaves it, before preprocessing", "input", file="linalg"),
    PhaseStop(Phase.PREPROCESSING, "linalg on tensors before dispatch formation (after IREE's global optimization)", "global-optimization"),
    PhaseStop(Phase.FLOW, "kernels as flow.dispatch ops", "flow"),
    PhaseStop(Phase.STREAM_ASYNC, "IREE's stream phase after its async pipeline, before allocation", "stream", _STREAM_UNTIL_ASYNC),
    PhaseStop(Phase.STREAM, "IREE's stream phase after schedule-allocation (stream.resource.pack ops)", "stream", _STREAM_ALLOCATION, "stream-allocation"),
    PhaseStop(Phase.CONFIGURATIONS, "executables with IREE's code-generation configs, before code generation", "executable-configurations"),
    PhaseStop(Phase.HAL, "executables for the target and the HAL ops that run them", "hal"),
)
PHASE_NAMES = tuple(p.name for p in PHASES)
_BY_NAME = {p.name: p for p in PHASES}
# What finishes an IREE phase after the last point schedc stops at inside it.
_REST_OF = {"stream": _STREAM_AFTER_ALLOCATION}


def phase(name: str) -> PhaseStop:
    """The phase called `name`; an unknown name lists the phases."""
    if name not in _BY_NAME:
        raise ValueError(f"unknown phase '{name}'; phases: {', '.join(PHASE_NAMES)}")
    return _BY_NAME[name]


# -- where IREE stands, and how to get from one point to another --------------------------------


@dataclass(frozen=True, order=True)
class Point:
    """A point in IREE's pipeline: after `inner` inner parts of IREE phase number `iree`, or,
    with `inner` END, at its end."""

    iree: int
    inner: float  # inner parts done; END at the end of the phase

    @property
    def iree_phase(self) -> str:
        return IREE_PHASES[self.iree]


END = float("inf")


def end_of(iree_phase: str) -> Point:
    return Point(IREE_PHASES.index(iree_phase), END)


def point_of(p: PhaseStop) -> Point:
    if not p.inner:
        return end_of(p.iree_phase)
    inner_phases = [q for q in PHASES if q.iree_phase == p.iree_phase and q.inner]
    return Point(IREE_PHASES.index(p.iree_phase), inner_phases.index(p) + 1)


def _parts(iree_phase: str) -> list[tuple[str, ...]]:
    """The iree-opt passes of each inner part of an IREE phase, then of its rest."""
    return [q.inner for q in PHASES if q.iree_phase == iree_phase and q.inner] + [_REST_OF.get(iree_phase, ())]


@dataclass(frozen=True)
class CompileStep:
    """`iree-compile --compile-from=start --compile-to=stop` (no flag for source and end)."""

    start: str
    stop: str

    @property
    def reached(self) -> Point:
        return end_of(self.stop)

    def flags(self) -> list[str]:
        flags = [] if self.start == "source" else [f"--compile-from={self.start}"]
        return flags + ([] if self.stop == "end" else [f"--compile-to={self.stop}"])


@dataclass(frozen=True)
class OptStep:
    """`iree-opt --pass-pipeline=builtin.module(passes)`, which reaches `reached`."""

    passes: tuple[str, ...]
    reached: Point

    @property
    def pipeline(self) -> str:
        return f"builtin.module({','.join(self.passes)})"


def steps_between(start: Point, stop: Point) -> list[CompileStep | OptStep]:
    """The IREE commands that take IR at `start` to `stop`: iree-compile between the ends of
    IREE's phases, one iree-opt run for the passes inside a phase."""
    steps: list = []
    here = start
    while here < stop:
        if here.inner != END:  # inside a phase: its parts up to the stop, or to its end
            last = stop.inner if stop.iree == here.iree else END
            parts = _parts(here.iree_phase)[int(here.inner):None if last == END else int(last)]
            here = Point(here.iree, last)
            steps.append(OptStep(tuple(p for part in parts for p in part), here))
        elif stop.inner == END:
            steps.append(CompileStep(here.iree_phase, stop.iree_phase))
            here = stop
        else:  # to the end of the phase before the stop's, then inside it
            before = Point(stop.iree - 1, END)
            if here < before:
                steps.append(CompileStep(here.iree_phase, before.iree_phase))
            parts = _parts(stop.iree_phase)[: int(stop.inner)]
            steps.append(OptStep(tuple(p for part in parts for p in part), stop))
            here = stop
    return steps


def pipeline_until(name: str) -> str:
    """The iree-opt pass pipeline from the start of a phase's IREE phase to the phase."""
    (step,) = steps_between(Point(point_of(phase(name)).iree - 1, END), point_of(phase(name)))
    return step.pipeline
