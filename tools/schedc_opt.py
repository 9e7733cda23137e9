"""schedc-opt: run schedc passes on IR of the phase they run in (flow, stream or HAL) and print
the result (for lit tests).

    schedc-opt in.mlir --passes=print-kernel-graph,memory-order{strategy=exact} [--split-input-file]
"""

from __future__ import annotations

import argparse
import re
import sys

from iree.compiler import ir

from schedc.errors import SchedcError
from schedc.ir.cpu_ops import GEMM_EXECUTABLE
from schedc.tools.schedc import ArgumentParser
from schedc.ir.mlirio import SPLIT_MARKER, module_text, parse_module, read_source, split_chunks
from schedc.outputs import check_output_path, write_output
from schedc.passes import REGISTRY, PassContext
from schedc.compiler.pipeline import parse_pipeline, run_pipeline


def build_parser() -> argparse.ArgumentParser:
    parser = ArgumentParser(
        prog="schedc-opt",
        description="Run schedc passes on MLIR of their phase (flow, stream or HAL) and print the result.",
        epilog="passes: " + ", ".join(f"{n} ({p.summary})" for n, p in sorted(REGISTRY.items())),
    )
    parser.add_argument("input", help="an .mlir file, or - for standard input")
    parser.add_argument("--passes", default="", help="comma-separated passes: a,b{opt=value}")
    parser.add_argument("--split-input-file", action="store_true", help=f"treat '{SPLIT_MARKER}' lines as separate inputs")
    parser.add_argument("-o", "--output", default="-", help="where to write the IR (default: stdout)")
    return parser


# What marks each phase's IR, latest first (the order IREE makes them in), and where a user
# gets IR of that phase.
_PHASE_MARKS = (
    # executables still as variants, configured but without code (hal-phase IR holds binaries)
    ("configurations", "hal.executable.variant", "schedc --dump-phases DIR (its configurations file)"),
    ("hal", "hal.executable ", "schedc --emit=hal"),
    ("stream", "stream.cmd.execute", "schedc --emit=stream"),
    ("stream-async", "stream.async.execute", "schedc --dump-phases DIR (its stream-async file)"),
    # (but not a dispatch of schedc's CPU kernels: cpu-config makes those at the input phase)
    ("flow", re.compile(rf"flow\.dispatch(?! @{GEMM_EXECUTABLE}::)"), "schedc --emit=flow"),
)
_EARLY = ("input", "preprocessing")


def ir_phase(text: str) -> str | None:
    """The phase the IR text is of, where it shows (None: linalg before dispatch formation, or
    nothing to tell). Comments do not count."""
    code = "\n".join(line.split("//", 1)[0] for line in text.splitlines())
    return next((phase for phase, mark, _ in _PHASE_MARKS if (mark.search(code) if isinstance(mark, re.Pattern) else mark in code)), None)


def phase_mismatch(text: str, invocations, source_name: str) -> str | None:
    """An error for a pass given IR of another phase, where it would silently do nothing."""
    found = ir_phase(text)
    for invocation in invocations:
        wanted = REGISTRY[invocation.name].phase.value
        if wanted in _EARLY:
            wrong = found is not None
        else:
            wrong = found is not None and found != wanted
        if wrong:
            where = next((how for phase, _, how in _PHASE_MARKS if phase == wanted), "schedc --dump-phases DIR")
            return (f"{source_name}: '{invocation.name}' runs on {wanted}-phase IR, and this is {found}-phase IR: "
                    f"it would change nothing. {wanted}-phase IR of a model: {where}")
    return None


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    source_name = "<stdin>" if args.input == "-" else args.input
    try:
        invocations = parse_pipeline(args.passes, REGISTRY)
        check_output_path(args.output, inputs=[args.input])
        text = read_source(args.input)
    except SchedcError as e:
        print(f"schedc-opt: error: {e}", file=sys.stderr)
        return 1
    except OSError as e:  # the system refused a path
        print(f"schedc-opt: error: {e.filename or args.input}: {e.strerror or e}", file=sys.stderr)
        return 1
    for invocation in invocations:  # e.g. remat{split-fusions}: it changes IREE's dispatch formation
        flags = REGISTRY[invocation.name].flags_for(invocation.options)
        if flags:
            print(f"schedc-opt: warning: pass '{invocation.name}': {' '.join(flags)} applies to IREE's compile, "
                  f"which formed this IR's dispatches already: no effect here", file=sys.stderr)
    mismatch = phase_mismatch(text, invocations, source_name)
    if mismatch is not None:
        print(f"schedc-opt: error: {mismatch}", file=sys.stderr)
        return 1
    chunks = split_chunks(text) if args.split_input_file else [(0, text)]
    outputs, failed = [], False
    for first_line, chunk in chunks:
        context = ir.Context()
        try:
            module = parse_module(chunk, source_name, context, first_line)
            run_pipeline(module, invocations, REGISTRY, PassContext(out=sys.stdout))
        except SchedcError as e:
            print(e, file=sys.stderr)
            failed = True
            continue
        outputs.append(module_text(module))
    if failed:
        return 1
    try:
        write_output(args.output, f"\n{SPLIT_MARKER}\n".join(outputs))
    except SchedcError as e:
        print(f"schedc-opt: error: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
