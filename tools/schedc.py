"""schedc: compile a model, import one from PyTorch, or run a compiled module.

    schedc model.mlir [--target=cuda|rocm|vulkan|llvm-cpu] [-o model.vmfb]
    schedc import path/to/file.py:factory -o model.mlir [--params=weights.irpa]
    schedc run model.vmfb --function=forward --input=@x.npy [--device=local-task] [--params=weights.irpa]
    schedc params save checkpoint.pt|file.py:factory -o weights.irpa   (runtime and torch only)
    schedc import lm.py:factory --generate -o lm.mlir; schedc generate lm.vmfb --prompt-ids 1,2,3
    schedc tune [prepare|bench|merge] ...   GPU kernel configs, measured (see 'schedc tune --help')
    schedc report report.json -o report.html
"""

from __future__ import annotations

import argparse
import os
import re
import signal
import sys
import threading
from pathlib import Path

from schedc.errors import SchedcError
from schedc.options import Execution
from schedc.outputs import check_output_path, written_in_place


class ArgumentParser(argparse.ArgumentParser):
    """argparse's parser, exiting 1 on a usage error as on every other error of schedc's
    (argparse's own code is 2)."""

    def error(self, message: str):
        self.print_usage(sys.stderr)
        self.exit(1, f"{self.prog}: error: {message}\n")

    def parse_args(self, args=None, namespace=None):
        parsed = super().parse_args(args, namespace)
        for name, value in vars(parsed).items():  # argparse appends `--flag=--` as an empty list, not a string
            if isinstance(value, list) and any(not isinstance(v, str) for v in value):
                self.error(f"argument --{name.replace('_', '-')}: expected a value")
        return parsed


def compile_parser() -> argparse.ArgumentParser:
    """The options of `schedc.compile`, one for one: each compile flag is derived from its field
    of `schedc.options.CompileOptions` (its `dest` is the keyword)."""
    from schedc.options import add_compile_arguments

    p = ArgumentParser(
        prog="schedc",
        description="Compile MLIR (torch, linalg, stablehlo, tosa) with IREE and schedc's scheduling passes.",
        epilog="other commands: 'schedc import FILE.py:FACTORY -o model.mlir', 'schedc run MODULE.vmfb ...', 'schedc tune ...', "
        "'schedc report REPORT.json -o REPORT.html'",
    )
    p.add_argument("input_file", metavar="input", help="an .mlir file (text or bytecode), or - for stdin (then give -o)")
    p.add_argument("-o", "--output", help="output file (default: INPUT stem + .vmfb, .<phase>.mlir with --emit, or the folder .executables)")
    add_compile_arguments(p)
    return p


def tune_parser() -> argparse.ArgumentParser:
    import textwrap

    description = textwrap.fill(
        "Measure code-generation choices per dispatch and keep them in a kernel database: GPU configs "
        "(cuda, rocm), or CPU layouts and modes (llvm-cpu). 'schedc tune MODEL.mlir...' does all three steps on a machine "
        "with the device (for llvm-cpu: this one); otherwise run 'prepare' here, 'bench' on the device's machine (needs "
        "only iree-base-runtime and numpy), 'merge' here.", 88)
    p = ArgumentParser(
        prog="schedc tune", description=description, formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="the one-step form, all three steps on this machine:\n\n" + _tune_all_parser().format_help(),
    )
    steps = p.add_subparsers(dest="step", metavar="{prepare,bench,merge}")
    prepare = steps.add_parser("prepare", help="compile candidate configs of each distinct dispatch")
    prepare.add_argument("models", nargs="+", help=".mlir files")
    prepare.add_argument("-o", "--output", required=True, metavar="DIR", help="folder for the candidate modules")
    prepare.add_argument("--new-only", action="store_true", help="skip dispatches the database (--database, else the built-in one for the target) already holds")
    prepare.add_argument("--database", metavar="DB.json", help="with --new-only: the database to compare with")
    _tune_target_options(prepare)
    bench = steps.add_parser("bench", help="time each candidate on the GPU and check its outputs")
    bench.add_argument("folder", help="a folder written by 'schedc tune prepare'")
    bench.add_argument("--device", help="cuda (default for GPU folders), hip, or local-task (default for llvm-cpu folders)")
    bench.add_argument("--calls", type=int, help="timed calls per candidate (median; default 20 on GPUs, 100 on CPUs)")
    merge = steps.add_parser("merge", help="add the winners to a kernel database")
    merge.add_argument("folder", help="a folder benchmarked by 'schedc tune bench'")
    merge.add_argument("--database", metavar="DB.json", help="the database to update (default: the built-in one for the target)")
    _tune_target_options(merge)
    return p


