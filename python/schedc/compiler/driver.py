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

The phases are data (`schedc.compiler.phases`); every pass names its own on its registry entry, and the
driver stops IREE only where passes run (and at the flow phase, which the report and the
execution mode read). Each step reads and writes files in a work folder, numbered in the order
they run, so every phase can be dumped, and a failing IREE step is reproduced by one command on
the file it was given.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from schedc.errors import CompileError, SchedcError
from schedc.ir.iree import exported_functions, function_name, module_string_attribute, user_function_name, named_parameters, packs, serialize_initializers, set_reflection, transient_allocations
from schedc.compiler.iree_tools import run_iree_tool
from schedc.ir.mlirio import (
    BYTECODE_MAGIC, BYTECODE_SUFFIX, ROUND_TRIP_MARKERS, ParseError, check_input_file, printable, read_bytecode, read_without_resources,
    write_with_resources,
)
from schedc.outputs import StagedOutputs, check_distinct, check_output_path
from schedc.compiler.phases import phase as named_phase
from schedc.compiler.phases import END, IREE_PHASES, PHASES, CompileStep, Point, end_of, point_of, steps_between
from schedc.compiler.pipeline import PassInvocation, PipelineError, complete_pipeline, parse_pipeline, run_pipeline
from schedc.options import CompileOptions, Emit, Execution, Phase
from schedc.runtime import abi
from schedc.targets import Target, input_flags, miscompile_warnings
from schedc.compiler.timing import PhaseTimer, timing_report
from schedc.compiler.waves import keep_free_waves

# What --emit writes: the IR at the end of one of IREE's phases (after schedc's passes of that
# phase), the target's code for each executable (a folder), or the module.
EMIT_POINTS = {Emit.FLOW: "flow", Emit.STREAM: "stream", Emit.CONFIGURATIONS: "executable-configurations", Emit.HAL: "hal", Emit.EXECUTABLES: "hal", Emit.VMFB: "end"}


@dataclass
class CompileResult:
    # The .vmfb bytes, the IR text of the emitted phase, or (executables) file name -> bytes.
    output: bytes | str | dict
    phases: dict[str, Path] = field(default_factory=dict)  # each file of the compile, by name
    records: dict = field(default_factory=dict)  # what passes recorded, for reports
    report: dict | None = None
    timer: PhaseTimer | None = None  # wall time per IREE step, schedc phase and pass


