"""Kernel configuration on IR: signatures of real dispatches, the pass in the CUDA pipeline,
measured times in the cost model, and `schedc tune prepare` (CUDA modules compile without a GPU)."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest
from iree.compiler import ir

import schedc
from schedc.ir.dispatches import benchmark_module_from_text, dispatch_sites, executables, signature
from schedc.ir.mlirio import parse_module, printable, split_chunks
from schedc.passes import REGISTRY, PassContext
from schedc.compiler.pipeline import parse_pipeline, run_pipeline
from schedc.targets import resolve_target
from schedc.tune.prepare import MANIFEST, TuneOptions, prepare

ROOT = Path(__file__).resolve().parents[2]
LIT_INPUT = ROOT / "test" / "passes" / "kernel-config.mlir"
LIT_DB = ROOT / "test" / "passes" / "Inputs" / "kernel-config-db.json"


@pytest.fixture(scope="session")
def cuda_flow(imported):
    """The example transformer block and conv net at the flow phase for CUDA, without schedc."""
    return {
        name: schedc.compile(imported(name)[2], target="cuda", emit="flow", schedc_passes=False)
        for name in ("transformer_block", "branchy_convnet")
    }


def _signatures(text: str):
    module = parse_module(printable(text), "flow.mlir", ir.Context())
    return [s[0] for s in (signature(e) for e in executables(module)) if s is not None], module


def test_signatures_classify_real_dispatches(cuda_flow):
    sigs, _ = _signatures(cuda_flow["transformer_block"])
    kinds = {s.kind for s in sigs}
    assert {"matmul", "batch_matmul", "softmax", "reduction"} <= kinds
    for s in sigs:
        if s.kind == "matmul":
            assert s.iterators == ("parallel", "parallel", "reduction") and len(s.loops) == 3
            assert s.name in s.name and "matmul" in s.name
    convs, _ = _signatures(cuda_flow["branchy_convnet"])
    assert {"conv", "matmul_like"} & {s.kind for s in convs}


def test_signature_key_ignores_names_and_configs(cuda_flow):
    """The same computation under another dispatch name, or already configured, keeps its key."""
    sigs, module = _signatures(cuda_flow["transformer_block"])
    context = PassContext(out=None)
    run_pipeline(module, parse_pipeline("kernel-config", REGISTRY), REGISTRY, context)
    configured = [s[0] for s in (signature(e) for e in executables(module)) if s is not None]
    assert [s.key for s in configured] == [s.key for s in sigs]
    keys = {}
    for s in sigs:
        keys.setdefault((s.kind, s.loops, s.fused), set()).add(s.key)
    assert all(len(v) == 1 for k, v in keys.items() if k[0] == "batch_matmul" and len(v) and k[2] == ())


def test_cuda_compiles_get_kernel_configs_unless_tuning_is_off(imported, tmp_path):
    mlir = imported("mlp")[2]
    tuned = schedc.compile(mlir, target="cuda", emit="flow", report=str(tmp_path / "r.json"))
    assert "compilation_info" in tuned
    report = json.loads((tmp_path / "r.json").read_text())
    sources = {k["source"] for k in report["kernels"]["kernels"]}
    assert sources <= {"database", "heuristic", "iree"} and "heuristic" in sources | {"database"}
    assert "compilation_info" not in schedc.compile(mlir, target="cuda", emit="flow", tuning=False)
    assert "compilation_info" not in schedc.compile(mlir, target="llvm-cpu", emit="flow")


def test_measured_times_replace_the_roofline_in_stream_schedule():
    [(first_line, chunk)] = split_chunks(LIT_INPUT.read_text())[:1]
    results = {}
    for pipeline in ("stream-schedule", f"kernel-config{{database={LIT_DB}}},stream-schedule"):
        module = parse_module(chunk, str(LIT_INPUT), ir.Context(), first_line)
        context = PassContext(out=None)
        run_pipeline(module, parse_pipeline(pipeline, REGISTRY), REGISTRY, context)
        results[pipeline] = context.records["stream-schedule"]["linear_layer"]["estimated_makespan_us"]
    measured = results[f"kernel-config{{database={LIT_DB}}},stream-schedule"]
    assert measured == pytest.approx(1.25)  # the database's time for this kernel
    assert results["stream-schedule"] != pytest.approx(1.25)


def test_tune_prepare_compiles_candidates_and_drops_none(imported, tmp_path):
    source = tmp_path / "mlp.mlir"
    source.write_text(imported("mlp")[2])
    options = TuneOptions(resolve_target("cuda"), candidates=2, repeat=3, jobs=2)
    manifest = prepare([str(source)], str(tmp_path / "tune"), options)
    assert manifest["target"] == "cuda" and manifest["repeat"] == 3
    assert manifest["kernels"], "the mlp's matmuls are tunable"
    for kernel in manifest["kernels"]:
        assert kernel["functions"][0] == "c0" and kernel["configs"][0] is None  # IREE's own first
        assert len(kernel["functions"]) == len(kernel["configs"]) >= 2
        assert (tmp_path / "tune" / kernel["module"]).stat().st_size > 0
    assert json.loads((tmp_path / "tune" / MANIFEST).read_text()) == json.loads(json.dumps(manifest))


def test_tune_prepare_new_only_skips_the_kernels_a_database_holds(imported, tmp_path):
    mlir = imported("mlp")[2]
    source = tmp_path / "mlp.mlir"
    source.write_text(mlir)
    sigs, _ = _signatures(schedc.compile(mlir, target="cuda", emit="flow", schedc_passes=False))
    known = frozenset(s.key for s in sigs)
    options = TuneOptions(resolve_target("cuda"), candidates=2, repeat=3, jobs=2, known=known)
    assert prepare([str(source)], str(tmp_path / "tune"), options)["kernels"] == []


def test_a_benchmark_module_keeps_the_candidates_asked_for(cuda_flow):
    from schedc.ir.dispatches import benchmark_module
    from schedc.decisions.kernel_config import candidate_configs

    module = parse_module(printable(cuda_flow["transformer_block"]), "flow.mlir", ir.Context())
    sites = dispatch_sites(module)
    executable = next(e for e in executables(module) if (s := signature(e)) and s[0].kind == "matmul")
    sig, _ = signature(executable)
    text = benchmark_module(executable, sites[executable.symbol], [None, *candidate_configs(sig, 2)])
    assert text.count("func.func @c") == 3 and text.count("compilation_info") >= 2
    kept = benchmark_module_from_text(text, [0, 2])
    assert "func.func @c0" in kept and "func.func @c2" in kept and "func.func @c1(" not in kept


def test_f16_import_matches_the_f32_model(examples, tmp_path):
    import numpy as np
    import torch

    model, args = examples.FACTORIES["mlp"]()
    expected = model(*args).detach().numpy()
    schedc.compile(schedc.import_torch(model, *args, dtype="f16"), target="llvm-cpu", output=str(tmp_path / "m.vmfb"))
    actual = schedc.load(str(tmp_path / "m.vmfb")).forward(args[0].to(torch.float16))
    assert actual.dtype == torch.float16
    error = float(np.abs(actual.float().numpy() - expected).max() / np.abs(expected).max())
    assert error < 1e-2  # f16 keeps ~3 decimal digits


def test_bf16_import_compiles_for_cuda(examples):
    # IREE 3.13's llvm-cpu backend rejects bf16 constants (with or without schedc); CUDA takes them.
    model, args = examples.FACTORIES["mlp"]()
    mlir = schedc.import_torch(model, *args, dtype="bf16")
    assert "bf16" in mlir
    assert len(schedc.compile(mlir, target="cuda")) > 0


def test_unknown_dtype_is_a_clear_error(examples):
    model, args = examples.FACTORIES["mlp"]()
    with pytest.raises(schedc.SchedcError, match="unknown dtype 'f8'; valid: f32, f16, bf16"):
        schedc.import_torch(model, *args, dtype="f8")


def test_tune_bench_times_and_checks_every_candidate_on_the_cpu(cuda_flow, tmp_path):
    """`schedc tune bench` needs only the runtime: here on local-task, with two copies of one
    dispatch under IREE's own config (GPU configs do not compile for the CPU)."""
    from schedc.ir.dispatches import benchmark_module
    from schedc.compiler.iree_tools import run_iree_tool
    from schedc.tools.schedc import main
    from schedc.tune.prepare import RESULTS, winners

    module = parse_module(printable(cuda_flow["transformer_block"]), "flow.mlir", ir.Context())
    sites = dispatch_sites(module)
    executable = next(e for e in executables(module) if (s := signature(e)) and s[0].kind == "matmul")
    sig, _ = signature(executable)
    site = sites[executable.symbol]
    (tmp_path / "k000.mlir").write_text(benchmark_module(executable, site, [None, None]))
    run_iree_tool("iree-compile", [str(tmp_path / "k000.mlir"), *resolve_target("llvm-cpu").iree_flags(),
                                   "--iree-hal-benchmark-dispatch-repeat-count=2", "-o", str(tmp_path / "k000.vmfb")], what="test")
    manifest = {"target": "llvm-cpu", "arch": "host", "chip": "cpu", "repeat": 2, "models": [], "skipped": [], "kernels": [{
        "name": "k000", "module": "k000.vmfb", "signature": sig.to_json(), "operands": list(site.operand_types),
        "results": list(site.result_types), "functions": ["c0", "c1"], "configs": [None, None], "failed": []}]}
    (tmp_path / MANIFEST).write_text(json.dumps(manifest))
    assert main(["tune", "bench", str(tmp_path), "--device=local-task", "--calls=3"]) == 0
    results = json.loads((tmp_path / RESULTS).read_text())
    timings = results["kernels"]["k000"]
    assert [t["function"] for t in timings] == ["c0", "c1"]
    assert all(t["time_us"] > 0 and t["error"] == 0.0 for t in timings)  # the same kernel twice
    [entry] = winners(manifest, results["kernels"])
    assert entry.config is None and entry.time_us == timings[0]["time_us"]


