"""Reading MLIR files into modules with file:line:col diagnostics, and writing outputs whole."""

from __future__ import annotations

import re
import sys
from pathlib import Path

from iree.compiler import ir

from schedc.errors import SchedcError

SPLIT_MARKER = "// -----"
BYTECODE_MAGIC = b"ML\xefR"  # the first bytes of MLIR bytecode


class ParseError(SchedcError):
    """The input is not valid MLIR; the message has file:line:col."""


def check_input_file(path: str) -> Path:
    """The path of an existing input file; otherwise one clear line of error."""
    p = Path(path)
    if not p.exists():
        raise SchedcError(f"{path}: no such file")
    if p.is_dir():
        raise SchedcError(f"{path}: is a directory, expected an .mlir file")
    return p


def read_source(path: str) -> str:
    if path == "-":
        data = sys.stdin.buffer.read()
        try:
            return data.decode("utf-8")
        except UnicodeDecodeError as e:
            raise SchedcError(f"<stdin>: not MLIR text (not UTF-8 at byte {e.start}; MLIR bytecode is not accepted here)") from None
    p = check_input_file(path)
    try:
        return p.read_text()
    except UnicodeDecodeError:
        raise SchedcError(f"{path}: not a text file (MLIR bytecode is not accepted here)") from None


def split_chunks(text: str) -> list[tuple[int, str]]:
    """Splits at `// -----` lines; each chunk with the 0-based line where it starts."""
    chunks, start, current = [], 0, []
    for number, line in enumerate(text.splitlines(keepends=True)):
        if line.strip() == SPLIT_MARKER:
            chunks.append((start, "".join(current)))
            start, current = number + 1, []
        else:
            current.append(line)
    chunks.append((start, "".join(current)))
    return chunks


def parse_module(text: str, source_name: str, context: ir.Context, first_line: int = 0) -> ir.Operation:
    """Parses a module; errors carry `source_name:line:col` of the original file.

    Top-level ops without a `module` around them (as lit tests write them) get one, placed so
    that line numbers stay those of the file.
    """
    # MLIR verifies isolated regions (executables) on its thread pool, and errors there reach
    # the Python bindings' diagnostic handler from a worker thread while this thread waits
    # with the GIL: a deadlock (IREE 3.13). Parsing is verified on this thread instead.
    context.enable_multithreading(False)
    try:
        return _parse_module(text, source_name, context, first_line)
    finally:
        context.enable_multithreading(True)


def _parse_module(text: str, source_name: str, context: ir.Context, first_line: int) -> ir.Operation:
    padded = "\n" * first_line + text  # keeps line numbers of a chunk as in its file
    try:
        op = ir.Operation.parse(padded, source_name=source_name, context=context).operation
        if op.name == "builtin.module":
            return op
    except ir.MLIRError as e:
        if "single top-level operation" not in str(e):
            raise ParseError(format_diagnostics(e)) from None
    if first_line > 0:
        wrapped = "\n" * (first_line - 1) + "module {\n" + text + "\n}\n"
    else:
        wrapped = "module {" + text + "\n}\n"  # shifts columns of the first line only
    try:
        return ir.Operation.parse(wrapped, source_name=source_name, context=context).operation
    except ir.MLIRError as e:
        raise ParseError(format_diagnostics(e)) from None


def read_module(path: Path, context: ir.Context | None = None) -> ir.Operation:
    """Parses an IR file IREE or schedc wrote."""
    return parse_module(printable(Path(path).read_text()), str(path), context or ir.Context())


_RESOURCES = "\n{-#"  # MLIR prints a module's resource section last, from a line of its own


def split_resources(text: str) -> tuple[str, str]:
    """MLIR text cut before its resource section (`{-# dialect_resources: ... #-}`, the bytes of
    every inlined weight, nearly all of a model's text): the IR, and the section ('' if none).
    The IR parses alone, its `dense_resource` references intact, and the section appended to
    any printing of it gives the whole module back (MLIR merges the sections of one file)."""
    at = text.rfind(_RESOURCES)
    if at < 0 or not text.rstrip().endswith("#-}"):
        return text, ""
    return text[:at + 1], text[at + 1:]


