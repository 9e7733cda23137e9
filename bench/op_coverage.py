"""torch-mlir's end-to-end suite through schedc: every op torch-mlir supports, against eager.

    python bench/op_coverage.py                          the whole suite, llvm-cpu, schedc's default pipeline
    python bench/op_coverage.py --variant iree           the same with IREE alone (no schedc passes)
    python bench/op_coverage.py --tests ci               the CI subset (test_op_coverage.py runs it)
    python bench/op_coverage.py --tests Foo_basic,Bar_basic --verbose
    python bench/op_coverage.py --compile-targets cuda,rocm,vulkan   also compile each passing test there
    python bench/op_coverage.py --jobs 2 --json out.json --check

The suite is vendored under test/third_party/torch_mlir_e2e_test (its README gives the commit
and the two lines changed). Each test's module is built by its factory and called by its
invoker on eager torch (the golden trace, recorded twice: a test whose two eager runs differ
has no deterministic result and is counted apart). Each call is then imported with
`schedc.import_torch` (static shapes, the recorded inputs), compiled for llvm-cpu, run through
`schedc.load`, and compared with eager: the same dtype, shape and values (rtol = atol = 1e-4;
1e-2 for f16 and bf16 results; integers and bools exactly).

Every test ends in one class: pass, import-fail, compile-fail, run-fail, wrong, timeout,
crash (the worker process died), nondeterministic (eager disagrees with itself) or
unavailable (the test's file needs a package that is not installed). The table gives the
counts by class and the reasons by class.

`--check` compares the outcome with the expected-failures list (op_coverage_xfail.txt: one
line per test, `Name  class  reason`): it fails on a failure the list does not name, on a
listed failure that now passes, and on a listed failure that fails in another class.

Each test runs in a worker process (a crash or a hang cannot stop the run); `--jobs` of them
share the tests. The timeout is per test (default 60 s, or the test's own if shorter).
"""

from __future__ import annotations

import argparse
import collections
import json
import math
import os
import re
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SUITE = ROOT / "test" / "third_party"
XFAIL = Path(__file__).with_name("op_coverage_xfail.txt")
CI_SUBSET = Path(__file__).with_name("op_coverage_ci.txt")
CLASSES = ("pass", "import-fail", "compile-fail", "run-fail", "wrong", "timeout", "crash", "nondeterministic", "unavailable")
FAILURES = ("import-fail", "compile-fail", "run-fail", "wrong", "timeout", "crash")
RTOL = ATOL = 1e-4
HALF_TOLERANCE = 1e-2  # f16 and bf16 results (10 and 7 bits of mantissa)
# Test files the CI subset need not cover: their tests cannot pass by design (a timeout) or
# need what is not installed (torchvision, torch-mlir's custom-op example library).
FILES_OUTSIDE_CI = {"timeout", "vision_models", "custom_op_example"}


# --- the suite ---------------------------------------------------------------------------------

def load_suite() -> tuple[dict, dict]:
    """The suite's tests by name, and the test files that could not be imported (their error)."""
    import importlib

    if str(SUITE) not in sys.path:
        sys.path.insert(0, str(SUITE))
    from torch_mlir_e2e_test import registry

    unavailable = {}
    folder = SUITE / "torch_mlir_e2e_test" / "test_suite"
    for path in sorted(folder.glob("*.py")):
        if path.stem == "__init__":
            continue
        try:
            importlib.import_module(f"torch_mlir_e2e_test.test_suite.{path.stem}")
        except Exception as e:  # a test file that needs what is not installed (torchvision)
            unavailable[path.stem] = f"{type(e).__name__}: {e}"
    return {t.unique_name: t for t in registry.GLOBAL_TEST_REGISTRY}, unavailable


