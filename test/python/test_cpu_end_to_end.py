"""cpu-config through the whole compile on the host CPU: the plan each op class gets, numerics
against torch in every layout and mode, and a `schedc tune --target=llvm-cpu` round trip."""

from __future__ import annotations

import json
import re

import numpy as np
import pytest
import torch
from torch import nn

import schedc
from schedc.compiler.driver import compile_with_options
from schedc.decisions.cpu_config import IREE_DEFAULT, CpuDatabase, CpuEntry, MODE_FLAGS, OpShape, PLAN_FLAGS, choose_plan
from schedc.options import CompileOptions
from schedc.tools.schedc import main as schedc_main
from schedc.tune.bench import relative_error


class SmallCNN(nn.Module):
    """One op of each class: a 3-channel strided first layer, a 3x3, a 1x1, a depthwise 3x3,
    and a classifier matmul."""

    def __init__(self):
        super().__init__()
        self.stem = nn.Conv2d(3, 8, 3, stride=2)
        self.conv = nn.Conv2d(8, 16, 3, padding=1)
        self.pointwise = nn.Conv2d(16, 32, 1)
        self.depthwise = nn.Conv2d(32, 32, 3, padding=1, groups=32)
        self.classifier = nn.Linear(32, 10)

    def forward(self, x):
        x = torch.relu(self.stem(x))
        x = torch.relu(self.conv(x))
        x = self.depthwise(torch.relu(self.pointwise(x)))
        return self.classifier(x.mean(dim=(2, 3)))


@pytest.fixture(scope="session")
def small_cnn():
    torch.manual_seed(0)
    model = SmallCNN().eval()
    args = (torch.randn(1, 3, 35, 35),)
    with torch.no_grad():
        expected = model(*args).numpy()
    return schedc.import_torch(model, *args), args, expected


def _run(output: bytes, tmp_path, args) -> np.ndarray:
    path = tmp_path / "m.vmfb"
    path.write_bytes(output)
    return np.asarray(schedc.load(str(path)).forward(*[a.numpy() for a in args]))


def test_each_class_gets_a_plan_and_numerics_hold(small_cnn, tmp_path):
    mlir, args, expected = small_cnn
    result = compile_with_options(mlir, CompileOptions(target="llvm-cpu"))
    plan = result.records["cpu-config"]["module"]
    kinds = [op["kind"] for op in plan["ops"]]
    assert sorted(kinds) == ["conv", "conv", "conv", "depthwise", "matmul"]
    by_kind = {op["kind"]: op for op in plan["ops"]}
    assert by_kind["matmul"]["layout"] == "nchw"  # the AVX-512 database has no times for schedc's kernel
    # the built-in database is a sweep of other shapes: every op's estimate is a neighbour's
    assert {op["source"] for op in plan["ops"]} == {"nearest"}
    # the sweep measured im2col well ahead of IREE's NCHW convolutions at these sizes
    assert any(op["layout"] == "im2col" for op in plan["ops"] if op["kind"] == "conv")
    assert plan["estimates_us"][plan["mode"]] == min(plan["estimates_us"].values())
    tiled = list(MODE_FLAGS["data-tiling"]) if any(op["data_tiling"] for op in plan["ops"]) else []
    assert plan["iree_flags"] == list(MODE_FLAGS[plan["mode"]]) + tiled + list(PLAN_FLAGS)
    assert relative_error(_run(result.output, tmp_path, args), expected) <= 1e-4


def test_data_tiling_reaches_only_the_ops_chosen_for_it(small_cnn, tmp_path):
    # A database where data tiling helps the 3x3 convolution's im2col matmul alone: IREE
    # encodes that one (its hint), the other convolutions' matmuls stay plain, numerics hold.
    mlir, args, expected = small_cnn
    database = CpuDatabase("x86_64-avx512")
    for shape in _op_shapes(mlir, tmp_path):
        helped = shape.kind == "conv" and shape.cin == 8  # SmallCNN.conv
        database.add(CpuEntry(shape, {"plain/nchw": 100.0, "plain/im2col": 50.0, "data-tiling/nchw": 100.0,
                                      "data-tiling/im2col": 20.0 if helped else 80.0}))
    path = tmp_path / "db.json"
    database.save(str(path))
    result = compile_with_options(mlir, CompileOptions(target="llvm-cpu", passes=f"cpu-config{{database={path} per-op-tiling=true}}"))
    plan = result.records["cpu-config"]["module"]
    assert [(op["kind"], op["layout"]) for op in plan["ops"] if op["data_tiling"]] == [("conv", "im2col")]
    assert plan["iree_flags"] == list(MODE_FLAGS["data-tiling"]) + list(PLAN_FLAGS)
    assert relative_error(_run(result.output, tmp_path, args), expected) <= 1e-4
    # its dispatches carry encodings, fewer than with every matmul data-tiled
    chosen = _encoded_executables(mlir, f"cpu-config{{database={path} per-op-tiling=true}}")
    every = _encoded_executables(mlir, "cpu-config{layout=im2col mode=data-tiling}")
    assert 0 < chosen < every
    # with one mode for the module (the default), the convolutions' slower tiled matmuls keep it plain
    whole = compile_with_options(mlir, CompileOptions(target="llvm-cpu", kernel_db=str(path)))
    assert whole.records["cpu-config"]["module"]["mode"] == "plain"
    assert not any(op["data_tiling"] for op in whole.records["cpu-config"]["module"]["ops"])


