"""triton-conv: the tiles each convolution gets, the kernel's numerics against torch (Triton's
interpreter, on the host CPU), its PTX, and the cuda compile's dispatches of it."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import torch
from torch import nn

import schedc
from schedc.compiler.driver import compile_with_options
from schedc.decisions.triton_conv import MAX_PARTS, ConvSizes, ConvTiles, conv_tiles, grid, kernel_constants
from schedc.kernels import KernelUnavailable
from schedc.kernels import triton_conv as kernel
from schedc.options import CompileOptions

triton = pytest.importorskip("triton")


@pytest.fixture(autouse=True)
def _epilogues_and_serial_sums(monkeypatch):
    """The kernel's epilogues and its own sums of parts, on (the tests that want them off say so)."""
    from schedc.decisions import triton_conv as rule

    monkeypatch.setattr(rule, "EPILOGUES", True)
    monkeypatch.setattr(rule, "SERIAL_SUM", True)


def _sizes(c, f, size, k=3, stride=1, n=1, dilation=1, dtype="f16", out_dtype="f32"):
    pad = dilation * (k // 2)
    out = (size + 2 * pad - dilation * (k - 1) - 1) // stride + 1
    return ConvSizes(n, c, size, size, f, k, k, out, out, (stride, stride), (pad, pad), (dilation, dilation), dtype, out_dtype)


def test_deep_convolutions_with_few_outputs_split_their_channels_and_large_ones_do_not():
    assert conv_tiles(_sizes(512, 512, 7)).split == MAX_PARTS  # 49 pixels x 512 channels
    assert conv_tiles(_sizes(64, 64, 56)).split == 1
    assert conv_tiles(_sizes(64, 128, 56, stride=2)).split == 1
    assert conv_tiles(_sizes(3, 64, 224, k=7, stride=2)).bk == 16  # a first layer's 3 channels
    assert conv_tiles(_sizes(48, 64, 28)).split == 1  # a part would keep under 576 products
    assert conv_tiles(_sizes(256, 512, 7, k=1)).split == 1  # a 1x1's GEMM is short already
    assert conv_tiles(_sizes(64, 128, 28, stride=2)) == ConvTiles(32, 32, 64, warps=8, stages=4)  # few tiles, no parts


@pytest.mark.parametrize("c", [3, 16, 24, 48, 64, 96, 160, 512, 1200])
@pytest.mark.parametrize("size", [5, 14, 56])
@pytest.mark.parametrize("dtype", ["f16", "f32"])
def test_every_rule_s_tiles_fit_the_shared_memory_and_its_parts_keep_a_step_of_channels(c, size, dtype):
    from schedc.decisions.triton_conv import SHARED_BYTES, shared_bytes

    for f in (16, 64, 1000):
        tiles = conv_tiles(_sizes(c, f, size, dtype=dtype))
        assert shared_bytes(tiles, 4 if dtype == "f32" else 2) <= SHARED_BYTES
        assert tiles.split == 1 or c // tiles.split >= tiles.bk


CASES = [  # (sizes, tiles): padding, strides, a batch, dilation, a split, a 1x1, a narrow output
    # (not bf16: Triton 3.5's interpreter multiplies bf16 matrices wrong, 1e10 off for a 16x16 dot)
    (_sizes(16, 24, 9, stride=2, n=2), ConvTiles(32, 32, 16, 4, 2)),
    (_sizes(20, 8, 7, dilation=2), ConvTiles(16, 16, 16, 4, 2)),
    (_sizes(64, 16, 5), ConvTiles(16, 16, 16, 4, 2, split=4)),
    (_sizes(16, 16, 6, k=1), ConvTiles(16, 16, 16, 4, 2)),
    (_sizes(16, 16, 6, k=5, out_dtype="f16"), ConvTiles(16, 16, 16, 4, 2)),
    (_sizes(24, 8, 6, dtype="f32"), ConvTiles(16, 16, 16, 4, 2)),  # triton-conv{tf32=true}
]
# triton-conv{channels-last=true}: an NHWC image and an RSCF filter, with every step's channels
# in range (no channel mask) and without (a part's last step, 20 channels in steps of 16)
CHANNELS_LAST = [
    (_sizes(32, 24, 9, stride=2, n=2), ConvTiles(16, 16, 16, 4, 2)),
    (_sizes(64, 16, 5), ConvTiles(16, 16, 16, 4, 2, split=2)),
    (_sizes(40, 24, 7, dilation=2), ConvTiles(16, 16, 16, 4, 2, split=2)),
    (_sizes(16, 16, 6, k=5, out_dtype="f16"), ConvTiles(16, 16, 16, 4, 2)),
]


def _tf32(t):
    """f32 values rounded to TF32 (to nearest, ties away from zero): cvt.rna.tf32.f32."""
    return ((t.view(torch.int32) + 0x1000) & ~0x1FFF).view(torch.float32)


def _rounded_ones() -> list[float]:
    """The kernel's f32 (TF32) 1x1 convolution of 16 channels of 1 + 3 * 2^-12 by ones: each
    image value lies past the middle of two TF32 values, so rounded it is 1 + 2^-10 and the sum
    16.015625; truncated (the tensor cores' own reading) it would be 1 and 16.0."""
    _, conv = kernel._kernel()
    sizes, tiles = _sizes(16, 16, 4, k=1, dtype="f32"), ConvTiles(16, 16, 16, 4, 2)
    x = torch.full((1, 16, 4, 4), 1 + 3 * 2.0 ** -12)
    y = torch.zeros(1, 1, 16, 4, 4)
    conv[grid(sizes, tiles)](x, torch.ones(16, 16, 1, 1), y, **kernel_constants(sizes, tiles))
    return sorted(set(y.flatten().tolist()))


def _errors(cases, channels_last: bool = False) -> list[float]:
    """Each case's largest difference from torch's convolution, relative to its largest output."""
    import torch
    from torch import nn

    _, conv = kernel._kernel()
    narrow = {"f16": torch.float16, "bf16": torch.bfloat16, "f32": torch.float32}
    errors = []
    for sizes, tiles in cases:
        torch.manual_seed(0)
        x = torch.randn(sizes.n, sizes.c, sizes.h, sizes.w).to(narrow[sizes.dtype])
        w = torch.randn(sizes.f, sizes.c, sizes.r, sizes.s).to(narrow[sizes.dtype])
        out_type = torch.float32 if tiles.split > 1 or sizes.out_dtype == "f32" else narrow[sizes.out_dtype]
        y = torch.zeros(tiles.split, sizes.n, sizes.f, sizes.oh, sizes.ow, dtype=out_type)
        if channels_last:
            conv[grid(sizes, tiles)](x.permute(0, 2, 3, 1).contiguous(), w.permute(2, 3, 1, 0).contiguous(), y,
                                     **kernel_constants(sizes, tiles, channels_last=True))
        else:
            conv[grid(sizes, tiles)](x, w, y, **kernel_constants(sizes, tiles))
        if sizes.dtype == "f32":  # TF32 products: each operand rounded to TF32 first, as cuDNN's
            x, w = _tf32(x), _tf32(w)
        expected = nn.functional.conv2d(x.float(), w.float(), stride=sizes.stride, padding=sizes.padding, dilation=sizes.dilation)
        errors.append((y.float().sum(0) - expected).abs().max().item() / expected.abs().max().item())
    return errors


@pytest.mark.parametrize("channels_last", [False, True])
def test_the_kernel_computes_what_torch_does(channels_last):
    cases = CHANNELS_LAST if channels_last else CASES
    errors = _interpreted(f"_errors(t.{'CHANNELS_LAST' if channels_last else 'CASES'}, {channels_last})")
    narrow_out = [tiles.split == 1 and sizes.out_dtype != "f32" for sizes, tiles in cases]
    assert all(e <= (1e-2 if narrow else 1e-4) for e, narrow in zip(errors, narrow_out)), errors


def test_f32_operands_are_rounded_to_tf32_not_truncated():
    assert _interpreted("_rounded_ones()") == [16.015625]


@pytest.mark.parametrize("arch,dtype", [(80, "f16"), (90, "f16"), (90, "bf16"), (80, "f32")])
def test_the_ptx_takes_the_dispatchs_three_bindings_and_nothing_else(arch, dtype, tmp_path, monkeypatch):
    monkeypatch.setenv("SCHEDC_CACHE_DIR", str(tmp_path))
    sizes, tiles = _sizes(64, 64, 14, dtype=dtype), ConvTiles(64, 64, 32, 4, 3)
    compiled = kernel.compile_conv(kernel_constants(sizes, tiles), dtype, "f32", tiles.warps, tiles.stages, arch)
    entry = re.search(r"\.entry (\w+)\(([^)]*)\)", compiled.ptx)
    assert entry.group(1) == compiled.name and entry.group(2).count(".param") == 3
    assert f".target sm_{arch}" in compiled.ptx and ("wgmma" in compiled.ptx) == (arch == 90)
    assert (".tf32" in compiled.ptx) == (dtype == "f32")  # TF32 tensor-core products for f32
    assert (re.search(r"and\.b32\s+%r\d+, %r\d+, -8192;", compiled.ptx) is not None) == (dtype == "f32")  # rounded to TF32 first
    assert compiled.threads == 128 and grid(sizes, tiles) == (4, 1, 1) and 0 < compiled.shared_bytes <= 48 * 1024
    assert kernel.compile_conv(kernel_constants(sizes, tiles), dtype, "f32", tiles.warps, tiles.stages, arch) == compiled  # cached


@pytest.mark.parametrize("dtype", ["f16", "f32"])
def test_channels_last_the_ptx_copies_a_step_s_channels_in_16_byte_pipelined_copies(dtype, tmp_path, monkeypatch):
    monkeypatch.setenv("SCHEDC_CACHE_DIR", str(tmp_path))
    sizes = _sizes(64, 64, 56, dtype=dtype, out_dtype="f32")
    tiles = conv_tiles(sizes)
    loads = {}
    for channels_last in (False, True):
        ptx = kernel.compile_conv(kernel_constants(sizes, tiles, channels_last), dtype, "f32", tiles.warps, tiles.stages, 80).ptx
        single = re.findall(r"ld\.global\.b(?:16|32) |cp\.async\.ca\.shared\.global [^;]*, 0x[24],", ptx)  # one element a load
        wide = re.findall(r"cp\.async\.cg\.shared\.global [^;]*, 0x10,", ptx)  # 16 bytes a copy, into the pipeline's stages
        loads[channels_last] = (len(single), len(wide))
    assert loads[False][0] > 100  # NCHW: hundreds of single elements
    assert loads[True][0] == 0 and loads[True][1] > 0


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(64, 128, 3, padding=1, bias=False)
        self.deep = nn.Conv2d(128, 256, 3, padding=1, stride=2)
        self.norm = nn.BatchNorm2d(128)

    def forward(self, x):
        return self.deep(torch.relu(self.norm(self.conv(x))))


def _flow(options: str | None = None):
    torch.manual_seed(0)
    model = Block().eval().half()
    mlir = schedc.import_torch(model, torch.randn(1, 64, 16, 16, dtype=torch.float16))
    passes = {} if options is None else {"passes": options}
    return compile_with_options(mlir, CompileOptions(target="cuda", emit="flow", **passes))


WITH_TRITON = "triton-conv,memory-order,arena-plan"


def test_named_or_not_it_runs_before_split_k_on_cuda_only_and_not_without_tuning():
    from schedc.compiler.driver import _pipeline

    for passes in (WITH_TRITON, None, "memory-order"):
        _, invocations = _pipeline(CompileOptions(target="cuda", **({} if passes is None else {"passes": passes})))
        names = [i.name for i in invocations]
        assert names.index("triton-conv") < names.index("split-k")
    assert "triton-conv" not in [i.name for i in _pipeline(CompileOptions(target="llvm-cpu"))[1]]
    assert "triton-conv" not in [i.name for i in _pipeline(CompileOptions(target="cuda", tuning=False))[1]]


def test_the_cuda_compile_dispatches_the_kernel_for_each_f16_convolution():
    result = _flow()
    flow = result.output.decode() if isinstance(result.output, bytes) else result.output
    assert "linalg.conv_2d" not in flow and "slow_memcpy" not in flow  # no padded copies: the kernel reads the padding
    dispatched = re.findall(r"flow\.dispatch @schedc_conv_\w+::@conv2d\(.*\) -> (\(?tensor<[^>]*>(?:, tensor<[^>]*>, %[\w#]+\))?)", flow)
    # the first writes f16 (its cast, batch norm and ReLU in its epilogue) channels last (the
    # image of the second, which reads NHWC); the second, split in 2, its f32 partial sums and,
    # summed by the last of a tile's workgroups, its output (its bias and cast in), its counters tied
    assert dispatched == ["tensor<1x16x16x128xf16>", "(tensor<2x1x256x8x8xf32>, tensor<1x256x8x8xf16>, %__hoisted_tensor_8xi32)"]  # zeros, copied in
    records = result.records["triton-conv"]
    (function,) = [v for k, v in records.items() if k != "unavailable"]
    assert [c["split"] for c in function["convolutions"]] == [1, 2] and all(c["padding_read_in_place"] for c in function["convolutions"])
    assert [c.get("parts_summed_in_kernel", False) for c in function["convolutions"]] == [False, True]
    from schedc.report.build import triton_conv_line

    assert triton_conv_line(function) == ("triton-conv: 2 convolutions in schedc's Triton kernel (sm_80, 2 running the elementwise ops "
                                          "after them, 1 summing their parts)")
    assert [c["work"] for c in function["convolutions"]] == [128 * 16 * 16 * 64 * 9, 256 * 8 * 8 * 128 * 9]  # multiply-adds
    assert result.records["split-k"]["module"]["split"] == []  # nothing left for it


def test_channels_last_the_kernel_reads_the_image_transposed_where_it_is_made_and_the_filter_once_at_load():
    result = _flow("triton-conv{layout=nhwc},memory-order,arena-plan")
    flow = result.output.decode() if isinstance(result.output, bytes) else result.output
    dispatched = re.findall(r"flow\.dispatch @schedc_conv_\w+::@conv2d\((%[\w#]+), (%[\w#]+)[^)]*\)(?: \{[^}]*\})? : \((tensor<[^>]*>), (tensor<[^>]*>)", flow)
    # images NHWC, filters RSCF
    assert [(x, w) for _, _, x, w in dispatched] == [("tensor<1x16x16x64xf16>", "tensor<3x3x64x128xf16>"),
                                                     ("tensor<1x16x16x128xf16>", "tensor<3x3x128x256xf16>")]
    (function,) = [v for k, v in result.records["triton-conv"].items() if k != "unavailable"]
    assert [c["layout"] for c in function["convolutions"]] == ["nhwc", "nhwc"]
    forward = flow[flow.index("util.func public @forward"):]
    # the model's input is transposed in a dispatch of its own; the second image is written
    # channels last by the first kernel, its batch norm and ReLU in it; the filters' transposes are the initializer's
    assert len(re.findall(r"flow\.dispatch @\S*_dispatch_\d+_transpose_", forward)) == 1
    assert not re.findall(r"flow\.dispatch @\S*_dispatch_\d+_elementwise", forward)
    assert "%__hoisted_tensor_3x3x64x128xf16" in forward
    nchw = _flow("triton-conv{layout=nchw},memory-order,arena-plan").output
    assert "transpose" not in (nchw.decode() if isinstance(nchw, bytes) else nchw).split("util.func public @forward")[1]


def test_without_the_pass_or_without_triton_the_convolutions_stay_iree_s(monkeypatch, capfd):
    flow = _flow("triton-conv{enabled=false},memory-order,arena-plan").output
    assert "schedc_conv_" not in (flow.decode() if isinstance(flow, bytes) else flow)

    def unavailable():
        raise kernel.TritonMissing("Triton is not installed")
    monkeypatch.setattr(kernel, "_triton", unavailable)
    monkeypatch.setenv("SCHEDC_CACHE_DIR", "/nonexistent-cache-for-this-test")
    capfd.readouterr()
    result = _flow()
    assert result.records["triton-conv"] == {"unavailable": "Triton is not installed"}
    warnings = [line for line in capfd.readouterr().err.splitlines() if "triton-conv" in line]
    assert len(warnings) == 1 and warnings[0].endswith("warning: triton-conv: Triton is not installed; every convolution stays on IREE's kernels")
    from schedc.report.build import build_report, summary_lines

    lines = summary_lines(build_report(result.records, {}, {}, {}))
    assert "triton-conv: every convolution stays IREE's: Triton is not installed" in lines and not any("@unavailable" in l for l in lines)
    assert "schedc_conv_" not in (result.output.decode() if isinstance(result.output, bytes) else result.output)


def test_a_convolution_triton_cannot_compile_stays_iree_s_and_the_report_says_why(monkeypatch):
    from schedc.ir import triton_conv as ir_side

    def refuse(constants, *args):
        if constants["C"] == 128:
            raise KernelUnavailable("a 128-channel convolution takes too much shared memory")
        return kernel.compile_conv(constants, *args)
    monkeypatch.setattr(ir_side, "compile_conv", refuse)
    result = _flow(WITH_TRITON)
    flow = result.output.decode() if isinstance(result.output, bytes) else result.output
    assert flow.count("::@conv2d(") == 1 and re.search(r"dispatch_\d+_conv_256x8x8x128x3x3_f16", flow)  # IREE's
    (function,) = [v for k, v in result.records["triton-conv"].items() if k != "unavailable"]
    assert len(function["convolutions"]) == 1 and function["declined"] == ["a 128-channel convolution takes too much shared memory"]


def test_f32_convolutions_take_the_kernel_in_tf32_only_when_asked():
    torch.manual_seed(0)
    mlir = schedc.import_torch(Block().eval(), torch.randn(1, 64, 16, 16))
    for passes, taken in ((None, 0), ("triton-conv{tf32=true},memory-order,arena-plan", 2)):
        result = compile_with_options(mlir, CompileOptions(target="cuda", emit="flow", **({} if passes is None else {"passes": passes})))
        flow = result.output.decode() if isinstance(result.output, bytes) else result.output
        assert len(re.findall(r"flow\.dispatch @schedc_conv_\w+::@conv2d\(.*\) -> \(?tensor<[0-9x]+xf32>", flow)) == taken


class Stem(nn.Module):
    def __init__(self):
        super().__init__()
        self.stem = nn.Conv2d(3, 32, 3, padding=1, bias=False)
        self.wide = nn.Conv2d(32, 64, 1, bias=False)
        self.window = nn.Conv2d(64, 64, 3, padding=1, bias=False)

    def forward(self, x):
        return self.window(torch.relu(self.wide(torch.relu(self.stem(x)))))


def test_tf32_takes_every_f32_convolution_stems_and_1x1s_too():
    torch.manual_seed(0)
    mlir = schedc.import_torch(Stem().eval(), torch.randn(1, 3, 16, 16))
    result = compile_with_options(mlir, CompileOptions(target="cuda", emit="flow", tf32=True))
    flow = result.output.decode() if isinstance(result.output, bytes) else result.output
    assert len(re.findall(r"flow\.dispatch @schedc_conv_\w+::@conv2d", flow)) == 3
    (function,) = [v for k, v in result.records["triton-conv"].items() if k != "unavailable"]
    assert function["left_to_iree"] == []
    with pytest.raises(schedc.CompileError, match="--tf32 applies to --target=cuda"):
        CompileOptions(target="llvm-cpu", tf32=True)
    with pytest.raises(schedc.CompileError, match="drop --no-tuning"):
        CompileOptions(target="cuda", tf32=True, tuning=False)


def test_the_rule_leaves_1x1_convolutions_and_stems_to_iree_and_the_report_says_why():
    torch.manual_seed(0)
    mlir = schedc.import_torch(Stem().eval().half(), torch.randn(1, 3, 16, 16, dtype=torch.float16))
    result = compile_with_options(mlir, CompileOptions(target="cuda", emit="flow"))
    flow = result.output.decode() if isinstance(result.output, bytes) else result.output
    assert len(re.findall(r"flow\.dispatch @schedc_conv_\w+::@conv2d", flow)) == 1  # the 3x3 of 64 channels
    (function,) = [v for k, v in result.records["triton-conv"].items() if k != "unavailable"]
    assert [c["op"].split("_")[1] for c in function["convolutions"]] == ["1x64x16x16"]
    assert [(c["op"].split("_")[1], c["left_to_iree"].split(" (")[0]) for c in function["left_to_iree"]] == [
        ("1x3x16x16", "under 16 channels"), ("1x32x16x16", "a 1x1 convolution")]
    from schedc.report.build import build_report, summary_lines

    line = summary_lines(build_report(result.records, {}, {}, {}))[0]
    assert line.endswith("triton-conv: 1 convolution in schedc's Triton kernel (sm_80, 1 running the elementwise ops after them), "
                         "1 left to IREE's (a 1x1 convolution), "
                         "1 left to IREE's (under 16 channels)")
    every = compile_with_options(mlir, CompileOptions(target="cuda", emit="flow", passes="triton-conv{every=true},memory-order,arena-plan"))
    flow = every.output.decode() if isinstance(every.output, bytes) else every.output
    assert len(re.findall(r"flow\.dispatch @schedc_conv_\w+::@conv2d", flow)) == 3


def test_deep_1x1_convolutions_over_few_pixels_take_the_kernel(monkeypatch):
    from schedc.decisions import triton_conv as rule

    deep, shallow, wide = _sizes(1024, 256, 14, k=1), _sizes(256, 1024, 14, k=1), _sizes(1024, 256, 28, k=1)
    assert rule.left_to_iree(deep) is None  # 1,024 channels over 196 pixels
    assert rule.left_to_iree(shallow).startswith("a 1x1") and rule.left_to_iree(wide).startswith("a 1x1")
    monkeypatch.setattr(rule, "DEEP_1X1_CHANNELS", 0)  # off
    assert all(rule.left_to_iree(s).startswith("a 1x1") for s in (deep, shallow, wide))
    assert rule.left_to_iree(_sizes(8, 16, 14)).startswith("under 16")  # stems as before


def test_the_kernels_gpu_follows_cuda_arch_and_older_chips_get_none():
    from schedc.passes.base import PassContext
    from schedc.passes.triton_conv import Options, _arch

    assert [_arch(Options(), PassContext(arch=a)) for a in ("", "sm_80", "a100", "sm_87", "rtx4090", "sm_75")] == [80, 80, 80, 86, 89, None]
    assert _arch(Options(arch=90), PassContext(arch="sm_75")) == 90


# A convolution's bias, its cast to f16, a batch norm's scale, a residual sum and a ReLU, as
# schedc.ir.triton_conv.epilogue_chain reads them from torch-mlir's ops
EPILOGUE = kernel.Epilogue(
    operands=(("channel", "f32"), ("channel", "f32"), ("tensor", "f16")),
    body=(("f32", "arith.addf", "o0", "acc"), ("f16", "arith.truncf", "r0"), ("f32", "arith.extf", "r1"),
          ("f32", "arith.mulf", "r2", "o1"), ("f32", "arith.extf", "o2"), ("f32", "arith.addf", "r3", "r4"),
          ("i1", "arith.cmpf:ugt", "r5", "0.0"), ("f32", "arith.select", "r6", "r5", "0.0"), ("f16", "arith.truncf", "r7")))


def _epilogue_case(sizes: ConvSizes, channels_last: bool):
    """EPILOGUE's inputs for a convolution of `sizes`: the kernel's image and filter (NHWC and
    RSCF where `channels_last`), its three operands, and what torch computes."""
    torch.manual_seed(0)
    x, w = torch.randn(sizes.n, sizes.c, sizes.h, sizes.w).half(), torch.randn(sizes.f, sizes.c, sizes.r, sizes.s).half()
    bias, scale = torch.randn(sizes.f), torch.randn(sizes.f)
    residual = torch.randn(sizes.n, sizes.f, sizes.oh, sizes.ow).half()
    images = (x.permute(0, 2, 3, 1).contiguous(), w.permute(2, 3, 1, 0).contiguous()) if channels_last else (x, w)
    product = nn.functional.conv2d(x.float(), w.float(), stride=sizes.stride, padding=sizes.padding) + bias[None, :, None, None]
    expected = torch.relu(product.half().float() * scale[None, :, None, None] + residual.float()).half().float()
    return images, (bias, scale, residual), expected


def _output(sizes: ConvSizes, channels_last: bool):
    shape = (sizes.n, sizes.oh, sizes.ow, sizes.f) if channels_last else (sizes.n, sizes.f, sizes.oh, sizes.ow)
    return torch.zeros(shape).half()


def _off(result, expected, channels_last: bool = False) -> float:
    """The largest difference from torch's, relative to its largest output (`result` NHWC where
    `channels_last`)."""
    result = (result.permute(0, 3, 1, 2) if channels_last else result).float()
    return (result - expected).abs().max().item() / expected.abs().max().item()


def _interpreted(call: str):
    """`call` of this module's, run in Triton's interpreter (the host CPU) in a process of its
    own (the interpreter is chosen before Triton is imported): its JSON result."""
    code = f"import json, sys; sys.path.insert(0, {str(Path(__file__).parent)!r}); import test_triton_conv as t; print(json.dumps(t.{call}))"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env={**os.environ, "TRITON_INTERPRET": "1"})
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def _epilogue_errors() -> list[float]:
    """The kernel with EPILOGUE, NCHW and channels last (writing NHWC), against torch."""
    _, conv = kernel._kernel(EPILOGUE)
    errors = []
    for channels_last, sizes, tiles in ((False, _sizes(16, 24, 9, n=2), ConvTiles(16, 16, 16, 4, 2)),
                                        (True, _sizes(32, 24, 7, stride=2), ConvTiles(16, 16, 16, 4, 2))):
        images, extras, expected = _epilogue_case(sizes, channels_last)
        y = _output(sizes, channels_last)
        conv[grid(sizes, tiles)](*images, *extras, y, **kernel_constants(sizes, tiles, channels_last, out_channels_last=channels_last))
        errors.append(_off(y, expected, channels_last))
    return errors