def unavailable_tests(unavailable: dict, registered=()) -> dict:
    """The tests of the files load_suite could not import whole, by name, that did not
    register (`registered`) before the import failed: each file's names are read from its
    text (`@register_test_case(...)` decorates `def Name(`)."""
    names = {}
    folder = SUITE / "torch_mlir_e2e_test" / "test_suite"
    for stem, why in unavailable.items():
        text = (folder / f"{stem}.py").read_text()
        for name in re.findall(r"@register_test_case\((?:.|\n)*?\)\s*\ndef (\w+)\(", text):
            if name not in registered:
                names[name] = why
    return names


def test_file(test) -> str:
    """The suite's file a test is registered in (its op family): `basic`, `conv`, ..."""
    return test.program_invoker.__module__.rsplit(".", 1)[-1]


def read_list(path: Path) -> dict:
    """A list file: `Name  class  reason` lines (class and reason optional), `#` comments."""
    entries = {}
    for line in path.read_text().splitlines():
        line = line.split("#", 1)[0].strip() if line.lstrip().startswith("#") else line.strip()
        if not line:
            continue
        fields = line.split(None, 2)
        cls, reason = (fields[1] if len(fields) > 1 else "", fields[2] if len(fields) > 2 else "")
        key = f"{fields[0]}@{cls.removesuffix('-compile')}" if cls.endswith("-compile") else fields[0]
        entries[key] = (cls, reason)
    return entries


# --- one test, in the worker ---------------------------------------------------------------------

def golden(test):
    from torch_mlir_e2e_test.framework import generate_golden_trace

    return generate_golden_trace(test)


def flatten(value) -> list:
    """A trace value's leaves: tensors and Python numbers, in order (tuples and lists opened)."""
    if isinstance(value, (tuple, list)):
        return [leaf for item in value for leaf in flatten(item)]
    return [value]


def same_values(a, b, exact: bool = False) -> str | None:
    """None where two leaves agree (dtype, shape, values to RTOL/ATOL, or bit for bit with
    `exact`); else what differs."""
    import numpy as np
    import torch

    if isinstance(b, np.ndarray) or (not isinstance(b, torch.Tensor) and isinstance(b, np.generic)):
        b = torch.from_numpy(np.asarray(b).copy())
    if not isinstance(a, torch.Tensor) and not isinstance(b, torch.Tensor):  # two Python numbers
        if type(a) is not type(b):
            return f"a Python {type(b).__name__} where eager gives a {type(a).__name__}"
        same = a == b or (a != a and b != b) or (isinstance(a, float) and not exact and math.isclose(a, b, rel_tol=RTOL, abs_tol=ATOL))
        return None if same else f"{b!r} where eager gives {a!r}"
    if not isinstance(a, torch.Tensor):  # eager returned a Python number
        kind = {bool: "bool", int: "int", float: "float"}.get(type(a))
        if not isinstance(b, torch.Tensor) or b.numel() != 1:
            return f"expected the number {a!r}, got {_describe(b)}"
        got_kind = "bool" if b.dtype == torch.bool else "float" if b.dtype.is_floating_point else "int"
        if kind != got_kind:
            return f"expected a Python {kind}, got {b.dtype}"
        a = torch.tensor(a, dtype=b.dtype).reshape(b.shape)
    if not isinstance(b, torch.Tensor):
        return f"expected a tensor {a.dtype}{list(a.shape)}, got {_describe(b)}"
    if a.dtype != b.dtype:
        return f"dtype {b.dtype} where eager gives {a.dtype}"
    if tuple(a.shape) != tuple(b.shape):
        return f"shape {list(b.shape)} where eager gives {list(a.shape)}"
    if a.is_complex():
        a, b = torch.view_as_real(a), torch.view_as_real(b)
    if exact:
        return None if torch.equal(a, b) or (a.dtype.is_floating_point and torch.equal(a.isnan(), b.isnan()) and torch.equal(a.nan_to_num(), b.nan_to_num())) else "values differ"
    if a.dtype.is_floating_point or a.is_complex():
        tolerance = HALF_TOLERANCE if a.dtype in (torch.float16, torch.bfloat16) else RTOL
        if not torch.allclose(a.double(), b.double(), rtol=tolerance, atol=tolerance, equal_nan=True):
            diff = (a.double() - b.double()).abs().nan_to_num(float("inf"))
            return f"values differ by up to {diff.max().item():.3g}"
    elif not torch.equal(a, b):
        return f"{int((a != b).sum())} of {a.numel()} values differ"
    return None


