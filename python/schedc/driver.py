"""The compile pipeline: IREE to the flow phase, schedc's passes, then IREE to the module.

    input (torch / linalg / stablehlo / tosa)
      --iree-compile--> flow         IREE's input, global-optimization and dispatch-creation
      --schedc-------> flow          schedc's flow-phase passes on the kernel graph
      --iree-compile--> stream        IREE's stream phase: partitioning, allocation; with
                                      stream-phase passes (arena-plan) it runs in two halves
                                      (iree-opt) and schedc's passes run between them
      --iree-compile--> vmfb          executables for the target, the VM module

Each phase reads and writes files in a work folder, so every phase can be dumped, and a failing
IREE phase is reproduced by one iree-compile command on the file it was given.
"""

from __future__ import annotations

import shutil
import tempfile
from dataclasses import dataclass, field, replace
from pathlib import Path

from iree.compiler import ir

from .errors import CompileError, SchedcError
from .iree_tools import (
    STREAM_AFTER_ALLOCATION,
    STREAM_ALLOCATION,
    STREAM_UNTIL_ALLOCATION,
    STREAM_UNTIL_ASYNC,
    run_iree_compile,
    run_iree_opt,
)
from .irio import check_input_file, module_text, parse_module, printable
from .outputs import StagedOutputs, check_output_path
from .report import build_report, report_text
from .pipeline import PipelineError, parse_pipeline, run_pipeline
from .targets import Target, resolve_target

EMIT_KINDS = ("flow", "stream", "vmfb")
PHASE_FILES = {  # phase -> file name in the work folder and in --dump-phases
    "input": "0-input.mlir",
    "flow": "1-flow.mlir",
    "schedc": "2-flow-schedc.mlir",
    "async": "3a0-stream-async.mlir",
    "async-schedc": "3a1-stream-async-schedc.mlir",
    "marked": "2-flow-execution.mlir",
    "allocation": "3a-stream-allocation.mlir",
    "allocation-schedc": "3b-stream-allocation-schedc.mlir",
    "stream": "3-stream.mlir",
    "vmfb": "4-module.vmfb",
}


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
    # "graphs": CUDA/HIP graphs run concurrent waves as parallel branches; needs IREE's indirect
    # command buffers off, and the module says so (see schedc.runtime.load).
    execution: str = "streams"


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
) -> bytes | str:
    """Compiles MLIR (a path, text, or a torch-mlir module) and returns the .vmfb or IR text.

    With `output`, also writes it there (whole, or not at all). With `report`, writes the
    JSON report there (see `schedc.report`).
    """
    if isinstance(iree_flags, str):  # one flag, not a sequence of one-character flags
        iree_flags = (iree_flags,)
    if not isinstance(target, Target):
        target = resolve_target(target, cuda_arch=cuda_arch, rocm_arch=rocm_arch, vulkan_target=vulkan_target, cpu=cpu)
    options = CompileOptions(target, passes, schedc_passes, emit, dump_phases, tuple(iree_flags), report=bool(report), execution=execution)
    source_path = _source_path(source)
    if output:
        check_output_path(output, inputs=[source_path])
    if report:
        check_output_path(report, inputs=[source_path, output], what="report")
    result = compile_with_options(source, options, pass_output=pass_output)
    with StagedOutputs() as outputs:  # the module and its report: both, or neither
        if output:
            outputs.add(output, result.output)
        if report:
            outputs.add(report, report_text(result.report))
        outputs.commit()
    return result.output