def test_the_kernel_runs_its_epilogue_before_the_store_and_can_write_channels_last():
    errors = _interpreted("_epilogue_errors()")
    assert len(errors) == 2 and all(e <= 2e-3 for e in errors), errors  # f16 outputs: half an ulp, and a sum's order


def test_an_epilogue_is_triton_lines_and_an_op_the_kernel_does_not_know_is_an_error():
    lines = kernel.epilogue_lines(EPILOGUE)
    assert lines[:3] == ["o0 = tl.load(e0_ptr + offs_n, mask=n_ok, other=0.0)[None, :]",
                         "o1 = tl.load(e1_ptr + offs_n, mask=n_ok, other=0.0)[None, :]", "o2 = tl.load(e2_ptr + out, mask=ok, other=0.0)"]
    assert lines[3] == "r0 = (o0 + acc)" and lines[4] == "r1 = r0.to(tl.float16)"
    assert lines[9] == "r6 = ((r5 > 0.0) | (r5 != r5) | (0.0 != 0.0))"  # ugt: true where either side is NaN, as MLIR's
    assert lines[-1] == "value = r8"
    with pytest.raises(ValueError, match="math.tan"):
        kernel.epilogue_lines(kernel.Epilogue(body=(("f32", "math.tan", "acc"),)))