def _describe(value) -> str:
    return f"{value.dtype}{list(value.shape)}" if hasattr(value, "dtype") and hasattr(value, "shape") else type(value).__name__


def compare(expected, got, exact: bool = False) -> str | None:
    want, have = flatten(expected), flatten(got)
    if len(want) != len(have):
        return f"{len(have)} results where eager gives {len(want)}"
    for i, (a, b) in enumerate(zip(want, have)):
        why = same_values(a, b, exact)
        if why is not None:
            return f"result {i}: {why}"
    return None


def schedc_reason(error: BaseException) -> str:
    """A SchedcError's first line, and its first `error:` line where that is another (IREE's
    diagnostic under "... failed in IREE:"), without the file it names."""
    lines = [line.strip() for line in str(error).strip().splitlines() if line.strip()]
    if not lines:
        return type(error).__name__
    detail = next((line for line in lines[1:] if "error:" in line), None)
    if detail is not None and "error:" not in lines[0]:
        return f"{lines[0]} {re.sub(r'^.*?error: ', 'error: ', detail)}"[:400]
    return lines[0][:400]


def first_line(error: BaseException) -> str:
    lines = [line.strip() for line in str(error).strip().splitlines() if line.strip()]
    return f"{type(error).__name__}: {lines[0] if lines else ''}"[:400]


def _draws_random(test, trace) -> bool:
    """Whether a call's eager result changes with torch's random state (dropout, bernoulli,
    randn inside the model): no compiler's random numbers are torch's."""
    import copy

    import torch

    module = test.program_factory()
    for item in trace:
        outputs = []
        for seed in (1, 2):
            torch.manual_seed(seed)
            try:
                outputs.append(getattr(module, item.symbol or "forward")(*copy.deepcopy(item.inputs)))
            except Exception:
                return False
        if compare(outputs[0], outputs[1], exact=True):
            return True
    return False


def run_one(test, variant: str, targets: tuple, work: Path) -> dict:
    """Runs one test: its class, a one-line reason, and the stage times."""
    import copy

    import torch

    import schedc
    from schedc.errors import SchedcError

    def ending(cls, reason=""):
        return {"class": cls, "reason": reason}

    try:
        trace, again = golden(test), golden(test)
    except Exception as e:
        return ending("unavailable", f"eager fails: {first_line(e)}")
    if any(compare(a.output, b.output, exact=True) for a, b in zip(trace, again)):
        return ending("nondeterministic", "two eager runs differ")
    if _draws_random(test, trace):
        return ending("nondeterministic", "the result depends on torch's random state")
    failed_targets = {}  # target -> why the compile failed there (llvm-cpu passed)
    for n, item in enumerate(trace):
        module = test.program_factory()
        symbol = item.symbol or "forward"
        if symbol != "forward":  # the suite's programs are called through forward only
            return ending("unavailable", f"calls {symbol}")
        inputs = copy.deepcopy(item.inputs)
        try:
            mlir = schedc.import_torch(module, *inputs)
        except SchedcError as e:
            return ending("import-fail", schedc_reason(e))
        except Exception as e:
            return ending("import-fail", f"(not a SchedcError) {first_line(e)}")
        try:
            vmfb = schedc.compile(mlir, target="llvm-cpu", schedc_passes=(variant == "schedc"))
        except SchedcError as e:
            return ending("compile-fail", schedc_reason(e))
        except Exception as e:
            return ending("compile-fail", f"(not a SchedcError) {first_line(e)}")
        path = work / f"{test.unique_name}.{n}.vmfb"
        path.write_bytes(vmfb)
        try:
            loaded = schedc.load(str(path))
            with torch.no_grad():
                got = loaded.forward(*copy.deepcopy(item.inputs))
        except SchedcError as e:
            return ending("run-fail", schedc_reason(e))
        except Exception as e:
            return ending("run-fail", f"(not a SchedcError) {first_line(e)}")
        finally:
            path.unlink(missing_ok=True)
        why = compare(item.output, got)
        if why is not None:
            return ending("wrong", why)
        for target in targets:
            if target in failed_targets:
                continue
            try:
                schedc.compile(mlir, target=target, schedc_passes=(variant == "schedc"), emit="vmfb")
            except SchedcError as e:
                failed_targets[target] = schedc_reason(e)[:300]
            except Exception as e:
                failed_targets[target] = f"(not a SchedcError) {first_line(e)}"
    result = ending("pass")
    if targets:
        result["targets"] = {t: failed_targets.get(t, "ok") for t in targets}
    return result