def read_without_resources(path: Path) -> tuple[ir.Operation, str]:
    """Parses an IR file IREE or schedc wrote, leaving its resource section out: the module, for
    passes that read no weight's bytes, and the section, for `write_with_resources`. (On a
    model's 29 MB text the parse and print take 0.02 s instead of 0.2 s.)"""
    text, resources = split_resources(printable(Path(path).read_text()))
    return parse_module(text, str(path), ir.Context()), resources


BYTECODE_SUFFIX = ".mlirbc"


def read_bytecode(path: Path) -> ir.Operation:
    """Parses an MLIR bytecode file IREE wrote (`--emit-mlir-bytecode`): its weights are raw
    bytes, not hex text, so it parses whole in a fraction of the text's time (ConvNeXt's 29 MB
    at the input phase: 0.03 s, and 0.01 s to write back)."""
    context = ir.Context()
    context.enable_multithreading(False)  # as parse_module: diagnostics on this thread
    try:
        return ir.Module.parse(Path(path).read_bytes(), context).operation
    except ir.MLIRError as e:
        raise ParseError(format_diagnostics(e)) from None
    finally:
        context.enable_multithreading(True)


def write_with_resources(module: ir.Operation, resources: str, path: Path) -> None:
    """Writes a module read by `read_without_resources`, with the resource section it left out."""
    Path(path).write_text(module_text(module) + resources)


# IREE 3.13 prints #stream.partitioning_config<favor-debug> but parses only the quoted form,
# and prints a trace of no tensors (`--iree-flow-trace-dispatch-tensors` on a dispatch without
# inputs) as `flow.tensor.trace "..." = []`, which it cannot parse: such a trace shows nothing.
# Each fix with a literal its pattern needs: a module's text (tens of MB with its weights) is
# searched for the literal first, which takes a fraction of the regular expression's time.
_ROUND_TRIP_FIXES = (
    ("#stream.partitioning_config<favor-", re.compile(r"#stream\.partitioning_config<favor-([a-z-]+)>"), r'#stream.partitioning_config<"\1">'),
    ("flow.tensor.trace", re.compile(r'^[ \t]*flow\.tensor\.trace "[^"\n]*" = \[\][ \t]*\n', re.MULTILINE), ""),
)
ROUND_TRIP_MARKERS = tuple(marker for marker, _, _ in _ROUND_TRIP_FIXES)


def printable(text: str) -> str:
    """MLIR text as IREE's tools parse it back (IREE's printer and parser disagree on some)."""
    for marker, pattern, replacement in _ROUND_TRIP_FIXES:
        if marker in text:
            text = pattern.sub(replacement, text)
    return text


def module_text(module: ir.Operation) -> str:
    """The module as text that IREE's tools parse back."""
    return printable(module.get_asm())


def format_diagnostics(error: ir.MLIRError) -> str:
    """MLIR diagnostics as `file:line:col: error: message` lines, with their notes."""
    lines = []

    def add(diag, indent=""):
        severity = str(diag.severity).split(".")[-1].lower()
        lines.append(f"{indent}{location_prefix(diag.location)}{severity}: {diag.message}")
        for note in diag.notes:
            add(note, indent)

    for diag in error.error_diagnostics:
        add(diag)
    return "\n".join(lines) if lines else str(error)


def location_prefix(location: ir.Location) -> str:
    """`file:line:col: ` for a file location (looking inside named, call-site and fused
    ones, the first file it finds), else ''."""
    found = _file_location(location)
    return f"{found.filename}:{found.start_line}:{found.start_col}: " if found is not None else ""


def _file_location(location: ir.Location):
    location = ir.Location.from_attr(location.attr, context=location.context)  # its own kind
    if hasattr(location, "filename"):
        return location
    inner = []
    if hasattr(location, "child_loc"):  # name("x"(...))
        inner = [location.child_loc]
    elif hasattr(location, "callee"):  # callsite(callee at caller)
        inner = [location.callee, location.caller]
    elif hasattr(location, "locations"):  # fused[...]
        inner = list(location.locations)
    for child in inner:
        found = _file_location(child)
        if found is not None:
            return found
    return None
