"""split-k: the part count each convolution gets, and the split convolution's numerics against
torch (on the host CPU, where a forced part count applies)."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from torch import nn

import schedc
from schedc.compiler.driver import compile_with_options
from schedc.decisions.cpu_config import OpShape
from schedc.decisions.split_k import MAX_PARTS, can_split, like_measured, split_parts
from schedc.options import CompileOptions


def _conv(cin, cout, size, k=3, stride=1, dtype="f16", groups=1):
    pad = k // 2
    return OpShape("conv", dtype, cin=cin, cout=cout, h=size * stride + 2 * pad, w=size * stride + 2 * pad,
                   kh=k, kw=k, stride=(stride, stride), groups=groups)


def test_deep_convolutions_with_few_outputs_are_split_and_those_that_fill_the_gpu_are_not():
    # ResNet-18's 3x3 convolutions at batch 1, deepest first
    assert split_parts(_conv(512, 512, 7)) == MAX_PARTS
    assert split_parts(_conv(256, 256, 14)) > 1
    assert split_parts(_conv(64, 64, 56)) == 2  # 200,704 outputs: nearly enough
    assert split_parts(_conv(64, 128, 56)) == 1  # 401,408 fill the GPU
    assert split_parts(_conv(512, 512, 7, dtype="f32")) == split_parts(_conv(512, 512, 7))


def test_a_part_keeps_whole_tensor_core_steps_of_channels_and_a_long_enough_reduction():
    assert not can_split(_conv(48, 96, 24), 2)  # 24 channels a part
    assert can_split(_conv(960, 160, 7, k=1), 4) and not can_split(_conv(960, 160, 7, k=1), 8)  # 120 channels a part
    assert can_split(_conv(64, 128, 24), 4)


def test_f16_projections_with_few_pixels_split_until_their_outputs_fill_128_ki_when_asked():
    # bench/split_k.py's synthetic FIT_POINTWISE, where each pick was the fastest part count
    split = lambda shape: split_parts(shape, pointwise_f16=True)  # noqa: E731
    assert split(_conv(768, 128, 6, k=1)) == 16  # 4,608 outputs
    assert split(_conv(640, 96, 10, k=1)) == 8  # 40 channels a part would not be whole K steps
    assert split(_conv(512, 384, 12, k=1)) == 4  # 55,296 outputs
    assert split(_conv(512, 1000, 13, k=1)) == 1  # 169,000: enough already (SqueezeNet's classifier)
    assert split(_conv(768, 128, 6, k=1, dtype="bf16")) == 1  # never measured split
    # by default they stay whole: a whole MobileNetV2 came out wrong with them split (H100)
    assert split_parts(_conv(768, 128, 6, k=1)) == 1 and split_parts(_conv(960, 320, 7, k=1)) == 1


def test_only_convolutions_like_those_measured_are_chosen_for_a_split():
    assert like_measured(_conv(64, 128, 24))
    assert not like_measured(_conv(64, 64, 7)) and split_parts(_conv(64, 64, 7)) == 1  # 1.8 M multiply-adds
    assert not like_measured(_conv(512, 512, 7, k=1, dtype="f32"))  # f32 1x1: held-out projections ran slower split
    assert not like_measured(_conv(256, 512, 7, k=1, stride=2))  # a strided 1x1 was never measured split
    assert not like_measured(_conv(160, 960, 7, k=1))  # an expansion's few input channels
    assert not like_measured(_conv(256, 32, 28))  # an f32 one of 32 channels keeps IREE's direct code
    assert not can_split(_conv(64, 64, 7, groups=64), 2)
    assert not can_split(OpShape("matmul", "f16", m=1, n=512, k=4096), 2)


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.a = nn.Conv2d(64, 64, 3, padding=1)
        self.b = nn.Conv2d(64, 64, 3, stride=2, padding=2, dilation=2)

    def forward(self, x):
        return torch.relu(self.b(torch.relu(self.a(x))))


@pytest.mark.parametrize("parts", [2, 4])
def test_split_convolutions_compute_what_torch_does(parts, tmp_path):
    torch.manual_seed(0)
    model = Block().eval()
    x = torch.randn(1, 64, 12, 12)
    with torch.no_grad():
        expected = model(x).numpy()
    mlir = schedc.import_torch(model, x)
    result = compile_with_options(mlir, CompileOptions(target="llvm-cpu", passes=f"split-k{{parts={parts}}},memory-order,arena-plan"))
    split = result.records["split-k"]["module"]["split"]
    assert [s["parts"] for s in split] == [parts, parts]
    path = tmp_path / "m.vmfb"
    path.write_bytes(result.output)
    actual = np.asarray(schedc.load(str(path)).forward(x.numpy()))
    np.testing.assert_allclose(actual, expected, rtol=1e-4, atol=1e-5)


def test_the_cuda_compile_splits_a_deep_convolution_and_configures_its_parts():
    torch.manual_seed(0)
    model = nn.Sequential(nn.Conv2d(512, 512, 3, padding=1), nn.ReLU()).eval()
    mlir = schedc.import_torch(model, torch.randn(1, 512, 7, 7))
    result = compile_with_options(mlir, CompileOptions(target="cuda"))
    (split,) = result.records["split-k"]["module"]["split"]
    assert split["parts"] > 1
    kernels = result.records["kernel-config"]["module"]["kernels"]
    grouped = [k for k in kernels if k["signature"].startswith(f"matmul_like {split['parts']}x512x7x7x")]
    assert [k["source"] for k in grouped] == ["heuristic"] and grouped[0]["config"].startswith("igemm")
    assert any(k["kind"] == "reduction" and k["signature"].endswith(f"x{split['parts']} f32") for k in kernels)


def test_the_cuda_compile_splits_an_f16_projection_and_swaps_its_parts_inputs():
    torch.manual_seed(0)
    model = nn.Sequential(nn.Conv2d(960, 160, 1), nn.ReLU()).eval().half()
    mlir = schedc.import_torch(model, torch.randn(1, 960, 7, 7, dtype=torch.float16))
    whole = CompileOptions(target="cuda", emit="flow", passes="split-k{pointwise=false},memory-order,arena-plan")
    assert compile_with_options(mlir, whole).records["split-k"]["module"]["split"] == []
    # a 1x1 of 960 channels over 49 pixels goes to the Triton kernel by default (triton-conv's
    # deep 1x1s, which split their own channels): IREE's kernel here, as without Triton
    result = compile_with_options(mlir, CompileOptions(target="cuda", passes="triton-conv{enabled=false},memory-order,arena-plan"))
    assert [s["parts"] for s in result.records["split-k"]["module"]["split"]] == [4]
    configs = [k["config"] for k in result.records["kernel-config"]["module"]["kernels"] if k["signature"].startswith("matmul_like 4x160x49x240")]
    assert configs and all(" k 3 " in c or " k 5 " in c for c in configs)  # K steps of 48 or 80: each divides a part's 240
    swapped = result.records["mma-operands"]["module"]["swapped"]
    assert len(swapped) == 1 and "matmul_like_4x160x49x240" in swapped[0]  # the parts' batch of contractions


def test_a_host_compile_splits_as_cuda_chooses_only_when_asked():
    # IREE's own build on the host (no cpu-config, which rewrites convolutions first)
    model = nn.Sequential(nn.Conv2d(512, 512, 3, padding=1), nn.ReLU()).eval()
    mlir = schedc.import_torch(model, torch.randn(1, 512, 7, 7))
    cuda = compile_with_options(mlir, CompileOptions(target="cuda", emit="flow")).records["split-k"]["module"]["split"]
    host = compile_with_options(mlir, CompileOptions(target="llvm-cpu", emit="flow", tuning=False, passes="split-k{anywhere=true}"))
    assert cuda and host.records["split-k"]["module"]["split"] == cuda
    plain = compile_with_options(mlir, CompileOptions(target="llvm-cpu", emit="flow", tuning=False, passes="split-k"))
    assert plain.records.get("split-k", {}).get("module", {}).get("split", []) == []


def _weight_gradient(cin, cout, size, batch=4, k=3):
    """conv_2d_nchw_fchw as torch's backward gives a weight gradient: the input's channels as
    the batch, its batch as the channels, the output gradient's plane as the window."""
    return OpShape("conv", "f32", batch=cin, cin=batch, cout=cout, h=size + k - 1, w=size + k - 1, kh=size, kw=size)