def worker(variant: str, targets: tuple) -> None:
    """Reads test names on stdin, writes one JSON result per line on the original stdout;
    everything the tests, torch and IREE print goes to stderr."""
    import tempfile
    import warnings

    out = os.fdopen(os.dup(1), "w", buffering=1)
    os.dup2(2, 1)
    warnings.simplefilter("ignore")
    tests, _ = load_suite()
    import torch

    torch.set_grad_enabled(False)
    with tempfile.TemporaryDirectory(prefix="schedc-ops-") as work:
        for line in sys.stdin:
            name = line.strip()
            started = time.perf_counter()
            result = run_one(tests[name], variant, targets, Path(work))
            result.update(name=name, seconds=round(time.perf_counter() - started, 2))
            out.write(json.dumps(result) + "\n")


# --- the run ---------------------------------------------------------------------------------

class Worker:
    """One worker process and the test it is running."""

    def __init__(self, variant: str, targets: tuple):
        self.variant, self.targets = variant, targets
        self.start()

    def start(self):
        self.process = subprocess.Popen(
            [sys.executable, __file__, "--worker", "--variant", self.variant, "--compile-targets", ",".join(self.targets)],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, bufsize=1,
            env={**os.environ, "PYTHONWARNINGS": "ignore"},
        )
        os.set_blocking(self.process.stdout.fileno(), False)
        self.name, self.since, self.buffer = None, 0.0, ""

    def send(self, name: str):
        self.name, self.since = name, time.perf_counter()
        self.process.stdin.write(name + "\n")
        self.process.stdin.flush()

    def poll(self) -> dict | None:
        """The running test's result once it has one (or its crash)."""
        try:
            chunk = self.process.stdout.read()
        except (BlockingIOError, TypeError):
            chunk = None
        if chunk:
            self.buffer += chunk
        if "\n" in self.buffer:
            line, self.buffer = self.buffer.split("\n", 1)
            self.name = None
            return json.loads(line)
        if self.process.poll() is not None:
            name, self.name = self.name, None
            code = self.process.returncode
            self.start()
            return {"name": name, "class": "crash", "reason": f"the worker process ended with {code}", "seconds": 0}
        return None

    def kill(self, why: str) -> dict:
        name, seconds = self.name, round(time.perf_counter() - self.since, 2)
        self.process.kill()
        self.process.wait()
        self.start()
        return {"name": name, "class": "timeout", "reason": why, "seconds": seconds}

    def close(self):
        self.process.stdin.close()
        self.process.wait()