def compile_with_options(source, options: CompileOptions, pass_output=None) -> CompileResult:
    if options.emit not in EMIT_KINDS:
        raise CompileError(f"unknown --emit '{options.emit}'; valid: {', '.join(EMIT_KINDS)}")
    if options.execution not in ("streams", "graphs"):
        raise CompileError(f"unknown execution '{options.execution}'; valid: streams, graphs")
    from schedc.passes import DEFAULT_PIPELINE, REGISTRY, PassContext

    pipeline_text = DEFAULT_PIPELINE if options.passes is None else options.passes
    invocations = parse_pipeline(pipeline_text, REGISTRY) if options.schedc_passes else []
    if options.verify_plan:
        invocations = [
            replace(i, options=replace(i.options, verify=True)) if i.name == "arena-plan" else i for i in invocations
        ]
    names = [i.name for i in invocations]
    if "stream-schedule" in names and "stream-waves" not in names:
        invocations += parse_pipeline("stream-waves", REGISTRY)  # carries its waves into IREE
    if options.dump_phases:
        _check_dump_folder(options.dump_phases)
    flow_passes = [i for i in invocations if REGISTRY[i.name].phase == "flow"]
    async_passes = [i for i in invocations if REGISTRY[i.name].phase == "stream-async"]
    stream_passes = [i for i in invocations if REGISTRY[i.name].phase == "stream"]
    work = Path(tempfile.mkdtemp(prefix="schedc-"))
    keep_work = False
    try:
        input_path = _stage_input(source, work, dump=bool(options.dump_phases))
        target_flags = options.target.iree_flags() + list(options.iree_flags)
        if options.execution == "graphs":
            target_flags.append("--iree-hal-indirect-command-buffers=false")
        result = CompileResult(output=b"")

        # 1. IREE: input -> flow.
        flow = work / PHASE_FILES["flow"]
        run_iree_compile([str(input_path), *target_flags, "--compile-to=flow", "-o", str(flow)], what="IREE up to the flow phase")
        result.phases["flow"] = flow

        # 2. schedc's passes on the flow phase.
        context = PassContext(out=pass_output) if pass_output is not None else PassContext()
        context.target = options.target.name
        scheduled = flow
        if flow_passes:
            scheduled = work / PHASE_FILES["schedc"]
            _run_schedc_passes(flow, scheduled, flow_passes, context, _input_name(source))
            result.phases["schedc"] = scheduled
        result.records = context.records
        if options.execution == "graphs":
            marked = work / PHASE_FILES["marked"]
            _mark_execution(scheduled, marked, options.execution)
            scheduled = marked
        if options.emit == "flow" and not options.report:
            result.output = scheduled.read_text()
            return result

        # 3. IREE: flow -> stream, with schedc's stream-phase passes inside it.
        stream = work / PHASE_FILES["stream"]
        _stream_phase(scheduled, stream, work, target_flags, options, async_passes, stream_passes, context, _input_name(source))
        stream.write_text(printable(stream.read_text()))
        result.phases["stream"] = stream
        if options.report:
            result.report = _report(work, flow, stream, target_flags, options, pipeline_text, result.records)
        if options.emit in ("flow", "stream"):
            result.output = (scheduled if options.emit == "flow" else stream).read_text()
            return result

        # 4. IREE: stream -> VM module.
        vmfb = work / PHASE_FILES["vmfb"]
        # Run in the work folder on relative names: the module records the name of the file IREE
        # read, and the work folder's name is random.
        module_flags = _reproducible(target_flags)
        run_iree_compile([stream.name, *module_flags, "--compile-from=stream", "-o", vmfb.name], what="IREE from the stream phase to the module",
                         cwd=str(work))
        result.phases["vmfb"] = vmfb
        result.output = vmfb.read_bytes()
        return result
    except CompileError as e:
        if NO_FUNCTIONS in str(e):  # IREE's words for an input without functions
            raise SchedcError(f"{_input_name(source)}: the input has no functions: nothing to compile") from None
        keep_work = keep_work or e.repro is not None  # the repro command reads files in `work`
        if keep_work:
            e.args = (f"{e.args[0]}\n(the files it names are kept in {work})",)
        raise
    except PipelineError:
        keep_work = True  # the message names the IR schedc was given
        raise
    finally:
        if keep_work:
            _keep(work)
        if options.dump_phases:
            _dump(work, Path(options.dump_phases))
        if not keep_work:
            shutil.rmtree(work, ignore_errors=True)


NO_FUNCTIONS = "outer module does not contain a vm.module op"
# The module's source map and the CPU executables' DWARF name the file IREE read last, in the
# work folder, deleted after the run: they would point nowhere. The user's own locations are
# gone by then (the phases' text carries none).
REPRODUCIBLE_MODULE_FLAGS = ("--iree-vm-bytecode-module-strip-source-map=true", "--iree-llvmcpu-debug-symbols=false")


def _reproducible(flags: list[str]) -> list[str]:
    """`flags` and the flags that make the .vmfb a function of the input, unless the user set them."""
    named = {f.split("=", 1)[0] for f in flags}
    return [f for f in REPRODUCIBLE_MODULE_FLAGS if f.split("=", 1)[0] not in named] + flags


PHASE_NAMES = {PHASE_FILES["flow"]: "flow-phase", PHASE_FILES["async"]: "stream-phase (async)",
               PHASE_FILES["allocation"]: "stream-phase (allocation)"}
KEPT_MARKER = ".schedc-kept"  # in a failed compile's work folder, kept for its repro command
KEPT_FOLDERS = 10  # the newest kept work folders stay; older ones are removed


def _source_path(source) -> str | None:
    """The input file's path, when the source is one (not MLIR text or a module)."""
    if isinstance(source, Path) or (isinstance(source, str) and _looks_like_path(source)):
        return str(source)
    return None


def _input_name(source) -> str:
    return _source_path(source) or "<input>"


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


