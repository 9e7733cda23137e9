"""Runs IREE's command-line compiler, keeping its diagnostics and a command to reproduce them."""

from __future__ import annotations

import shlex
import subprocess
from pathlib import Path

from .errors import CompileError


def iree_tool(name: str) -> str:
    """Path of an IREE binary: compiler tools from iree-base-compiler, runtime ones beside
    the runtime's native library in iree-base-runtime."""
    if name in ("iree-compile", "iree-opt"):
        from iree.compiler.tools.binaries import find_tool

        return find_tool(name)
    import iree._runtime_libs

    return str(Path(iree._runtime_libs.__file__).parent / name)


def run_iree_compile(args: list[str], *, what: str, cwd: str | None = None) -> None:
    """Runs `iree-compile args` (in `cwd`); a failure raises CompileError with IREE's diagnostics."""
    command = [iree_tool("iree-compile"), *args]
    result = subprocess.run(command, capture_output=True, text=True, errors="replace", cwd=cwd)
    if result.returncode != 0:
        diagnostics = _trim(result.stderr)
        repro = (f"cd {shlex.quote(cwd)} && " if cwd else "") + shlex.join(["iree-compile", *args])
        raise CompileError(f"{what} failed in IREE:\n{diagnostics}", repro=repro)


def _trim(stderr: str) -> str:
    """IREE's diagnostics without the crash-report boilerplate it prints after them."""
    kept = []
    for line in stderr.splitlines():
        if line.startswith(("Please report issues to", "Stack dump", " #", "Stack dump without")):
            break
        if line not in kept:  # IREE repeats some warnings once per executable
            kept.append(line)
    return "\n".join(kept).strip() or stderr.strip()


def dump_module(vmfb_path: str) -> str:
    """iree-dump-module's text for a compiled module."""
    result = subprocess.run([iree_tool("iree-dump-module"), vmfb_path], capture_output=True, text=True, errors="replace")
    if result.returncode != 0:
        raise CompileError(f"iree-dump-module failed on {vmfb_path}:\n{result.stderr.strip()}")
    return result.stdout


def executable_formats(vmfb_path: str) -> list[str]:
    """The executable format of each executable in a module (e.g. ['cuda-nvptx-fb'])."""
    import re

    formats = []
    for line in dump_module(vmfb_path).splitlines():
        match = re.search(r"does not support any variant of executable `[^`]*`; available formats: \[([^\]]*)\]", line)
        if match:
            formats.append(match.group(1))
    return formats


def run_iree_opt(args: list[str], *, what: str) -> None:
    """Runs `iree-opt args` (IREE's pass driver); a failure raises CompileError."""
    command = [iree_tool("iree-opt"), *args]
    result = subprocess.run(command, capture_output=True, text=True, errors="replace")
    if result.returncode != 0:
        raise CompileError(f"{what} failed in IREE:\n{_trim(result.stderr)}", repro=shlex.join(["iree-opt", *args]))


# IREE 3.13's stream phase (Dialect/Stream/Transforms/Passes.cpp), split where its cmd
# sub-pipeline has made one `stream.resource.pack` per execution region and not yet packed
# them (layout-slices): schedc's stream-phase passes run between the two halves.
STREAM_UNTIL_ASYNC = "builtin.module(iree-stream-tensor-transformation-pipeline,iree-stream-async-transformation-pipeline)"
STREAM_ALLOCATION = "builtin.module(iree-stream-schedule-allocation)"
STREAM_UNTIL_ALLOCATION = (
    "builtin.module(iree-stream-tensor-transformation-pipeline,"
    "iree-stream-async-transformation-pipeline,iree-stream-schedule-allocation)"
)
_PER_CALLABLE = "iree-stream-pack-constants,iree-stream-layout-slices,canonicalize"
STREAM_AFTER_ALLOCATION = (
    f"builtin.module(util.initializer({_PER_CALLABLE}),util.func({_PER_CALLABLE}),"
    "iree-util-propagate-subranges,iree-stream-automatic-reference-counting,"
    "iree-stream-cleanup-pipeline,iree-stream-verify-lowering-to-cmd,"
    "iree-stream-optimization-pipeline,iree-stream-cleanup-pipeline,symbol-dce)"
)