def test_a_dispatch_with_a_rank_0_float_operand_is_benchmarkable():
    """Dynamo's graphs hoist scalars as `tensor<f32>` operands of matmul dispatches (RandWire's);
    they are floats like any other, so tune reproduces those dispatches."""
    from schedc.ir.dispatches import DispatchSite
    from schedc.tune.bench import parse_tensor_type

    site = DispatchSite("ex", "ex_matmul", ("tensor<32x1024xf32>", "tensor<f32>"), ("tensor<32x1024xf32>",), (-1,))
    assert site.benchmarkable
    assert parse_tensor_type("tensor<f32>")[0] == ()
    assert not DispatchSite("ex", "ex_gather", ("tensor<32xf32>", "tensor<i64>"), ("tensor<32xf32>",), (-1,)).benchmarkable


def test_pooling_is_its_own_class_configured_along_rows_and_columns():
    """Max and average pooling read their input through a window: the heuristic tiles a
    workgroup over output rows and columns (contiguous in NCHW), one channel each, and IREE
    compiles it for cuda. An output too small for a subgroup of columns keeps IREE's own."""
    import torch
    from torch import nn

    from schedc.compiler.driver import compile_with_options
    from schedc.decisions.kernel_config import heuristic_config
    from schedc.options import CompileOptions

    model = nn.Sequential(nn.MaxPool2d(3, 2, ceil_mode=True), nn.ReLU(), nn.AvgPool2d(2)).eval()
    mlir = schedc.import_torch(model, torch.randn(1, 16, 57, 57))
    sigs, _ = _signatures(schedc.compile(mlir, target="cuda", emit="flow", schedc_passes=False))
    pools = [s for s in sigs if s.kind == "pooling"]
    assert [s.loops for s in pools] == [(16, 28, 28, 3, 3), (16, 14, 14, 2, 2)], [(s.kind, s.name) for s in sigs]
    for sig in pools:
        config = heuristic_config(sig)
        channels, rows, columns = sig.parallel_loops
        assert config.workgroup[channels] == 1 and config.workgroup[columns] >= 8
        assert [config.reduction[i] for i in sig.reduction_loops] == [sig.loops[i] for i in sig.reduction_loops]  # the whole window
    result = compile_with_options(mlir, CompileOptions(target="cuda", passes="kernel-config", emit="hal"))
    assert "hal.executable.binary" in result.output
    kernels = result.records["kernel-config"]["module"]["kernels"]
    assert [(k["kind"], k["source"]) for k in kernels] == [("pooling", "heuristic")] * 2
    tiny = dataclasses.replace(pools[1], loops=(16, 6, 6, 2, 2))
    assert heuristic_config(tiny) is None