def _stream_phase(scheduled: Path, stream: Path, work: Path, target_flags, options, async_passes, stream_passes, context,
                  input_name: str | None = None) -> None:
    """IREE's stream phase; with schedc stream-phase passes, in parts through iree-opt:
    up to the async pipeline, schedc's async passes (stream-waves), allocation, schedc's
    allocation passes (arena-plan), then the rest of IREE's stream pipeline."""
    if not (async_passes or stream_passes):
        run_iree_compile([str(scheduled), *target_flags, "--compile-from=flow", "--compile-to=stream", "-o", str(stream)], what="IREE's stream phase")
        return
    stream_flags = [f for f in options.iree_flags if f.startswith("--iree-stream-")]

    def iree_opt(source: Path, pipeline: str, destination: Path, what: str) -> None:
        run_iree_opt([str(source), *stream_flags, f"--pass-pipeline={pipeline}", "-o", str(destination)], what=what)

    allocation = work / PHASE_FILES["allocation"]
    if async_passes:
        asynchronous, waved = work / PHASE_FILES["async"], work / PHASE_FILES["async-schedc"]
        iree_opt(scheduled, STREAM_UNTIL_ASYNC, asynchronous, "IREE's stream phase up to its async pipeline")
        _run_schedc_passes(asynchronous, waved, async_passes, context, input_name)
        iree_opt(waved, STREAM_ALLOCATION, allocation, "IREE's stream allocation")
    else:
        iree_opt(scheduled, STREAM_UNTIL_ALLOCATION, allocation, "IREE's stream phase up to allocation")
    planned = allocation
    if stream_passes:
        planned = work / PHASE_FILES["allocation-schedc"]
        _run_schedc_passes(allocation, planned, stream_passes, context, input_name)
    iree_opt(planned, STREAM_AFTER_ALLOCATION, stream, "IREE's stream phase after allocation")


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


def _run_schedc_passes(source: Path, destination: Path, invocations, context, input_name: str | None = None) -> None:
    """Runs schedc passes on one phase's file and writes the result. A warning located in that
    file (deleted after the run) names `input_name` and the phase instead."""
    from schedc.passes import REGISTRY

    def where(prefix: str) -> str:
        if input_name is None or not prefix.startswith(str(source)):
            return prefix
        return f"{input_name}: in IREE's {PHASE_NAMES.get(source.name, 'intermediate')} IR: "

    module = parse_module(printable(source.read_text()), str(source), ir.Context())
    try:
        run_pipeline(module, invocations, REGISTRY, context, where)
    except PipelineError as e:
        raise PipelineError(f"{e}\nthe IR schedc was given is kept in {source}") from None
    destination.write_text(module_text(module))


def _report(work: Path, flow: Path, stream: Path, target_flags, options: CompileOptions, pipeline: str, records: dict) -> dict:
    """IREE's stream phase without schedc's passes, beside the one with them."""
    baseline = work / "3-stream-without-schedc.mlir"
    if options.schedc_passes:
        run_iree_compile([str(flow), *target_flags, "--compile-from=flow", "--compile-to=stream", "-o", str(baseline)], what="IREE's stream phase (without schedc, for the report)")
    else:
        baseline = stream
    meta = {
        "target": options.target.name,
        "arch": options.target.arch,
        "pipeline": pipeline if options.schedc_passes else "",
    }
    return build_report(records, stream.read_text(), baseline.read_text(), meta)


def _stage_input(source, work: Path, dump: bool) -> Path:
    """The input file IREE reads: the user's own file, or the text written into `work`."""
    if _source_path(source) is not None:
        path = check_input_file(str(source))  # a missing file is one clear line
        if dump:
            shutil.copyfile(path, work / PHASE_FILES["input"])
        return path.resolve()
    if hasattr(source, "operation"):  # a module object from torch-mlir or IREE's bindings
        source = str(source)
    if isinstance(source, (bytes, bytearray)):
        if bytes(source[:4]) == MLIR_BYTECODE_MAGIC:  # IREE reads MLIR bytecode as well as text
            staged = work / "0-input.mlirbc"
            staged.write_bytes(bytes(source))
            return staged
        try:
            source = bytes(source).decode("utf-8")
        except UnicodeDecodeError as e:
            raise SchedcError(f"the input bytes are neither MLIR text (not UTF-8 at byte {e.start}) nor MLIR bytecode") from None
    if not isinstance(source, str):
        raise SchedcError(f"cannot compile a {type(source).__name__}: pass MLIR text, a path or a module")
    if not source.strip():
        raise SchedcError("the input is empty: no MLIR to compile")
    staged = work / PHASE_FILES["input"]
    staged.write_text(source)
    return staged


MLIR_BYTECODE_MAGIC = b"ML\xefR"


def _looks_like_path(text: str) -> bool:
    return bool(text.strip()) and "\n" not in text and len(text) < 4096 and not text.lstrip().startswith(("module", "func", "#", "util."))


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
        for name in PHASE_FILES.values():
            if (work / name).exists():
                shutil.copyfile(work / name, folder / name)
    except OSError as e:
        raise SchedcError(f"--dump-phases {folder}: cannot write ({e.strerror})") from None
