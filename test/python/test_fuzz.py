"""Fuzzing with real IR: the lit inputs, truncated, with a flipped byte, a deleted line or two op
lines swapped. Every mutant gets a clean error that names its file, or goes through; one that
compiles computes the same numbers with schedc's passes as with IREE alone. Never a traceback,
a crash or a hang: the mutants run in a subprocess (fuzz_worker.py) under a timeout."""

from __future__ import annotations

import collections
import json
import subprocess
import sys
from pathlib import Path

import pytest

WORKER = Path(__file__).with_name("fuzz_worker.py")


@pytest.mark.parametrize("mode, count", [("passes", 300), ("compile", 60)])
def test_mutated_inputs_fail_cleanly_or_compile_right(mode, count, tmp_path):
    try:
        run = subprocess.run([sys.executable, str(WORKER), mode, "2026", str(count), str(tmp_path)],
                             capture_output=True, text=True, timeout=900)
    except subprocess.TimeoutExpired:
        pytest.fail(f"hung on case {(tmp_path / 'progress').read_text()}")
    progress = (tmp_path / "progress").read_text()
    assert run.returncode == 0 and progress == "done\n", f"crashed ({run.returncode}) on case {progress}: {run.stderr[-3000:]}"
    results = [json.loads(line) for line in (tmp_path / "results.jsonl").read_text().splitlines()]
    assert len(results) == count
    tracebacks = [r for r in results if r["outcome"] == "traceback"]
    assert not tracebacks, f"{len(tracebacks)} tracebacks, the first on {tracebacks[0]['file']}:\n{tracebacks[0]['message']}"
    for r in results:
        if r["outcome"] == "error":
            assert Path(r["file"]).name in r["message"], f"an error that does not say where: {r}"
            assert "Traceback" not in r["message"]
    outcomes = collections.Counter(r["outcome"] for r in results)
    assert outcomes["error"] >= count // 4 and outcomes["ok"] >= 1, outcomes  # the fuzzing reaches both