def run(names: list, tests: dict, variant: str, targets: tuple, jobs: int, timeout: float, verbose: bool) -> dict:
    pending = collections.deque(names)
    workers = [Worker(variant, targets) for _ in range(min(jobs, len(names)) or 1)]
    results = {}
    try:
        while pending or any(w.name for w in workers):
            for w in workers:
                if w.name is None and pending:
                    w.send(pending.popleft())
                if w.name is None:
                    continue
                result = w.poll()
                limit = min(timeout, tests[w.name].timeout_seconds) if w.name in tests else timeout
                if result is None and time.perf_counter() - w.since > limit:
                    result = w.kill(f"over {limit:.0f} s")
                if result is not None:
                    results[result["name"]] = result
                    if verbose:
                        print(f"{result['class']:>16}  {result['name']}  {result['reason']}", flush=True)
            time.sleep(0.01)
    finally:
        for w in workers:
            w.close()
    return results


def reason_key(reason: str) -> str:
    """A reason without its numbers and names in quotes: the key reasons are grouped by."""
    key = re.sub(r"^\S+\.py:\d+: ", "", reason)  # the test file's line
    key = re.sub(r"'[^']*'|\"[^\"]*\"", "'…'", key)
    return re.sub(r"\b\d+(\.\d+)?(e[-+]?\d+)?\b", "N", key)[:140]


def table(results: dict) -> str:
    counts = collections.Counter(r["class"] for r in results.values())
    deterministic = sum(counts[c] for c in CLASSES if c not in ("nondeterministic", "unavailable"))
    lines = [f"{len(results)} tests; {counts['pass']} of {deterministic} with a deterministic eager result pass "
             f"({100 * counts['pass'] / max(deterministic, 1):.1f}%)", ""]
    lines += [f"  {c:<17}{counts[c]:>5}" for c in CLASSES if counts[c]]
    for cls in CLASSES:
        if cls == "pass":
            continue
        reasons = collections.Counter(reason_key(r["reason"]) for r in results.values() if r["class"] == cls)
        if not reasons:
            continue
        lines += ["", f"{cls}:"]
        for reason, n in reasons.most_common():
            example = next(r["name"] for r in sorted(results.values(), key=lambda r: r["name"]) if r["class"] == cls and reason_key(r["reason"]) == reason)
            lines.append(f"  {n:>4}  {reason}  (e.g. {example})")
    passing = [r for r in results.values() if r["class"] == "pass" and "targets" in r]
    for target in sorted({t for r in passing for t in r["targets"]}):
        failed = collections.Counter(reason_key(r["targets"][target]) for r in passing if r["targets"].get(target, "ok") != "ok")
        lines += ["", f"{target}: {len(passing) - sum(failed.values())} of the {len(passing)} tests passing on llvm-cpu compile"]
        lines += [f"  {n:>4}  {reason}" for reason, n in failed.most_common()]
    return "\n".join(lines)


def check(results: dict, expected: dict) -> list:
    """Where the run and the expected-failures list disagree. A test listed as failing on
    llvm-cpu has the line `Name  class  reason`; a test that passes there and fails to
    compile for another target, `Name  <target>-compile  reason` (a key of its own: the
    line's name is `Name@<target>`)."""
    problems = []
    for name, result in sorted(results.items()):
        for target, why in sorted(result.get("targets", {}).items()):
            listed = expected.get(f"{name}@{target}")
            if why != "ok" and listed is None:
                problems.append(f"{name}: a new {target} compile failure: {why}")
            elif why == "ok" and listed is not None:
                problems.append(f"{name}: listed as failing to compile for {target} ({listed[1]}) but compiles: take it off {XFAIL.name}")
        cls = result["class"]
        listed = expected.get(name)
        if cls in FAILURES and listed is None:
            problems.append(f"{name}: a new failure ({cls}): {result['reason']}")
        elif cls == "pass" and listed is not None:
            problems.append(f"{name}: listed as {listed[0]} ({listed[1]}) but passes: take it off {XFAIL.name}")
        elif listed is not None and cls in FAILURES and listed[0] != cls:
            problems.append(f"{name}: listed as {listed[0]} but is {cls}: {result['reason']}")
    return problems