def compile(
    source=None,
    target: str | Target | None = None,
    *,
    input_file: str | Path | None = None,
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
    report: str | None = None,
    summary: bool = False,
    verify_plan: bool = False,
    execution: str = "streams",
    tuning: bool = True,
    kernel_db: str | None = None,
    batch_buckets=(),
    tf32: bool = False,
    timing: bool = False,
    pass_output=None,
    progress=None,
) -> bytes | str | dict:
    """Compiles MLIR and returns the .vmfb bytes, the emitted phase's IR text, or (with
    emit="executables") the bytes of each dispatch's code files by name.

    The input is `source` or `input_file`, never guessed: a `pathlib.Path` or `input_file=` is
    a file; a `str` is MLIR text; `bytes` are MLIR bytecode; a module object (torch-mlir's or
    IREE's) is printed as text. With `output`, writes the result there (whole, or not at all;
    a folder for executables). The other keywords are `schedc.options.CompileOptions`'s fields,
    documented there: with `report`, the report is written (JSON, or one HTML page for a
    `.html` path); with `summary`, its summary printed; `timing` prints the wall time of each
    step of the compile and each pass to stderr (like MLIR's --mlir-timing). `pass_output` is
    where passes print (default: stdout); with a `progress` stream (the CLI gives stderr on a
    terminal), each step's name shows on one status line as it starts.
    """
    report, output = (os.fspath(p) if isinstance(p, os.PathLike) else p for p in (report, output))
    keywords = dict(
        passes=passes, schedc_passes=schedc_passes, emit=emit, dump_phases=dump_phases, iree_flags=iree_flags,
        report=report, summary=summary, timing=timing, verify_plan=verify_plan, execution=execution, tuning=tuning,
        kernel_db=kernel_db, batch_buckets=batch_buckets, tf32=tf32,
    )
    if isinstance(target, Target):
        options = CompileOptions.for_target(target, **keywords)
    else:
        options = CompileOptions(target=target, cuda_arch=cuda_arch, rocm_arch=rocm_arch, vulkan_target=vulkan_target, cpu=cpu, **keywords)
    source = _input(source, input_file)
    source_path = str(source) if isinstance(source, Path) else None
    # Outputs that can never be written fail before the compile, not after it.
    if output and options.emit != Emit.EXECUTABLES:
        check_output_path(output, inputs=[source_path])
    if report is not None and not isinstance(report, str):
        raise CompileError(f"report takes a path (.json, or .html for a page), not {report!r}")
    if output is not None and not isinstance(output, str):
        raise CompileError(f"output takes a path, not {output!r}")
    if report:
        check_output_path(report, inputs=[source_path], what="report")
        check_distinct({"report": report, "output": output})
    timer = PhaseTimer(progress=progress)
    # With the module on stdout (`-o -`), stdout carries it alone: what passes print and the
    # summary go to stderr.
    text_out = sys.stderr if output == "-" else sys.stdout
    if pass_output is None and output == "-":
        pass_output = sys.stderr
    try:
        result = compile_with_options(source, options, pass_output=pass_output, timer=timer)
        if report:
            with timer.phase("report: writing " + Path(report).name):
                write_outputs(output, result, report)
        else:
            write_outputs(output, result, report)
    finally:
        timer.finish()
    if options.timing:
        print(timing_report(timer.entries, timer.total_seconds), file=sys.stderr)
    if options.summary:
        from schedc.report.build import summary_lines

        print("\n".join(summary_lines(result.report)), file=text_out)
    return result.output


def write_outputs(output: str | None, result: "CompileResult", report: str | None) -> None:
    """Writes the module (or IR, or executables folder) and its report: both, or neither."""
    from schedc.outputs import write_folder
    from schedc.report import report_page

    if isinstance(result.output, dict):
        if report:
            check_output_path(report, what="report")
        if output:
            write_folder(output, result.output)
        output = None
    with StagedOutputs() as outputs:
        if output:
            outputs.add(output, result.output)
        if report:
            outputs.add(report, report_page(report, result.report))
        outputs.commit()


def _input(source, input_file):
    if (source is None) == (input_file is None):
        raise SchedcError("compile takes one input: MLIR as `source`, or a file as `input_file=`")
    return Path(input_file) if input_file is not None else source