def _tune_target_options(p) -> None:
    p.add_argument("--target", default="cuda", help="cuda (default), rocm or llvm-cpu")
    p.add_argument("--cpu", help="llvm-cpu: the CPU to generate code for (default: host)")
    p.add_argument("--cuda-arch", help="CUDA target (default sm_80)")
    p.add_argument("--rocm-arch", help="ROCm target (default gfx942)")
    p.add_argument("--candidates", type=int, default=8, help="configs measured per dispatch besides IREE's and the heuristic's")
    p.add_argument("--elementwise", action="store_true", help="also tune elementwise dispatches (default: matmuls, matmul-likes and convolutions)")
    p.add_argument("--repeat", type=int, default=50, help="dispatches per benchmark call")
    p.add_argument("--jobs", type=int, default=0, help="parallel compiles (default: all cores)")
    p.add_argument("--iree-flag", action="append", default=[], metavar="FLAG", help="an extra flag for iree-compile (repeatable)")


def import_parser() -> argparse.ArgumentParser:
    p = ArgumentParser(prog="schedc import", description="Import a PyTorch model to torch-dialect MLIR.")
    p.add_argument("factory", help="path/to/file.py:factory; the factory returns (model, example_inputs)")
    p.add_argument("-o", "--output", required=True, help="the .mlir file to write")
    p.add_argument("--save-inputs", action="store_true", help="also write the example inputs as OUTPUT-stem.argN.npy")
    p.add_argument("--dtype", choices=("f32", "f16", "bf16"), help="convert the model's weights and float inputs first (default: as the factory made them)")
    p.add_argument("--dynamic-batch", action="store_true", help="leave dimension 0 of the inputs dynamic (for --batch-buckets)")
    p.add_argument("--params", metavar="WEIGHTS.irpa", help="write the weights to this parameter archive and name them in the MLIR "
                   "instead of inlining them (load the compiled module with --params / params=)")
    p.add_argument("--generate", action="store_true", help="import a causal language model (Hugging Face, static cache) as a generation "
                   "module: prefill per --seq-buckets, one decode step, the KV cache as device state (run it with schedc generate)")
    p.add_argument("--seq-buckets", default="32,64,128,256", metavar="32,64,...", help="with --generate: the prompt lengths prefill is compiled for")
    p.add_argument("--max-seq", type=int, default=512, help="with --generate: the positions the KV cache holds")
    p.add_argument("--batch-buckets", default="1", metavar="1,2,4,...", help="with --generate: the numbers of prompts generated "
                   "together that prefill and decode are compiled for, each with a KV cache of its own (1 always)")
    p.add_argument("--train", action="store_true", help="import one training step: the factory returns (model, inputs, targets, loss); "
                   "the function train_step takes (parameters, buffers, inputs, targets) and returns (updated buffers, loss, gradients)")
    return p


def run_parser() -> argparse.ArgumentParser:
    p = ArgumentParser(prog="schedc run", description="Run a compiled module's function, like iree-run-module.")
    p.add_argument("module", help="a .vmfb file")
    p.add_argument("--function", default="forward")
    p.add_argument("--device", default="local-task", help="local-task (default), local-sync, cuda, hip or vulkan")
    p.add_argument("--execution", choices=Execution.names(), help="cuda/hip: the module's mode by default")
    p.add_argument("--input", action="append", default=[], help="@file.npy, or SHAPExDTYPE=VALUE such as 4x16xf32=1")
    p.add_argument("--output", action="append", default=[], help="@file.npy to save each output, in order")
    p.add_argument("--params", action="append", default=[], metavar="[SCOPE=]WEIGHTS.irpa",
                   help="a parameter archive for a module whose weights are outside it (repeatable; scope 'model' by default)")
    return p


def params_parser() -> argparse.ArgumentParser:
    p = ArgumentParser(prog="schedc params", description="Parameter archives (.irpa): a model's weights outside its module. "
                                "Needs torch and IREE's runtime, not the compiler.")
    steps = p.add_subparsers(dest="step", required=True, metavar="{save,show}")
    save = steps.add_parser("save", help="write a checkpoint's or a factory's weights to an archive")
    save.add_argument("source", help="a torch checkpoint (torch.save of a state_dict), or path/to/file.py:factory")
    save.add_argument("-o", "--output", required=True, help="the .irpa file to write")
    save.add_argument("--seed", type=int, help="with a factory: seed torch's random generator first (random weights, reproducible)")
    save.add_argument("--dtype", choices=("f32", "f16", "bf16"), help="convert floating-point weights first (as schedc import --dtype)")
    show = steps.add_parser("show", help="list an archive's entries")
    show.add_argument("archive", help="an .irpa file")
    return p