def test_weight_gradients_are_split_over_their_window_rows_until_their_outputs_fill_the_gpu():
    from schedc.decisions.split_k import SPLIT_OUTPUTS, window_parts

    assert window_parts(_weight_gradient(128, 128, 8)) == 2  # 147,456 outputs
    assert window_parts(_weight_gradient(64, 64, 16)) == 8  # 36,864
    assert window_parts(_weight_gradient(3, 32, 32)) == 16  # 864: two rows a part at least
    assert window_parts(_weight_gradient(512, 512, 7)) == 1  # 2.4 M outputs fill the GPU
    for shape in (_weight_gradient(128, 128, 8), _weight_gradient(64, 64, 16)):
        parts = window_parts(shape)
        assert shape.batch * shape.cout * 9 * parts >= SPLIT_OUTPUTS > shape.batch * shape.cout * 9 * parts // 2
    # forward convolutions, whose windows are smaller than their outputs, are not
    assert window_parts(_conv(3, 64, 112, k=7)) == 1 and window_parts(_conv(512, 512, 2)) == 1


def test_one_choice_of_what_is_split_and_over_what():
    from schedc.decisions.split_k import INPUT_CHANNELS, WINDOW_ROWS, choose_split

    gradient, deep, small = _weight_gradient(64, 64, 16), _conv(512, 512, 7), _conv(64, 128, 56)
    assert choose_split(gradient) == (8, WINDOW_ROWS) and choose_split(gradient, window=False) == (1, "")
    assert choose_split(deep) == (MAX_PARTS, INPUT_CHANNELS) and choose_split(small) == (1, "")
    # forced counts, on any target; chosen ones only where measured (cuda)
    assert choose_split(gradient, rows=2, chosen=False) == (2, WINDOW_ROWS)
    assert choose_split(deep, rows=2, chosen=False) == (1, "")  # no weight gradient: `rows` leaves it
    assert choose_split(deep, parts=4, chosen=False) == (4, INPUT_CHANNELS) and choose_split(deep, chosen=False) == (1, "")
    assert choose_split(_conv(48, 96, 24), parts=2) == (1, "")  # 24 channels a part