def test_tune_prepare_measures_the_dispatches_a_default_compile_makes(tmp_path):
    """A residual block's input is written into its pad's buffer by padded-producers (cuda), so
    its dispatches differ from IREE's alone: tuning must measure the compile's own."""
    import torch

    class Block(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.stem = torch.nn.Conv2d(3, 8, 1)
            self.conv = torch.nn.Conv2d(8, 8, 3, padding=1)

        def forward(self, x):
            y = torch.relu(self.stem(x))
            return torch.relu(self.conv(y) + y)

    torch.manual_seed(0)
    mlir = schedc.import_torch(Block().eval(), torch.randn(1, 3, 8, 8))
    source = tmp_path / "block.mlir"
    source.write_text(mlir)
    manifest = prepare([str(source)], str(tmp_path / "tune"), TuneOptions(resolve_target("cuda"), candidates=1, repeat=1, jobs=2))
    tuned = {kernel["signature"]["key"] for kernel in manifest["kernels"]}
    compiled = {s.key for s in _signatures(schedc.compile(mlir, target="cuda", emit="flow"))[0]}
    alone = {s.key for s in _signatures(schedc.compile(mlir, target="cuda", emit="flow", schedc_passes=False))[0]}
    assert tuned and tuned <= compiled  # every tuned dispatch is one the compile makes
    assert tuned - alone  # and the stem writing the padded buffer is not IREE's alone
