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
        crashed = result.returncode < 0 or "PrintStackTrace" in result.stderr or "Stack dump" in result.stderr
        if crashed:
            signal_name = _signal_name(-result.returncode) if result.returncode < 0 else "a crash"
            diagnostic = _trim(result.stderr, crashed=True) or "(it printed no diagnostic before the crash)"
            error = CompileError(f"{what}: IREE's {name} crashed ({signal_name}):\n{diagnostic}", repro=repro)
        else:
            error = CompileError(f"{what} failed in IREE:\n{_trim(result.stderr)}", repro=repro)
        error.crashed = crashed
        raise error


def _signal_name(number: int) -> str:
    import signal

    try:
        return signal.Signals(number).name
    except ValueError:
        return f"signal {number}"


def _trim(stderr: str, crashed: bool = False) -> str:
    """IREE's diagnostics without the crash-report boilerplate it prints after them (after a
    crash, nothing of the stack dump: empty when that is all it printed)."""
    kept = []
    for line in stderr.splitlines():
        if line.startswith(("Please report issues to", "Stack dump", " #", "Stack dump without")):
            break
        if line not in kept:  # IREE repeats some warnings once per executable
            kept.append(line)
    text = "\n".join(kept).strip()
    return text if crashed else text or stderr.strip()