@pytest.mark.parametrize("rows", [2, 8])
def test_weight_gradients_split_over_window_rows_compute_what_torch_does(rows, tmp_path):
    torch.manual_seed(0)
    model = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.ReLU(), nn.Conv2d(8, 16, 5, padding=2))
    x, y = torch.randn(2, 3, 16, 16), torch.randn(2, 16, 16, 16)
    loss = nn.MSELoss()
    loss(model(x), y).backward()
    expected = [p.grad.numpy() for p in model.parameters()]
    mlir = schedc.import_torch(model, x, train=True, targets=(y,), loss=loss)
    result = compile_with_options(mlir, CompileOptions(target="llvm-cpu", passes=f"split-k{{rows={rows}}},memory-order,arena-plan"))
    split = result.records["split-k"]["module"]["split"]
    assert [(s["parts"], s["over"]) for s in split] == [(rows, "window rows")] * 2  # both layers' weight gradients
    path = tmp_path / "m.vmfb"
    path.write_bytes(result.output)
    arguments = [p.detach().numpy() for p in model.parameters()] + [x.numpy(), y.numpy()]
    gradients = schedc.load(str(path)).train_step(*arguments)[-len(expected):]
    for got, want in zip(gradients, expected, strict=True):
        np.testing.assert_allclose(np.asarray(got), want, rtol=1e-4, atol=1e-5 * np.abs(want).max())


def test_the_cuda_compile_splits_weight_gradients_and_configures_their_parts():
    """By default (window=false: not); IREE 3.13's own config for the parts failed to lower,
    kernel-config gives them one output per thread, and the step compiles for cuda."""
    torch.manual_seed(0)
    model = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.ReLU(), nn.Conv2d(8, 16, 3, padding=1))
    x, y = torch.randn(2, 3, 16, 16), torch.randn(2, 16, 16, 16)
    mlir = schedc.import_torch(model, x, train=True, targets=(y,), loss=nn.MSELoss())
    whole = CompileOptions(target="cuda", emit="flow", passes="split-k{window=false},memory-order,arena-plan")
    assert compile_with_options(mlir, whole).records["split-k"]["module"]["split"] == []
    result = compile_with_options(mlir, CompileOptions(target="cuda"))
    split = result.records["split-k"]["module"]["split"]
    assert [s["over"] for s in split] == ["window rows"] * 2
    parts = [k for k in result.records["kernel-config"]["module"]["kernels"] if k["kind"] == "matmul_like" and k["signature"].count("x") == 7]
    assert len(parts) == 2 and all(k["source"] == "heuristic" and k["config"].startswith("wg 1x1x") for k in parts)


def _linear(rows, k, n, dtype="f16"):
    return OpShape("matmul", dtype, m=rows, k=k, n=n)


