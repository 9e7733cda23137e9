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


def folded(sig: KernelSignature) -> KernelSignature:
    """The signature IREE gives the same product once the matmul is a linalg.generic
    (`--iree-opt-generalize-matmul`): the loop of range 1 folded away."""
    keep = [i for i, size in enumerate(sig.loops) if size != 1]
    names = {old: new for new, old in enumerate(keep)}
    maps = []
    for text in sig.indexing_maps:
        terms = kc.map_terms(text)
        results = ", ".join(f"d{names[sums[0][0]]}" for sums in terms if sums[0][0] in names)
        maps.append(f"affine_map<({', '.join(f'd{i}' for i in range(len(keep)))}) -> ({results})>")
    return KernelSignature(sig.key, "matmul_like", "linalg.generic", tuple(sig.loops[i] for i in keep),
                           tuple(sig.iterators[i] for i in keep), tuple(maps), sig.operand_shapes, sig.element_type, sig.fused,
                           result_type=sig.result_type)


@pytest.mark.parametrize("make", [lambda: times_matrix(768, 3072), lambda: linear(2304, 768), lambda: values_over_cache(12, 64, 512)])
def test_a_product_with_its_unit_loop_folded_away_gets_the_same_config(make):
    named = make()
    generic = folded(named)
    form = mc.MatvecForm.of(generic)
    assert form is not None and form.ones == () and kc.is_matvec(generic)
    keep = [i for i, size in enumerate(named.loops) if size != 1]
    whole, rank_reduced = heuristic_config(named), heuristic_config(generic)
    assert rank_reduced.workgroup == tuple(whole.workgroup[i] for i in keep)
    assert (rank_reduced.lane_basis, rank_reduced.subgroup_basis) == (tuple(whole.lane_basis[i] for i in keep),
                                                                       tuple(whole.subgroup_basis[i] for i in keep))


def test_a_dot_product_or_a_row_sum_is_no_matvec():
    dot = KernelSignature("d", "matmul_like", "linalg.generic", (768,), ("reduction",),
                          ("affine_map<(d0) -> (d0)>", "affine_map<(d0) -> (d0)>", "affine_map<(d0) -> ()>"), ((768,), (768,), ()), "f32")
    assert kc.vector_roles(dot) is None and not kc.is_matvec(dot)
    outer = KernelSignature("o", "matmul_like", "linalg.generic", (16, 768), ("parallel", "reduction"),
                            ("affine_map<(d0, d1) -> (d0, d1)>", "affine_map<(d0, d1) -> (d0, d1)>", "affine_map<(d0, d1) -> (d0)>"),
                            ((16, 768), (16, 768), (16,)), "f32")
    assert kc.vector_roles(outer) is None  # both operands index the output loop: a batch of dot products


LAYER_NORM_THEN_LINEAR = """
func.func @f(%x: tensor<1x256xf16>, %g: tensor<256xf16>, %w: tensor<256x512xf16>) -> tensor<1x512xf16> {
  %zero = arith.constant 0.0 : f16
  %n = arith.constant 256.0 : f16
  %e1 = tensor.empty() : tensor<1xf16>
  %f1 = linalg.fill ins(%zero : f16) outs(%e1 : tensor<1xf16>) -> tensor<1xf16>
  %sum = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>],
                         iterator_types = ["parallel", "reduction"]} ins(%x : tensor<1x256xf16>) outs(%f1 : tensor<1xf16>) {
  ^bb0(%a: f16, %b: f16):
    %s = arith.addf %a, %b : f16
    linalg.yield %s : f16
  } -> tensor<1xf16>
  %e2 = tensor.empty() : tensor<1x256xf16>
  %y = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d1)>,
                                        affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]}
      ins(%x, %sum, %g : tensor<1x256xf16>, tensor<1xf16>, tensor<256xf16>) outs(%e2 : tensor<1x256xf16>) {
  ^bb0(%a: f16, %s: f16, %c: f16, %o: f16):
    %m = arith.divf %s, %n : f16
    %d = arith.subf %a, %m : f16
    %r = arith.mulf %d, %c : f16
    linalg.yield %r : f16
  } -> tensor<1x256xf16>
  %e3 = tensor.empty() : tensor<1x512xf16>
  %f3 = linalg.fill ins(%zero : f16) outs(%e3 : tensor<1x512xf16>) -> tensor<1x512xf16>
  %z = linalg.matmul ins(%y, %w : tensor<1x256xf16>, tensor<256x512xf16>) outs(%f3 : tensor<1x512xf16>) -> tensor<1x512xf16>
  return %z : tensor<1x512xf16>
}"""


def test_a_normalisation_fused_into_the_projection_after_it_keeps_the_matvec_config():
    from schedc.compiler.driver import compile_with_options
    from schedc.options import CompileOptions

    from schedc.targets import GENERATION_FUSION

    result = compile_with_options(LAYER_NORM_THEN_LINEAR, CompileOptions(target="cuda", emit="hal", iree_flags=GENERATION_FUSION))
    kernels = result.records["kernel-config"]["module"]["kernels"]
    products = [k for k in kernels if k["kind"] == "matmul_like"]
    assert len(products) == 1 and products[0]["source"] == "heuristic" and products[0]["config"].startswith("vector"), kernels
    assert "hal.executable.binary" in result.output