def compile_with_options(source, options: CompileOptions, pass_output=None, timer: PhaseTimer | None = None) -> CompileResult:
    """Compiles `source` (see `compile`); writes nothing but the dumped phases. `timer` (a
    silent one by default) gets the wall time of each step and pass."""
    from schedc.passes import REGISTRY, PassContext

    pipeline_text, invocations = _pipeline(options)
    timer = timer if timer is not None else PhaseTimer()
    if options.dump_phases:
        _check_dump_folder(options.dump_phases)
    for warning in miscompile_warnings(options.resolved_target, options.iree_flags):
        print(f"schedc: warning: {warning}", file=sys.stderr)
    work = Path(tempfile.mkdtemp(prefix="schedc-"))
    keep_work = False
    try:
        input_path = _stage_input(source, work, dump=bool(options.dump_phases))
        asked = input_flags(options.resolved_target, _f64_at_boundary(input_path), _half_generation(input_path), options.iree_flags)
        target_flags = options.resolved_target.iree_flags() + asked + list(options.iree_flags)
        pass_flags = [f for i in invocations for f in REGISTRY[i.name].flags_for(i.options)]
        # The target's code of each executable: as the module links it (--dump-phases), or one
        # executable per dispatch (--emit=executables, where no module is made).
        executables = "per-dispatch" if options.emit == Emit.EXECUTABLES else "linked" if options.dump_phases else None
        steps = _Steps(work, input_path, target_flags + list(dict.fromkeys(pass_flags)), options.iree_flags, executables, timer)
        # Each pass nests under the schedc phase that runs it in the timer.
        context = PassContext.from_options(options, timer=timer, passes=tuple(i.name for i in invocations),
                                           **({"out": pass_output} if pass_output is not None else {}))
        result = CompileResult(output=b"", records=context.records, timer=timer)
        if asked:  # for the report: IREE flags schedc added for this input (targets.input_flags)
            context.records["input"] = {"module": {"iree_flags": asked}}
        if options.batch_buckets:
            steps.current = _batch_buckets(steps, target_flags, options.batch_buckets)
        output = _run_phases(steps, invocations, context, options, _input_name(source))
        if options.emit == Emit.EXECUTABLES:
            result.output = {p.name: p.read_bytes() for p in sorted(steps.by_label["executables"].iterdir())}
        else:
            result.output = output.read_bytes() if output.suffix == ".vmfb" else output.read_text()
        result.phases = dict(steps.by_label)
        if options.wants_report:
            flow, stream = steps.files[end_of("flow")], steps.files[end_of("stream")]
            with timer.phase("report: IREE's stream phase without schedc"):
                result.report = _report(steps, flow, stream, options, pipeline_text, result.records)
        return result
    except SchedcError as e:
        located = _error_in_input(source, e)
        if located is not None:  # the user's own IR is wrong: say where, in their file
            raise located from None
        if isinstance(e, CompileError):
            if NO_FUNCTIONS in str(e):  # IREE's words for an input without functions
                raise SchedcError(f"{_input_name(source)}: the input has no functions: nothing to compile") from None
            keep_work = keep_work or e.repro is not None  # the repro command reads files in `work`
            if keep_work:
                e.args = (f"{e.args[0]}\n(the files it names are kept in {work})",)
        elif isinstance(e, PipelineError):
            keep_work = True  # the message names the IR schedc was given
        raise
    finally:
        if keep_work:
            _keep(work)
        if options.dump_phases:
            _dump(work, Path(options.dump_phases))
        if not keep_work:
            shutil.rmtree(work, ignore_errors=True)


# What a failure says when the input itself holds what MLIR cannot take: IREE crashes on some
# (an unregistered op, in its dispatch formation), or names its own intermediate file.
_INPUT_FAULTS = ("unregistered dialect", "unregistered operation")
# Inputs up to this size are parsed again to locate such a fault in the user's file.
_REPARSE_BYTES = 256 * 2**20


def _error_in_input(source, error: SchedcError) -> SchedcError | None:
    """The user's input's own parse error (file:line:col of their text), where a failure of
    IREE's first step, or of IREE or a phase's file, points at the input itself; None
    otherwise (the input parses: IREE's own failure stands)."""
    from iree.compiler import ir

    from schedc.ir.mlirio import ParseError, parse_module

    # IREE's first step reads the input: a failure there may be the user's syntax.
    first_step = str(error).startswith("IREE from the source phase")
    if not (first_step or getattr(error, "crashed", False) or any(f in str(error) for f in _INPUT_FAULTS)):
        return None
    if isinstance(source, Path):
        if not source.is_file() or source.stat().st_size > _REPARSE_BYTES or source.read_bytes()[:4] == BYTECODE_MAGIC:
            return None
        text = source.read_text(errors="replace")
    elif isinstance(source, str) and len(source) <= _REPARSE_BYTES:
        text = source
    else:
        return None
    try:
        parse_module(text, _input_name(source), ir.Context())
    except ParseError as e:
        return ParseError(_with_source_line(str(e), text))
    return None


def _with_source_line(message: str, text: str) -> str:
    """A located message with its input line quoted under it (MLIR's message for an
    unregistered op does not name the op)."""
    match = re.match(r"^.*?:(\d+):(\d+): ", message)
    lines = text.splitlines()
    if match is None or not 0 < int(match.group(1)) <= len(lines):
        return message
    return f"{message}\n    {lines[int(match.group(1)) - 1].strip()}"


