"""Kernel configs without MLIR: candidates, the heuristic, the database and the fallback order."""

from __future__ import annotations

import dataclasses
import json
import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from schedc.errors import SchedcError
from schedc.decisions.kernel_config import (
    CHIPS,
    KernelConfig,
    KernelDatabase,
    KernelSignature,
    TunedEntry,
    candidate_configs,
    choose_config,
    contraction_roles,
    forward_window_convolution,
    heuristic_config,
    igemm_channels_last,
    igemm_form,
    partial_tiles,
    workgroup_count,
)
from schedc.tune.prepare import winners
import schedc.decisions.kernel_config as kc

MATMUL_MAPS = ("affine_map<(d0, d1, d2) -> (d0, d2)>", "affine_map<(d0, d1, d2) -> (d1, d2)>", "affine_map<(d0, d1, d2) -> (d0, d1)>")


def matmul(m: int, n: int, k: int, key: str = "k") -> KernelSignature:
    return KernelSignature(key, "matmul", "linalg.matmul", (m, n, k), ("parallel", "parallel", "reduction"), MATMUL_MAPS,
                           ((m, k), (n, k), (m, n)), "f32", ("linalg.fill",), f"matmul_{m}x{n}x{k}_f32")


def batch_matmul(b: int, m: int, n: int, k: int) -> KernelSignature:
    maps = ("affine_map<(d0, d1, d2, d3) -> (d0, d1, d3)>", "affine_map<(d0, d1, d2, d3) -> (d0, d3, d2)>",
            "affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>")
    return KernelSignature("b", "batch_matmul", "linalg.batch_matmul", (b, m, n, k), ("parallel",) * 3 + ("reduction",), maps,
                           ((b, m, k), (b, k, n), (b, m, n)), "f32", ("linalg.fill",))


def conv1x1(cout: int, pixels: int, cin: int) -> KernelSignature:
    maps = ("affine_map<(d0, d1, d2) -> (d2, d1)>", "affine_map<(d0, d1, d2) -> (d0, d2)>", "affine_map<(d0, d1, d2) -> (d0, d1)>")
    return KernelSignature("c", "matmul_like", "linalg.generic", (cout, pixels, cin), ("parallel", "parallel", "reduction"), maps,
                           ((cin, pixels), (cout, cin), (cout, pixels)), "f32")


def test_config_attribute_is_iree_compilation_info():
    config = KernelConfig((16, 32, 0), (0, 0, 32), (1, 2, 0), (0, 1))
    assert config.workgroup_size == 16 * 16
    assert config.attribute() == (
        "#iree_codegen.compilation_info<lowering_config = #iree_gpu.lowering_config<{workgroup = [16, 32, 0], "
        "reduction = [0, 0, 32], thread = [1, 2, 0], promote_operands = [0, 1]}>, translation_info = "
        "#iree_codegen.translation_info<pipeline = #iree_gpu.pipeline<TileAndFuse> workgroup_size = [256, 1, 1] subgroup_size = 32>>"
    )


def test_config_rejects_a_thread_tile_that_does_not_divide():
    with pytest.raises(ValueError, match="does not divide"):
        KernelConfig((16, 24, 0), (0, 0, 32), (1, 16, 0))


@settings(max_examples=60, deadline=None)
@given(st.sampled_from([2, 4, 16, 32, 64, 100, 256, 3136]), st.sampled_from([8, 32, 96, 256, 768, 1024]), st.sampled_from([3, 16, 64, 128, 1024]))
def test_candidates_fit_the_loops_and_the_gpu(m, n, k):  # one row: test_kernel_config_matvec.py
    sig = matmul(m, n, k)
    for config in candidate_configs(sig, limit=50):
        assert config.workgroup_size % 32 == 0 and config.workgroup_size <= 1024
        for loop in sig.parallel_loops:
            # A tile divides its loop, or the loop takes partial tiles (an odd 55, a 100).
            assert sig.loops[loop] % config.workgroup[loop] == 0 or partial_tiles(sig.loops[loop])
            assert config.workgroup[loop] <= max(sig.loops[loop], 1) or sig.loops[loop] % config.workgroup[loop] == 0
            assert config.workgroup[loop] % config.thread[loop] == 0
        assert config.workgroup[2] == 0 and config.thread[2] == 0  # the reduction loop is not distributed
        assert 1 <= config.reduction[2] <= k and k % config.reduction[2] == 0


def test_candidates_vary_the_tile_and_come_ranked():
    sig = matmul(64, 256, 1024)
    candidates = candidate_configs(sig, limit=12)
    assert len(candidates) == 12
    assert len({(c.workgroup, c.thread) for c in candidates}) >= 8  # tile and thread shapes first
    assert {c.reduction[2] for c in candidates} >= {16, 32, 64}  # then K steps of the best shapes
    assert len(set(candidates)) == len(candidates)


def test_heuristic_fills_the_sms_where_iree_leaves_them_idle():
    # IREE's own tile for this shape is [32, 128]: 4 workgroups on 132 SMs.
    sig = matmul(64, 256, 1024)
    config = heuristic_config(sig, CHIPS["cuda"])
    assert workgroup_count(sig, config) >= 32
    assert config.promote == (0, 1)
    assert config.reduction[2] in (16, 32, 64)


def test_heuristic_configures_only_tiled_kinds():
    reduction = KernelSignature("r", "reduction", "linalg.generic", (32, 128), ("parallel", "reduction"), (), ((32, 128),), "f32")
    assert heuristic_config(reduction) is None
    assert heuristic_config(conv1x1(32, 3136, 32)) is not None


def test_a_batch_1_linear_layer_gets_a_matvec_config_not_simt_tiles():
    # SIMT tiles ran ShuffleNet's classifier in 50.1 us against IREE's warp reduction's 4.2.
    assert heuristic_config(matmul(1, 1000, 1024)).vector_distribute
    assert heuristic_config(matmul(1000, 1, 1024)).vector_distribute
    assert not heuristic_config(matmul(64, 1000, 1024)).vector_distribute


def test_heuristic_leaves_chained_contractions_to_iree():
    # split-concat's partial sums, which IREE fuses into one dispatch: TileAndFuse failed to
    # compile the heuristic's configs there (DARTS on sm_80), so IREE's own config is kept.
    assert heuristic_config(dataclasses.replace(conv1x1(32, 1024, 32), chained=True)) is None


