"""torch-mlir's e2e suite as schedc's op-coverage gate: a subset covering each op family
(bench/op_coverage_ci.txt) runs through schedc on the host CPU, against eager, and must agree
with the expected-failures list (bench/op_coverage_xfail.txt): no new failure, and no listed
failure that now passes or fails otherwise. `python bench/op_coverage.py` runs the whole suite."""

from __future__ import annotations

import importlib.util
import subprocess
import sys

from conftest import ROOT

_spec = importlib.util.spec_from_file_location("op_coverage", ROOT / "bench" / "op_coverage.py")
op_coverage = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(op_coverage)


def test_the_ci_subset_agrees_with_the_expected_failures():
    run = subprocess.run([sys.executable, str(ROOT / "bench" / "op_coverage.py"), "--tests", "ci", "--check", "--jobs", "2"],
                         capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    assert " 0 of " not in run.stdout.splitlines()[1]


def test_the_lists_name_tests_of_the_suite():
    tests, unavailable = op_coverage.load_suite()
    known = set(tests) | set(op_coverage.unavailable_tests(unavailable, tests))
    ci = op_coverage.read_list(op_coverage.CI_SUBSET)
    expected = op_coverage.read_list(op_coverage.XFAIL)
    assert len(ci) >= 60
    assert not set(ci) - known, "CI subset entries the suite does not have"
    assert not {key.split("@")[0] for key in expected} - known, "expected failures the suite does not have"
    for key, (cls, reason) in expected.items():
        kinds = op_coverage.FAILURES if "@" not in key else (f"{key.split('@')[1]}-compile",)
        assert cls in kinds and reason, f"{key}: every expected failure has its class and reason"
    # The subset covers every test file of the suite with a test that runs.
    files = {op_coverage.test_file(tests[name]) for name in ci if name in tests}
    assert files >= {op_coverage.test_file(t) for t in tests.values()} - op_coverage.FILES_OUTSIDE_CI


def test_check_reports_each_kind_of_disagreement():
    results = {
        "New": {"class": "wrong", "reason": "values differ"},
        "Fixed": {"class": "pass", "reason": ""},
        "Moved": {"class": "run-fail", "reason": "calling forward failed"},
        "Same": {"class": "compile-fail", "reason": "x"},
        "Random": {"class": "nondeterministic", "reason": "x"},
    }
    expected = {"Fixed": ("wrong", "was wrong"), "Moved": ("compile-fail", "x"), "Same": ("compile-fail", "x")}
    results["Gpu"] = {"class": "pass", "reason": "", "targets": {"cuda": "error: x", "rocm": "ok", "vulkan": "ok"}}
    expected["Gpu@vulkan"] = ("vulkan-compile", "was failing")
    problems = op_coverage.check(results, expected)
    assert [p.split(":")[0] for p in problems] == ["Fixed", "Gpu", "Gpu", "Moved", "New"]
    assert "new cuda compile failure" in problems[1] and "vulkan" in problems[2] and "compiles" in problems[2]