def _pipeline(options: CompileOptions) -> tuple[str, list[PassInvocation]]:
    """The pipeline the user named (or schedc's default) and the passes the compile runs: those,
    the code-generation passes the target always takes, the execution mode's, and their
    followers, phase by phase."""
    from schedc.passes import DEFAULT_PIPELINE, EXECUTION_PIPELINES, REGISTRY

    pipeline_text = DEFAULT_PIPELINE if options.passes is None else options.passes
    named = parse_pipeline(pipeline_text, REGISTRY) if options.schedc_passes else []
    if options.schedc_passes:  # code-generation passes the target always takes (corrections even with --no-tuning)
        listed = {n.name for n in named}
        implicit = [PassInvocation(p.name, p.options()) for p in REGISTRY.values()
                    if options.target in p.implicit_for and (options.tuning or p.always) and p.name not in listed]
        # among themselves, each after those it must follow (cpu-config after split-concat)
        present = {i.name for i in implicit}
        implicit.sort(key=lambda i: len(present & set(REGISTRY[i.name].after)))
        # before the named passes, but after those of them it must follow (split-k after triton-conv)
        late = [i for i in implicit if listed & set(REGISTRY[i.name].after)]
        named = [i for i in implicit if i not in late] + named + late
    execution = [i for i in parse_pipeline(EXECUTION_PIPELINES[options.execution], REGISTRY) if i.name not in {n.name for n in named}]
    return pipeline_text, complete_pipeline(named + execution, REGISTRY) if named or execution else []


def _run_phases(steps: "_Steps", invocations: list[PassInvocation], context, options: CompileOptions, input_name: str) -> Path:
    """Runs IREE from the input to what `options.emit` asks for, stopping where passes run;
    returns the file of the emitted phase.

    IREE stops at every phase with passes, and at the ends of the flow phase (the report
    compiles IREE alone from there, and the execution mode is recorded there), of the stream
    phase (what the report reads) and, when dumping, of the hal phase."""
    from schedc.passes import REGISTRY

    emitted = end_of(EMIT_POINTS[options.emit])
    last = max(emitted, end_of("stream")) if options.wants_report else emitted
    by_phase = {p.name: [i for i in invocations if REGISTRY[i.name].phase == p.name] for p in PHASES}
    stops = {end_of("flow"), end_of("stream"), emitted} | {point_of(p) for p in PHASES if by_phase[p.name]}
    if options.dump_phases:
        stops.add(end_of("hal"))
    elif by_phase[Phase.INPUT] and all(i.name in ("cpu-config", "split-concat") for i in by_phase[Phase.INPUT]):
        # The input phase's stop serves cpu-config and split-concat, which read no weight's
        # values: IREE writes it as bytecode, whose weights are not printed as hex and parsed
        # back (text where the phases are dumped for reading). On ConvNeXt's 29 MB module that
        # took schedc's passes there from 0.36 to 0.04 s beside cpu-config's own time. Not for
        # split-k: iree-compile crashed (AnnotateDispatches) on the bytecode of its
        # weight-gradient splits, and not on their text.
        steps.bytecode_points = {point_of(phase) for phase in PHASES if phase.name == Phase.INPUT}
    output = None
    for stop in sorted(s for s in stops if s <= last):
        steps.advance(stop)
        for phase in PHASES:
            if point_of(phase) == stop and by_phase[phase.name]:
                steps.run_passes(phase.label, by_phase[phase.name], context, input_name)
                if phase.name == "flow":
                    keep_free_waves(steps, context.records, str(options.target))
        if stop == end_of("flow") and (options.execution == Execution.GRAPHS or _needs_marking(steps.current)):
            _mark_module(steps.current, steps.next_file("flow-marked"), options.execution)
            steps.current = steps.last_file
        if stop == emitted:
            output = steps.current
    return output


NO_FUNCTIONS = "outer module does not contain a vm.module op"
# The module's source map and the CPU executables' DWARF name the file IREE read last, in the
# work folder, deleted after the run: they would point nowhere. The user's own locations are
# gone by then (the phases' text carries none).
REPRODUCIBLE_MODULE_FLAGS = ("--iree-vm-bytecode-module-strip-source-map=true", "--iree-llvmcpu-debug-symbols=false")


