"""The fuzzer of command lines, read-back JSON files and call arguments (fuzz_inputs.py), a
bounded run: every case ends in a result or a clear error; no traceback, no signal, no exit
code but 0 and 1, no file changed that the case did not name. `python bench/fuzz.py` is the
long run."""

from __future__ import annotations

import collections
import json
import subprocess
import sys
from pathlib import Path

WORKER = Path(__file__).with_name("fuzz_inputs.py")
CASES = 2000


def test_generated_inputs_never_crash_or_clobber(tmp_path):
    try:
        run = subprocess.run([sys.executable, str(WORKER), "2026", str(CASES), str(tmp_path)], capture_output=True, text=True,
                             timeout=600, stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired:
        raise AssertionError(f"hung on {(tmp_path / 'progress').read_text()}") from None
    progress = (tmp_path / "progress").read_text()
    assert run.returncode == 0 and progress == "done\n", f"died ({run.returncode}) on {progress}: {run.stderr[-3000:]}"
    results = [json.loads(line) for line in (tmp_path / "results.jsonl").read_text().splitlines()]
    assert len(results) == CASES
    findings = [r for r in results if r["outcome"] not in ("ok", "error")]
    assert not findings, f"{len(findings)} findings; the first: {findings[0]}"
    outcomes = collections.Counter(r["outcome"] for r in results)
    kinds = collections.Counter(r["case"]["kind"] for r in results)
    assert outcomes["ok"] >= CASES // 20 and outcomes["error"] >= CASES // 2, outcomes  # it reaches both
    assert set(kinds) == {"cli", "json", "call", "load"}, kinds
