"""schedc's CPU kernels in the target's widest vectors: AVX-512 (a 6 x 32 tile) where the target
CPU has it, AVX2 (6 x 16) elsewhere, each against torch on the tiles' edges."""

from __future__ import annotations

import re
import shutil
import subprocess

import pytest
import torch
from torch import nn

import schedc
from schedc.compiler.driver import compile_with_options
from schedc.kernels import kernel_isa, object_path
from schedc.options import CompileOptions
from schedc.report.build import cpu_plan_lines
from schedc.targets import host_cpu_features
from schedc.tune.bench import relative_error


def test_the_kernels_take_avx512_where_the_target_cpu_has_it():
    assert kernel_isa("", {"avx2", "fma", "avx512f"}) == "avx512" and kernel_isa("host", {"avx2", "avx512f"}) == "avx512"
    assert kernel_isa("", {"avx2", "fma"}) == "avx2"  # a hypervisor hiding AVX-512: host_cpu says x86-64-v3
    assert kernel_isa("x86-64-v4", {"avx2"}) == "avx512" and kernel_isa("x86-64-v3", {"avx512f"}) == "avx2"


def test_each_width_is_an_object_of_its_own(tmp_path, monkeypatch):
    monkeypatch.setenv("SCHEDC_CACHE_DIR", str(tmp_path))
    narrow, wide = object_path(isa="avx2"), object_path(isa="avx512")
    assert narrow != wide and narrow.name.startswith("gemm_x86_64-avx2-") and wide.name.startswith("gemm_x86_64-avx512-")
    objdump = shutil.which("objdump")
    if objdump is None:
        pytest.skip("no objdump to read the objects' instructions")
    code = {isa: subprocess.run([objdump, "-d", str(path)], capture_output=True, text=True, check=True).stdout
            for isa, path in (("avx2", narrow), ("avx512", wide))}
    assert re.search(r"vfmadd\w+ps\s.*%zmm", code["avx512"]) and "%zmm" not in code["avx2"]


class Edges(nn.Module):
    """Every edge of the tiles in both widths: output channels of one AVX-512 vector or fewer
    (16, and 40's last 8), a 3-channel strided first layer, a matmul of 7 rows (a strip of 6 and
    one repeated row), 40 and 20 columns (a last panel of one vector), and 300 deep (over both
    widths' K slices)."""

    def __init__(self):
        super().__init__()
        self.stem = nn.Conv2d(3, 16, 3, stride=2, padding=1)
        self.conv = nn.Conv2d(16, 40, 3, padding=1)
        self.wide = nn.Linear(300, 40)
        self.narrow = nn.Linear(40, 20)

    def forward(self, image, tokens):
        x = self.conv(torch.relu(self.stem(image)))
        return x, self.narrow(torch.relu(self.wide(tokens)))


def _widths() -> list:
    """The target CPUs whose kernels this host can run: x86-64-v3 (AVX2), x86-64-v4 (AVX-512)."""
    features = host_cpu_features()
    return [pytest.param(cpu, marks=pytest.mark.skipif(flag not in features, reason=f"the host lacks {flag}"))
            for cpu, flag in (("x86-64-v3", "avx2"), ("x86-64-v4", "avx512f"))]


@pytest.mark.parametrize("mode", ["plain", "channels-last"])
@pytest.mark.parametrize("cpu", _widths())
def test_both_widths_match_torch_on_every_edge(cpu, mode, tmp_path):
    torch.manual_seed(0)
    model = Edges().eval()
    args = (torch.randn(1, 3, 19, 17), torch.randn(1, 7, 300))
    with torch.no_grad():
        expected = [t.numpy() for t in model(*args)]
    mlir = schedc.import_torch(model, *args)
    options = dict(target="llvm-cpu", cpu=cpu, passes=f"cpu-config{{layout=gemm mode={mode}}}")
    result = compile_with_options(mlir, CompileOptions(emit="flow", **options))
    plan = result.records["cpu-config"]["module"]
    isa = {"x86-64-v3": "avx2", "x86-64-v4": "avx512"}[cpu]
    assert plan["kernel_isa"] == isa and [op["layout"] for op in plan["ops"]] == ["gemm"] * 4
    assert f"  schedc's kernels (gemm) in {'AVX-512' if isa == 'avx512' else 'AVX2'}" in cpu_plan_lines(plan)
    text = result.output if isinstance(result.output, str) else result.output.decode()
    assert re.search(rf"gemm_x86_64-{isa}-[0-9a-f]+\.o", text)
    path = tmp_path / "m.vmfb"
    path.write_bytes(schedc.compile(mlir, **options))
    outputs = schedc.load(str(path)).forward(*[a.numpy() for a in args])
    for got, want in zip(outputs, expected):
        assert relative_error(got, want) <= 1e-5
