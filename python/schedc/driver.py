"""The compile pipeline: IREE's compiler, stopped at each phase where schedc's passes run.

    input (torch / linalg / stablehlo / tosa)
      --iree-compile--> preprocessing   schedc's passes before dispatch formation
      --iree-compile--> flow            schedc's flow-phase passes on the kernel graph
      --iree-opt------> stream-async    inside IREE's stream phase, before allocation
      --iree-opt------> stream          after schedule-allocation (transient packs)
      --iree-opt------> (end of stream)
      --iree-compile--> hal             executables for the target; static-replay (what
                                        --execution=graphs compiles to) runs here
      --iree-compile--> vmfb            the VM module

The phases are data (`schedc.phases`); every pass names its own on its registry entry, and the
driver stops IREE only where passes run (and at the flow phase, which the report and the
execution mode read). Each step reads and writes files in a work folder, numbered in the order
they run, so every phase can be dumped, and a failing IREE step is reproduced by one command on
the file it was given.
"""

from __future__ import annotations

import shutil
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from iree.compiler import ir

from .errors import CompileError, SchedcError
from .iree_tools import run_iree_compile, run_iree_opt
from .irio import check_input_file, module_text, parse_module, printable, write_atomically
from .phases import END, PHASES, CompileStep, Point, end_of, point_of, steps_between
from .pipeline import PassInvocation, PipelineError, complete_pipeline, parse_pipeline, run_pipeline
from .targets import Target, resolve_target

# What --emit writes: the IR at the end of one of IREE's phases (after schedc's passes of that
# phase), or the module.
EMIT_POINTS = {"flow": "flow", "stream": "stream", "hal": "hal", "vmfb": "end"}
EMIT_KINDS = tuple(EMIT_POINTS)


@dataclass(frozen=True)
class CompileOptions:
    target: Target
    passes: str | None = None  # None: schedc's default pipeline
    schedc_passes: bool = True
    emit: str = "vmfb"
    dump_phases: str | None = None
    iree_flags: tuple[str, ...] = ()
    report: bool = False  # also compile without schedc to the stream phase, to compare
    verify_plan: bool = False  # check every arena plan (arena-plan{verify=true})
    # "graphs": each call replays command buffers recorded once over static buffers
    # (static-replay); CUDA/HIP run them as graphs whose concurrent waves are parallel
    # branches. The module says so (see schedc.runtime.load).
    execution: str = "streams"
    # GPU kernel configs (kernel-config) for targets that take them; False: IREE's own configs.
    tuning: bool = True
    kernel_db: str | None = None  # a kernel database instead of the built-in one
    # One static copy of each function of dynamic batch per bucket (schedc.buckets).
    batch_buckets: tuple[int, ...] = ()


@dataclass
class CompileResult:
    output: bytes | str  # the .vmfb bytes, or the IR text of the emitted phase
    phases: dict[str, Path] = field(default_factory=dict)
    records: dict = field(default_factory=dict)  # what passes recorded, for reports
    report: dict | None = None


def compile(
    source,
    target: str | Target | None = None,
    *,
    output: str | None = None,
    passes: str | None = None,
    schedc_passes: bool = True,
    emit: str = "vmfb",
    dump_phases: str | None = None,
    iree_flags: tuple[str, ...] = (),
    cuda_arch: str | None = None,
    rocm_arch: str | None = None,
    vulkan_target: str | None = None,
    cpu: str | None = None,
    pass_output=None,
    report: str | None = None,
    execution: str = "streams",
    tuning: bool = True,
    kernel_db: str | None = None,
    batch_buckets=(),
) -> bytes | str:
    """Compiles MLIR (a path, text, or a torch-mlir module) and returns the .vmfb or IR text.

    With `output`, also writes it there (whole, or not at all). With `report`, writes the
    JSON report there (see `schedc.report`). With `batch_buckets` (e.g. (1, 2, 4, 8)), a
    model of dynamic batch gets one static copy of each function per bucket; the runtime picks
    the smallest bucket that holds a call's batch.
    """
    if not isinstance(target, Target):
        target = resolve_target(target, cuda_arch=cuda_arch, rocm_arch=rocm_arch, vulkan_target=vulkan_target, cpu=cpu)
    options = CompileOptions(
        target, passes, schedc_passes, emit, dump_phases, tuple(iree_flags), report=bool(report), execution=execution,
        tuning=tuning, kernel_db=kernel_db, batch_buckets=tuple(batch_buckets),
    )
    result = compile_with_options(source, options, pass_output=pass_output)
    if output:
        write_atomically(output, result.output)
    if report:
        from .report import write_report

        write_report(report, result.report)
    return result.output


