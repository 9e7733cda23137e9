"""The phases as data: IREE's commands between them, and passes that plug into any phase through
their registry entry alone."""

from __future__ import annotations

import numpy as np
import pytest
from iree.compiler import ir

import schedc
from schedc.ir.mlirio import parse_module
from schedc.passes import REGISTRY, PassContext, PassInfo
from schedc.compiler.phases import END, CompileStep, OptStep, Point, end_of, phase, point_of, steps_between
from schedc.compiler.pipeline import parse_pipeline, run_pipeline

MATVEC = """
func.func @matvec(%a: tensor<64xf32>, %b: tensor<64x64xf32>) -> tensor<64xf32> {
  %init = tensor.empty() : tensor<64xf32>
  %zero = arith.constant 0.0 : f32
  %acc = linalg.fill ins(%zero : f32) outs(%init : tensor<64xf32>) -> tensor<64xf32>
  %mv = linalg.matvec ins(%b, %a : tensor<64x64xf32>, tensor<64xf32>) outs(%acc : tensor<64xf32>) -> tensor<64xf32>
  return %mv : tensor<64xf32>
}
"""


def test_iree_alone_is_one_command_per_run_of_phases():
    assert steps_between(Point(0, END), end_of("flow")) == [CompileStep("source", "flow")]
    assert steps_between(end_of("flow"), end_of("end")) == [CompileStep("flow", "end")]
    assert CompileStep("flow", "end").flags() == ["--compile-from=flow"]


def test_stops_inside_the_stream_phase_split_it_into_its_own_passes():
    async_, allocation = point_of(phase("stream-async")), point_of(phase("stream"))
    (until_allocation,) = steps_between(end_of("flow"), allocation)
    first, second = steps_between(end_of("flow"), async_) + steps_between(async_, allocation)
    assert first.passes + second.passes == until_allocation.passes
    assert until_allocation.passes[-1] == "iree-stream-schedule-allocation"
    rest, module = steps_between(allocation, end_of("end"))
    assert isinstance(rest, OptStep) and rest.reached == end_of("stream") and rest.passes[-1] == "symbol-dce"
    assert module == CompileStep("stream", "end")


def test_passes_in_any_phase_plug_in_through_their_registry_entry(monkeypatch, tmp_path):
    seen: dict[str, set] = {}

    def recorder(name):
        def run(module, pass_, options, context):
            names = set()
            module.walk(lambda op: names.add(op.operation.name) or ir.WalkResult.ADVANCE)
            seen[name] = names
        return run

    for name in ("preprocessing", "hal"):
        monkeypatch.setitem(REGISTRY, f"see-{name}", PassInfo(f"see-{name}", "records the ops", recorder(name), phase=name))
    path = tmp_path / "m.vmfb"
    schedc.compile(MATVEC, output=str(path), passes="see-hal,memory-order,see-preprocessing", dump_phases=str(tmp_path / "phases"))
    assert "linalg.matvec" in seen["preprocessing"] and "flow.dispatch" not in seen["preprocessing"]
    assert "hal.command_buffer.dispatch" in seen["hal"]
    dumped = sorted(p.name for p in (tmp_path / "phases").iterdir())
    # cpu-config runs on IREE's linalg for llvm-cpu (the default target) whatever the pipeline;
    # after memory-order IREE allocates the function's concurrent waves (schedc.compiler.waves):
    # they cost no memory here, so the function keeps them.
    assert dumped == ["00-input.mlir", "01-linalg.mlir", "02-linalg-schedc.mlir", "03-preprocessing.mlir",
                      "04-preprocessing-schedc.mlir", "05-flow.mlir", "06-flow-schedc.mlir", "07-waves-trial.mlir",
                      "08-waves-trial-allocation.mlir", "09-flow-waves.mlir", "10-stream.mlir", "11-executables",
                      "12-hal.mlir", "13-hal-schedc.mlir", "14-module.vmfb"]
    result = schedc.load(path).matvec(np.ones(64, np.float32), np.full((64, 64), 0.5, np.float32))
    np.testing.assert_array_equal(result, np.full(64, 32.0, np.float32))


