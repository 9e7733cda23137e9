"""schedc: compile a model, import one from PyTorch, or run a compiled module.

    schedc model.mlir [--target=cuda|rocm|vulkan|llvm-cpu] [-o model.vmfb]
    schedc import path/to/file.py:factory -o model.mlir
    schedc run model.vmfb --function=forward --input=@x.npy [--device=local-task]
"""

from __future__ import annotations

import argparse
import signal
import sys
import threading
from pathlib import Path

from schedc.errors import SchedcError


def compile_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="schedc",
        description="Compile MLIR (torch, linalg, stablehlo, tosa) with IREE and schedc's scheduling passes.",
        epilog="other commands: 'schedc import FILE.py:FACTORY -o model.mlir', 'schedc run MODULE.vmfb ...'",
    )
    p.add_argument("input", help="an .mlir file")
    p.add_argument("--target", default="llvm-cpu", help="llvm-cpu (default, the host CPU), cuda, rocm or vulkan")
    p.add_argument("-o", "--output", help="output file (default: INPUT stem + .vmfb, or .<phase>.mlir with --emit)")
    p.add_argument("--passes", help="schedc's pass pipeline, e.g. print-kernel-graph (default: schedc's pipeline)")
    p.add_argument("--no-schedc-passes", action="store_true", help="IREE alone, for comparison")
    p.add_argument("--emit", default="vmfb", choices=("flow", "stream", "vmfb"), help="write this phase instead of the module")
    p.add_argument("--dump-phases", metavar="DIR", help="write every phase's IR into DIR")
    p.add_argument("--cuda-arch", help="CUDA target (default sm_80)")
    p.add_argument("--rocm-arch", help="ROCm target (default gfx942)")
    p.add_argument("--vulkan-target", help="Vulkan target (default ampere)")
    p.add_argument("--cpu", help="CPU to generate code for (default host)")
    p.add_argument("--report", metavar="PATH.json", help="write what schedc decided and IREE's transient bytes with and without it")
    p.add_argument("--summary", action="store_true", help="print a short summary of the report")
    p.add_argument("--verify-plan", action="store_true", help="check every arena plan: no shared bytes between live slices, alignment")
    p.add_argument("--execution", default="streams", choices=("streams", "graphs"), help="how cuda/hip run the module: on one stream, or as graphs with concurrent branches")
    p.add_argument("--iree-flag", action="append", default=[], metavar="FLAG", help="an extra flag for iree-compile (repeatable)")
    return p


def import_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="schedc import", description="Import a PyTorch model to torch-dialect MLIR.")
    p.add_argument("factory", help="path/to/file.py:factory; the factory returns (model, example_inputs)")
    p.add_argument("-o", "--output", required=True, help="the .mlir file to write")
    p.add_argument("--save-inputs", action="store_true", help="also write the example inputs as OUTPUT-stem.argN.npy")
    return p


def run_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="schedc run", description="Run a compiled module's function, like iree-run-module.")
    p.add_argument("module", help="a .vmfb file")
    p.add_argument("--function", default="forward")
    p.add_argument("--device", default="local-task", help="local-task (default), local-sync, cuda, hip or vulkan")
    p.add_argument("--execution", choices=("streams", "graphs"), help="cuda/hip: the module's mode by default")
    p.add_argument("--input", action="append", default=[], help="@file.npy, or SHAPExDTYPE=VALUE such as 4x16xf32=1")
    p.add_argument("--output", action="append", default=[], help="@file.npy to save each output, in order")
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
        return cmd_compile(compile_parser().parse_args(argv))
    except SchedcError as e:
        print(f"schedc: error: {e}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130


def cmd_compile(args) -> int:
    from schedc.driver import CompileOptions, compile_with_options
    from schedc.outputs import StagedOutputs, check_output_path
    from schedc.report import report_text, summary_lines
    from schedc.targets import resolve_target

    if args.input == "-" and not args.output:
        raise SchedcError("reading the input from stdin (-), give the output's name with -o")
    input_path = Path(args.input)
    output = args.output or str(Path(input_path.stem + (".vmfb" if args.emit == "vmfb" else f".{args.emit}.mlir")))
    # Outputs that can never be written fail before the compile, not after it.
    check_output_path(output, inputs=[args.input])
    if args.report:
        check_output_path(args.report, inputs=[args.input, output], what="report")
    target = resolve_target(args.target, cuda_arch=args.cuda_arch, rocm_arch=args.rocm_arch, vulkan_target=args.vulkan_target, cpu=args.cpu)
    options = CompileOptions(
        target,
        passes=args.passes,
        schedc_passes=not args.no_schedc_passes,
        emit=args.emit,
        dump_phases=args.dump_phases,
        iree_flags=tuple(args.iree_flag),
        report=bool(args.report or args.summary),
        verify_plan=args.verify_plan,
        execution=args.execution,
    )
    source = sys.stdin.buffer.read() if args.input == "-" else str(input_path)
    result = compile_with_options(source, options)
    with StagedOutputs() as outputs:  # the module and its report: both, or neither
        outputs.add(output, result.output)
        if args.report:
            outputs.add(args.report, report_text(result.report))
        outputs.commit()
    if args.summary:
        print("\n".join(summary_lines(result.report)))
    if output != "-":
        print(f"wrote {output}", file=sys.stderr)
    return 0


def cmd_import(args) -> int:
    import numpy as np

    from schedc.frontend import import_torch, load_factory
    from schedc.irio import write_atomically

    model, example = load_factory(args.factory)
    write_atomically(args.output, import_torch(model, *example))
    if args.save_inputs:
        stem = Path(args.output).with_suffix("")
        for i, value in enumerate(example):
            np.save(f"{stem}.arg{i}.npy", value.detach().cpu().numpy())
    print(f"wrote {args.output}", file=sys.stderr)
    return 0


def cmd_run(args) -> int:
    import numpy as np

    from schedc.runtime import load, summarize

    inputs = [parse_input(text) for text in args.input]
    module = load(args.module, device=args.device, execution=args.execution)
    function = module[args.function]
    results = function(*inputs)
    results = results if isinstance(results, tuple) else (results,)
    print(f"EXEC @{args.function}")
    for i, value in enumerate(results):
        print(f"result[{i}]: {summarize(value)}")
    for i, target in enumerate(args.output):
        if i < len(results):
            np.save(target.lstrip("@"), np.asarray(results[i]))
    return 0


_DTYPES = {"f16": "float16", "f32": "float32", "f64": "float64", "bf16": None, "i8": "int8", "i16": "int16",
           "i32": "int32", "i64": "int64", "i1": "bool", "ui8": "uint8"}


def parse_input(text: str):
    """`@x.npy` loads a file; `4x16xf32=1.5` makes a filled array, as iree-run-module takes."""
    import numpy as np

    if text.startswith("@"):
        path = Path(text[1:])
        if not path.is_file():
            raise SchedcError(f"--input={text}: no such file")
        try:
            return np.load(path)
        except (ValueError, OSError) as e:
            raise SchedcError(f"--input={text}: not a .npy file ({e})") from None
    spec, eq, value = text.partition("=")
    *dims, dtype = spec.split("x")
    if not eq or _DTYPES.get(dtype) is None or not all(d.isdigit() for d in dims):
        raise SchedcError(f"--input={text}: expected @file.npy or SHAPExDTYPE=VALUE, e.g. 4x16xf32=1")
    try:
        return np.full([int(d) for d in dims], float(value), dtype=_DTYPES[dtype])
    except ValueError:
        raise SchedcError(f"--input={text}: '{value}' is not a number") from None


if __name__ == "__main__":
    sys.exit(main())
