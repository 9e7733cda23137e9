"""schedc: compile a model, import one from PyTorch, or run a compiled module.

    schedc model.mlir [--target=cuda|rocm|vulkan|llvm-cpu] [-o model.vmfb]
    schedc import path/to/file.py:factory -o model.mlir
    schedc run model.vmfb --function=forward --input=@x.npy [--device=local-task]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from schedc.errors import SchedcError


def compile_parser() -> argparse.ArgumentParser:
    """The options of `schedc.compile`, one for one (each `dest` is its keyword)."""
    from schedc.driver import EMIT_KINDS, EXECUTIONS

    p = argparse.ArgumentParser(
        prog="schedc",
        description="Compile MLIR (torch, linalg, stablehlo, tosa) with IREE and schedc's scheduling passes.",
        epilog="other commands: 'schedc import FILE.py:FACTORY -o model.mlir', 'schedc run MODULE.vmfb ...'",
    )
    p.add_argument("input_file", metavar="input", help="an .mlir file (text or bytecode)")
    p.add_argument("--target", default="llvm-cpu", help="llvm-cpu (default, the host CPU), cuda, rocm or vulkan")
    p.add_argument("-o", "--output", help="output file (default: INPUT stem + .vmfb, .<phase>.mlir with --emit, or the folder .executables)")
    p.add_argument("--passes", help="schedc's pass pipeline, e.g. print-kernel-graph (default: schedc's pipeline)")
    p.add_argument("--no-schedc-passes", dest="schedc_passes", action="store_false", help="IREE alone, for comparison")
    p.add_argument("--emit", default="vmfb", choices=EMIT_KINDS,
                   help="write this phase's IR, each dispatch's code (LLVM IR, PTX, HSACO, SPIR-V) into a folder, or the module")
    p.add_argument("--dump-phases", metavar="DIR", help="write every file of the compile into DIR, numbered in the order they are made")
    p.add_argument("--cuda-arch", help="CUDA target (default sm_80)")
    p.add_argument("--rocm-arch", help="ROCm target (default gfx942)")
    p.add_argument("--vulkan-target", help="Vulkan target (default ampere)")
    p.add_argument("--cpu", help="CPU to generate code for (default host)")
    p.add_argument("--report", metavar="PATH.json", help="write what schedc decided and IREE's transient bytes with and without it")
    p.add_argument("--summary", action="store_true", help="print a short summary of the report")
    p.add_argument("--verify-plan", action="store_true", help="check every plan passes make, e.g. no shared bytes between live slices")
    p.add_argument("--execution", default="streams", choices=EXECUTIONS, help="how cuda/hip run the module: on one stream, or as graphs with concurrent branches")
    p.add_argument("--iree-flag", dest="iree_flags", action="append", default=[], metavar="FLAG", help="an extra flag for iree-compile (repeatable)")
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


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
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
    from schedc.driver import compile

    options = vars(args)
    if not options["output"]:
        stem = Path(args.input_file).stem
        options["output"] = {"vmfb": f"{stem}.vmfb", "executables": f"{stem}.executables"}.get(args.emit, f"{stem}.{args.emit}.mlir")
    compile(**options)
    if options["output"] != "-":
        print(f"wrote {options['output']}", file=sys.stderr)
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
