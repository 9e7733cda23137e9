"""Every benchmark model, compiled for the host CPU with schedc's default pipeline, computes
what torch eager computes; schedc never raises IREE's transient allocation, and the module's
transient allocations are exactly the arenas schedc planned. schedc's passes decide the same on
a machine whose CPUs are all busy."""

from __future__ import annotations

import contextlib
import importlib.util
import json
import os
import subprocess
import sys

import numpy as np
import pytest
import torch

import schedc
from conftest import ROOT
from schedc.options import CompileOptions
from schedc.compiler.driver import _run_schedc_passes, compile_with_options
from schedc.passes import REGISTRY, DEFAULT_PIPELINE, PassContext
from schedc.compiler.pipeline import parse_pipeline
from schedc.targets import resolve_target

_spec = importlib.util.spec_from_file_location("bench_models", ROOT / "bench" / "models.py")
bench_models = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(bench_models)


def compile_and_compare(name: str, tmp_path, **options):
    """Compiles a bench model for the host CPU, runs it, and checks it against torch eager."""
    model, args = bench_models.SUITE[name]()
    mlir = schedc.import_torch(model, *args)
    result = compile_with_options(mlir, CompileOptions.for_target(resolve_target("llvm-cpu"), report=True, **options))
    path = tmp_path / f"{name}.vmfb"
    path.write_bytes(result.output)
    actual = schedc.load(path).forward(*[a.numpy() for a in args])
    with torch.no_grad():
        expected = model(*args).numpy()
    error = np.linalg.norm(actual.astype(np.float64) - expected) / np.linalg.norm(expected)
    assert error <= 1e-4, error
    return result


@pytest.fixture(scope="session")
def default_compiles(built_once):
    """name -> (report, folder of its phases, phase label -> file name): each bench model compiled
    once for the run (`built_once`) with the default pipeline, its numerics checked, its phases
    dumped."""
    def get(name):
        def make(folder):
            result = compile_and_compare(name, folder, verify_plan=True, dump_phases=str(folder / "phases"))
            saved = {"report": result.report, "phases": {label: path.name for label, path in result.phases.items()}}
            (folder / "compile.json").write_text(json.dumps(saved))

        folder = built_once(f"bench-{name}", make)
        saved = json.loads((folder / "compile.json").read_text())
        return saved["report"], folder / "phases", saved["phases"]

    return get


@pytest.mark.parametrize("name", sorted(bench_models.SUITE))
def test_numerics_unchanged_and_memory_not_worse(name, default_compiles):
    report, _, _ = default_compiles(name)
    for function, entry in report["functions"].items():
        iree = entry.get("iree_transient_bytes")
        if iree:
            assert iree["with_schedc"] <= iree["without_schedc"], function
        order = entry.get("memory-order")
        if order:
            assert order["peak_bytes"] <= order["program_peak_bytes"]
        arenas = entry.get("arena-plan", [])
        for arena in arenas:
            assert arena["load_bytes"] <= arena["schedc_bytes"] <= arena["iree_bytes"]
        if arenas:  # the module allocates exactly schedc's arenas
            assert iree["allocations_with_schedc"] == [a["schedc_bytes"] for a in arenas]
        alone = entry.get("iree_arenas")
        if alone:  # the report's reading of IREE's own slices and layout is what IREE allocates
            assert iree["allocations_without_schedc"] == [a["bytes"] for a in alone]


# Each mode on a branchy net (RandWire's waves are the widest, Inception's branches the most
# uneven: balanced concurrency within its budget) and both on the transformer.
@pytest.mark.parametrize("mode, name", [("max-concurrency", "randwire"), ("balanced", "inception"),
                                        ("balanced", "transformer"), ("max-concurrency", "transformer")])
def test_stream_schedules_keep_the_numbers(name, mode, tmp_path):
    pipeline = f"memory-order,stream-schedule{{mode={mode} streams=8}},arena-plan"
    # IREE's own CPU kernels (no cpu-config): the graph whose concurrency these plans were made for
    result = compile_and_compare(name, tmp_path, passes=pipeline, tuning=False)
    entry = result.report["functions"]["forward"]
    plan = entry["stream-schedule"]
    planned = [w for w in plan["waves"] if w > 1]
    if mode == "max-concurrency":
        assert planned
    else:  # balanced: concurrency only within its budget, 1.2x the one-at-a-time peak
        assert plan["estimated_peak_bytes"] <= 1.2 * plan["min_memory_peak_bytes"]
    if planned:  # every planned wave is one of IREE's
        assert entry["stream-waves"]["concurrent_waves"] >= len(planned)
    else:  # one kernel at a time: memory-order's order and peak, no regions
        assert "stream-waves" not in entry and plan["estimated_peak_bytes"] == plan["min_memory_peak_bytes"]


@contextlib.contextmanager
def busy_cpus():
    """Every CPU kept busy by another process: a search stopped by the clock would stop sooner."""
    spinners = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(os.cpu_count() or 2)]
    try:
        yield
    finally:
        for spinner in spinners:
            spinner.kill()
            spinner.wait()


def rerun_passes(phases, source: str, passes: str, tmp_path) -> bytes:
    """One schedc phase again, on the file the compile gave it, as the driver runs it."""
    context = PassContext()
    context.target = "llvm-cpu"
    destination = tmp_path / f"again-{source}"
    _run_schedc_passes(phases / source, destination, parse_pipeline(passes, REGISTRY), context)
    return destination.read_bytes()


@pytest.mark.parametrize("name", sorted(bench_models.SUITE))
def test_the_passes_decide_the_same_on_a_busy_machine(name, default_compiles, tmp_path):
    """write-in-place, memory-order and arena-plan, run again with every CPU busy on the IR the
    first compile gave them, write byte-identical IR: their searches stop on work, not on the clock."""
    _, phases, dumped = default_compiles(name)
    assert DEFAULT_PIPELINE == "write-in-place,memory-order,arena-plan"
    with busy_cpus():
        ordered = rerun_passes(phases, dumped["flow"], "write-in-place,memory-order", tmp_path)
        planned = rerun_passes(phases, dumped["stream-allocation"], "arena-plan{verify=true}", tmp_path)
    assert ordered == (phases / dumped["flow-schedc"]).read_bytes()
    assert planned == (phases / dumped["stream-allocation-schedc"]).read_bytes()


def test_a_whole_compile_is_byte_identical_on_a_busy_machine(tmp_path):
    """The same input compiled twice to a .vmfb, the second time with every CPU busy."""
    model, args = bench_models.SUITE["transformer"]()
    mlir = schedc.import_torch(model, *args)
    options = CompileOptions.for_target(resolve_target("llvm-cpu"))
    idle = compile_with_options(mlir, options).output
    with busy_cpus():
        busy = compile_with_options(mlir, options).output
    assert idle == busy


def test_a_bench_model_s_cuda_compile_takes_its_kernels_from_the_built_in_database():
    # The database holds the bench suite's measured kernels: a cuda compile of one of its models
    # finds them (it found none while the package's database folder was mislocated).
    model, args = bench_models.SUITE["plain_cnn"]()
    mlir = schedc.import_torch(model, *args)
    result = compile_with_options(mlir, CompileOptions(target="cuda", emit="flow"))
    kernels = result.records["kernel-config"]["module"]
    assert kernels["database"] and any(k["source"] == "database" for k in kernels["kernels"])