class Fire(nn.Module):
    """A SqueezeNet fire module: the 3x3 expansion's ReLU goes into a concatenation."""

    def __init__(self):
        super().__init__()
        self.squeeze = nn.Conv2d(32, 16, 1)
        self.e1 = nn.Conv2d(16, 32, 1)
        self.e3 = nn.Conv2d(16, 32, 3, padding=1)

    def forward(self, x):
        s = torch.relu(self.squeeze(x))
        return torch.cat([torch.relu(self.e1(s)), torch.relu(self.e3(s))], 1)


def test_a_kernel_with_its_epilogue_writes_into_a_concatenation_in_place():
    torch.manual_seed(0)
    mlir = schedc.import_torch(Fire().eval().half(), torch.randn(1, 32, 16, 16, dtype=torch.float16))
    result = compile_with_options(mlir, CompileOptions(target="cuda", emit="flow"))
    (function,) = [v for k, v in result.records["triton-conv"].items() if k != "unavailable"]
    (conv,) = function["convolutions"]
    assert conv["epilogue"] == {"ops": 2, "steps": 4, "operands": ["channel"]}  # the bias, the cast and the ReLU
    flow = result.output.decode() if isinstance(result.output, bytes) else result.output
    forward = flow[flow.index("util.func public @forward"):]
    assert not re.findall(r"flow\.dispatch @\S*_dispatch_\d+_elementwise_", forward)
    assert len(re.findall(r"flow\.tensor\.update", forward)) == 2  # both expansions into the concatenation
    stream = compile_with_options(mlir, CompileOptions(target="cuda", emit="stream")).output
    stream = stream.decode() if isinstance(stream, bytes) else stream
    forward = stream[stream.index("@forward"):]
    assert len(re.findall(r"stream\.cmd\.dispatch", forward)) == 4 and "stream.cmd.copy" not in forward  # the kernel's result placed, not copied