def test_choose_config_prefers_database_then_heuristic_then_iree():
    sig = matmul(32, 384, 128, key="linear")
    tuned = KernelConfig((16, 32, 0), (0, 0, 32), (1, 2, 0), (0, 1))
    db = KernelDatabase("h200", "cuda", "sm_80")
    db.merge(TunedEntry(sig, tuned, 1.25, 70.0))
    assert choose_config(sig, db) == choose_config(sig, db, heuristic=False)
    assert choose_config(sig, db).config == tuned and choose_config(sig, db).source == "database"
    other = matmul(32, 384, 256, key="other")
    assert choose_config(other, db).source == "heuristic"
    assert choose_config(other, db, heuristic=False).source == "iree"
    assert choose_config(other, db, heuristic=False).config is None
    # A measured "IREE's own is fastest" is a database answer, and no config is written.
    db.merge(TunedEntry(other, None, 3.0, 3.0))
    assert choose_config(other, db).source == "database" and choose_config(other, db).config is None


def test_a_dispatch_of_a_measured_structure_takes_its_config():
    """A dispatch whose body differs from a measured one's only outside the root op (its
    epilogue reads a bias from a binding where the measured one had it inlined: weights from
    a parameter archive) takes that entry's config; another shape does not."""
    sig = matmul(32, 384, 128, key="inlined-bias")
    tuned = KernelConfig((16, 32, 0), (0, 0, 32), (1, 2, 0), (0, 1))
    db = KernelDatabase("h200", "cuda", "sm_80")
    db.merge(TunedEntry(sig, tuned, 1.25, 70.0))
    bound = dataclasses.replace(sig, key="bias-from-a-binding")
    assert choose_config(bound, db).config == tuned and choose_config(bound, db).source == "database"
    other = dataclasses.replace(matmul(32, 384, 256), key="bias-from-a-binding")
    assert choose_config(other, db).source != "database"


def test_a_database_config_past_the_chips_shared_memory_is_an_error():
    """A database's config is the chip's to run: one whose promoted tiles need more shared
    memory than the chip has is refused (IREE would compile it and fail at launch)."""
    sig = matmul(1024, 1024, 1024, key="big")
    huge = KernelConfig((256, 256, 0), (0, 0, 512), (8, 8, 0), (0, 1))
    db = KernelDatabase("h200", "cuda", "sm_80", path="db.json")
    db.merge(TunedEntry(sig, huge, 1.0, 2.0))
    with pytest.raises(SchedcError, match="db.json: the config for .* bytes of shared memory"):
        choose_config(sig, db)


def test_database_round_trip_and_merge_keeps_the_faster(tmp_path):
    sig = matmul(64, 768, 256, key="a")
    db = KernelDatabase("h200", "cuda", "sm_80")
    slow = TunedEntry(sig, KernelConfig((32, 32, 0), (0, 0, 64), (2, 2, 0), (0, 1)), 1.8, 75.0, 13)
    fast = TunedEntry(sig, KernelConfig((16, 32, 0), (0, 0, 64), (1, 2, 0), (0, 1)), 0.7, 75.0, 13)
    assert db.merge(slow) and db.merge(fast) and not db.merge(slow)
    path = tmp_path / "db.json"
    db.save(path)
    loaded = KernelDatabase.load(path)
    assert loaded.entries == db.entries
    assert (loaded.chip, loaded.target, loaded.arch) == ("h200", "cuda", "sm_80")


def test_database_errors_name_the_file(tmp_path):
    with pytest.raises(SchedcError, match="no such kernel database"):
        KernelDatabase.load(tmp_path / "missing.json")
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    with pytest.raises(SchedcError, match="bad.json: not a kernel database"):
        KernelDatabase.load(bad)
    bad.write_text(json.dumps({"format": 1, "chip": "x", "target": "cuda", "arch": "sm_80", "entries": [{"signature": {}}]}))
    with pytest.raises(SchedcError, match="malformed kernel database entry"):
        KernelDatabase.load(bad)


def test_builtin_database_loads():
    from schedc.decisions.kernel_config import BUILTIN_DATABASES, default_database

    loaded = []
    for path in BUILTIN_DATABASES.glob("*.json"):
        if path.name.startswith("cpu-"):
            continue  # CPU op times: test_cpu_config.py
        db = KernelDatabase.load(path)
        assert db.entries and all(math.isfinite(e.time_us) for e in db.entries.values())
        loaded.append(path.name)
    assert "cuda-h200-sm_80.json" in loaded  # the folder the package ships (it moved once unnoticed)
    assert default_database("cuda", "sm_80") is not None


def _kernel(configs):
    return {"name": "k000", "signature": matmul(64, 256, 1024, key="w").to_json(), "functions": [f"c{i}" for i in range(len(configs))],
            "configs": [c.to_json() if c else None for c in configs]}


def test_winner_is_the_fastest_config_whose_outputs_match():
    a = KernelConfig((16, 16, 0), (0, 0, 64), (1, 1, 0), (0, 1))
    b = KernelConfig((16, 32, 0), (0, 0, 64), (1, 2, 0), (0, 1))
    c = KernelConfig((32, 32, 0), (0, 0, 16), (2, 2, 0), (0, 1))
    manifest = {"kernels": [_kernel([None, a, b, c])]}
    results = {"k000": [
        {"function": "c0", "time_us": 289.0, "error": 0.0},
        {"function": "c1", "time_us": 9.4, "error": 3e-7},
        {"function": "c2", "time_us": 5.0, "error": 0.5},  # fastest, but wrong: never kept
        {"function": "c3", "time_us": None, "error": None, "failure": "launch failed"},
    ]}
    [entry] = winners(manifest, results)
    assert entry.config == a and entry.time_us == 9.4 and entry.iree_time_us == 289.0 and entry.candidates == 4


def test_winner_is_iree_when_nothing_beats_it():
    a = KernelConfig((16, 16, 0), (0, 0, 64), (1, 1, 0), (0, 1))
    manifest = {"kernels": [_kernel([None, a])]}
    results = {"k000": [{"function": "c0", "time_us": 2.0, "error": 0.0}, {"function": "c1", "time_us": 3.0, "error": 0.0}]}
    [entry] = winners(manifest, results)
    assert entry.config is None and entry.time_us == 2.0


