"""Row-reduction configs (schedc.decisions.kernel_config.rows): which dispatches get one, the lane
tile and subgroups per row, IREE's spelling of the configs, and the cuda compile that writes them."""

from __future__ import annotations

import json

import pytest
import torch

import schedc
from schedc.compiler.driver import compile_with_options
from schedc.decisions.kernel_config.rows import RowConfig, RowDispatch, lowering_configs, row_config, translation_info
from schedc.options import CompileOptions

SOFTMAX_OPS = ("reduction", "reduction", "elementwise")  # the row's max, the sum of exponentials, the division


def softmax(row: int, bits: int = 16, rows: int = 197, pipeline: str = "TileAndFuse") -> RowDispatch:
    return RowDispatch((3, rows, row), SOFTMAX_OPS, 1, bits, pipeline)


@pytest.mark.parametrize("row, bits, thread, subgroups", [
    (197, 16, 8, 1),  # ViT's keys: one step of 256, the last 59 lanes' elements masked
    (197, 32, 4, 1),  # f32: 16 bytes a lane, two steps
    (50, 16, 2, 1),  # short rows: no more lanes' elements than the row fills
    (77, 32, 4, 1),
    (1000, 16, 8, 1),
    (5003, 16, 8, 4),  # long rows: a subgroup per 1,024 elements, as IREE's own, at most 4
    (2049, 32, 4, 2),
])
def test_a_row_gets_16_bytes_a_lane_or_what_fills_it_and_a_subgroup_per_1024_elements(row, bits, thread, subgroups):
    assert row_config(softmax(row, bits)) == RowConfig(thread, subgroups)


def test_iree_s_own_subgroup_configs_short_rows_and_dispatches_without_reductions_stay():
    assert row_config(softmax(256, pipeline="VectorDistribute")) is None  # aligned rows: IREE already reduces by subgroup
    assert row_config(softmax(31)) is None  # most of a subgroup's lanes would be masked
    assert row_config(RowDispatch((64, 197), ("elementwise",), 0, 16, "TileAndFuse")) is None


def test_forced_lane_tiles_and_subgroups_are_for_measuring():
    assert row_config(softmax(197), thread=2, subgroups=4) == RowConfig(2, 4)
    assert RowConfig(2, 4).step == 256 and RowConfig(2, 4).workgroup_size == 128


def test_the_configs_are_spelled_as_iree_spells_its_own_for_aligned_rows():
    """IREE 3.13's configs of a softmax over 256 f16 keys (--compile-to=executable-configurations)."""
    dispatch = softmax(256)
    configs = lowering_configs(dispatch, RowConfig(8, 1))
    common = "lane_basis = [[1, 1, 32], [0, 1, 2]], subgroup_basis = [[1, 1, 1], [0, 1, 2]], thread = [0, 0, 8]"
    assert configs == [
        f"#iree_gpu.lowering_config<{{{common}, partial_reduction = [0, 0, 256]}}>",
        f"#iree_gpu.lowering_config<{{{common}, partial_reduction = [0, 0, 256], workgroup = [1, 1, 0]}}>",
        f"#iree_gpu.lowering_config<{{{common}, serial = [0, 0, 256]}}>",
    ]
    assert translation_info(RowConfig(8, 4)) == ("#iree_codegen.translation_info<pipeline = #iree_gpu.pipeline<VectorDistribute> "
                                                 "workgroup_size = [128, 1, 1] subgroup_size = 32>")


class Softmax(torch.nn.Module):
    def forward(self, x):
        return torch.softmax(x, dim=-1)


NAMED = "reduction-config,memory-order,arena-plan"  # opt-in until bench/rows.py has run on a GPU


def test_the_cuda_compile_gives_a_softmax_over_197_keys_a_subgroup_per_row():
    mlir = schedc.import_torch(Softmax(), torch.randn(3, 197, 197, dtype=torch.float16))
    result = compile_with_options(mlir, CompileOptions(target="cuda", passes=NAMED))
    (configured,) = result.records["reduction-config"]["module"]["configured"]
    assert configured["loops"] == [3, 197, 197] and configured["config"] == "row lanes 32 x 8, 1 subgroup, step 256"
    assert result.output  # and IREE generates code for it

    aligned = schedc.import_torch(Softmax(), torch.randn(3, 64, 256, dtype=torch.float16))
    assert compile_with_options(aligned, CompileOptions(target="cuda", passes=NAMED)).records["reduction-config"]["module"]["configured"] == []
    default = compile_with_options(mlir, CompileOptions(target="cuda")).records
    assert default["reduction-config"]["module"]["configured"] == [configured]  # in every cuda compile
    untuned = compile_with_options(mlir, CompileOptions(target="cuda", tuning=False)).records
    assert "reduction-config" not in untuned  # --no-tuning: IREE's own configs
    on_cpu = compile_with_options(mlir, CompileOptions(target="llvm-cpu", passes=NAMED)).records
    assert "reduction-config" not in on_cpu  # GPU configs only: the pass leaves llvm-cpu's executables


def test_the_report_and_summary_say_which_rows_were_configured(tmp_path, capsys):
    mlir = schedc.import_torch(Softmax(), torch.randn(3, 197, 197, dtype=torch.float16))
    report = tmp_path / "report.json"
    schedc.compile(mlir, target="cuda", passes=NAMED, report=str(report), summary=True)
    data = json.loads(report.read_text())
    assert list(data["functions"]) == ["forward"]  # the module-wide record is not a function
    assert [c["loops"] for c in data["reduction_config"]["configured"]] == [[3, 197, 197]]
    assert "reduction-config: 1 row reduction given a subgroup per row (row lanes 32 x 8, 1 subgroup, step 256)" in capsys.readouterr().out