def test_without_epilogues_the_kernel_writes_its_sums_and_iree_runs_what_follows(monkeypatch):
    from schedc.decisions import triton_conv as rule

    monkeypatch.setattr(rule, "EPILOGUES", False)
    result = _flow()
    flow = result.output.decode() if isinstance(result.output, bytes) else result.output
    dispatched = re.findall(r"flow\.dispatch @(schedc_conv_\w+)::@conv2d\(.*\) -> (tensor<[^>]*>)", flow)
    assert [t for _, t in dispatched] == ["tensor<1x128x16x16xf16>", "tensor<2x1x256x8x8xf32>"]
    (function,) = [v for k, v in result.records["triton-conv"].items() if k != "unavailable"]
    assert not any("epilogue" in c for c in function["convolutions"])


def _serial_errors() -> list[float]:
    """A split kernel that sums its parts itself (the last of a tile's programs), with EPILOGUE,
    NCHW and channels last, against torch; after each, whether every program counted itself in."""
    _, conv = kernel._kernel(EPILOGUE, serial=True)
    errors = []
    for channels_last, sizes, tiles in ((False, _sizes(64, 16, 5), ConvTiles(16, 16, 16, 4, 2, split=4)),
                                        (True, _sizes(64, 24, 7, n=2), ConvTiles(16, 16, 16, 4, 2, split=2))):
        images, extras, expected = _epilogue_case(sizes, channels_last)
        y = _output(sizes, channels_last)
        counters = torch.zeros(grid(sizes, tiles)[0], dtype=torch.int32)
        parts = torch.full((tiles.split, sizes.n, sizes.f, sizes.oh, sizes.ow), float("nan"))
        conv[grid(sizes, tiles)](*images, *extras, counters, parts, y, **kernel_constants(sizes, tiles, channels_last, out_channels_last=channels_last))
        errors += [_off(y, expected, channels_last), float(set(counters.tolist()) == {tiles.split})]
    return errors