def _reproducible(flags: list[str]) -> list[str]:
    """`flags` and the flags that make the .vmfb a function of the input, unless the user set them."""
    named = {f.split("=", 1)[0] for f in flags}
    return [f for f in REPRODUCIBLE_MODULE_FLAGS if f.split("=", 1)[0] not in named] + flags


# How a warning located in an intermediate file names it (by the file's label).
_IR_NAMES = {"flow": "flow-phase", "stream-async": "stream-phase (async)", "stream-allocation": "stream-phase (allocation)"}
KEPT_MARKER = ".schedc-kept"  # in a failed compile's work folder, kept for its repro command
KEPT_FOLDERS = 10  # the newest kept work folders stay; older ones are removed


def _input_name(source) -> str:
    return str(source) if isinstance(source, Path) else "<input>"


def _keep(work: Path) -> None:
    """Marks a failed compile's work folder as kept, and removes all but the newest kept ones."""
    (work / KEPT_MARKER).touch()
    kept = []
    for folder in work.parent.glob("schedc-*"):
        try:
            kept.append(((folder / KEPT_MARKER).stat().st_mtime, folder))
        except OSError:
            continue  # a folder of a compile still running, or not schedc's
    for _, folder in sorted(kept, reverse=True)[KEPT_FOLDERS:]:
        shutil.rmtree(folder, ignore_errors=True)


class _Steps:
    """The IR on its way through IREE and schedc's passes: where it stands in IREE's pipeline
    and the file that holds it; each step writes the next file of the work folder."""

    def __init__(self, work: Path, input_path: Path, compile_flags: list[str], iree_flags, executables: str | None,
                 timer: PhaseTimer | None = None):
        self.work = work
        self.count = 1  # 0 is the input
        self.current = self.last_file = input_path
        self.point = Point(0, END)
        self.files: dict[Point, Path] = {}  # what IREE wrote at each point
        self.by_label: dict[str, Path] = {}
        self.compile_flags = compile_flags
        # iree-opt takes only the stream phase's options of the user's IREE flags.
        self.opt_flags = [f for f in iree_flags if f.startswith("--iree-stream-")]
        self.executables = executables  # None, "linked" or "per-dispatch": see compile_with_options
        self.timer = timer if timer is not None else PhaseTimer()  # each step is one of its phases
        # Where IREE writes MLIR bytecode instead of text (`_run_phases`): no weight is printed
        # as hex and parsed back, and schedc's passes there read and write bytecode too.
        self.bytecode_points: set[Point] = set()

    def next_file(self, label: str, suffix: str = ".mlir") -> Path:
        self.last_file = self.work / f"{self.count:02d}-{label}{suffix}"
        self.by_label[label] = self.last_file
        self.count += 1
        return self.last_file

    def advance(self, stop: Point) -> None:
        """Runs IREE from here to `stop`."""
        for step in steps_between(self.point, stop):
            with self.timer.phase(step_name(step)):
                if isinstance(step, CompileStep):
                    flags = self._executable_flags(step)
                    binary = step.stop != "end" and step.reached in self.bytecode_points
                    flags += ["--emit-mlir-bytecode"] if binary else []
                    output = self.next_file(_label(step.reached), ".vmfb" if step.stop == "end" else BYTECODE_SUFFIX if binary else ".mlir")
                    what = f"IREE from the {step.start} phase to the {step.stop} phase"
                    if (step.stop == "end" or _generates_code(step)) and self.current.parent == self.work:
                        # In the work folder on relative names: the module (and the CPU code's debug
                        # info) records the name of the file IREE read, and the folder's is random.
                        flags = [f.replace(f"{self.work}/", "") for f in flags]
                        run_iree_tool("iree-compile", [self.current.name, *_reproducible(self.compile_flags), *flags, *step.flags(), "-o", output.name],
                                      what=what, cwd=str(self.work))
                    else:
                        run_iree_tool("iree-compile", [str(self.current), *self.compile_flags, *flags, *step.flags(), "-o", str(output)], what=what)
                else:
                    output = self.next_file(_label(step.reached))
                    run_iree_tool("iree-opt", [str(self.current), *self.opt_flags, f"--pass-pipeline={step.pipeline}", "-o", str(output)],
                                  what=f"IREE's {step.reached.iree_phase} phase ({', '.join(step.passes)})")
                if output.suffix == ".mlir":
                    _make_printable(output)
            self.current, self.point = output, step.reached
            self.files[step.reached] = output

    def _executable_flags(self, step: CompileStep) -> list[str]:
        """IREE's flags that write each executable's code (LLVM IR, PTX, HSACO, SPIR-V, as
        the target gives) into a folder, for the step that generates it."""
        if not (self.executables and _generates_code(step)):
            return []
        folder = self.next_file("executables", "")
        folder.mkdir()
        flags = [f"--iree-hal-dump-executable-intermediates-to={folder}", f"--iree-hal-dump-executable-binaries-to={folder}"]
        return flags + (["--iree-hal-link-executables=false"] if self.executables == "per-dispatch" else [])

    def run_passes(self, label: str, invocations, context, input_name: str | None = None) -> None:
        """Runs schedc passes on the current IR."""
        destination = self.next_file(f"{label}-schedc", self.current.suffix)
        with self.timer.phase(f"schedc's passes at {label}"):  # each pass nests under it
            _run_schedc_passes(self.current, destination, invocations, context, input_name)
        self.current = destination
        self.compile_flags += [f for f in context.iree_flags if f not in self.compile_flags]