def _encoded_executables(mlir: str, passes: str) -> int:
    """How many of the flow phase's dispatches read or write data-tiled (encoded) tensors."""
    flow = compile_with_options(mlir, CompileOptions(target="llvm-cpu", emit="flow", passes=passes)).output
    flow = flow if isinstance(flow, str) else flow.decode()
    return sum("flow.dispatch @" in line and ("#enc" in line or "_encoded" in line) for line in flow.splitlines())


def _op_shapes(mlir: str, tmp_path) -> list[OpShape]:
    """The model's convolutions and matmuls as cpu-config reads them."""
    from schedc.ir.cpu_ops import shaped_ops
    from schedc.targets import resolve_target
    from schedc.tune.cpu import CpuTuneOptions, _input_module

    source = tmp_path / "ops.mlir"
    source.write_text(mlir)
    return [shape for _, shape in shaped_ops(_input_module(source, CpuTuneOptions(resolve_target("llvm-cpu"))).operation)]


@pytest.mark.parametrize(("layout", "mode"), [("im2col", "plain"), ("im2col", "data-tiling"), ("nchw", "channels-last"),
                                              ("im2col", "channels-last+data-tiling"), ("gemm", "plain"), ("gemm", "channels-last")])
def test_every_layout_and_mode_matches_torch(small_cnn, tmp_path, layout, mode):
    mlir, args, expected = small_cnn
    output = schedc.compile(mlir, target="llvm-cpu", passes=f"cpu-config{{layout={layout} mode={mode}}}")
    assert relative_error(_run(output, tmp_path, args), expected) <= 1e-4


def test_a_wide_depthwise_convolution_in_nhwc_keeps_its_transposes_apart_and_matches_torch(tmp_path):
    # Without their dispatch regions IREE folds the transposes back into the convolution's
    # maps and builds it in NCHW again (ConvNeXt's 7x7 depthwise convolutions: 2-4x slower);
    # with optimization barriers the host waited at each one.
    torch.manual_seed(0)
    model = nn.Sequential(nn.Conv2d(8, 16, 1), nn.ReLU(), nn.Conv2d(16, 16, 5, padding=2, groups=16),
                          nn.Conv2d(16, 16, 3, padding=1, groups=16)).eval()
    image = torch.randn(1, 8, 20, 20)
    with torch.no_grad():
        reference = model(image).numpy()
    mlir = schedc.import_torch(model, image)
    result = compile_with_options(mlir, CompileOptions(target="llvm-cpu", emit="flow", passes="cpu-config{layout=nhwc mode=plain}"))
    ops = result.records["cpu-config"]["module"]["ops"]
    # the 5x5 one only: a 3x3 saves less than its transposes cost
    assert [op["layout"] for op in ops if op["kind"] == "depthwise"] == ["nhwc", "nchw"]
    assert all(op["layout"] == "nchw" for op in ops if op["kind"] != "depthwise")
    text = result.output if isinstance(result.output, str) else result.output.decode()
    # the image's transpose a dispatch of its own, whose NHWC result the 5x5 one reads; the
    # filter's hoisted to the initializer; the helper inlined
    assert "schedc_depthwise_nhwc" not in text and "_initializer_0_dispatch_0_transpose_5x5x16_f32" in text
    assert re.search(r"dispatch_\d+_transpose_1x24x24x16_f32\(", text)
    assert re.search(r"dispatch_\d+_conv_20x20x16x5x5_f32\(%\w+, %\w+(, %\w+)?\) : \(tensor<24x24x16xf32>", text)
    stream = compile_with_options(mlir, CompileOptions(target="llvm-cpu", emit="stream", passes="cpu-config{layout=nhwc mode=plain}"))
    executions = re.findall(r"stream\.cmd\.execute (once )?on", stream.output if isinstance(stream.output, str) else stream.output.decode())
    assert executions.count("") == 1  # the call in one execution: no wait on the host between kernels
    output = schedc.compile(mlir, target="llvm-cpu", passes="cpu-config{layout=nhwc mode=plain}")
    assert relative_error(_run(output, tmp_path, (image,)), reference) <= 1e-4