def test_a_split_kernel_sums_its_parts_itself_in_the_last_program_of_each_tile():
    nchw, nchw_counted, nhwc, nhwc_counted = _interpreted("_serial_errors()")
    assert nchw <= 2e-3 and nhwc <= 2e-3 and nchw_counted == nhwc_counted == 1.0, (nchw, nhwc)


@pytest.mark.parametrize("arch", [80, 90])
def test_a_serial_sum_s_ptx_counts_in_with_a_gpu_scope_acquire_release_atomic_after_a_barrier(arch, tmp_path, monkeypatch):
    monkeypatch.setenv("SCHEDC_CACHE_DIR", str(tmp_path))
    sizes, tiles = _sizes(512, 64, 7), ConvTiles(32, 64, 64, 4, 3, split=8)
    compiled = kernel.compile_conv(kernel_constants(sizes, tiles, True), "f16", "f16", tiles.warps, tiles.stages, arch, epilogue=EPILOGUE,
                                   serial=True)
    entry = re.search(r"\.entry (\w+)\(([^)]*)\)", compiled.ptx)
    assert entry.group(2).count(".param") == 2 + 3 + 2 + 1  # image, filter, the epilogue's 3, counters, parts, output
    atomic = re.search(r"@%p\d+ atom\.global\.gpu\.acq_rel\.add\.u32", compiled.ptx)  # one thread's, predicated
    assert atomic is not None and "bar.sync" in compiled.ptx[:atomic.start()] and "bar.sync" in compiled.ptx[atomic.end():]
    assert "ld.global.cg" in compiled.ptx  # the parts read past L1