def report_parser() -> argparse.ArgumentParser:
    p = ArgumentParser(prog="schedc report", description="Turn a JSON report (schedc --report=PATH.json) into an HTML page.")
    p.add_argument("report", help="a JSON report written by schedc --report")
    p.add_argument("-o", "--output", required=True, help="the .html file to write")
    return p


def _terminate(signum, frame):
    raise SystemExit(128 + signum)  # unwinds like Ctrl-C: work folders and staged outputs go


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGTERM, _terminate)
    try:
        if argv and argv[0] == "import":
            return cmd_import(import_parser().parse_args(argv[1:]))
        if argv and argv[0] == "run":
            return cmd_run(run_parser().parse_args(argv[1:]))
        if argv and argv[0] == "tune":
            return cmd_tune(argv[1:])
        if argv and argv[0] == "generate":
            return cmd_generate(generate_parser().parse_args(argv[1:]))
        if argv and argv[0] == "params":
            return cmd_params(params_parser().parse_args(argv[1:]))
        if argv and argv[0] == "report":
            return cmd_report(report_parser().parse_args(argv[1:]))
        return cmd_compile(compile_parser().parse_args(argv))
    except SchedcError as e:
        print(f"schedc: error: {e}", file=sys.stderr)
        return 1
    except OSError as e:  # the system refused a path: too long a name, no permission, a full disk
        where = f"{e.filename}: " if e.filename else ""
        print(f"schedc: error: {where}{e.strerror or e}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130


def cmd_compile(args) -> int:
    from schedc.compiler.buckets import parse_buckets
    from schedc.compiler.driver import compile

    options = vars(args)
    if options["batch_buckets"]:
        options["batch_buckets"] = parse_buckets(options["batch_buckets"])
    if args.input_file == "-":
        if not args.output:
            raise SchedcError("reading the input from stdin (-), give the output's name with -o")
        options["source"], options["input_file"] = _stdin_source(), None
    if not options["output"]:
        stem = Path(args.input_file).stem
        options["output"] = {"vmfb": f"{stem}.vmfb", "executables": f"{stem}.executables"}.get(args.emit, f"{stem}.{args.emit}.mlir")
    # On a terminal, each step's name shows as it starts; piped or redirected, nothing does.
    compile(**options, progress=sys.stderr if sys.stderr.isatty() else None)
    written = [options["output"]] if options["output"] != "-" else []
    if options.get("report"):
        written.append(options["report"])
    if written:
        print(_wrote(written), file=sys.stderr)
    return 0


def cmd_report(args) -> int:
    from schedc.report import read_report, write_report

    if not args.output.lower().endswith((".html", ".htm")):
        raise SchedcError(f"-o {args.output}: the page is HTML; name it .html")
    check_output_path(args.output, inputs=[args.report])
    report = read_report(args.report)
    try:
        write_report(args.output, report)
    except (TypeError, KeyError, ValueError, AttributeError, IndexError) as e:  # a JSON file of another shape
        raise SchedcError(f"{args.report}: not a schedc report (written by schedc --report): {type(e).__name__}: {e}") from None
    print(f"wrote {args.output}", file=sys.stderr)
    return 0


def _stdin_source() -> bytes | str:
    """The input read from stdin: MLIR bytecode as bytes, MLIR text as a str."""
    from schedc.ir.mlirio import BYTECODE_MAGIC

    data = sys.stdin.buffer.read()
    if data[:4] == BYTECODE_MAGIC:
        return data
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise SchedcError(f"the input on stdin is neither MLIR text (not UTF-8 at byte {e.start}) nor MLIR bytecode") from None


def cmd_tune(argv: list[str]) -> int:
    """`schedc tune prepare|bench|merge ...`, or `schedc tune MODEL.mlir...` for all three."""
    if argv and argv[0] not in ("prepare", "bench", "merge") and not argv[0].startswith("-"):
        return _tune_all(argv)
    args = tune_parser().parse_args(argv)
    if args.step is None:
        tune_parser().print_help(sys.stderr)
        return 2
    if args.step == "bench":
        from schedc.tune.bench import bench, print_progress
        from schedc.tune.prepare import read_manifest

        if args.calls is not None and args.calls < 1:
            raise SchedcError("--calls must be at least 1")
        from schedc.tune.cpu import is_cpu_manifest

        manifest = read_manifest(args.folder)
        on_cpu = is_cpu_manifest(manifest)
        if on_cpu:
            from schedc.tune.cpu import bench
        elif args.device:
            drivers = {"cuda": ("cuda",), "rocm": ("hip",), "vulkan": ("vulkan",), "llvm-cpu": ("local-task", "local-sync")}
            wanted = drivers.get(manifest.get("target"), ())
            if wanted and args.device.split(":")[0] not in wanted:
                raise SchedcError(f"{args.folder} holds candidates compiled for {manifest.get('target')}: bench them on "
                                  f"--device={' or '.join(wanted)}, not {args.device}")
        calls = args.calls or (100 if on_cpu else 20)
        document = bench(args.folder, device=args.device or ("local-task" if on_cpu else "cuda"), calls=calls, progress=print_progress)
        measured = sum(len(v) for v in document["kernels"].values())
        print(f"timed {measured} candidates of {len(document['kernels'])} kernels in {document['seconds']} s; wrote {args.folder}/results.json", file=sys.stderr)
        return 0
    if args.step == "prepare" and args.database and not args.new_only:
        raise SchedcError("--database is for --new-only: name the database to compare with")
    options = _tune_options(args)
    if options.target.name == "llvm-cpu":
        return _tune_cpu_step(args, options)
    if args.step == "prepare":
        from schedc.tune.prepare import prepare

        manifest = prepare(args.models, args.output, options)
        _print_prepared(manifest, args.output)
        return 0
    from schedc.tune.prepare import merge

    try:
        _, kept, path = merge(args.folder, args.database, options.target)
    except (KeyError, TypeError, ValueError, AttributeError) as e:  # a manifest or results edited by hand
        raise SchedcError(f"{args.folder}: its manifest or results are not what 'schedc tune' wrote ({type(e).__name__}: {e})") from None
    _print_merged(kept, path)
    return 0


def _tune_options(args):
    from schedc.targets import resolve_target
    from schedc.tune.prepare import TuneOptions

    if args.candidates < 0 or args.repeat < 1 or args.jobs < 0:
        raise SchedcError("--candidates and --jobs must be >= 0 and --repeat >= 1")
    target = resolve_target(args.target, cuda_arch=args.cuda_arch, rocm_arch=args.rocm_arch, cpu=args.cpu)
    if target.name == "llvm-cpu":
        from schedc.tune.cpu import CpuTuneOptions

        return CpuTuneOptions(target, tuple(args.iree_flag), _known_cpu_ops(args))
    from schedc.decisions.kernel_config import ELEMENTWISE_KINDS, POOLING_KINDS, TILED_KINDS

    kinds = TILED_KINDS + POOLING_KINDS + (ELEMENTWISE_KINDS if args.elementwise else ())
    return TuneOptions(target, args.candidates, kinds, args.repeat, args.jobs, tuple(args.iree_flag), _known_kernels(args, target))


def _known_kernels(args, target) -> frozenset[str]:
    """The signature keys `--new-only` skips: those of the database (--database, else the
    built-in one for the target)."""
    if not getattr(args, "new_only", False):
        return frozenset()
    from schedc.decisions.kernel_config import KernelDatabase, default_database

    database = KernelDatabase.load(args.database) if args.database else default_database(target.name, target.arch)
    if database is None:
        raise SchedcError(f"--new-only: no built-in kernel database for {target.name} {target.arch}; name one with --database")
    return frozenset(database.entries)


def _host_isa() -> str:
    from schedc.decisions.cpu_config import host_isa
    from schedc.targets import host_cpu_features

    return host_isa(host_cpu_features())


def _known_cpu_ops(args) -> frozenset[str]:
    """The op keys `--new-only` skips on llvm-cpu: those of the CPU database."""
    if not getattr(args, "new_only", False):
        return frozenset()
    from schedc.decisions.cpu_config import CpuDatabase, default_database

    database = CpuDatabase.load(args.database) if args.database else default_database(_host_isa())
    return frozenset(database.entries) if database is not None else frozenset()


def _check_database_folder(path: str | None) -> None:
    """Fails before any tuning work where the database could not be written."""
    from pathlib import Path

    from schedc.outputs import check_output_path

    if path is None:
        return
    check_output_path(path, what="database")
    if not Path(path).resolve().parent.is_dir():
        raise SchedcError(f"cannot write {path}: no such folder {Path(path).parent}")


def _tune_cpu_step(args, options) -> int:
    from schedc.tune import cpu

    if args.step == "prepare":
        manifest = cpu.prepare(args.models, args.output, options, _host_isa())
        _print_cpu_prepared(manifest, args.output)
        return 0
    _check_database_folder(args.database)
    _, kept, path = cpu.merge(args.folder, args.database, _host_isa())
    _print_cpu_merged(kept, path)
    return 0


def _print_cpu_prepared(manifest: dict, folder: str) -> None:
    modules = sum(len(k["modules"]) for k in manifest["kernels"])
    failed = sum(len(k["failed"]) for k in manifest["kernels"])
    print(f"prepared {len(manifest['kernels'])} ops, {modules} modules ({failed} rejected by IREE) in {folder}", file=sys.stderr)


def _print_cpu_merged(kept, path: str) -> None:
    from schedc.decisions.cpu_config import IREE_DEFAULT

    for entry in kept:
        best = min(entry.times_us, key=entry.times_us.get)
        print(f"{entry.shape.key}: {best} {entry.times_us[best]:.1f} us (IREE's {entry.times_us['/'.join(IREE_DEFAULT)]:.1f} us)")
    print(f"{len(kept)} ops measured into {path}", file=sys.stderr)


def _tune_all_parser() -> argparse.ArgumentParser:
    p = ArgumentParser(prog="schedc tune", description="tune the dispatches of MODELs on this machine's device (GPU, or the CPU for llvm-cpu)")
    p.add_argument("models", nargs="+", help=".mlir files")
    p.add_argument("--database", metavar="DB.json", help="the database to update (default: the built-in one)")
    p.add_argument("--new-only", action="store_true", help="skip dispatches the database already holds")
    _tune_target_options(p)
    return p


def _tune_all(argv: list[str]) -> int:
    """prepare, bench and merge on this machine, in a temporary folder."""
    import tempfile

    from schedc.runtime.module import has_device
    from schedc.tune.bench import bench, print_progress
    from schedc.tune.prepare import merge, prepare

    args = _tune_all_parser().parse_args(argv)
    options = _tune_options(args)
    if options.target.name == "llvm-cpu":
        from schedc.tune import cpu

        _check_database_folder(args.database)
        with tempfile.TemporaryDirectory(prefix="schedc-tune-") as folder:
            _print_cpu_prepared(cpu.prepare(args.models, folder, options, _host_isa()), folder)
            cpu.bench(folder, progress=print_progress)
            _, kept, path = cpu.merge(folder, args.database, _host_isa())
        _print_cpu_merged(kept, path)
        return 0
    driver = "cuda" if options.target.name == "cuda" else "hip"
    if not has_device(driver):
        raise SchedcError(
            f"no {driver} device here: run 'schedc tune prepare MODEL.mlir -o DIR' here, "
            f"'schedc tune bench DIR' on the GPU machine, then 'schedc tune merge DIR'"
        )
    with tempfile.TemporaryDirectory(prefix="schedc-tune-") as folder:
        _print_prepared(prepare(args.models, folder, options), folder)
        bench(folder, device=driver, progress=print_progress)
        _, kept, path = merge(folder, args.database, options.target)
    _print_merged(kept, path)
    return 0


def _print_prepared(manifest: dict, folder: str) -> None:
    candidates = sum(len(k["functions"]) for k in manifest["kernels"])
    failed = sum(len(k["failed"]) for k in manifest["kernels"])
    print(
        f"prepared {len(manifest['kernels'])} kernels, {candidates} candidates ({failed} rejected by IREE, "
        f"{len(manifest['skipped'])} kernels not reproducible standalone) in {folder}",
        file=sys.stderr,
    )


def _print_merged(kept, path: str) -> None:
    for entry in kept:
        config = entry.config.label() if entry.config else "IREE's own"
        print(f"{entry.signature.name}: {entry.signature.describe()}: {config}, {entry.time_us:.2f} us (IREE's {entry.iree_time_us:.2f} us)")
    print(f"{len(kept)} kernels updated in {path}", file=sys.stderr)


def cmd_import(args) -> int:
    import numpy as np

    from schedc.torch.importer import import_torch, load_factory
    from schedc.outputs import write_output

    from schedc.torch.importer import convert_precision, convert_tensors

    factory_file = args.factory.rpartition(":")[0]
    check_output_path(args.output, inputs=[factory_file])
    if args.save_inputs and written_in_place(args.output):
        raise SchedcError(f"--save-inputs writes OUTPUT-stem.argN.npy beside -o, and {args.output} is not a file: name an .mlir file")
    if args.generate:
        return _import_generation(args)
    if args.train:
        if args.dynamic_batch:
            raise SchedcError("--train takes static shapes: --dynamic-batch is for inference")
        model, example, targets, loss = load_factory(args.factory, train=True)
        if args.dtype:
            model, example = convert_precision(model, example, args.dtype)
            targets = convert_tensors(targets, args.dtype)
        if args.params:
            raise SchedcError("--train takes the weights as the step's arguments: --params is for inference")
        write_output(args.output, import_torch(model, *example, train=True, targets=targets, loss=loss))
        # The step's arguments in order: parameters, buffers, inputs, targets.
        example = [*(p.detach() for p in model.parameters()), *model.buffers(), *example, *targets]
    else:
        model, example = load_factory(args.factory)
        if args.dtype:
            model, example = convert_precision(model, example, args.dtype)
        params = args.params
        if params is not None:
            check_output_path(params, inputs=[args.factory.rpartition(":")[0]], what="parameter archive")
            if os.path.realpath(params) == os.path.realpath(args.output):
                raise SchedcError(f"{params}: the parameter archive and the MLIR (-o) must be two files")
        write_output(args.output, import_torch(model, *example, dynamic_batch=args.dynamic_batch, params=params))
        if params is None:
            _note_inlined_weights(model)
    written = [args.output] + ([args.params] if getattr(args, "params", None) else [])
    if args.save_inputs:
        stem = Path(args.output).with_suffix("")
        for i, value in enumerate(example):
            if args.dtype == "bf16" and value.is_floating_point():
                value = value.float()  # numpy has no bfloat16: saved as f32, the module converts
            np.save(f"{stem}.arg{i}.npy", value.detach().cpu().numpy())
            written.append(f"{stem}.arg{i}.npy")
    print(_wrote(written), file=sys.stderr)
    return 0


_NUMBERED = re.compile(r"(.*?)(\d+)(\D*)")


def _numbered_runs(paths: list[str]) -> list[str]:
    """Three or more files numbered in a row (`m.arg0.npy`, `m.arg1.npy`, ...) as one item,
    `m.arg0.npy .. m.arg39.npy (40 files)`; every other path as it is."""
    items, i = [], 0
    while i < len(paths):
        first, j = _NUMBERED.fullmatch(paths[i]), i
        while first and j + 1 < len(paths):
            following = _NUMBERED.fullmatch(paths[j + 1])
            if not following or (following[1], following[3]) != (first[1], first[3]) or int(following[2]) != int(first[2]) + j + 1 - i:
                break
            j += 1
        items += [f"{paths[i]} .. {paths[j]} ({j - i + 1} files)"] if j - i >= 2 else paths[i:j + 1]
        i = j + 1
    return items


def _wrote(paths) -> str:
    """`wrote a`, `wrote a and b`, `wrote a, b and c`: every file a command wrote, named (a
    numbered run of them as its first and last)."""
    paths = _numbered_runs([str(p) for p in paths])
    return "wrote " + (paths[0] if len(paths) == 1 else ", ".join(paths[:-1]) + " and " + paths[-1])


# Inlined weights above this many bytes get a note pointing at --params (docs/runtime.md: a
# GPT-2-small-sized decoder's 475 MiB compiled 36x slower inlined than external).
INLINED_WEIGHTS_NOTE = 100 * 2**20


def _note_inlined_weights(model) -> None:
    from schedc.torch.parameters import archived_tensors

    inlined = sum(t.numel() * t.element_size() for t in archived_tensors(model.state_dict()).values())
    if inlined > INLINED_WEIGHTS_NOTE:
        print(f"schedc: note: {inlined / 2**20:,.0f} MiB of weights inlined in the MLIR; --params=WEIGHTS.irpa keeps them "
              f"in an archive instead, for a faster compile and a module that loads any checkpoint", file=sys.stderr)


def _import_generation(args) -> int:
    from schedc.torch.generation import MAX_BATCH, import_generation
    from schedc.torch.importer import convert_precision, load_factory
    from schedc.outputs import write_output

    if args.train or args.dynamic_batch or args.save_inputs:
        raise SchedcError("--generate makes prefill and decode functions of their own: drop --train, --dynamic-batch and --save-inputs")
    try:
        buckets = sorted({int(b) for b in args.seq_buckets.split(",") if b.strip()})
    except ValueError:
        raise SchedcError(f"--seq-buckets={args.seq_buckets}: expected positive integers such as 32,64,128") from None
    if not buckets or buckets[0] < 1 or buckets[-1] > args.max_seq or args.max_seq > MAX_SEQ:
        raise SchedcError(f"--seq-buckets must be from 1 to --max-seq ({args.max_seq}), and --max-seq at most {MAX_SEQ}")
    try:
        batches = sorted({int(b) for b in args.batch_buckets.split(",") if b.strip()})
    except ValueError:
        raise SchedcError(f"--batch-buckets={args.batch_buckets}: expected positive integers such as 1,2,4") from None
    if not batches or batches[0] < 1 or batches[-1] > MAX_BATCH:
        raise SchedcError(f"--batch-buckets must be from 1 to {MAX_BATCH}, got {args.batch_buckets}")
    if args.params is not None and os.path.realpath(args.params) == os.path.realpath(args.output):
        raise SchedcError(f"{args.params}: the parameter archive and the MLIR (-o) must be two files")
    model, example = load_factory(args.factory)
    if args.dtype:
        model, _ = convert_precision(model, example, args.dtype)
    write_output(args.output, import_generation(model, buckets, args.max_seq, params=args.params, batches=batches))
    print(_wrote([args.output] + ([args.params] if args.params else [])), file=sys.stderr)
    return 0


MAX_SEQ = 65536  # the longest KV cache --max-seq makes (far past what a model's positions allow)


def generate_parser() -> argparse.ArgumentParser:
    p = ArgumentParser(prog="schedc generate", description="Greedy text generation with a module made by schedc import --generate.")
    p.add_argument("module", help="a .vmfb of a generation module")
    p.add_argument("--prompt-ids", required=True, action="append", metavar="1,2,3",
                   help="the prompt's token ids; repeated, several prompts generated together (a module imported with --batch-buckets)")
    p.add_argument("--max-new-tokens", type=int, default=64)
    p.add_argument("--eos-token-id", type=int, help="stop after this token")
    p.add_argument("--device", default="local-task", help="local-task (default), local-sync, cuda, hip")
    p.add_argument("--params", action="append", default=[], metavar="[SCOPE=]WEIGHTS.irpa", help="the module's parameter archive (repeatable)")
    return p


def cmd_generate(args) -> int:
    from schedc.runtime.module import load

    prompts = []
    for text in args.prompt_ids:
        try:
            prompts.append([int(t) for t in text.split(",") if t.strip()])
        except ValueError:
            raise SchedcError(f"--prompt-ids={text}: expected token ids such as 15496,11,616") from None
    module = load(args.module, device=args.device, params=parse_params(args.params))
    if len(prompts) > 1:  # one line of new tokens per prompt, in order
        for row in module.generate_batch(prompts, args.max_new_tokens, args.eos_token_id):
            print(" ".join(map(str, row)))
        return 0
    for token in module.generate_iter(prompts[0], args.max_new_tokens, args.eos_token_id):
        print(token, end=" ", flush=True)
    print()
    return 0


def cmd_params(args) -> int:
    if args.step == "show":
        from schedc.runtime.parameters import read_archive

        for key, array in read_archive(args.archive).items():
            print(f"{key}: {array.dtype} {'x'.join(map(str, array.shape)) or 'scalar'}")
        return 0
    from schedc.torch.parameters import read_checkpoint, save_params

    path_text, _, factory = args.source.rpartition(":")
    from_factory = path_text.endswith(".py") and bool(factory)
    check_output_path(args.output, inputs=[path_text if from_factory else args.source], what="parameter archive")
    if from_factory:
        import torch

        from schedc.torch.importer import convert_precision, load_factory

        if args.seed is not None:  # random weights, the same on every machine with this torch
            torch.manual_seed(args.seed)
        model, example = load_factory(args.source)
        if not isinstance(model, torch.nn.Module):
            raise SchedcError(f"{args.source}: the factory's model is a {type(model).__name__}, not a torch.nn.Module")
        if args.dtype:
            model, _ = convert_precision(model, example, args.dtype)
        state = model.state_dict()
    else:
        if args.seed is not None:
            raise SchedcError("--seed makes random weights of a factory's model (file.py:factory), not of a checkpoint file")
        state = read_checkpoint(args.source, args.dtype)
    count = save_params(state, args.output)
    print(f"wrote {args.output} ({count} parameters)", file=sys.stderr)
    return 0


def parse_params(values: list[str]):
    """--params values: PATH (scope "model") or SCOPE=PATH, as schedc.load's `params`."""
    if not values:
        return None
    from schedc.runtime.parameters import SCOPE

    scopes: dict[str, list[str]] = {}
    for value in values:
        if not isinstance(value, str) or not value:  # argparse gives `--params=--` as a list
            raise SchedcError("--params: expected WEIGHTS.irpa or SCOPE=WEIGHTS.irpa")
        scope, sep, path = value.partition("=")
        if not sep or "/" in scope:
            scope, path = SCOPE, value
        scopes.setdefault(scope, []).append(path)
    return scopes


def cmd_run(args) -> int:
    import numpy as np

    from schedc.runtime.module import load, summarize

    import io

    from schedc.outputs import StagedOutputs

    targets = [_output_file(text) for text in args.output]
    for target in targets:  # before the call: an output that can never be written fails first
        check_output_path(target, inputs=[args.module, *(t[1:] for t in args.input if t.startswith("@"))])
    inputs = [parse_input(text) for text in args.input]
    module = load(args.module, device=args.device, execution=args.execution, params=parse_params(args.params))
    function = module[args.function]
    results = function(*inputs)
    results = results if isinstance(results, tuple) else (results,)
    print(f"EXEC @{args.function}")
    for i, value in enumerate(results):
        print(f"result[{i}]: {summarize(value)}")
    with StagedOutputs() as outputs:  # np.save would add .npy to a name without it (/dev/null.npy)
        for target, value in zip(targets, results):
            data = io.BytesIO()
            np.save(data, np.asarray(value))
            outputs.add(target, data.getvalue())
        outputs.commit()
    return 0


def _output_file(text: str) -> str:
    if not isinstance(text, str) or not text.startswith("@") or len(text) == 1:
        raise SchedcError(f"--output={text}: expected @file.npy")
    return text[1:]


# The largest array --input=SHAPExDTYPE=VALUE makes: beyond it a typo, not a model's input.
MAX_INPUT_BYTES = 16 * 2**30


_DTYPES = {"f16": "float16", "f32": "float32", "f64": "float64", "bf16": None, "i8": "int8", "i16": "int16",
           "i32": "int32", "i64": "int64", "i1": "bool", "ui8": "uint8"}


def parse_input(text: str):
    """`@x.npy` loads a file; `4x16xf32=1.5` makes a filled array, as iree-run-module takes."""
    import numpy as np

    if not isinstance(text, str) or not text:  # argparse gives `--input=--` as a list
        raise SchedcError("--input: expected @file.npy or SHAPExDTYPE=VALUE, e.g. 4x16xf32=1")
    if text.startswith("@"):
        path = Path(text[1:])
        if not path.is_file():
            raise SchedcError(f"--input={text}: no such file")
        try:
            return np.load(path)
        except (ValueError, OSError, EOFError) as e:
            raise SchedcError(f"--input={text}: not a .npy file ({e})") from None
    spec, eq, value = text.partition("=")
    *dims, dtype = spec.split("x")
    if not eq or dtype not in _DTYPES or not all(d.isdigit() for d in dims):
        raise SchedcError(f"--input={text}: expected @file.npy or SHAPExDTYPE=VALUE, e.g. 4x16xf32=1; "
                          f"element types: {', '.join(_DTYPES)}")
    element = _numpy_dtype(dtype)
    shape = [int(d) for d in dims]
    size = int(np.prod(shape, dtype=object)) * element.itemsize
    if size > MAX_INPUT_BYTES:
        raise SchedcError(f"--input={text}: too large ({size:,} bytes; at most {MAX_INPUT_BYTES:,}): pass a large input as @file.npy")
    try:
        return np.full(shape, float(value), dtype=element)
    except ValueError:
        raise SchedcError(f"--input={text}: '{value}' is not a number") from None


def _numpy_dtype(name: str):
    import numpy as np

    if name == "bf16":
        import ml_dtypes

        return np.dtype(ml_dtypes.bfloat16)
    return np.dtype(_DTYPES[name])


if __name__ == "__main__":
    sys.exit(main())