def compile_with_options(source, options: CompileOptions, pass_output=None) -> CompileResult:
    if options.emit not in EMIT_KINDS:
        raise CompileError(f"unknown --emit '{options.emit}'; valid: {', '.join(EMIT_KINDS)}")
    if options.execution not in ("streams", "graphs"):
        raise CompileError(f"unknown execution '{options.execution}'; valid: streams, graphs")
    from schedc.passes import DEFAULT_PIPELINE, EXECUTION_PIPELINES, REGISTRY, PassContext

    pipeline_text = DEFAULT_PIPELINE if options.passes is None else options.passes
    named = parse_pipeline(pipeline_text, REGISTRY) if options.schedc_passes else []
    if options.schedc_passes and options.tuning:  # code-generation passes the target always takes
        listed = {n.name for n in named}
        named = [PassInvocation(p.name, p.options()) for p in REGISTRY.values() if options.target.name in p.implicit_for and p.name not in listed] + named
    execution = [i for i in parse_pipeline(EXECUTION_PIPELINES[options.execution], REGISTRY) if i.name not in {n.name for n in named}]
    invocations = complete_pipeline(named + execution, REGISTRY) if named or execution else []
    work = Path(tempfile.mkdtemp(prefix="schedc-"))
    keep_work = False
    try:
        input_path = _stage_input(source, work, dump=bool(options.dump_phases))
        target_flags = options.target.iree_flags() + list(options.iree_flags)
        pass_flags = [f for i in invocations for f in REGISTRY[i.name].iree_flags]
        steps = _Steps(work, input_path, target_flags + list(dict.fromkeys(pass_flags)), options.iree_flags)
        context = PassContext(out=pass_output) if pass_output is not None else PassContext()
        context.target = options.target.name
        context.verify = options.verify_plan
        context.arch = options.target.arch
        context.kernel_database = options.kernel_db or ""
        result = CompileResult(output=b"", records=context.records)
        if options.batch_buckets:
            steps.current = _batch_buckets(steps, target_flags, options.batch_buckets)

        # IREE stops at every phase with passes, and at the ends of the flow phase (the report
        # compiles IREE alone from there, and the execution mode is recorded there) and of the
        # stream phase (what the report reads).
        emitted = end_of(EMIT_POINTS[options.emit])
        last = max(emitted, end_of("stream")) if options.report else emitted
        by_phase = {p.name: [i for i in invocations if REGISTRY[i.name].phase == p.name] for p in PHASES}
        stops = {end_of("flow"), end_of("stream"), emitted} | {point_of(p) for p in PHASES if by_phase[p.name]}
        output = None
        for stop in sorted(s for s in stops if s <= last):
            steps.advance(stop)
            for phase in PHASES:
                if point_of(phase) == stop and by_phase[phase.name]:
                    steps.run_passes(phase.label, by_phase[phase.name], context)
            if stop == end_of("flow") and options.execution == "graphs":
                _mark_execution(steps.current, steps.next_file("flow-execution"), options.execution)
                steps.current = steps.last_file
            if stop == emitted:
                output = steps.current
        result.output = output.read_bytes() if output.suffix == ".vmfb" else output.read_text()
        result.phases = dict(steps.by_label)
        if options.report:
            flow, stream = steps.files[end_of("flow")], steps.files[end_of("stream")]
            result.report = _report(steps, flow, stream, target_flags, options, pipeline_text, result.records)
        return result
    except CompileError as e:
        keep_work = keep_work or e.repro is not None  # the repro command reads files in `work`
        raise
    except PipelineError:
        keep_work = True  # the message names the IR schedc was given
        raise
    finally:
        if options.dump_phases:
            _dump(work, Path(options.dump_phases))
        if not keep_work:
            shutil.rmtree(work, ignore_errors=True)


class _Steps:
    """The IR on its way through IREE and schedc's passes: where it stands in IREE's pipeline
    and the file that holds it; each step writes the next file of the work folder."""

    def __init__(self, work: Path, input_path: Path, compile_flags: list[str], iree_flags):
        self.work = work
        self.count = 1  # 0 is the input
        self.current = self.last_file = input_path
        self.point = Point(0, END)
        self.files: dict[Point, Path] = {}  # what IREE wrote at each point
        self.by_label: dict[str, Path] = {}
        self.compile_flags = compile_flags
        # iree-opt takes only the stream phase's options of the user's IREE flags.
        self.opt_flags = [f for f in iree_flags if f.startswith("--iree-stream-")]

    def next_file(self, label: str, suffix: str = ".mlir") -> Path:
        self.last_file = self.work / f"{self.count:02d}-{label}{suffix}"
        self.by_label[label] = self.last_file
        self.count += 1
        return self.last_file

    def advance(self, stop: Point) -> None:
        """Runs IREE from here to `stop`."""
        for step in steps_between(self.point, stop):
            if isinstance(step, CompileStep):
                output = self.next_file(_label(step.reached), ".vmfb" if step.stop == "end" else ".mlir")
                run_iree_compile([str(self.current), *self.compile_flags, *step.flags(), "-o", str(output)],
                                 what=f"IREE from the {step.start} phase to the {step.stop} phase")
            else:
                output = self.next_file(_label(step.reached))
                run_iree_opt([str(self.current), *self.opt_flags, f"--pass-pipeline={step.pipeline}", "-o", str(output)],
                             what=f"IREE's {step.reached.iree_phase} phase ({', '.join(step.passes)})")
            if output.suffix == ".mlir":
                output.write_text(printable(output.read_text()))
            self.current, self.point = output, step.reached
            self.files[step.reached] = output

    def run_passes(self, label: str, invocations, context) -> None:
        """Runs schedc passes on the current IR."""
        destination = self.next_file(f"{label}-schedc")
        _run_schedc_passes(self.current, destination, invocations, context)
        self.current = destination