def _both_layouts_error() -> float:
    """A split kernel summing its parts, with EPILOGUE, writing NCHW and NHWC, against torch."""
    _, conv = kernel._kernel(EPILOGUE, serial=True, both_layouts=True)
    sizes, tiles = _sizes(64, 24, 7, n=2), ConvTiles(16, 16, 16, 4, 2, split=2)
    images, extras, expected = _epilogue_case(sizes, True)
    nchw, nhwc = _output(sizes, False), _output(sizes, True)
    counters, parts = torch.zeros(grid(sizes, tiles)[0], dtype=torch.int32), torch.zeros(tiles.split, sizes.n, sizes.f, sizes.oh, sizes.ow)
    conv[grid(sizes, tiles)](*images, *extras, counters, parts, nchw, nhwc, **kernel_constants(sizes, tiles, True))
    return max(_off(nchw, expected), _off(nhwc, expected, True))


def test_a_kernel_whose_result_a_transpose_and_other_ops_read_writes_it_both_ways():
    assert _interpreted("_both_layouts_error()") <= 2e-3


class Residual(nn.Module):
    """Two of ResNet's basic blocks: the first's output is the second's image and its residual."""

    def __init__(self):
        super().__init__()
        self.convs = nn.ModuleList(nn.Conv2d(64, 64, 3, padding=1, bias=False) for _ in range(4))
        self.norms = nn.ModuleList(nn.BatchNorm2d(64) for _ in range(4))

    def forward(self, x):
        for block in range(2):
            y = torch.relu(self.norms[2 * block](self.convs[2 * block](x)))
            x = torch.relu(self.norms[2 * block + 1](self.convs[2 * block + 1](y)) + x)
        return x