def step_name(step) -> str:
    """What `--timing` and the progress line call one IREE command of the compile."""
    if isinstance(step, CompileStep):
        return f"IREE from the {step.start} phase to " + ("the module" if step.stop == "end" else f"the {step.stop} phase")
    to = "its end" if step.reached.inner == END else _label(step.reached)
    return f"IREE's {step.reached.iree_phase} phase up to {to}"


def _generates_code(step: CompileStep) -> bool:
    """Whether an iree-compile step generates the executables' code for the target."""
    return IREE_PHASES.index(step.start) < IREE_PHASES.index("executable-targets") <= IREE_PHASES.index(step.stop)


def _label(point: Point) -> str:
    """A point's name in file names: its schedc phase, else IREE's phase."""
    for phase in PHASES:
        if point_of(phase) == point:
            return phase.label
    return "module" if point.iree_phase == "end" else point.iree_phase


def _batch_buckets(steps: "_Steps", target_flags, buckets) -> Path:
    """IREE's input and ABI phases, then one static copy per bucket of each function of dynamic
    batch. (IREE's compile from there runs those phases again, which leave this IR as it is.)"""
    from schedc.compiler.buckets import check_buckets, specialize_buckets

    buckets = check_buckets(buckets)
    source = steps.current
    lowered = steps.next_file("iree-abi")
    # To the end of IREE's ABI phase: torch input has its buffer-view ABI from the input phase,
    # other input (linalg) only once the ABI phase has wrapped its functions.
    with steps.timer.phase("IREE's input and ABI phases"):
        run_iree_tool("iree-compile", [str(source), *target_flags, "--compile-to=abi", "-o", str(lowered)], what="IREE's input and ABI phases")
    module, resources = read_without_resources(lowered)
    with steps.timer.phase("schedc: batch buckets"):
        specialize_buckets(module, buckets, str(source))
    specialized = steps.next_file("batch-buckets")
    write_with_resources(module, resources, specialized)
    return specialized


def _f64_at_boundary(path: Path) -> bool:
    """Whether an input's functions may take or return f64 tensors: a `func.func` line that
    names them (torch's `,f64>`, builtin's `xf64>`), or bytecode, whose types a byte search
    cannot see. (f64 inside a function only is IREE's to demote, as it does by default: its CPU
    code has no f64 cos, sin or atan2.)"""
    with open(path, "rb") as f:
        return f.read(4) == BYTECODE_MAGIC or _file_contains(f, re.compile(rb"func\.func [^\n]*f64>"))


def _half_generation(path: Path) -> bool:
    """Whether an input is a generation module (`schedc import --generate`) in f16 or bf16: its
    module attribute, and a tensor of those types (torch's `,f16>`, builtin's `xf16>`)."""
    with open(path, "rb") as f:
        return _file_contains(f, abi.GENERATION.encode()) and _file_contains(f, re.compile(rb"[,x](?:b?f16)>"))


