"""Matrix-vector configs (schedc.decisions.kernel_config.matvec): the form read from a signature, the
configs' tiles, the ranked choice, and that IREE compiles the choice for cuda."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import schedc.decisions.kernel_config as kc
from schedc.decisions.kernel_config import matvec as mc
from schedc.decisions.kernel_config import CHIPS, KernelConfig, KernelSignature, candidate_configs, heuristic_config

ROWS_MAPS = ("affine_map<(d0, d1, d2) -> (d0, d2)>", "affine_map<(d0, d1, d2) -> (d2, d1)>", "affine_map<(d0, d1, d2) -> (d0, d1)>")
LINEAR_MAPS = ("affine_map<(d0, d1, d2) -> (d0, d2)>", "affine_map<(d0, d1, d2) -> (d1, d2)>", "affine_map<(d0, d1, d2) -> (d0, d1)>")


def times_matrix(n: int, k: int, dtype: str = "f16") -> KernelSignature:
    """x @ W with W stored K x N (GPT-2's Conv1D)."""
    return KernelSignature("kn", "matmul", "linalg.matmul", (1, n, k), ("parallel", "parallel", "reduction"), ROWS_MAPS,
                           ((1, k), (k, n), (1, n)), dtype, ("linalg.fill",), result_type="f32" if dtype == "f16" else "")


def linear(n: int, k: int, dtype: str = "f16") -> KernelSignature:
    """x @ W.T with W stored N x K (nn.Linear)."""
    return KernelSignature("nk", "matmul", "linalg.matmul", (1, n, k), ("parallel", "parallel", "reduction"), LINEAR_MAPS,
                           ((1, k), (n, k), (1, n)), dtype, ("linalg.fill",), result_type="f32" if dtype == "f16" else "")


def values_over_cache(heads: int, width: int, positions: int) -> KernelSignature:
    """One token's P @ V: (heads, 1, positions) x (heads, positions, width)."""
    maps = ("affine_map<(d0, d1, d2, d3) -> (d0, d1, d3)>", "affine_map<(d0, d1, d2, d3) -> (d0, d3, d2)>",
            "affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>")
    return KernelSignature("pv", "batch_matmul", "linalg.batch_matmul", (heads, 1, width, positions), ("parallel",) * 3 + ("reduction",),
                           maps, ((heads, 1, positions), (heads, positions, width), (heads, 1, width)), "f16", ("linalg.fill",), result_type="f32")


def test_the_form_says_which_loop_is_the_output_and_how_the_matrix_is_stored():
    assert mc.MatvecForm.of(times_matrix(2304, 768)) == mc.MatvecForm((), (0,), 1, 2, 1, False)
    assert mc.MatvecForm.of(linear(2304, 768)) == mc.MatvecForm((), (0,), 1, 2, 1, True)
    assert mc.MatvecForm.of(values_over_cache(12, 64, 512)) == mc.MatvecForm((0,), (1,), 2, 3, 1, False)
    assert mc.MatvecForm.of(kc.KernelSignature("m", "matmul", "linalg.matmul", (8, 64, 64), ("parallel", "parallel", "reduction"),
                                                ROWS_MAPS, ((8, 64), (64, 64), (8, 64)), "f32")) is None  # 8 rows: no matvec


def test_a_config_spreads_lanes_along_the_output_and_subgroups_along_k():
    sig = times_matrix(2304, 768)
    config = mc.make_config(sig, mc.MatvecForm.of(sig), out_lanes=32, out_thread=2, out_groups=1, k_groups=8, k_thread=8)
    assert (config.workgroup, config.reduction, config.thread) == ((1, 64, 0), (0, 0, 64), (0, 2, 8))
    assert (config.lane_basis, config.subgroup_basis, config.workgroup_size) == ((1, 32, 1), (1, 1, 8), 256)
    assert config.attribute() == (
        "#iree_codegen.compilation_info<lowering_config = #iree_gpu.lowering_config<{lane_basis = [[1, 32, 1], [0, 1, 2]], "
        "partial_reduction = [0, 0, 64], subgroup_basis = [[1, 1, 8], [0, 1, 2]], thread = [0, 2, 8], workgroup = [1, 64, 0]}>, "
        "translation_info = #iree_codegen.translation_info<pipeline = #iree_gpu.pipeline<VectorDistribute> "
        "workgroup_size = [256, 1, 1] subgroup_size = 32>>")
    assert KernelConfig.from_json(config.to_json()) == config


def test_a_config_whose_lanes_are_not_one_subgroup_is_rejected():
    with pytest.raises(ValueError, match="not one subgroup"):
        KernelConfig((1, 64, 0), (0, 0, 64), (0, 2, 8), lane_basis=(1, 16, 1), subgroup_basis=(1, 1, 8))


@settings(max_examples=40, deadline=None)
@given(st.sampled_from([64, 768, 1000, 2304, 50257]), st.sampled_from([64, 512, 768, 3072]), st.booleans(), st.sampled_from(["f16", "f32"]))
def test_every_grid_config_divides_the_loops_and_fits_a_workgroup(n, k, k_inner, dtype):
    sig = (linear if k_inner else times_matrix)(n, k, dtype)
    form = mc.MatvecForm.of(sig)
    for config in mc.grid(sig, form):
        assert n % config.workgroup[form.out] == 0 and k % config.reduction[form.k] == 0
        assert math.prod(config.lane_basis) == 32 and config.workgroup_size <= 1024
        assert config.thread[form.out if not k_inner else form.k] * {"f16": 2, "f32": 4}[dtype] <= mc.LOAD_BYTES


def test_the_choice_is_the_ranked_shape_whose_workgroups_come_nearest_the_target():
    shapes = ((8, 8, 2, 4, 8), (4, 2, 1, 8, 8), (8, 2, 1, 4, 8))  # 128, 8 and 16 outputs a workgroup
    few, many = times_matrix(768, 3072), times_matrix(16384, 4096)
    assert mc.workgroups(few, mc.MatvecForm.of(few), mc.heuristic(few, shapes, target=96)) == 96  # of 6, 96 and 48
    assert mc.shape_of(mc.MatvecForm.of(many), mc.heuristic(many, shapes, target=96)) == (8, 8, 2, 4, 8)  # of 128, 2048 and 1024
    assert mc.shape_of(mc.MatvecForm.of(many), mc.heuristic(many, shapes, target=1024)) == (8, 2, 1, 4, 8)
    assert mc.heuristic(linear(2304, 768), shapes[:0]) is None  # no shapes: IREE's own config


def test_the_fitted_choice_gives_gpt2_s_down_projection_eight_outputs_a_workgroup():
    sig = times_matrix(768, 3072)
    config = heuristic_config(sig)
    assert (config.workgroup, config.lane_basis, config.subgroup_basis) == ((1, 8, 0), (1, 4, 8), (1, 1, 8))


def test_candidates_come_in_rank_order():
    sig = times_matrix(2304, 768)
    ranked = [mc.shape_of(mc.MatvecForm.of(sig), c) for c in candidate_configs(sig, limit=3)]
    expected = [s for s in mc.RANKED_SHAPES.get(("kn", "f16"), ()) if mc.make_config(sig, mc.MatvecForm.of(sig), *s)][:3]
    assert ranked[: len(expected)] == expected


def test_matvecs_on_other_chips_keep_iree_s_config():
    assert heuristic_config(times_matrix(2304, 768), CHIPS["rocm"]) is None