def _label(point: Point) -> str:
    """A point's name in file names: its schedc phase, else IREE's phase."""
    for phase in PHASES:
        if point_of(phase) == point:
            return phase.label
    return "module" if point.iree_phase == "end" else point.iree_phase


def _batch_buckets(steps: "_Steps", target_flags, buckets) -> Path:
    """IREE's input phase, then one static copy per bucket of each function of dynamic batch.
    (IREE's compile from there runs its input phase again, which leaves this IR as it is.)"""
    from .buckets import check_buckets, specialize_buckets

    buckets = check_buckets(buckets)
    source = steps.current
    lowered = steps.next_file("iree-input")
    run_iree_compile([str(source), *target_flags, "--compile-to=input", "-o", str(lowered)], what="IREE's input phase")
    module = parse_module(printable(lowered.read_text()), str(lowered), ir.Context())
    specialize_buckets(module, buckets, str(source))
    specialized = steps.next_file("batch-buckets")
    specialized.write_text(module_text(module))
    return specialized


def _mark_execution(source: Path, destination: Path, execution: str) -> None:
    """Records the execution mode in the exported functions' reflection, for the runtime."""
    module = parse_module(printable(source.read_text()), str(source), ir.Context())
    with module.context:
        for op in module.regions[0].blocks[0].operations:
            op = op.operation
            if op.name == "util.func" and "iree.abi.stub" in op.attributes:
                entries = {}
                if "iree.reflection" in op.attributes:
                    old = ir.DictAttr(op.attributes["iree.reflection"])
                    entries = {old[i].name: old[i].attr for i in range(len(old))}
                entries["schedc.execution"] = ir.StringAttr.get(execution)
                op.attributes["iree.reflection"] = ir.DictAttr.get(entries)
    destination.write_text(module_text(module))


def _run_schedc_passes(source: Path, destination: Path, invocations, context) -> None:
    """Runs schedc passes on one phase's file and writes the result."""
    from schedc.passes import REGISTRY

    module = parse_module(printable(source.read_text()), str(source), ir.Context())
    try:
        run_pipeline(module, invocations, REGISTRY, context)
    except PipelineError as e:
        raise PipelineError(f"{e}\nthe IR schedc was given is kept in {source}") from None
    destination.write_text(module_text(module))


def _report(steps: _Steps, flow: Path, stream: Path, target_flags, options: CompileOptions, pipeline: str, records: dict) -> dict:
    """IREE's stream phase without schedc's passes, beside the one with them."""
    from .report import build_report

    baseline = stream
    if options.schedc_passes:
        baseline = steps.next_file("stream-without-schedc")
        run_iree_compile([str(flow), *target_flags, *CompileStep("flow", "stream").flags(), "-o", str(baseline)], what="IREE's stream phase (without schedc, for the report)")
    meta = {
        "target": options.target.name,
        "arch": options.target.arch,
        "pipeline": pipeline if options.schedc_passes else "",
    }
    return build_report(records, stream.read_text(), baseline.read_text(), meta)


def _stage_input(source, work: Path, dump: bool) -> Path:
    """The input file IREE reads: the user's own file, or the text written into `work`."""
    if isinstance(source, Path) or (isinstance(source, str) and _looks_like_path(source)):
        path = check_input_file(str(source))  # a missing file is one clear line
        if dump:
            shutil.copyfile(path, work / _INPUT)
        return path.resolve()
    if hasattr(source, "operation"):  # a module object from torch-mlir or IREE's bindings
        source = str(source)
    if isinstance(source, bytes):
        source = source.decode()
    if not isinstance(source, str):
        raise SchedcError(f"cannot compile a {type(source).__name__}: pass MLIR text, a path or a module")
    staged = work / _INPUT
    staged.write_text(source)
    return staged


def _looks_like_path(text: str) -> bool:
    return "\n" not in text and len(text) < 4096 and not text.lstrip().startswith(("module", "func", "#", "util."))


_INPUT = "00-input.mlir"


def _dump(work: Path, folder: Path) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    for path in sorted(work.iterdir()):
        if path.is_file():
            shutil.copyfile(path, folder / path.name)