def test_winograd_only_into_zero_outputs(small_cnn, tmp_path):
    # IREE's Winograd drops what the output held: a convolution with torch's bias broadcast
    # into its output keeps its layout (forced Winograd was 3% off here before that rule); one
    # without bias, before a batch norm, takes it, exactly.
    mlir, args, expected = small_cnn
    result = compile_with_options(mlir, CompileOptions(target="llvm-cpu", passes="cpu-config{layout=winograd mode=plain}"))
    assert [op["layout"] for op in result.records["cpu-config"]["module"]["ops"] if op["kind"] == "conv"] == ["nchw"] * 3
    assert relative_error(_run(result.output, tmp_path, args), expected) <= 1e-4

    torch.manual_seed(0)
    model = nn.Sequential(nn.Conv2d(8, 16, 3, padding=1, bias=False), nn.BatchNorm2d(16), nn.ReLU()).eval()
    image = torch.randn(1, 8, 17, 17)
    with torch.no_grad():
        reference = model(image).numpy()
    result = compile_with_options(schedc.import_torch(model, image), CompileOptions(target="llvm-cpu", passes="cpu-config{layout=winograd mode=plain}"))
    assert [op["layout"] for op in result.records["cpu-config"]["module"]["ops"]] == ["winograd"]
    assert relative_error(_run(result.output, tmp_path, (image,)), reference) <= 1e-4


def test_no_tuning_keeps_iree_build(small_cnn):
    mlir, _, _ = small_cnn
    result = compile_with_options(mlir, CompileOptions(target="llvm-cpu", tuning=False))
    assert "cpu-config" not in result.records


def test_tune_round_trip(small_cnn, tmp_path, capsys):
    mlir, args, expected = small_cnn
    model = tmp_path / "cnn.mlir"
    model.write_text(mlir)
    database = tmp_path / "cpu.json"
    assert schedc_main(["tune", str(model), "--target=llvm-cpu", f"--database={database}"]) == 0
    assert "5 ops measured into" in capsys.readouterr().err
    measured = CpuDatabase.load(str(database))
    assert len(measured.entries) == 5
    assert all("/".join(IREE_DEFAULT) in e.times_us for e in measured.entries.values())
    assert json.loads(database.read_text())["isa"] == measured.isa

    result = compile_with_options(mlir, CompileOptions(target="llvm-cpu", kernel_db=str(database)))
    plan = result.records["cpu-config"]["module"]
    assert {op["source"] for op in plan["ops"]} == {"measured"}
    # the pass's plan is the decision's on the measured times (its rules: test_cpu_config.py)
    decided = choose_plan(_op_shapes(mlir, tmp_path), measured)
    assert plan["mode"] == decided.mode
    assert [(op["op"], op["layout"], op["time_us"]) for op in plan["ops"]] == [(c.shape.key, c.layout, round(c.time_us, 1)) for c in decided.ops]
    for op in plan["ops"]:  # no op estimated faster than it was ever measured
        assert op["time_us"] >= min(measured.entries[op["op"]].times_us.values()) - 0.06
    assert relative_error(_run(result.output, tmp_path, args), expected) <= 1e-4


def test_an_im2col_convolution_adds_its_bias_after_the_matmul(small_cnn, tmp_path):
    # With torch's bias broadcast as the matmul's initial value, data tiling packed the
    # broadcast in an initializer, one of which IREE took 3.7 s to compile (ConvNeXt).
    mlir, args, expected = small_cnn
    options = dict(target="llvm-cpu", passes="cpu-config{layout=im2col mode=data-tiling}")
    text = compile_with_options(mlir, CompileOptions(emit="flow", **options)).output
    text = text if isinstance(text, str) else text.decode()
    assert "flow.executable private @_initializer" not in text
    output = schedc.compile(mlir, **options)
    assert relative_error(_run(output, tmp_path, args), expected) <= 1e-4