def _needs_marking(path: Path) -> bool:
    """Whether a phase's text names parameters of an archive or is a generation module (a
    cheap look before a parse)."""
    with open(path, "rb") as f:
        return any(_file_contains(f, needle) for needle in (b"#stream.parameter.named<", abi.GENERATION.encode(), abi.SIGNATURE.encode()))


def _mark_module(source: Path, destination: Path, execution: str) -> None:
    """Records, in the exported functions' reflection, for the runtime: the execution mode
    (for graphs), the torch signature the importer recorded, and the parameters the module reads from archives (their scope, key,
    element type and shape), which the runtime checks an archive against before loading."""
    from schedc.runtime.parameters import ParameterSpec, layout_text

    module, resources = read_without_resources(source)
    needed = [ParameterSpec(p.scope, p.key, p.element, p.shape) for p in named_parameters(module)]
    generation = module_string_attribute(module, abi.GENERATION)
    signatures = json.loads(module_string_attribute(module, abi.SIGNATURE) or "{}")
    for func in exported_functions(module):
        if generation is not None:
            set_reflection(func, abi.GENERATION, generation)
        signature = signatures.get(user_function_name(function_name(func)))
        if signature is not None:
            set_reflection(func, abi.SIGNATURE, json.dumps(signature, separators=(",", ":")))
        if execution == Execution.GRAPHS:
            set_reflection(func, abi.EXECUTION, execution)
        if needed:
            set_reflection(func, abi.PARAMETERS, layout_text(needed))
    if execution == Execution.GRAPHS and needed:
        # Weights read from an archive are transformed at load (IREE hoists what it would fold
        # into a constant): hundreds of concurrent dispatches in one initializer, past the
        # nodes a CUDA graph takes at once ("exceeded max concurrent node limit" on an H200).
        # They run once, so one at a time: IREE combines the initializers into a new one later,
        # which finds its partitioning on the module; every function keeps its own.
        serialize_initializers(module)
    write_with_resources(module, resources, destination)


def _make_printable(path: Path) -> None:
    """Rewrites an IR file IREE wrote where IREE could not parse it back (`printable`); a file
    holding none of the fixes' literals is not read."""
    with path.open("rb") as f:
        if not any(_file_contains(f, marker.encode()) for marker in ROUND_TRIP_MARKERS):
            return
    text = path.read_text()
    fixed = printable(text)
    if fixed != text:
        path.write_text(fixed)


def _file_contains(f, needle) -> bool:
    """Whether the file holds `needle` (bytes, or a compiled bytes pattern), read mapped."""
    import mmap

    try:
        with mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as data:
            return needle.search(data) is not None if isinstance(needle, re.Pattern) else data.find(needle) >= 0
    except ValueError:  # an empty file cannot be mapped
        return False


def _run_schedc_passes(source: Path, destination: Path, invocations, context, input_name: str | None = None) -> None:
    """Runs schedc passes on one phase's file and writes the result. A warning located in that
    file (deleted after the run) names `input_name` and the phase instead."""
    from schedc.passes import REGISTRY

    def where(prefix: str) -> str:
        if input_name is None or not prefix.startswith(str(source)):
            return prefix
        label = source.stem.split("-", 1)[-1]
        return f"{input_name}: in IREE's {_IR_NAMES.get(label, label)} IR: "

    if source.suffix == BYTECODE_SUFFIX:  # weights as raw bytes: parsed and written whole
        try:
            module, resources = read_bytecode(source), None
        except ParseError:  # what the parser rejects, it rejects in text too, located there
            text = source.with_suffix(".mlir")
            run_iree_tool("iree-opt", [str(source), "--allow-unregistered-dialect", "-o", str(text)], what="IREE's printing of the input phase")
            module, resources = read_without_resources(text)
    else:  # no schedc pass reads a weight's bytes: the module is parsed and printed without them
        module, resources = read_without_resources(source)
    try:
        run_pipeline(module, invocations, REGISTRY, context, where)
    except PipelineError as e:
        raise PipelineError(f"{e}\nthe IR schedc was given is kept in {source}") from None
    if resources is None:
        with open(destination, "wb") as f:
            module.write_bytecode(f)
    else:
        write_with_resources(module, resources, destination)


