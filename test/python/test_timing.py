"""`--timing` and progress: phases and passes timed in nesting order; on a terminal each phase's
name shows as it starts and the status line is erased at the end; piped, nothing shows."""

from __future__ import annotations

import io
import os
import pty
import subprocess
import sys

from conftest import ROOT
from schedc.compiler.timing import PhaseTimer, timing_report


def test_passes_nest_under_their_phase():
    timer = PhaseTimer()
    with timer.phase("schedc's flow-phase passes"):
        with timer.phase("memory-order"):
            pass
    with timer.phase("IREE's stream phase"):
        pass
    assert [(e.name, e.depth) for e in timer.entries] == [
        ("schedc's flow-phase passes", 0), ("memory-order", 1), ("IREE's stream phase", 0)]
    assert timer.entries[0].seconds >= timer.entries[1].seconds >= 0
    text = timing_report(timer.entries, 2.0)
    assert "Total Execution Time: 2.0000 seconds" in text
    assert "  memory-order" in text.splitlines()[-3]  # indented under its phase


def test_progress_shows_phases_as_they_start_and_erases_the_line():
    stream = io.StringIO()
    timer = PhaseTimer(progress=stream)
    with timer.phase("IREE up to the flow phase"):
        assert "IREE up to the flow phase ..." in stream.getvalue()
        with timer.phase("memory-order"):
            pass
    timer.finish()
    assert "memory-order" not in stream.getvalue()  # passes are in --timing, not the status line
    assert stream.getvalue().endswith("\r\033[K")


def test_silent_without_a_progress_stream(capsys):
    timer = PhaseTimer()
    with timer.phase("IREE up to the flow phase"):
        pass
    timer.finish()
    assert capsys.readouterr() == ("", "")


def run_with_terminal_stderr(args, cwd) -> tuple[int, str]:
    """Runs the CLI with stderr on a pseudo-terminal (as in an interactive shell)."""
    leader, follower = pty.openpty()
    process = subprocess.Popen([sys.executable, "-m", "schedc.tools.schedc", *args], cwd=cwd,
                               stdout=subprocess.DEVNULL, stderr=follower)
    os.close(follower)
    chunks = []
    while True:
        try:
            chunk = os.read(leader, 4096)
        except OSError:  # the terminal closed: the process is gone
            break
        if not chunk:
            break
        chunks.append(chunk)
    os.close(leader)
    return process.wait(), b"".join(chunks).decode(errors="replace")


def test_cli_progress_on_a_terminal_only(tmp_path):
    source = tmp_path / "model.mlir"
    source.write_text((ROOT / "test" / "cli" / "Inputs" / "bad-op.mlir").read_text())
    code, terminal = run_with_terminal_stderr([str(source), "-o", str(tmp_path / "a.vmfb")], tmp_path)
    assert code == 0, terminal
    assert "IREE from the input phase to the flow phase ..." in terminal and "IREE from the stream phase to the module ..." in terminal
    assert "\r\033[K" in terminal
    piped = subprocess.run([sys.executable, "-m", "schedc.tools.schedc", str(source), "-o", str(tmp_path / "b.vmfb")],
                           capture_output=True, text=True)
    assert piped.returncode == 0, piped.stderr
    assert "\033[" not in piped.stderr and "IREE from the input phase" not in piped.stderr