def test_f16_linear_layers_split_by_the_rule_of_the_1x1_convolutions_they_are():
    from schedc.decisions.split_k import MATMUL_MIN_K, MATMUL_SPLIT_OUTPUTS, as_pointwise, matmul_parts

    # a transformer's MLP down projection at batch 1: 16,384 outputs, each a sum of 1,024 products
    assert matmul_parts(_linear(64, 1024, 256)) == 16
    assert matmul_parts(_linear(64, 1024, 256)) == split_parts(as_pointwise(_linear(64, 1024, 256)), MATMUL_SPLIT_OUTPUTS, pointwise_f16=True)
    assert matmul_parts(_linear(144, 2560, 640)) == 8  # 92,160 outputs
    # rows that pad the tensor cores' 16-row tiles stay whole: ViT's 197 came out NaN split (H100)
    assert matmul_parts(_linear(197, 768, 192)) == matmul_parts(_linear(49, 1536, 384)) == 1
    assert matmul_parts(_linear(197, 768, 192), parts=16) == 16  # unless forced
    assert matmul_parts(_linear(2048, 1024, 256)) == 1  # 524,288 outputs fill the GPU
    assert matmul_parts(_linear(64, 1024, 256, dtype="f32")) == 1  # f32 1x1 convolutions ran slower split
    assert matmul_parts(_linear(64, 1376, 256)) == 2  # 688 input channels a part; 344 is no whole number of K steps
    # K of 256 and 384 ran fastest whole (bench/split_k.py --shapes matmul)
    assert matmul_parts(_linear(64, 256, 256)) == matmul_parts(_linear(72, 384, 768)) == 1
    assert matmul_parts(_linear(64, MATMUL_MIN_K // 2, 256)) == 1
    assert matmul_parts(OpShape("matmul", "f16", batch=4, m=64, n=64, k=1024)) == 1  # attention's batch matmuls
    # a forced count splits any element type whose K divides into whole K steps
    assert matmul_parts(_linear(64, 1024, 256, dtype="f32"), parts=4) == 4
    assert matmul_parts(_linear(64, 48, 256, dtype="f32"), parts=4) == 1


class Mlp(nn.Module):
    def __init__(self, width=64, hidden=256):
        super().__init__()
        self.norm, self.up, self.down = nn.LayerNorm(width), nn.Linear(width, hidden), nn.Linear(hidden, width)

    def forward(self, x):
        return x + self.down(torch.relu(self.up(self.norm(x))))


@pytest.mark.parametrize("parts", [2, 8])
def test_split_linear_layers_compute_what_torch_does(parts, tmp_path):
    torch.manual_seed(0)
    model = Mlp(width=128).eval()
    x = torch.randn(1, 24, 128)
    with torch.no_grad():
        expected = model(x).numpy()
    mlir = schedc.import_torch(model, x)
    result = compile_with_options(mlir, CompileOptions(target="llvm-cpu", passes=f"split-k{{parts={parts}}},memory-order,arena-plan"))
    split = result.records["split-k"]["module"]["split"]
    assert [(s["parts"], s["over"]) for s in split] == [(parts, "k")] * 2
    path = tmp_path / "m.vmfb"
    path.write_bytes(result.output)
    actual = np.asarray(schedc.load(str(path)).forward(x.numpy()))
    np.testing.assert_allclose(actual, expected, rtol=1e-4, atol=1e-5)


def test_the_cuda_compile_splits_an_f16_down_projection_and_keeps_the_layer_norm_whole():
    """The parts read the f16 rows themselves, on tensor cores; the up projection that makes
    the rows keeps its dispatch (the barrier before the rows' reshape)."""
    torch.manual_seed(0)
    model = Mlp(width=256, hidden=1024).eval().half()
    mlir = schedc.import_torch(model, torch.randn(1, 64, 256, dtype=torch.float16))

    def dispatches(result) -> list[str]:
        return [k["signature"] for k in result.records["kernel-config"]["module"]["kernels"]]

    whole = compile_with_options(mlir, CompileOptions(target="cuda", emit="configurations",
                                                      passes="split-k{matmuls=false},memory-order,arena-plan"))
    result = compile_with_options(mlir, CompileOptions(target="cuda", emit="configurations"))
    # the down projection (K 1,024) in 16 parts of 64; the up projection (K 256) whole
    assert [(s["op"], s["parts"]) for s in result.records["split-k"]["module"]["split"]] == [("matmul 1x64x256x1024 f16", 16)]
    kernels = {k["signature"]: k for k in result.records["kernel-config"]["module"]["kernels"]}
    parts = kernels["matmul_like 16x64x256x64 f16"]
    assert parts["source"] == "heuristic" and "NV_MMA_SYNC_F32_16x8x16_F16" in parts["config"]
    assert len(dispatches(result)) == len(dispatches(whole)) + 1  # the sum, and nothing else apart
    # nothing of the barrier reaches the host code: the replayed module records every launch
    assert compile_with_options(mlir, CompileOptions(target="cuda", execution="graphs")).output