def test_resnet_blocks_are_one_dispatch_a_convolution_between_the_input_s_transpose_and_the_output():
    torch.manual_seed(0)
    mlir = schedc.import_torch(Residual().eval().half(), torch.randn(1, 64, 14, 14, dtype=torch.float16))
    result = compile_with_options(mlir, CompileOptions(target="cuda", emit="flow"))
    flow = result.output.decode() if isinstance(result.output, bytes) else result.output
    forward = flow[flow.index("util.func public @forward"):]
    dispatches = re.findall(r"flow\.dispatch @(\S+?)::@(\S+?)\(", forward)
    assert len(dispatches) == 5 and dispatches[0][1].endswith("transpose_64x196_f16")  # the input, channels last
    assert all(executable.startswith("schedc_conv_") for executable, _ in dispatches[1:])
    (function,) = [v for k, v in result.records["triton-conv"].items() if k != "unavailable"]
    layouts = [c.get("output_layout", "nchw") for c in function["convolutions"]]
    assert layouts == ["nhwc", "nchw and nhwc", "nhwc", "nchw"]  # the first block's output: the second's image and residual
    assert all(c["epilogue"]["operands"].count("tensor") == (i % 2) for i, c in enumerate(function["convolutions"]))  # residuals


_CHAIN = """
util.func public @chain(%x: tensor<1x16x8x8xf16>, %w: tensor<16x16x3x3xf16>, %v: tensor<16xf32>, %r: tensor<1x16x6x6xf32>)
    -> (tensor<1x16x6x6xf32>, tensor<1x16x6x6xf32>) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x16x6x6xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<1x16x6x6xf32>) -> tensor<1x16x6x6xf32>
  %c = linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>} ins(%x, %w : tensor<1x16x8x8xf16>, tensor<16x16x3x3xf16>) outs(%f : tensor<1x16x6x6xf32>) -> tensor<1x16x6x6xf32>
  %a = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d1)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%c, %v, %r : tensor<1x16x6x6xf32>, tensor<16xf32>, tensor<1x16x6x6xf32>) outs(%e : tensor<1x16x6x6xf32>) {
  ^bb0(%in: f32, %b: f32, %s: f32, %out: f32):
    %1 = arith.mulf %in, %b : f32
    %2 = arith.addf %1, %s : f32
    linalg.yield %2 : f32
  } -> tensor<1x16x6x6xf32>
  %t = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%a : tensor<1x16x6x6xf32>) outs(%e : tensor<1x16x6x6xf32>) {
  ^bb0(%in: f32, %out: f32):
    %1 = math.tanh %in : f32
    linalg.yield %1 : f32
  } -> tensor<1x16x6x6xf32>
  util.return %t, %a : tensor<1x16x6x6xf32>, tensor<1x16x6x6xf32>
}
"""