class Matmuls(nn.Module):
    """schedc's matmul kernel's cases: a strided convolution with bias, a linear layer with bias
    (its weight transposed), a batch matmul, sizes no tile divides."""

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(5, 13, 3, stride=2)
        self.linear = nn.Linear(13, 7)

    def forward(self, x, y):
        z = torch.relu(self.conv(x)).flatten(2).transpose(1, 2)  # 1 x pixels x 13
        return torch.bmm(self.linear(z), y)


def test_schedc_gemm_runs_convolutions_matmuls_and_batch_matmuls_and_matches_torch(tmp_path):
    torch.manual_seed(0)
    model = Matmuls().eval()
    args = (torch.randn(1, 5, 23, 23), torch.randn(1, 7, 19))
    with torch.no_grad():
        expected = model(*args).numpy()
    mlir = schedc.import_torch(model, *args)
    options = dict(target="llvm-cpu", passes="cpu-config{layout=gemm mode=plain}")
    result = compile_with_options(mlir, CompileOptions(emit="flow", **options))
    assert [op["layout"] for op in result.records["cpu-config"]["module"]["ops"]] == ["gemm"] * 3
    text = result.output if isinstance(result.output, str) else result.output.decode()
    # three dispatches of the one executable, whose object IREE links; the filter packed at compile
    # time; the convolution's bias and ReLU and the linear layer's bias in the dispatches
    assert text.count("flow.dispatch @schedc_gemm::@conv_bias") == 1 and text.count("flow.dispatch @schedc_gemm::@matmul_bias") == 1
    assert text.count("flow.dispatch @schedc_gemm::@matmul[") == 1
    assert text.count("stream.executable private @schedc_gemm") == 1 and "gemm_x86_64-" in text and "hal.import.static" in text
    assert "linalg.transpose" not in text
    output = schedc.compile(mlir, **options)
    assert relative_error(_run(output, tmp_path, args), expected) <= 1e-5


def test_without_a_c_compiler_schedc_gemm_is_not_chosen_and_forcing_it_says_why(small_cnn, tmp_path, monkeypatch, capsys):
    mlir, args, expected = small_cnn
    monkeypatch.setenv("CC", str(tmp_path / "no-such-cc"))
    monkeypatch.setenv("SCHEDC_CACHE_DIR", str(tmp_path / "cache"))
    database = CpuDatabase("x86_64-avx512")
    for shape in _op_shapes(mlir, tmp_path):  # the kernel measured 4x faster than anything
        database.add(CpuEntry(shape, {"plain/nchw": 100.0, "plain/im2col": 90.0, **({"plain/gemm": 25.0} if shape.dtype == "f32" and shape.kind != "depthwise" else {})}))
    path = tmp_path / "db.json"
    database.save(str(path))
    result = compile_with_options(mlir, CompileOptions(target="llvm-cpu", kernel_db=str(path)))
    plan = result.records["cpu-config"]["module"]
    assert "gemm" not in {op["layout"] for op in plan["ops"]}
    assert "no C compiler" in plan["kernels_unavailable"] and "no-such-cc" in plan["kernels_unavailable"]
    from schedc.report.build import cpu_plan_lines

    assert any("schedc's kernels (gemm) not used: no C compiler" in line for line in cpu_plan_lines(plan))
    assert relative_error(_run(result.output, tmp_path, args), expected) <= 1e-4
    source = tmp_path / "cnn.mlir"
    source.write_text(mlir)
    out = tmp_path / "cnn.vmfb"
    assert schedc_main([str(source), "-o", str(out), "--passes=cpu-config{layout=gemm}"]) != 0
    assert "cpu-config{layout=gemm}: no C compiler" in capsys.readouterr().err and not out.exists()


class Epilogues(nn.Module):
    """What follows a product in the models: a linear layer's bias then GELU (on a permuted 4-D
    input: a batch matmul, reshaped before its bias), a bias then ReLU, a bias alone (before
    GELU's tanh form, which the kernel does not run), a convolution's bias then ReLU, a 1x1
    convolution's (its bias along the matmul's rows), and a convolution + ReLU whose result goes
    into a concatenation (left to IREE's dispatch)."""

    def __init__(self):
        super().__init__()
        self.up, self.down, self.head = nn.Linear(12, 40), nn.Linear(40, 12), nn.Linear(12, 9)
        self.conv, self.pointwise = nn.Conv2d(3, 12, 3, padding=1), nn.Conv2d(12, 20, 1)
        self.branch = nn.Conv2d(3, 4, 3, padding=1)

    def forward(self, image):
        x = torch.relu(self.conv(image))  # 1 x 12 x 9 x 11
        joined = torch.cat([torch.relu(self.branch(image)), image], 1)  # into a concatenation: IREE's own dispatch writes in place
        y = self.pointwise(x)
        z = x.permute(0, 2, 3, 1)  # channels last, as ConvNeXt's blocks
        z = torch.relu(self.down(nn.functional.gelu(self.up(z))))
        return torch.relu(y), nn.functional.gelu(self.head(z), approximate="tanh"), joined