XFAIL_HEADER = """\
# torch-mlir e2e tests that fail through schedc, each with its class and reason (what the run
# printed). `python bench/op_coverage.py --check` fails where a run disagrees with this list;
# `--update-xfail` rewrites it from a run of the whole suite (with --compile-targets for the
# `<target>-compile` lines: tests that pass on llvm-cpu and do not compile for that target).
# Classes: import-fail (torch.export or torch-mlir), compile-fail (IREE), run-fail, wrong,
# timeout, crash. Random-number tests and tests whose eager run needs a missing package are
# not failures (the run counts them apart) and are not listed.
"""


def xfail_text(results: dict) -> str:
    lines = [XFAIL_HEADER]
    for name, result in sorted(results.items()):
        if result["class"] in FAILURES:
            lines.append(f"{name}  {result['class']}  {_one_line(result['reason'])}")
        for target, why in sorted(result.get("targets", {}).items()):
            if why != "ok":
                lines.append(f"{name}  {target}-compile  {_one_line(why)}")
    return "\n".join(lines) + "\n"


def _one_line(reason: str) -> str:
    return " ".join(reason.split())[:300] or "(no message)"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--variant", choices=("schedc", "iree"), default="schedc")
    parser.add_argument("--tests", default="all", help="all, ci (op_coverage_ci.txt), or names separated by commas")
    parser.add_argument("--sample", type=int, default=0, help="a seeded random sample of this many tests")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--jobs", type=int, default=1)
    parser.add_argument("--timeout", type=float, default=60)
    parser.add_argument("--compile-targets", default="", help="also compile each test passing on llvm-cpu for these")
    parser.add_argument("--json", help="write every test's result here")
    parser.add_argument("--results", help="read the results of an earlier --json run instead of running (for the table, --check, --update-xfail)")
    parser.add_argument("--check", action="store_true", help=f"fail where the run disagrees with {XFAIL.name}")
    parser.add_argument("--update-xfail", action="store_true", help=f"rewrite {XFAIL.name} from this run (the whole suite)")
    parser.add_argument("--verbose", action="store_true")
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    targets = tuple(t for t in args.compile_targets.split(",") if t)
    if args.worker:
        worker(args.variant, targets)
        return 0
    started = time.perf_counter()
    tests, unavailable = load_suite()
    missing = unavailable_tests(unavailable, tests)
    if args.tests == "all":
        names = sorted(set(tests) | set(missing))
    elif args.tests == "ci":
        names = sorted(read_list(CI_SUBSET))
    else:
        names = [n.strip() for n in args.tests.split(",") if n.strip()]
    unknown = [n for n in names if n not in tests and n not in missing]
    if unknown:
        print(f"op_coverage: no such test: {', '.join(unknown[:5])}", file=sys.stderr)
        return 1
    if args.sample:
        import random

        names = sorted(random.Random(args.seed).sample(names, min(args.sample, len(names))))
    if args.results:
        earlier = json.loads(Path(args.results).read_text())
        results = {n: earlier[n] for n in names if n in earlier}
    else:
        results = {n: {"name": n, "class": "unavailable", "reason": missing[n][:200], "seconds": 0} for n in names if n in missing}
        results.update(run([n for n in names if n in tests], tests, args.variant, targets, args.jobs, args.timeout, args.verbose))
    seconds = time.perf_counter() - started
    print(f"torch-mlir e2e suite through schedc ({args.variant}, llvm-cpu{', compiled for ' + ','.join(targets) if targets else ''}): "
          f"{seconds:.0f} s, {args.jobs} job(s)")
    print(table(results))
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=1, sort_keys=True) + "\n")
    if args.update_xfail:
        if args.tests != "all" or args.sample:
            print("op_coverage: --update-xfail takes a run of the whole suite", file=sys.stderr)
            return 1
        XFAIL.write_text(xfail_text(results))
        print(f"wrote {XFAIL}")
    if args.check:
        problems = check(results, read_list(XFAIL))
        for p in problems:
            print(f"op_coverage: {p}", file=sys.stderr)
        return 1 if problems else 0
    return 0


if __name__ == "__main__":
    sys.exit(main())
