"""The long run of schedc's input fuzzer, and many threads on one replayed module.

    python bench/fuzz.py [--cases 100000] [--jobs 2] [--seed 1]
    python bench/fuzz.py --threads 8 --calls 1000

The fuzzer (test/python/fuzz_inputs.py; test_fuzz_inputs.py runs 2,000 of its cases in CI)
generates command lines, read-back JSON files (reports, tuning manifests and results, kernel
and CPU databases) and call arguments. The cases are split over `--jobs` worker processes, each
with its own seed and sandbox. It prints the outcome counts, and each distinct finding (a
traceback, an exit code other than 0 and 1, a file changed that the case did not name, or a
worker killed by a signal) with its case.

`--threads N --calls M`: N threads each make M calls of one replayed module (--execution=graphs,
on local-task) with inputs of their own, with numpy arrays, torch tensors and the async API, and
count the wrong results (the module serialises them: the goal is none).
"""

from __future__ import annotations

import argparse
import collections
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
WORKER = ROOT / "test" / "python" / "fuzz_inputs.py"


def fuzz(cases: int, jobs: int, seed: int) -> int:
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="schedc-fuzz-") as work:
        folders = [Path(work) / f"job{j}" for j in range(jobs)]
        runs = []
        for j, folder in enumerate(folders):
            folder.mkdir()
            share = cases // jobs + (1 if j < cases % jobs else 0)
            runs.append(subprocess.Popen([sys.executable, str(WORKER), str(seed + j), str(share), str(folder)],
                                         stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True))
        outcomes, findings, died = collections.Counter(), {}, []
        for folder, run in zip(folders, runs):
            _, stderr = run.communicate()
            progress = (folder / "progress").read_text() if (folder / "progress").exists() else ""
            if run.returncode != 0 or progress != "done\n":
                died.append(f"worker {folder.name} ended with {run.returncode} on {progress.strip()[:500]}: {stderr[-1000:]}")
            for line in (folder / "results.jsonl").read_text().splitlines():
                result = json.loads(line)
                outcomes[result["outcome"]] += 1
                if result["outcome"] not in ("ok", "error"):
                    key = (result["outcome"], result["message"].strip().splitlines()[-1][:120] if result["message"].strip() else "")
                    findings.setdefault(key, result)
    seconds = time.perf_counter() - started
    total = sum(outcomes.values())
    print(f"{total:,} cases in {seconds:.0f} s over {jobs} workers (seeds {seed}..{seed + jobs - 1})")
    for outcome in ("ok", "error", "traceback", "exit", "changed"):
        print(f"  {outcome}: {outcomes.get(outcome, 0):,}")
    print(f"  workers killed or stopped early: {len(died)}")
    for line in died:
        print("   ", line)
    print(f"distinct findings: {len(findings)}")
    for (outcome, last), result in findings.items():
        print(f"- {outcome}: {last}\n  case: {json.dumps(result['case'])[:600]}")
    return 1 if findings or died else 0


def threads(count: int, calls: int) -> int:
    import schedc

    sys.path.insert(0, str(WORKER.parent))
    from fuzz_inputs import call_in_threads, matmul_mlir

    module = schedc.load(schedc.compile(matmul_mlir(64), execution="graphs"), device="local-task")
    print(f"{count} threads x {calls} calls of one replayed module (local-task), each kind in turn:")
    failed = 0
    for kind in ("numpy", "torch", "async"):
        started = time.perf_counter()
        wrong = call_in_threads(module, count, calls, kind)
        print(f"  {kind}: {wrong} wrong of {count * calls} in {time.perf_counter() - started:.1f} s")
        failed += wrong
    return 1 if failed else 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--cases", type=int, default=100_000)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--threads", type=int, help="instead of fuzzing: this many threads on one replayed module")
    parser.add_argument("--calls", type=int, default=1000, help="with --threads: calls per thread")
    args = parser.parse_args()
    if args.threads:
        return threads(args.threads, args.calls)
    return fuzz(args.cases, args.jobs, args.seed)


if __name__ == "__main__":
    sys.exit(main())