def test_an_epilogue_takes_vectors_and_residuals_and_stops_at_a_second_reader_or_an_op_the_kernel_does_not_know():
    from iree.compiler import ir

    from schedc.ir.iree import ops_named
    from schedc.ir.mlirio import parse_module
    from schedc.ir.triton_conv import epilogue_chain

    with ir.Context() as context:
        module = parse_module(_CHAIN, "chain.mlir", context)
        (conv,) = ops_named(module, "linalg.conv_2d_nchw_fchw")
        epilogue, values, replaced = epilogue_chain(conv)
        # %a, read by the tanh and returned, ends the chain: its value is the dispatch's
        assert [op.name for op in replaced] == ["linalg.conv_2d_nchw_fchw", "linalg.generic"]
        assert epilogue.operands == (("channel", "f32"), ("tensor", "f32"))
        assert epilogue.body == (("f32", "arith.mulf", "acc", "o0"), ("f32", "arith.addf", "r0", "o1"))
        assert [str(v.type) for v in values] == ["tensor<16xf32>", "tensor<1x16x6x6xf32>"]
        module_text = _CHAIN.replace("util.return %t, %a", "util.return %t, %t")  # %a read by the tanh alone
        module = parse_module(module_text, "chain.mlir", context)
        (conv,) = ops_named(module, "linalg.conv_2d_nchw_fchw")
        _, _, replaced = epilogue_chain(conv)
        assert len(replaced) == 2  # math.tanh is not an op the kernel runs