def _report(steps: _Steps, flow: Path, stream: Path, options: CompileOptions, pipeline: str, records: dict) -> dict:
    """IREE's stream phase without schedc's passes, beside the one with them: stopped after
    schedule-allocation (where IREE's own slices and order are, for the report's arena maps),
    then to its end, as the compile with schedc runs it."""
    from schedc.report.build import build_report, iree_arenas

    def stream_step(start: Point, stop: Point, source: Path, label: str) -> Path:
        (step,) = steps_between(start, stop)
        destination = steps.next_file(label)
        run_iree_tool("iree-opt", [str(source), *steps.opt_flags, f"--pass-pipeline={step.pipeline}", "-o", str(destination)],
                      what=f"IREE's stream phase up to {label} (without schedc, for the report)")
        return destination

    allocation_point = point_of(named_phase("stream"))
    allocation = stream_step(end_of("flow"), allocation_point, flow, "stream-allocation-without-schedc")
    baseline = stream
    if options.schedc_passes:
        baseline = stream_step(allocation_point, end_of("stream"), allocation, "stream-without-schedc")
    meta = {
        "target": options.resolved_target.name,
        "arch": options.resolved_target.arch,
        "pipeline": pipeline if options.schedc_passes else "",
        "input_flags": records.get("input", {}).get("module", {}).get("iree_flags", []),
    }
    allocations = [transient_allocations(read_without_resources(path)[0]) for path in (stream, baseline)]
    return build_report(records, *allocations, meta, iree_arenas(packs(read_without_resources(allocation)[0])))


def _stage_input(source, work: Path, dump: bool) -> Path:
    """The input file IREE reads: the user's own file, or the text or bytecode written into
    `work`."""
    if isinstance(source, Path):
        path = check_input_file(str(source))  # a missing file is one clear line
        if dump:
            shutil.copyfile(path, work / f"00-input{path.suffix or '.mlir'}")
        return path.resolve()
    if hasattr(source, "operation"):  # a module object from torch-mlir or IREE's bindings
        source = str(source)
    if isinstance(source, (bytes, bytearray)):
        if not bytes(source[:4]) == BYTECODE_MAGIC:
            raise SchedcError("bytes are read as MLIR bytecode, and these are not: pass MLIR text as a str")
        staged = work / "00-input.mlirbc"
        staged.write_bytes(source)
        return staged
    if not isinstance(source, str):
        raise SchedcError(f"cannot compile a {type(source).__name__}: pass MLIR text (str), bytecode (bytes), a pathlib.Path or input_file=")
    if not source.strip():
        raise SchedcError("the input is empty: no MLIR to compile")
    if "\n" not in source and source.strip().endswith((".mlir", ".mlirbc")):
        raise SchedcError(f"'{source.strip()}' is not MLIR: a str is MLIR text; to compile a file, pass pathlib.Path('{source.strip()}') or input_file=")
    staged = work / "00-input.mlir"
    staged.write_text(source)
    return staged


def _check_dump_folder(folder: str) -> None:
    """--dump-phases names a folder that exists or can be made, before anything runs."""
    path = Path(folder)
    if path.exists() and not path.is_dir():
        raise SchedcError(f"--dump-phases {folder}: exists and is not a directory")
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise SchedcError(f"--dump-phases {folder}: cannot make the folder ({e.strerror})") from None


def _dump(work: Path, folder: Path) -> None:
    try:
        folder.mkdir(parents=True, exist_ok=True)
        for path in sorted(work.iterdir()):
            if path.name == KEPT_MARKER:
                continue
            if path.is_dir():
                shutil.copytree(path, folder / path.name, dirs_exist_ok=True)
            else:
                shutil.copyfile(path, folder / path.name)
    except OSError as e:
        raise SchedcError(f"--dump-phases {folder}: cannot write ({e.strerror})") from None
