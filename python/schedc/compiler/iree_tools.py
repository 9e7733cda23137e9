"""Runs IREE's command-line tools, keeping their diagnostics and a command to reproduce them."""

from __future__ import annotations

import shlex
import subprocess
from pathlib import Path

from schedc.errors import CompileError


def iree_tool(name: str) -> str:
    """Path of an IREE binary: compiler tools from iree-base-compiler, runtime ones beside
    the runtime's native library in iree-base-runtime."""
    if name in ("iree-compile", "iree-opt"):
        from iree.compiler.tools.binaries import find_tool

        return find_tool(name)
    import iree._runtime_libs

    return str(Path(iree._runtime_libs.__file__).parent / name)


def run_iree_tool(name: str, args: list[str], *, what: str, cwd: str | None = None) -> None:
    """Runs `name args` (iree-compile, iree-opt; in `cwd`); a failure raises CompileError with
    IREE's diagnostics and the command that reproduces it."""
    result = subprocess.run([iree_tool(name), *args], capture_output=True, text=True, errors="replace", cwd=cwd)
    if result.returncode != 0:
        repro = (f"cd {shlex.quote(cwd)} && " if cwd else "") + shlex.join([name, *args])
        raise CompileError(f"{what} failed in IREE:\n{_trim(result.stderr)}", repro=repro)


def _trim(stderr: str) -> str:
    """IREE's diagnostics without the crash-report boilerplate it prints after them."""
    kept = []
    for line in stderr.splitlines():
        if line.startswith(("Please report issues to", "Stack dump", " #", "Stack dump without")):
            break
        if line not in kept:  # IREE repeats some warnings once per executable
            kept.append(line)
    return "\n".join(kept).strip() or stderr.strip()