TWO_BRANCHES = """
util.func public @two_branches(%arg0: tensor<64xf32>) -> tensor<64xf32> {
  %a = flow.dispatch @ex::@a(%arg0) : (tensor<64xf32>) -> tensor<1024xf32>
  %b = flow.dispatch @ex::@b(%arg0) : (tensor<64xf32>) -> tensor<1024xf32>
  %a2 = flow.dispatch @ex::@a2(%a) : (tensor<1024xf32>) -> tensor<64xf32>
  %b2 = flow.dispatch @ex::@b2(%b) : (tensor<1024xf32>) -> tensor<64xf32>
  %r = flow.dispatch @ex::@join(%a2, %b2) : (tensor<64xf32>, tensor<64xf32>) -> tensor<64xf32>
  util.return %r : tensor<64xf32>
}
"""


def test_stream_schedule_takes_memory_orders_order():
    """After memory-order (here told to keep program order, 8 KiB alive at once where 4 KiB
    would do), stream-schedule's memory-aware order is memory-order's: no search of its own."""
    context = PassContext()
    module = parse_module(TWO_BRANCHES, "two_branches.mlir", ir.Context())
    pipeline = "memory-order{strategy=program},stream-schedule{mode=min-memory}"
    run_pipeline(module, parse_pipeline(pipeline, REGISTRY), REGISTRY, context)
    chosen = context.records["memory-order"]["two_branches"]
    assert chosen["peak_bytes"] == chosen["program_peak_bytes"] == 8192 + 256
    assert context.records["stream-schedule"]["two_branches"]["min_memory_peak_bytes"] == chosen["peak_bytes"]
    alone = PassContext()
    module = parse_module(TWO_BRANCHES, "two_branches.mlir", ir.Context())
    run_pipeline(module, parse_pipeline("stream-schedule{mode=min-memory}", REGISTRY), REGISTRY, alone)
    assert alone.records["stream-schedule"]["two_branches"]["min_memory_peak_bytes"] < chosen["peak_bytes"]


def test_a_pass_can_ask_iree_for_flags(monkeypatch):
    monkeypatch.setitem(REGISTRY, "needs-flag", PassInfo("needs-flag", "asks IREE for a flag", lambda *a: None, iree_flags=("--iree-no-such-flag",)))
    with pytest.raises(schedc.CompileError, match="no-such-flag"):
        schedc.compile(MATVEC, passes="needs-flag", emit="flow")


IOTA = """
func.func @iota(%n: index) -> tensor<?xf32> {
  %init = tensor.empty(%n) : tensor<?xf32>
  %i = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} outs(%init : tensor<?xf32>) {
  ^bb0(%o: f32):
    %x = linalg.index 0 : index
    %y = arith.index_cast %x : index to i32
    %z = arith.sitofp %y : i32 to f32
    linalg.yield %z : f32
  } -> tensor<?xf32>
  return %i : tensor<?xf32>
}
"""


def test_iree_s_dispatch_tensor_traces_survive_the_phases(tmp_path):
    """`--iree-flow-trace-dispatch-tensors` (bench/dispatch_diff.py) prints the trace of a
    dispatch without inputs as text IREE cannot parse back between phases; schedc drops that
    empty trace and keeps the others, which print each dispatch's tensors when the module runs."""
    import subprocess
    import sys
    from pathlib import Path

    path = tmp_path / "m.vmfb"
    schedc.compile(IOTA, target="llvm-cpu", output=str(path), iree_flags=["--iree-flow-trace-dispatch-tensors"])
    run = Path(sys.executable).parent / "iree-run-module"
    done = subprocess.run([str(run), f"--module={path}", "--device=local-sync", "--function=iota", "--input=4"],
                          capture_output=True, text=True, check=True)
    assert "outputs ===\n4xf32=0 1 2 3" in done.stderr
