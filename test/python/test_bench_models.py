"""Every benchmark model, compiled for the host CPU with schedc's default pipeline, computes
what torch eager computes; schedc never raises IREE's transient allocation, and the module's
transient allocations are exactly the arenas schedc planned."""

from __future__ import annotations

import importlib.util

import numpy as np
import pytest
import torch

import schedc
from conftest import ROOT
from schedc.driver import CompileOptions, compile_with_options
from schedc.targets import resolve_target

_spec = importlib.util.spec_from_file_location("bench_models", ROOT / "bench" / "models.py")
bench_models = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(bench_models)


def compile_and_compare(name: str, tmp_path, **options):
    """Compiles a bench model for the host CPU, runs it, and checks it against torch eager."""
    model, args = bench_models.SUITE[name]()
    mlir = schedc.import_torch(model, *args)
    result = compile_with_options(mlir, CompileOptions(resolve_target("llvm-cpu"), report=True, **options))
    path = tmp_path / f"{name}.vmfb"
    path.write_bytes(result.output)
    actual = schedc.load(path).forward(*[a.numpy() for a in args])
    with torch.no_grad():
        expected = model(*args).numpy()
    error = np.linalg.norm(actual.astype(np.float64) - expected) / np.linalg.norm(expected)
    assert error <= 1e-4, error
    return result


@pytest.mark.parametrize("name", sorted(bench_models.SUITE))
def test_numerics_unchanged_and_memory_not_worse(name, tmp_path):
    result = compile_and_compare(name, tmp_path, verify_plan=True)
    for function, entry in result.report["functions"].items():
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


@pytest.mark.parametrize("name", ["inception", "randwire", "transformer"])
@pytest.mark.parametrize("mode", ["balanced", "max-concurrency"])
def test_stream_schedules_keep_the_numbers(name, mode, tmp_path):
    pipeline = f"memory-order,stream-schedule{{mode={mode} streams=8}},arena-plan"
    result = compile_and_compare(name, tmp_path, passes=pipeline)
    waves = result.report["functions"]["forward$async"]["stream-waves"]
    planned = [w for w in result.report["functions"]["forward$async"]["stream-schedule"]["waves"] if w > 1]
    assert waves["concurrent_waves"] >= len(planned) > 0  # every planned wave is one of IREE's