def test_times_within_the_launch_noise_are_a_tie_broken_by_the_estimate():
    from schedc.decisions.kernel_config import estimate

    sig = matmul(32, 384, 128, key="t")
    better = KernelConfig((16, 8, 0), (0, 0, 16), (1, 1, 0), (0, 1))
    worse = KernelConfig((4, 32, 0), (0, 0, 16), (1, 1, 0))  # unpromoted, few threads
    assert estimate(sig, better) < estimate(sig, worse)
    manifest = {"kernels": [{"name": "k000", "signature": sig.to_json(), "functions": ["c0", "c1", "c2"],
                             "configs": [None, worse.to_json(), better.to_json()]}]}
    results = {"k000": [
        {"function": "c0", "time_us": 7.9, "error": 0.0},  # IREE's: within the tie too, never preferred
        {"function": "c1", "time_us": 7.5, "error": 0.0},
        {"function": "c2", "time_us": 8.0, "error": 0.0},  # 7% slower by the clock: a tie
    ]}
    [entry] = winners(manifest, results)
    assert entry.config == better and entry.time_us == 8.0


def test_k_steps_divide_the_reduction():
    from schedc.decisions.kernel_config import k_steps

    assert k_steps(1024) == [16, 32, 64]
    assert k_steps(48) == [16]
    assert k_steps(42) == [42]  # short: one step
    assert k_steps(72) == [36, 24] and k_steps(78) == [39, 26]  # not 72 steps of 1
    assert k_steps(67) == [67] and k_steps(1009) == [1]  # a prime: staged whole where it is short
    for config in candidate_configs(conv1x1(48, 64, 72)):
        assert config.reduction[2] in (36, 24)


def test_half_precision_contractions_get_tensor_core_configs():
    half = KernelSignature("h", "matmul", "linalg.matmul", (8, 128, 64), ("parallel", "parallel", "reduction"), MATMUL_MAPS,
                           ((8, 64), (128, 64), (8, 128)), "f16", result_type="f32")
    candidates = candidate_configs(half)
    assert candidates and all(c.mma == "NV_MMA_SYNC_F32_16x8x16_F16" for c in candidates)
    for config in candidates:
        assert config.workgroup_size % 32 == 0 and config.workgroup_size <= 256
        assert config.padding[0] == config.workgroup[0]  # M = 8 is padded to the tile
        assert "mma_kind = #iree_gpu.mma_layout<NV_MMA_SYNC_F32_16x8x16_F16>" in config.attribute()
    assert choose_config(half, None).source == "heuristic"
    accumulate_f16 = dataclasses.replace(half, result_type="")
    assert heuristic_config(accumulate_f16).mma == "NV_MMA_SYNC_F16_16x8x16_F16"
    bf16 = dataclasses.replace(half, element_type="bf16")
    assert heuristic_config(bf16).mma == "NV_MMA_SYNC_F32_16x8x16_BF16"
    assert candidate_configs(dataclasses.replace(bf16, result_type="")) == []  # no bf16 accumulation: IREE's


def test_tensor_core_configs_find_m_and_n_from_the_indexing_maps():
    assert contraction_roles(matmul(32, 64, 128)) == ([], 0, 1, 2)
    batch = ("affine_map<(d0, d1, d2, d3) -> (d0, d1, d3)>", "affine_map<(d0, d1, d2, d3) -> (d0, d3, d2)>",
             "affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>")
    bmm = KernelSignature("b", "batch_matmul", "linalg.batch_matmul", (4, 32, 32, 64), ("parallel",) * 3 + ("reduction",), batch,
                          ((4, 32, 64), (4, 64, 32), (4, 32, 32)), "f16")
    assert contraction_roles(bmm) == ([0], 1, 2, 3)
    config = heuristic_config(bmm)
    assert config.workgroup[0] == 1 and config.subgroup[0] == 0 and config.subgroup[3] == 0
    # A 1x1 convolution: output channels, then pixels, tiled with the intrinsic's M and N edges
    # in that order, as IREE's own tensor-core configs do.
    assert contraction_roles(conv1x1(32, 3136, 32)) == ([], 0, 1, 2)
    assert heuristic_config(dataclasses.replace(conv1x1(32, 3136, 32), element_type="f16")).mma
    assert contraction_roles(conv3x3(64, 55)) is None


def conv3x3(channels: int, size: int) -> KernelSignature:
    """conv_2d_nchw_fchw of a 3x3 window, stride 1, `size` x `size` output."""
    maps = ("affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d4, d2 + d5, d3 + d6)>",
            "affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d1, d4, d5, d6)>",
            "affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d1, d2, d3)>")
    return KernelSignature("c3", "conv", "linalg.conv_2d_nchw_fchw", (1, channels, size, size, channels, 3, 3),
                           ("parallel",) * 4 + ("reduction",) * 3, maps,
                           ((1, channels, size + 2, size + 2), (channels, channels, 3, 3), (1, channels, size, size)), "f32")