def test_schedc_gemm_runs_the_bias_and_activation_after_it_and_matches_torch(tmp_path):
    torch.manual_seed(0)
    model = Epilogues().eval()
    args = (3 * torch.randn(1, 3, 9, 11),)
    with torch.no_grad():
        expected = [t.numpy() for t in model(*args)]
    mlir = schedc.import_torch(model, *args)
    options = dict(target="llvm-cpu", passes="cpu-config{layout=gemm mode=plain}")
    text = compile_with_options(mlir, CompileOptions(emit="flow", **options)).output
    text = text if isinstance(text, str) else text.decode()
    dispatches = re.findall(r"flow\.dispatch @schedc_gemm::@(\w+)\[[^(]*\(([^)]*)\)", text)
    # the last size operand is the activation (schedc.kernels.ACTIVATIONS): none 0, relu 1, gelu 2
    activations = sorted((export, int(operands.split(", ")[-1].lstrip("%c").split("_")[0]) if export.endswith("_bias") else None)
                         for export, operands in dispatches)
    # the branch into the concatenation without its epilogue; conv + ReLU; head's bias alone;
    # down + ReLU, pointwise + ReLU (its bias along rows); up + GELU
    assert activations == [("conv", None), ("conv_bias", 1), ("matmul_bias", 0), ("matmul_bias", 1), ("matmul_bias", 1), ("matmul_bias", 2)]
    assert re.search(r"@matmul_bias\[[^(]*\([^)]*%c20, %c1, %c1\)", text)  # pointwise: bias of 20 along the rows, ReLU
    assert "math.erf" not in text and "math.tanh" in text  # GELU's tanh form left to IREE
    path = tmp_path / "m.vmfb"
    path.write_bytes(schedc.compile(mlir, **options))
    outputs = schedc.load(str(path)).forward(*[a.numpy() for a in args])
    assert relative_error(outputs[0], expected[0]) <= 1e-5
    assert relative_error(outputs[1], expected[1]) <= 1e-3  # IREE's own tanh: 1e-4 off torch's, with or without the kernel
    assert relative_error(outputs[2], expected[2]) <= 1e-5


def test_the_nhwc_kernel_in_channels_last_reads_its_neighbours_layout_and_pads_in_place(tmp_path):
    # In a channels-last module schedc's kernel runs NHWC: the transposes around it cancel
    # against IREE's around its neighbours, and it reads its image's zero padding in place, so
    # between the first convolution and the last no transpose and no padded copy runs.
    torch.manual_seed(0)
    model = nn.Sequential(nn.Conv2d(8, 16, 3, padding=1), nn.ReLU(), nn.Conv2d(16, 16, 3, padding=(2, 1), stride=2), nn.ReLU(),
                          nn.Conv2d(16, 24, 3, padding=1), nn.Conv2d(24, 20, 3, bias=False)).eval()
    image = torch.randn(1, 8, 21, 19)
    with torch.no_grad():
        reference = model(image).numpy()
    mlir = schedc.import_torch(model, image)
    options = dict(target="llvm-cpu", passes="cpu-config{layout=gemm mode=channels-last}")
    result = compile_with_options(mlir, CompileOptions(emit="flow", **options))
    assert [op["layout"] for op in result.records["cpu-config"]["module"]["ops"]] == ["gemm"] * 4
    text = result.output if isinstance(result.output, str) else result.output.decode()
    body = text[text.index("util.func public @forward$async"):]
    called = re.findall(r"flow\.dispatch @([\w$]+)::@([\w$]+)", body)
    assert [export for executable, export in called if executable == "schedc_gemm"] == ["conv_nhwc_bias", "conv_nhwc_bias", "conv_nhwc_bias", "conv_nhwc"]
    others = [export for executable, export in called if executable != "schedc_gemm"]
    assert len(others) == 2 and all("transpose" in name for name in others)  # the model's input and its output only
    assert "slow_memcpy" not in body and "tensor.pad" not in body
    output = schedc.compile(mlir, **options)
    assert relative_error(_run(output, tmp_path, (image,)), reference) <= 1e-5