@pytest.mark.parametrize("size", [55, 27, 13])
def test_odd_sized_convolutions_get_tiles_with_a_partial_last_one(size):
    config = heuristic_config(conv3x3(64, size))
    assert config is not None and config.workgroup_size % 32 == 0
    # Partial last tiles are candidates; the estimate charges their idle threads, so 13
    # columns may as well be one tile of 13.
    candidates = candidate_configs(conv3x3(64, size), limit=1000)
    assert any(c.workgroup[i] and size % c.workgroup[i] for c in candidates for i in (2, 3))
    # An eighth of the SMs busy at least, or every output in a workgroup of 512 threads or fewer.
    assert workgroup_count(conv3x3(64, size), config) >= min(CHIPS["cuda"].sms // 8, 64 * size * size // 512)


def torch_conv(cout: int, cin: int, size: int, window: int, stride: int = 1, dilation: int = 1, groups: int = 1,
               dtype: str = "f32") -> KernelSignature:
    """A convolution as torch-mlir's import reaches IREE's flow phase at batch 1: a generic
    over (channels, rows, columns, input channels, window rows, window columns), with a
    group loop first where groups > 1."""
    def offset(out, win):
        return f"{out} * {stride} + {win} * {dilation}" if stride > 1 or dilation > 1 else f"{out} + {win}"

    extent = (size - 1) * stride + (window - 1) * dilation + 1
    if groups == 1:
        dims = "(d0, d1, d2, d3, d4, d5)"
        maps = (f"affine_map<{dims} -> (d3, {offset('d1', 'd4')}, {offset('d2', 'd5')})>",
                f"affine_map<{dims} -> (d0, d3, d4, d5)>", f"affine_map<{dims} -> (d0, d1, d2)>")
        loops, shapes = (cout, size, size, cin, window, window), ((cin, extent, extent), (cout, cin, window, window), (cout, size, size))
    else:
        dims = "(d0, d1, d2, d3, d4, d5, d6)"
        maps = (f"affine_map<{dims} -> (d0, d4, {offset('d2', 'd5')}, {offset('d3', 'd6')})>",
                f"affine_map<{dims} -> (d0, d1, d4, d5, d6)>", f"affine_map<{dims} -> (d0, d1, d2, d3)>")
        loops = (groups, cout // groups, size, size, cin // groups, window, window)
        shapes = ((groups, cin // groups, extent, extent), (groups, cout // groups, cin // groups, window, window), (groups, cout // groups, size, size))
    parallel = len(loops) - 3
    return KernelSignature("w", "matmul_like", "linalg.generic", loops, ("parallel",) * parallel + ("reduction",) * 3, maps, shapes,
                           dtype, result_type="f32" if dtype != "f32" else "")


def test_a_window_convolution_is_an_implicit_gemm_over_channels_and_window_together():
    form = igemm_form(torch_conv(128, 64, 28, 3))
    assert form.loops == (128, 28, 28, 64 * 9) and form.iterators == ("parallel",) * 3 + ("reduction",)
    # image[K, rows, columns], filter[channels, K]: M is the output channels, N the columns.
    assert contraction_roles(form) == ([1], 0, 2, 3)
    assert igemm_form(torch_conv(64, 3, 112, 7, stride=2)).loops == (64, 112, 112, 3 * 49)
    assert igemm_form(torch_conv(64, 64, 14, 3, dilation=2)).loops == (64, 14, 14, 576)
    grouped = igemm_form(torch_conv(64, 64, 14, 3, groups=4))
    assert grouped.loops == (4, 16, 14, 14, 16 * 9) and contraction_roles(grouped) == ([0, 2], 1, 3, 4)
    assert igemm_form(conv1x1(32, 3136, 32)) is None  # already a contraction
    # A weight gradient sums over its output rows and columns through the window: not one.
    grad = ("affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d4, d1, d5 + d2, d6 + d3)>",
            "affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d4, d0, d5, d6)>", "affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d1, d2, d3)>")
    assert igemm_form(KernelSignature("g", "matmul_like", "linalg.generic", (64, 64, 3, 3, 4, 16, 16), ("parallel",) * 4 + ("reduction",) * 3,
                                      grad, ((4, 64, 18, 18), (4, 64, 16, 16), (64, 64, 3, 3)), "f32")) is None
    depthwise = ("affine_map<(d0, d1, d2, d3, d4) -> (d0, d1 + d3, d2 + d4)>", "affine_map<(d0, d1, d2, d3, d4) -> (d0, d3, d4)>",
                 "affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2)>")
    depthwise = KernelSignature("d", "matmul_like", "linalg.generic", (32, 28, 28, 3, 3), ("parallel",) * 3 + ("reduction",) * 2,
                                depthwise, ((32, 30, 30), (32, 3, 3), (32, 28, 28)), "f32")
    assert igemm_form(depthwise) is None  # sums no channels
    # ... so it has no tensor-core form either: in f16 it gets SIMT tiles, as in f32.
    half = heuristic_config(dataclasses.replace(depthwise, element_type="f16"))
    assert half is not None and not half.mma and not half.igemm and half.label() == heuristic_config(depthwise).label()


def test_a_patchify_convolution_whose_stride_is_its_window_is_an_implicit_gemm():
    # ViT's: 16x16 patches of 3 channels. Its window (16) is longer than its output (14), as
    # a weight gradient's is, but it strides by the whole window.
    sig = torch_conv(192, 3, 14, 16, stride=16)
    assert igemm_form(sig).loops == (192, 14, 14, 3 * 256)
    assert heuristic_config(sig).igemm and heuristic_config(torch_conv(192, 3, 14, 16, stride=16, dtype="f16")).mma


def test_a_channels_last_window_convolution_keeps_iree_s_code():
    # ConvNeXt's downsampling: image[rows, columns, channels]; the implicit GEMM's SIMT configs
    # gave wrong outputs there, and its tensor-core ones did not compile.
    for dtype in ("f32", "f16"):
        sig = torch_conv(96, 48, 28, 2, stride=2, dtype=dtype)
        sig = dataclasses.replace(sig, indexing_maps=("affine_map<(d0, d1, d2, d3, d4, d5) -> (d1 * 2 + d4, d2 * 2 + d5, d3)>",) + sig.indexing_maps[1:],
                                  operand_shapes=((56, 56, 48),) + sig.operand_shapes[1:])
        assert igemm_channels_last(sig) and not igemm_channels_last(torch_conv(96, 48, 28, 2, stride=2, dtype=dtype))
        assert candidate_configs(sig) == [] and heuristic_config(sig) is None


def test_only_forward_window_convolutions_are_left_to_iree_without_an_implicit_gemm():
    assert forward_window_convolution(torch_conv(64, 64, 28, 3))
    assert not forward_window_convolution(conv1x1(32, 3136, 32))
    grad = ("affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d4, d1, d5 + d2, d6 + d3)>",
            "affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d4, d0, d5, d6)>", "affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d1, d2, d3)>")
    grad = KernelSignature("g", "matmul_like", "linalg.generic", (64, 64, 3, 3, 4, 16, 16), ("parallel",) * 4 + ("reduction",) * 3,
                           grad, ((4, 64, 18, 18), (4, 64, 16, 16), (64, 64, 3, 3)), "f32")
    assert not forward_window_convolution(grad)  # a weight gradient's own rules stand


def test_an_expansion_convolution_with_rows_and_columns_as_loops_tiles_its_output_channels():
    # MobileNetV2's expansion, read by a padded depthwise convolution: IREE keeps it as
    # (channels, rows, columns, K). Tiling only rows and columns (one channel per workgroup)
    # ran 2-5x slower than tiling channels too (bench/sweep.py expansions, H200).
    maps = ("affine_map<(d0, d1, d2, d3) -> (d3, d1, d2)>", "affine_map<(d0, d1, d2, d3) -> (d0, d3)>",
            "affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>")
    sig = KernelSignature("e", "matmul_like", "linalg.generic", (576, 14, 14, 96), ("parallel",) * 3 + ("reduction",), maps,
                          ((96, 14, 14), (576, 96), (576, 14, 14)), "f32")
    config = heuristic_config(sig)
    assert config.workgroup[0] >= 4 and not config.igemm and config.promote


def _strided_shortcut(cout: int, size: int, cin: int, dtype: str = "f32") -> KernelSignature:
    # ResNet-50's downsampling shortcut, a 1x1 convolution of stride 2, as IREE forms it: the
    # image read at (d3, d1 * 2, d2 * 2).
    maps = ("affine_map<(d0, d1, d2, d3) -> (d3, d1 * 2, d2 * 2)>", "affine_map<(d0, d1, d2, d3) -> (d0, d3)>",
            "affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>")
    return KernelSignature("s", "matmul_like", "linalg.generic", (cout, size, size, cin), ("parallel",) * 3 + ("reduction",), maps,
                           ((cin, 2 * size, 2 * size), (cout, cin), (cout, size, size)), dtype, ("linalg.fill",))


def test_a_strided_1x1_convolution_of_seven_by_seven_pixels_tiles_its_channels_as_the_unstrided_one():
    # 7 x 7 pixels make no workgroup of whole subgroups from rows and columns alone, so IREE's
    # default kept it, about 25 ms a call and wrong (f32, H100): now it tiles channels as well.
    sig = _strided_shortcut(2048, 7, 1024)
    config = heuristic_config(sig)
    assert config is not None and config.workgroup[0] >= 4 and config.workgroup[2] == 7 and not config.igemm
    assert config.workgroup_size % 32 == 0
    assert kc.shared_bytes(sig, config) <= kc.MAX_SHARED_BYTES
    # its form reads the image unstrided; the kernel's own maps decide the shared memory
    form = kc.strided_rows_form(sig)
    assert form.indexing_maps[0] == "affine_map<(d0, d1, d2, d3) -> (d3, d1, d2)>" and form.loops == sig.loops
    assert kc.shared_bytes(sig, config) > kc.shared_bytes(form, config)


def test_strided_1x1_convolutions_the_plain_tiles_cover_keep_those_tiles():
    # 14 x 14 and 28 x 28 pixels: the plain SIMT tiles (timed in ResNet-18 f32) stay the choice,
    # and f16 never takes the form (its tensor-core and SIMT candidates decide).
    for size, cin in ((14, 512), (28, 256)):
        assert heuristic_config(_strided_shortcut(2 * cin, size, cin)).workgroup[0] == 1
    assert kc.strided_rows_form(_strided_shortcut(2048, 7, 1024, "f16")) is None
    plain = dataclasses.replace(_strided_shortcut(2048, 7, 1024), indexing_maps=kc.strided_rows_form(_strided_shortcut(2048, 7, 1024)).indexing_maps)
    assert kc.strided_rows_form(plain) is None  # nothing strided: not this form


def test_the_implicit_gemm_estimate_charges_partial_tiles_and_results_along_n():
    form = igemm_form(torch_conv(128, 64, 13, 3))

    def config(columns, per_thread):
        return KernelConfig((32, 1, columns, 0), (0, 0, 0, 64), (2, 1, per_thread, 0), (0, 1), igemm=True)

    assert kc._igemm_factor(form, config(16, 1)) > kc._igemm_factor(form, config(13, 1))  # 3 of 16 columns idle
    assert kc._igemm_factor(form, config(16, 2)) > kc._igemm_factor(form, config(16, 1))


def test_an_f32_window_convolution_of_few_output_channels_keeps_iree_s_direct_code():
    assert heuristic_config(torch_conv(16, 16, 60, 7)) is None
    assert heuristic_config(torch_conv(16, 16, 60, 7, dtype="f16")).igemm  # tensor cores: 16 is one intrinsic tile


@pytest.mark.parametrize("dtype", ["f32", "f16"])
@pytest.mark.parametrize("shape", [(128, 128, 28, 3, 1), (512, 512, 7, 3, 1), (64, 3, 112, 7, 2), (256, 64, 13, 3, 1)])
def test_window_convolutions_get_implicit_gemm_configs_that_fill_the_gpu(shape, dtype):
    sig = torch_conv(*shape, dtype=dtype)
    config = heuristic_config(sig)
    assert config is not None and config.igemm
    assert "use_igemm_convolution = true" in config.attribute()
    assert (config.mma != "") == (dtype == "f16") and len(config.workgroup) == 4
    # Every tile fits its loop's range or is padded to it; the reduction steps through K.
    assert config.reduction[:3] == (0, 0, 0) and config.reduction[3] > 0
    assert workgroup_count(sig, config) >= min(CHIPS["cuda"].sms // 2, math.prod(sig.loops[:3]) // 1024)
    assert all(c.igemm for c in candidate_configs(sig))


def _conv_ir(cin: int, size: int, cout: int, window: int, stride: int, dtype: str, acc: str) -> str:
    """A batch-1 NCHW convolution as IREE's input, accumulating in `acc`."""
    out = (size - window) // stride + 1
    image, filter_, result = f"tensor<1x{cin}x{size}x{size}x{dtype}>", f"tensor<{cout}x{cin}x{window}x{window}x{dtype}>", f"tensor<1x{cout}x{out}x{out}x{acc}>"
    return f"""
func.func @f(%x: {image}, %w: {filter_}) -> {result} {{
  %z = arith.constant 0.0 : {acc}
  %e = tensor.empty() : {result}
  %f = linalg.fill ins(%z : {acc}) outs(%e : {result}) -> {result}
  %y = linalg.conv_2d_nchw_fchw {{dilations = dense<1> : tensor<2xi64>, strides = dense<{stride}> : tensor<2xi64>}}
    ins(%x, %w : {image}, {filter_}) outs(%f : {result}) -> {result}
  return %y : {result}
}}"""


# One kernel of each class the heuristic configures, as IREE's input: its config must compile.
_CLASSES = {
    "conv 3x3 55x55 f32": _conv_ir(64, 57, 64, 3, 1, "f32", "f32"),
    "conv 7x7 stride 2, 3 channels, f32": _conv_ir(3, 229, 64, 7, 2, "f32", "f32"),
    "conv 3x3 14x14 f16 -> f32": _conv_ir(256, 16, 256, 3, 1, "f16", "f32"),
    "matmul 8x128x64 f16 -> f32": """
func.func @f(%a: tensor<8x64xf16>, %b: tensor<64x128xf16>) -> tensor<8x128xf32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<8x128xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<8x128xf32>) -> tensor<8x128xf32>
  %y = linalg.matmul ins(%a, %b : tensor<8x64xf16>, tensor<64x128xf16>) outs(%f : tensor<8x128xf32>) -> tensor<8x128xf32>
  return %y : tensor<8x128xf32>
}""",
    "batch_matmul 4x32x32x64 f16": """
func.func @f(%a: tensor<4x32x64xf16>, %b: tensor<4x64x32xf16>) -> tensor<4x32x32xf16> {
  %z = arith.constant 0.0 : f16
  %e = tensor.empty() : tensor<4x32x32xf16>
  %f = linalg.fill ins(%z : f16) outs(%e : tensor<4x32x32xf16>) -> tensor<4x32x32xf16>
  %y = linalg.batch_matmul ins(%a, %b : tensor<4x32x64xf16>, tensor<4x64x32xf16>) outs(%f : tensor<4x32x32xf16>) -> tensor<4x32x32xf16>
  return %y : tensor<4x32x32xf16>
}""",
    "matmul 1x2304x768 f16 (x @ W, W stored K x N: a decode step's projection)": """
func.func @f(%a: tensor<1x768xf16>, %b: tensor<768x2304xf16>) -> tensor<1x2304xf32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x2304xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<1x2304xf32>) -> tensor<1x2304xf32>
  %y = linalg.matmul ins(%a, %b : tensor<1x768xf16>, tensor<768x2304xf16>) outs(%f : tensor<1x2304xf32>) -> tensor<1x2304xf32>
  return %y : tensor<1x2304xf32>
}""",
    "matmul 1x1000x512 f32 (a classifier: W stored N x K)": """
func.func @f(%a: tensor<1x512xf32>, %b: tensor<1000x512xf32>) -> tensor<1x1000xf32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x1000xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<1x1000xf32>) -> tensor<1x1000xf32>
  %y = linalg.matmul indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1)>]
    ins(%a, %b : tensor<1x512xf32>, tensor<1000x512xf32>) outs(%f : tensor<1x1000xf32>) -> tensor<1x1000xf32>
  return %y : tensor<1x1000xf32>
}""",
    "batch_matmul 12x1x64x512 f16 (one token's P @ V over a cache)": """
func.func @f(%a: tensor<12x1x512xf16>, %b: tensor<12x512x64xf16>) -> tensor<12x1x64xf32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<12x1x64xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<12x1x64xf32>) -> tensor<12x1x64xf32>
  %y = linalg.batch_matmul ins(%a, %b : tensor<12x1x512xf16>, tensor<12x512x64xf16>) outs(%f : tensor<12x1x64xf32>) -> tensor<12x1x64xf32>
  return %y : tensor<12x1x64xf32>
}""",
    "batch_matmul 3x197x64x197 f32 (attention's P @ V over ViT's 197 tokens, a prime K)": """
func.func @f(%a: tensor<3x197x197xf32>, %b: tensor<3x197x64xf32>) -> tensor<3x197x64xf32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<3x197x64xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<3x197x64xf32>) -> tensor<3x197x64xf32>
  %y = linalg.batch_matmul ins(%a, %b : tensor<3x197x197xf32>, tensor<3x197x64xf32>) outs(%f : tensor<3x197x64xf32>) -> tensor<3x197x64xf32>
  return %y : tensor<3x197x64xf32>
}""",
    "matmul 197x768x192 f32 (rows no tile divides: padded)": """
func.func @f(%a: tensor<197x192xf32>, %b: tensor<192x768xf32>) -> tensor<197x768xf32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<197x768xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<197x768xf32>) -> tensor<197x768xf32>
  %y = linalg.matmul ins(%a, %b : tensor<197x192xf32>, tensor<192x768xf32>) outs(%f : tensor<197x768xf32>) -> tensor<197x768xf32>
  return %y : tensor<197x768xf32>
}""",
    "matmul 32x256x128 bf16 -> f32": """
func.func @f(%a: tensor<32x128xbf16>, %b: tensor<128x256xbf16>) -> tensor<32x256xf32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<32x256xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<32x256xf32>) -> tensor<32x256xf32>
  %y = linalg.matmul ins(%a, %b : tensor<32x128xbf16>, tensor<128x256xbf16>) outs(%f : tensor<32x256xf32>) -> tensor<32x256xf32>
  return %y : tensor<32x256xf32>
}""",
}


def _compile_for_cuda(text: str):
    """kernel-config alone (split-k, which would split the deep convolution, told to leave
    every op whole: test_split_k.py has the split one), then IREE to the HAL phase for cuda:
    (the HAL-phase IR, the kernel-config records of each dispatch)."""
    from schedc.compiler.driver import compile_with_options
    from schedc.options import CompileOptions

    result = compile_with_options(text, CompileOptions(target="cuda", passes="split-k{parts=1},kernel-config", emit="hal"))
    return result.output, result.records["kernel-config"]["module"]["kernels"]


@pytest.mark.parametrize("name", sorted(_CLASSES))
def test_each_class_gets_a_heuristic_config_that_iree_compiles_for_cuda(name, monkeypatch):
    from schedc.decisions import triton_conv as rule

    monkeypatch.setattr(rule, "EPILOGUES", True)
    monkeypatch.setattr(rule, "SERIAL_SUM", True)
    output, kernels = _compile_for_cuda(_CLASSES[name])
    assert "hal.executable.binary" in output
    # (an f16 window convolution runs schedc's Triton kernel, which reads its image and filter
    # channels last: here, where no producer takes them, through transposes of their own; it sums
    # its parts itself, so no kernel of IREE's is left)
    expected = [] if name == "conv 3x3 14x14 f16 -> f32" else ["heuristic"]
    assert [k["source"] for k in kernels if k["kind"] != "copy"] == expected, kernels




def test_promoted_tiles_fit_in_shared_memory():
    from schedc.decisions.kernel_config import MAX_SHARED_BYTES, _map_extents, shared_bytes

    # A 3x3 window over a 32x32 output tile reads 34x34 input pixels.
    assert _map_extents("affine_map<(d0, d1, d2, d3, d4, d5) -> (d3, d1 + d4, d2 + d5)>", [1, 32, 32, 16, 3, 3]) == [16, 34, 34]
    assert _map_extents("affine_map<(d0, d1, d2, d3, d4, d5) -> (d3, d1 * 2 + d4, d2)>", [1, 8, 8, 4, 3, 3]) == [4, 17, 8]
    sig = conv3x3(256, 55)
    for config in candidate_configs(sig, limit=200):
        assert shared_bytes(sig, config) <= MAX_SHARED_BYTES


def test_a_scatter_gets_one_update_per_thread():
    # The KV cache's update at one position: 768 values into 1x12x512x64 (IREE's default had
    # every thread of a workgroup loop over the same 64 updates, 22 us on the H200).
    sig = KernelSignature("s", "scatter", "iree_linalg_ext.scatter", (768,), ("parallel",), (), ((768,), (768, 4), (1, 12, 512, 64)), "f16")
    config = heuristic_config(sig)
    assert config.workgroup == (128,) and config.thread == (1,) and "TileAndFuse" in config.attribute()
    prefill = dataclasses.replace(sig, loops=(12, 32, 64), iterators=("parallel",) * 3)
    assert heuristic_config(prefill).workgroup == (1, 1, 64) and heuristic_config(prefill).workgroup_size == 64
    assert heuristic_config(dataclasses.replace(sig, loops=(7,))) is None  # too few to fill a subgroup: IREE's


def test_f32_matmuls_a_tile_does_not_divide_are_padded_to_it():
    # Partial tiles ran 2-9x slower than padded ones (bench/sweep.py odd_matmuls, H200).
    config = heuristic_config(matmul(197, 768, 192))
    assert (config.workgroup, config.thread, config.padding) == ((16, 32, 0), (2, 2, 0), (16, 32, 64))
    assert "padding = [16, 32, 64]" in config.attribute() and config.label().endswith("padded")
    assert kc.KernelConfig.from_json(config.to_json()) == config
    assert candidate_configs(matmul(197, 768, 192))[0] == config
    bmm = heuristic_config(batch_matmul(3, 197, 197, 64))  # two rows per thread: one gave wrong results
    assert bmm.workgroup == (1, 16, 32, 0) and bmm.thread == (1, 2, 2, 0) and bmm.padding == (1, 16, 32, 64)
    assert not heuristic_config(matmul(64, 768, 192)).padding  # divided: partial-free tiles, as before
    assert kc.padded_simt_config(dataclasses.replace(matmul(197, 768, 192), element_type="f16")) is None


def test_a_reduction_with_no_divisor_to_step_by_is_staged_whole():
    # ViT's attention sums over 197 tokens (a prime): K steps of 1 were the only candidates.
    config = heuristic_config(batch_matmul(3, 197, 64, 197))
    assert config.reduction[-1] == 197 and config.promote
    assert kc.k_steps(197) == [197] and kc.k_steps(72) == [36, 24] and kc.k_steps(1009) == [1]


def test_the_estimate_prefers_fewer_k_steps_where_they_fit():
    config = heuristic_config(matmul(16, 4096, 1024))
    assert config.reduction[2] >= 32


def test_a_generic_contraction_is_never_one_intrinsic_wide_in_n():
    sig = dataclasses.replace(conv1x1(96, 49, 96), element_type="f16", result_type="f32")
    assert candidate_configs(sig, limit=100) and all(c.workgroup[1] >= 16 for c in candidate_configs(sig, limit=100))
    assert any(c.workgroup[1] == 8 for c in candidate_configs(dataclasses.replace(matmul(64, 256, 256), element_type="f16"), limit=100))


def test_mma_operand_order_swaps_only_a_half_precision_contraction_whose_first_input_lacks_m():
    from schedc.decisions.kernel_config import map_terms
    from schedc.decisions.mma_operands import swap_inputs_for_mma

    kn, mk, mn = (map_terms(f"affine_map<(d0, d1, d2) -> ({r})>") for r in ("d2, d1", "d0, d2", "d0, d1"))
    assert swap_inputs_for_mma(mn, kn, mk, "f16") and swap_inputs_for_mma(mn, kn, mk, "bf16")
    assert not swap_inputs_for_mma(mn, kn, mk, "f32")  # IREE's SIMT code is right in either order
    assert not swap_inputs_for_mma(mn, mk, kn, "f16")  # already M first
    strided = map_terms("affine_map<(d0, d1, d2, d3) -> (d3, d1 * 2, d2 * 2)>")  # a 1x1 convolution of stride 2
    assert swap_inputs_for_mma(map_terms("affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>"), strided,
                               map_terms("affine_map<(d0, d1, d2, d3) -> (d0, d3)>"), "f16")
    # split-k's parts of a 1x1 convolution (parts g, channels f, pixels p, K c): past the batch
    # loop g, the output's leading loop f is the filter's, the second input's
    gcp, fgc, gfp = (map_terms(f"affine_map<(d0, d1, d2, d3) -> ({r})>") for r in ("d0, d3, d2", "d1, d0, d3", "d0, d1, d2"))
    assert swap_inputs_for_mma(gfp, gcp, fgc, "f16") and not swap_inputs_for_mma(gfp, fgc, gcp, "f16")
    bmk, bkn, bmn = (map_terms(f"affine_map<(d0, d1, d2, d3) -> ({r})>") for r in ("d0, d1, d3", "d0, d3, d2", "d0, d1, d2"))
    assert not swap_inputs_for_mma(bmn, bmk, bkn, "f16")  # attention's batch matmul: M first already
    # aggressive fusion's Q/K/V projection (heads h, tokens t, head width d, K k) into [h, t, d]:
    # the weight's loops h and d interleave with the activation's t; IREE is right unswapped
    htd, tk, hdk = (map_terms(f"affine_map<(d0, d1, d2, d3) -> ({r})>") for r in ("d0, d1, d2", "d1, d3", "d0, d2, d3"))
    assert not swap_inputs_for_mma(htd, tk, hdk, "f16")
    # while [h, d, t] (the weight's loops first, together) is a transposed product: swapped
    assert swap_inputs_for_mma(map_terms("affine_map<(d0, d1, d2, d3) -> (d0, d2, d1)>"), tk, hdk, "f16")
    window = map_terms("affine_map<(d0, d1, d2, d3, d4, d5) -> (d3, d1 + d4, d2 + d5)>")  # a 3x3 convolution: right as it is
    assert not swap_inputs_for_mma(map_terms("affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d2)>"), window,
                                   map_terms("affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d3, d4, d5)>"), "f16")


F16_CONV1X1 = """
func.func @f(%x: tensor<1x64x55x55xf16>, %w: tensor<16x64x1x1xf16>) -> tensor<1x16x55x55xf16> {
  %z = arith.constant 0.0 : f16
  %e = tensor.empty() : tensor<1x16x55x55xf16>
  %f = linalg.fill ins(%z : f16) outs(%e : tensor<1x16x55x55xf16>) -> tensor<1x16x55x55xf16>
  %y = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
    ins(%x, %w : tensor<1x64x55x55xf16>, tensor<16x64x1x1xf16>) outs(%f : tensor<1x16x55x55xf16>) -> tensor<1x16x55x55xf16>
  return %y : tensor<1x16x55x55xf16>
}"""


@pytest.mark.parametrize("tuning", [True, False])
def test_an_f16_1x1_convolution_reaches_cuda_filter_first_tuned_or_not(tuning):
    import re

    from schedc.compiler.driver import compile_with_options
    from schedc.options import CompileOptions

    result = compile_with_options(F16_CONV1X1, CompileOptions(target="cuda", emit="flow", tuning=tuning))
    contraction = re.search(r'iterator_types = \["parallel", "parallel", "reduction"\]\} ins\([^:]+: (tensor<[^,]+>), (tensor<[^)]+>)\)', result.output)
    assert contraction and contraction.groups() == ("tensor<16x64xf16>", "tensor<64x3025xf16>"), result.output[-3000:]
    assert len(result.records["mma-operands"]["module"]["swapped"]) == 1
    hal = compile_with_options(F16_CONV1X1, CompileOptions(target="cuda", emit="hal", tuning=tuning))
    assert "hal.executable.binary" in hal.output
    cpu = compile_with_options(F16_CONV1X1, CompileOptions(target="llvm-cpu", emit="flow"))
    assert "mma-operands" not in cpu.records  # CPU code is right in either order


def test_mma_operands_told_not_to_swap_lists_what_it_leaves():
    import re

    from schedc.compiler.driver import compile_with_options
    from schedc.options import CompileOptions

    result = compile_with_options(F16_CONV1X1, CompileOptions(target="cuda", emit="flow", passes="mma-operands{swap=false},memory-order"))
    record = result.records["mma-operands"]["module"]
    assert record["swapped"] == [] and len(record["left"]) == 1
    contraction = re.search(r'iterator_types = \["parallel", "parallel", "reduction"\]\} ins\([^:]+: (tensor<[^,]+>), (tensor<[^)]+>)\)', result.output)
    assert contraction and contraction.groups() == ("tensor<64x3025xf16>", "tensor<16x64xf16>")  # the image first, as IREE made it


def test_a_scatter_whose_indices_may_repeat_keeps_iree_s_code():
    # An accumulating index_put: one update per thread would race on a repeated index.
    text = """
func.func @f(%upd: tensor<768xf32>, %idx: tensor<768x1xi64>, %dst: tensor<4096xf32>) -> tensor<4096xf32> {
  %r = iree_linalg_ext.scatter dimension_map = [0] unique_indices(false) ins(%upd, %idx : tensor<768xf32>, tensor<768x1xi64>) outs(%dst : tensor<4096xf32>) {
  ^bb0(%a: f32, %b: f32):
    %s = arith.addf %a, %b : f32
    iree_linalg_ext.yield %s : f32
  } -> tensor<4096xf32>
  return %r : tensor<4096xf32>
}"""
    _, kernels = _compile_for_cuda(text)
    assert [(k["kind"], k["source"]) for k in kernels] == [("other", "iree")]
    _, unique = _compile_for_cuda(text.replace("unique_indices(false)", "unique_indices(true)"))
    assert [(k["kind"], k["source"]) for k in unique] == [("scatter", "heuristic")]


def test_the_tensor_core_estimate_charges_what_a_thread_stages_past_its_budget():
    # A synthetic sweep shape (bench/split_k.py's FIT_POINTWISE: 1280 -> 192 channels at 5x5):
    # K steps of 128 with one or two subgroups stage 64-128 elements a thread a step, and ran up
    # to 2x slower than steps of 32 on the sweep's f16 1x1 convolutions (bench/sweep.py fit-mma).
    sig = dataclasses.replace(conv1x1(192, 25, 1280), element_type="f16", result_type="f32")
    wide = next(c for c in candidate_configs(sig, limit=1000) if c.reduction[2] == 8 and c.subgroups <= 2)
    terms = kc.mma_terms(sig, wide, contraction_roles(sig)[1:])
    fmas, step, budget, _ = kc.MMA_CONSTANTS[kc.mma_class(sig, wide)]
    assert kc.mma_class(sig, wide) == "1x1 convolution" and terms[4] > budget
    assert kc.estimate(sig, wide) > kc.mma_cost(terms, fmas, step, budget, 0)
    assert kc.mma_terms(sig, heuristic_config(sig), contraction_roles(sig)[1:])[4] <= budget


def test_a_split_convolution_s_k_steps_divide_its_part():
    # split-k's parts of an f16 1x1 convolution, 384 -> 64 channels in 8 parts of 48: a K step of
    # 64 padded each part and came out NaN on an H100; steps of 48 (3 intrinsic steps) do not pad.
    maps = ("affine_map<(d0, d1, d2, d3) -> (d0, d3, d2)>", "affine_map<(d0, d1, d2, d3) -> (d0, d1, d3)>",
            "affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>")
    split = KernelSignature("s", "matmul_like", "linalg.generic", (8, 64, 196, 48), ("parallel",) * 3 + ("reduction",), maps,
                            ((8, 48, 196), (8, 64, 48), (8, 64, 196)), "f16", result_type="f32")
    candidates = candidate_configs(split, limit=1000)
    assert candidates and all(48 % (c.reduction[3] * 16) == 0 for c in candidates)
    assert heuristic_config(split).reduction[3] == 3
    # A 1x1 convolution whose rows are a loop only the image reads keeps its K steps.
    rows = ("affine_map<(d0, d1, d2, d3) -> (d3, d1, d2)>", "affine_map<(d0, d1, d2, d3) -> (d0, d3)>",
            "affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>")
    expansion = KernelSignature("e", "matmul_like", "linalg.generic", (576, 14, 14, 96), ("parallel",) * 3 + ("reduction",), rows,
                                ((96, 14, 14), (576, 96), (576, 14, 14)), "f16", result_type="f32")
    assert {c.reduction[3] for c in candidate_configs(expansion, limit=1000)} <= {2, 4, 8}
