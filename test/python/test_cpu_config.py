"""cpu-config's decision without MLIR: op shapes, the database, estimates and the plan."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from schedc.decisions.cpu_config import (
    IREE_DEFAULT,
    MODE_FLAGS,
    PLAN_FLAGS,
    UNFUSED_US,
    UNFUSED_US_PER_MB,
    CpuDatabase,
    CpuEntry,
    OpShape,
    choose_plan,
    data_tiles,
    default_database,
    estimate,
    conv_tiles,
    gemm_tiles,
    host_isa,
)
from schedc.errors import SchedcError


def conv(cin=16, cout=32, size=18, k=3, stride=1, kind="conv") -> OpShape:
    return OpShape(kind, "f32", cin=cin, cout=cout if kind == "conv" else cin, h=size, w=size, kh=k, kw=k, stride=(stride, stride),
                   groups=cin if kind == "depthwise" else 1)


def matmul(m=64, n=256, k=256) -> OpShape:
    return OpShape("matmul", "f32", m=m, n=n, k=k)


def database(*entries: tuple[OpShape, dict]) -> CpuDatabase:
    db = CpuDatabase("x86_64-avx512")
    for shape, times in entries:
        db.add(CpuEntry(shape, times))
    return db


def test_shape_arithmetic():
    op = conv(cin=16, cout=32, size=18, k=3, stride=2)
    assert op.out_hw == (8, 8)
    assert op.work == 32 * 8 * 8 * 3 * 3 * 16
    assert conv(kind="depthwise").work == 16 * 16 * 16 * 9
    assert matmul(4, 8, 16).work == 4 * 8 * 16
    assert "winograd" in conv(k=3, stride=1).layouts() and "winograd" not in conv(k=3, stride=2).layouts()
    assert "winograd" not in conv(cin=128, cout=128).layouts()  # IREE would not hoist its filter transform
    assert matmul().layouts() == ("nchw", "gemm")
    assert conv(kind="depthwise", k=7).layouts() == ("nchw", "nhwc") and "nhwc" not in conv().layouts()
    assert conv(kind="depthwise", k=3).layouts() == ("nchw",)  # the transposes cost more than a 3x3 saves
    assert conv(kind="depthwise", k=7).layouts("channels-last") == ("nchw",)
    with pytest.raises(ValueError, match="unknown op kind 'pool'"):
        OpShape("pool", "f32")


def test_measured_layout_wins_and_flags_follow_the_mode():
    fast_im2col = {"plain/nchw": 100.0, "plain/im2col": 40.0, "data-tiling/nchw": 100.0, "data-tiling/im2col": 45.0}
    plan = choose_plan([conv()], database((conv(), fast_im2col)))
    assert (plan.mode, plan.ops[0].layout, plan.ops[0].source, plan.ops[0].time_us) == ("plain", "im2col", "measured", 40.0)
    assert plan.iree_flags == PLAN_FLAGS
    tiled = choose_plan([matmul()], database((matmul(), {"plain/nchw": 50.0, "data-tiling/nchw": 20.0})))
    assert tiled.mode == "data-tiling" and tiled.ops[0].data_tiling and tiled.iree_flags == MODE_FLAGS["data-tiling"] + PLAN_FLAGS


def test_a_window_convolution_takes_im2col_only_where_it_pays_for_its_patches():
    # im2col materialises kh x kw copies of the input: estimated 1.2x faster is not enough ...
    small_gain = {"plain/nchw": 100.0, "plain/im2col": 84.0}
    assert choose_plan([conv()], database((conv(), small_gain))).ops[0].layout == "nchw"
    # ... 1.25x is, and the best other layout is what it must beat (Winograd here)
    large_gain = {"plain/nchw": 100.0, "plain/im2col": 40.0, "plain/winograd": 55.0}
    assert choose_plan([conv()], database((conv(), large_gain))).ops[0].layout == "im2col"
    near_winograd = {"plain/nchw": 100.0, "plain/im2col": 40.0, "plain/winograd": 45.0}
    assert choose_plan([conv()], database((conv(), near_winograd))).ops[0].layout == "winograd"
    # a 1x1 convolution's im2col is a reshape, no patches: the fastest wins
    pointwise = conv(k=1)
    assert choose_plan([pointwise], database((pointwise, small_gain))).ops[0].layout == "im2col"


def test_schedc_gemm_is_a_layout_of_f32_matmuls_and_convolutions():
    assert "gemm" in conv().layouts() and "gemm" in conv(k=1).layouts()
    # in channels-last, a window or strided convolution may run schedc's NHWC kernel; a 1x1 one
    # at stride 1 stays IREE's NHWC matmul, a depthwise one IREE's NCHW build
    assert conv().layouts("channels-last") == ("nchw", "gemm") and conv(k=1, stride=2).layouts("channels-last") == ("nchw", "gemm")
    assert conv(k=1).layouts("channels-last") == ("nchw",) and conv(kind="depthwise").layouts("channels-last") == ("nchw",)
    assert matmul().layouts("channels-last") == ("nchw", "gemm")
    assert "gemm" not in OpShape("matmul", "f16", m=4, n=4, k=4).layouts()
    assert "gemm" not in conv(kind="depthwise", k=7).layouts()
    fast = {"plain/nchw": 100.0, "plain/gemm": 30.0, "data-tiling/nchw": 60.0}
    assert choose_plan([matmul()], database((matmul(), fast))).ops[0].layout == "gemm"
    assert not data_tiles(matmul(), "gemm") and data_tiles(matmul(), "nchw")
    # where the kernel cannot be built it is never chosen
    assert choose_plan([matmul()], database((matmul(), fast)), kernels=False).ops[0].layout == "nchw"
    # schedc's convolution kernel materialises no patches: 1.2x faster is enough, as it is not for im2col
    assert choose_plan([conv()], database((conv(), {"plain/nchw": 100.0, "plain/gemm": 84.0}))).ops[0].layout == "gemm"
    assert choose_plan([conv()], database((conv(), {"plain/nchw": 100.0, "plain/im2col": 84.0}))).ops[0].layout == "nchw"
    assert choose_plan([conv()], database((conv(), {"plain/nchw": 100.0, "plain/im2col": 60.0, "plain/gemm": 30.0}))).ops[0].layout == "gemm"


def test_a_mode_counts_only_for_the_ops_it_reaches():
    # data tiling reaches neither a depthwise convolution nor schedc's kernel: their times
    # measured in that mode (here 10% lower, by noise) do not make it the plan's mode
    depthwise = conv(kind="depthwise", k=3)
    noisy = database((depthwise, {"plain/nchw": 100.0, "data-tiling/nchw": 90.0}),
                     (matmul(), {"plain/nchw": 100.0, "plain/gemm": 50.0, "data-tiling/nchw": 95.0, "data-tiling/gemm": 40.0}))
    plan = choose_plan([depthwise, matmul()], noisy)
    assert plan.mode == "plain" and [c.layout for c in plan.ops] == ["nchw", "gemm"]
    assert plan.estimates_us["data-tiling"] == plan.estimates_us["plain"] == round(150.0 + UNFUSED_US + UNFUSED_US_PER_MB * 64 * 256 * 4 / 2**20, 1)


def test_schedc_kernels_count_the_dispatch_their_consumers_take():
    # IREE fuses a matmul's bias and activation into its dispatch; schedc's kernel leaves them
    # to one more: a small matmul 1.5 us faster in the kernel stays in IREE's build ...
    small = matmul(16, 64, 64)
    assert choose_plan([small], database((small, {"plain/nchw": 20.0, "plain/gemm": 18.5}))).ops[0].layout == "nchw"
    # ... a large one 30% faster takes the kernel, its plan counting the extra dispatch
    plan = choose_plan([matmul()], database((matmul(), {"plain/nchw": 100.0, "plain/gemm": 70.0})))
    assert plan.ops[0].layout == "gemm" and plan.ops[0].time_us == pytest.approx(70.0 + UNFUSED_US + UNFUSED_US_PER_MB * 64 * 256 * 4 / 2**20)


def test_gemm_tiles_weigh_padding_and_rereads():
    assert gemm_tiles(1, 64, 3136, 576) == (66, 256)  # all 64 rows in one tile of 11 strips
    assert gemm_tiles(1, 1000, 169, 512) == (96, 176)  # 169 columns: one tile wide (10 panels and a narrow one)
    assert gemm_tiles(1, 512, 49, 4608) == (96, 64)  # deep: A read once, not once per column tile


@settings(max_examples=200, deadline=None)
@given(st.integers(1, 16), st.integers(1, 3000), st.integers(1, 3000), st.integers(1, 5000))
def test_gemm_tiles_are_whole_strips_and_panels(batch, m, n, k):
    rows, columns = gemm_tiles(batch, m, n, k)
    assert 1 <= rows <= 102 and (rows % 6 == 0) and 16 <= columns <= 256 and columns % 16 == 0
    most = batch * -(-m // 6) * -(-n // 16)  # the most workgroups there can be
    assert batch * -(-m // rows) * -(-n // columns) >= min(6, most)


@settings(max_examples=200, deadline=None)
@given(st.integers(1, 4), st.integers(1, 1024), st.integers(1, 20000))
def test_conv_tiles_are_whole_panels_and_strips(batch, channels, pixels):
    rows, columns = conv_tiles(batch, channels, pixels)
    assert rows % 16 == 0 and 16 <= rows <= 64 and columns % 6 == 0 and 6 <= columns <= 96
    tiles = batch * -(-channels // rows) * -(-pixels // columns)
    assert tiles >= 6 or (rows, columns) == (16, 6)  # shrunk until there are enough, or no smaller tile


def test_conv_tiles():
    assert conv_tiles(1, 64, 3136) == (64, 96)  # 64 channels x 16 strips: 33 workgroups
    assert conv_tiles(1, 512, 49) == (64, 54)  # 49 pixels: 9 strips, 8 workgroups
    assert conv_tiles(1, 17, 121) == (32, 24)  # pixels halved until 6 workgroups


def test_data_tiling_is_chosen_op_by_op():
    # data tiling helps the matmul by 30 us; the convolution it does not reach (NCHW) keeps its
    # plain time (the 150 us its module-wide mode measured is IREE's build beside tiled matmuls)
    a = (conv(), {"plain/nchw": 100.0, "data-tiling/nchw": 150.0, "data-tiling/im2col": 30.0})
    b = (matmul(), {"plain/nchw": 50.0, "data-tiling/nchw": 20.0})
    plan = choose_plan([conv(), matmul()], database(a, b), im2col_min_gain=1.0, per_op_tiling=True)
    # the convolution is reached once it is a matmul (im2col): 30 us
    assert plan.mode == "plain" and [(c.layout, c.data_tiling) for c in plan.ops] == [("im2col", True), ("nchw", True)]
    assert plan.estimates_us["plain"] == 50.0 and plan.iree_flags == MODE_FLAGS["data-tiling"] + PLAN_FLAGS
    # one mode for the module (the default): the sum decides between whole modes
    whole = choose_plan([conv(), matmul()], database(a, b), im2col_min_gain=1.0)
    assert whole.mode == "data-tiling" and whole.estimates_us["data-tiling"] == 50.0 and whole.estimates_us["plain"] == 150.0


def test_iree_default_wins_ties_and_unknown_ops_stay():
    plan = choose_plan([conv()], database((conv(), {"plain/nchw": 10.0, "plain/nhwc": 10.0, "data-tiling/nchw": 10.0})))
    assert plan.is_iree_default and plan.iree_flags == ()
    alone = choose_plan([conv(), matmul()], None)
    assert alone.is_iree_default and [c.source for c in alone.ops] == ["none", "none"]


def test_nearest_entry_scales_by_work():
    measured = conv(cin=16, cout=32, size=18)
    bigger = conv(cin=32, cout=32, size=18)  # twice the work, same kind
    source, times = estimate(bigger, database((measured, {"plain/nchw": 10.0, "plain/im2col": 4.0})))
    assert source == "nearest" and times == {"plain/nchw": 20.0, "plain/im2col": 8.0}
    # another kind is never a neighbour
    assert estimate(matmul(), database((measured, {"plain/nchw": 1.0})))[0] == "none"


def test_a_choice_takes_the_median_neighbour_ratio():
    near = [conv(cin=c) for c in (16, 20, 24)]
    op = conv(cin=18)
    # im2col measured 0.5x, 0.4x and 2x of IREE's build: one cliff does not outvote two
    db = database((near[0], {"plain/nchw": 10.0, "plain/im2col": 5.0, "plain/winograd": 1.0}),
                  (near[1], {"plain/nchw": 10.0, "plain/im2col": 4.0}),
                  (near[2], {"plain/nchw": 10.0, "plain/im2col": 20.0}))
    _, times = estimate(op, db)
    assert times["plain/im2col"] == pytest.approx(0.5 * times["plain/nchw"])
    assert "plain/winograd" not in times  # two neighbours could not build it: not guessed
    assert choose_plan([op], db).ops[0].layout == "im2col"


def test_neighbours_are_ops_that_take_the_same_layouts():
    # NHWC is measured on depthwise windows of 5x5 and up only: a 7x7 one read beside 3x3 ones
    # (nearer in shape) had no NHWC estimate and stayed in IREE's NCHW build (ConvNeXt)
    small = [conv(cin=c, size=40, k=3, kind="depthwise") for c in (40, 48, 56)]
    wide = [conv(cin=c, size=20, k=5, kind="depthwise") for c in (96, 128, 160)]
    db = database(*((s, {"plain/nchw": 10.0}) for s in small), *((s, {"plain/nchw": 10.0, "plain/nhwc": 2.0}) for s in wide))
    op = conv(cin=48, size=44, k=7, kind="depthwise")
    assert {e.shape.kh for e in db.nearest(op, 3)} == {5}
    assert estimate(op, db)[1]["plain/nhwc"] == pytest.approx(0.2 * estimate(op, db)[1]["plain/nchw"])
    assert choose_plan([op], db, modes=("plain",)).ops[0].layout == "nhwc"
    # and a 3x3 one reads the 3x3 ones
    assert {e.shape.kh for e in db.nearest(conv(cin=96, size=20, k=3, kind="depthwise"), 3)} == {3}


def test_a_window_convolution_leaves_iree_build_where_any_neighbour_fell_off_its_cliff():
    # IREE's NCHW build ran 2x im2col's time on one neighbour, 0.5x and 0.25x on the others
    times = ({"plain/nchw": 10.0, "plain/im2col": 5.0}, {"plain/nchw": 10.0, "plain/im2col": 20.0}, {"plain/nchw": 10.0, "plain/im2col": 40.0})
    op = conv(cin=18)
    db = database(*zip((conv(cin=c) for c in (16, 20, 24)), times))
    plan = choose_plan([op], db, modes=("plain",), im2col_min_gain=1.0)
    # chosen at the least ratio (0.5x), counted at the median (2x IREE's build)
    assert plan.ops[0].layout == "im2col"
    assert plan.ops[0].time_us == pytest.approx(2.0 * estimate(op, db)[1]["plain/nchw"])
    assert estimate(op, db, cautious=True)[1]["plain/im2col"] == pytest.approx(0.5 * estimate(op, db)[1]["plain/nchw"])
    # a 1x1 convolution's NCHW build has no such cliffs: the median decides
    pointwise = database(*zip((conv(cin=c, k=1) for c in (16, 20, 24)), times))
    assert choose_plan([conv(cin=18, k=1)], pointwise, modes=("plain",)).ops[0].layout == "nchw"


def test_a_mode_not_measured_counts_iree_time():
    plan = choose_plan([conv(), matmul()], database((conv(), {"plain/nchw": 100.0}), (matmul(), {"plain/nchw": 50.0, "data-tiling/nchw": 20.0})))
    assert plan.mode == "data-tiling" and plan.ops[0].layout == "nchw" and plan.estimates_us["data-tiling"] == 120.0


times = st.floats(min_value=1.0, max_value=1e4, allow_nan=False)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["conv", "depthwise", "matmul"]), st.dictionaries(
    st.sampled_from(["plain/nhwc", "plain/im2col", "data-tiling/nchw", "data-tiling/im2col"]), times), times), min_size=1, max_size=6))
def test_plan_is_never_estimated_slower_than_iree(ops):
    shapes, entries = [], []
    for i, (kind, extra, iree_time) in enumerate(ops):
        shape = matmul(m=8 + i) if kind == "matmul" else conv(cin=8 + i, kind=kind)
        shapes.append(shape)
        allowed = {k: v for k, v in extra.items() if k.split("/")[1] in shape.layouts()}
        entries.append((shape, {"/".join(IREE_DEFAULT): iree_time, **allowed}))
    plan = choose_plan(shapes, database(*entries))
    iree_total = sum(t["/".join(IREE_DEFAULT)] for _, t in entries)
    assert min(plan.estimates_us.values()) == plan.estimates_us[plan.mode]
    assert plan.estimates_us[plan.mode] <= round(iree_total, 1) + 1e-6
    assert all(c.layout in c.shape.layouts() for c in plan.ops)


def test_database_round_trip_and_errors(tmp_path):
    db = database((conv(), {"plain/nchw": 1.5}), (matmul(), {"plain/nchw": 2.0, "data-tiling/nchw": 1.0}))
    path = tmp_path / "db.json"
    db.save(str(path))
    again = CpuDatabase.load(str(path))
    assert again.isa == "x86_64-avx512" and again.entries == db.entries
    path.write_text('{"format": "schedc-cpu-kernels/1", "isa": "x", "entries": [{"shape": {"kind": "conv"}}]}')
    with pytest.raises(SchedcError, match="malformed CPU kernel database"):
        CpuDatabase.load(str(path))
    path.write_text("[1, 2")
    with pytest.raises(SchedcError, match="not a CPU kernel database"):
        CpuDatabase.load(str(path))
    with pytest.raises(SchedcError, match="cannot read the CPU kernel database"):
        CpuDatabase.load(str(tmp_path / "missing.json"))


def test_host_isa_and_the_builtin_database():
    assert host_isa({"fpu", "avx2", "avx512f"}) == "x86_64-avx512"
    assert host_isa({"avx2"}) == "x86_64-avx2"
    assert host_isa({"asimd"}) == "aarch64-neon"
    assert host_isa(set()) == "generic"
    builtin = default_database("aarch64-neon")  # no database of its own: AVX-512's ratios
    assert builtin is not None and builtin.isa == "x86_64-avx512" and builtin.entries
    kinds = {e.shape.kind for e in builtin.entries.values()}
    assert kinds == {"conv", "depthwise", "matmul"}
    avx2 = default_database("x86_64-avx2")  # measured on an AVX2 host: its own
    assert avx2 is not None and avx2.isa == "x86_64-avx2"
    assert {e.shape.kind for e in avx2.entries.values()} == kinds


def test_channels_last_is_a_mode_where_depthwise_counts_twice():
    dense = (conv(cin=32), {"plain/nchw": 100.0, "plain/im2col": 80.0, "channels-last/nchw": 40.0})
    second = (conv(cin=32, cout=48), {"plain/nchw": 100.0, "plain/im2col": 80.0, "channels-last/nchw": 40.0})
    depthwise = (conv(cin=32, kind="depthwise"), {"plain/nchw": 100.0, "channels-last/nchw": 100.0})
    # 40 + 40 + 2 x 100 = 280 against 80 + 80 + 100 = 260: the depthwise's transposes decide it
    plan = choose_plan([dense[0], second[0], depthwise[0]], database(dense, second, depthwise))
    assert plan.mode == "plain" and plan.estimates_us["channels-last"] == 280.0 and plan.ops[0].layout == "im2col"
    pair = (conv(cin=32, cout=16), {"plain/nchw": 100.0, "channels-last/nchw": 40.0})
    chained = choose_plan([dense[0], pair[0]], database(dense, pair))
    assert chained.mode == "channels-last" and [c.layout for c in chained.ops] == ["nchw", "nchw"]
    assert chained.iree_flags[0].startswith("--iree-preprocessing-pass-pipeline=") and "channels-last" in chained.iree_flags[0]
    # a lone convolution has no neighbour to cancel its transposes: never channels-last
    alone = choose_plan([dense[0]], database(dense))
    assert alone.mode == "plain" and alone.ops[0].layout == "im2col" and "channels-last" not in alone.estimates_us


def test_channels_last_takes_the_nhwc_kernel_op_by_op():
    # between NHWC neighbours schedc's NHWC kernel costs no transpose: each convolution takes
    # the faster of IREE's NHWC build and the kernel, and the mode sums those
    first = (conv(cin=32), {"plain/nchw": 100.0, "plain/gemm": 70.0, "channels-last/nchw": 40.0, "channels-last/gemm": 50.0})
    second = (conv(cin=32, cout=48), {"plain/nchw": 100.0, "plain/gemm": 70.0, "channels-last/nchw": 60.0, "channels-last/gemm": 35.0})
    plan = choose_plan([first[0], second[0]], database(first, second))
    assert plan.mode == "channels-last" and [c.layout for c in plan.ops] == ["nchw", "gemm"]
    assert 75.0 < plan.estimates_us["channels-last"] < 78.0  # 40 + 35, and the small charge of a kernel's consumers
    # not measured in the mode, the kernel is not guessed there
    unmeasured = [(shape, {k: v for k, v in times.items() if k != "channels-last/gemm"}) for shape, times in (first, second)]
    assert [c.layout for c in choose_plan([first[0], second[0]], database(*unmeasured)).ops] == ["nchw", "nchw"]
    # and where the kernel cannot be built, IREE's build
    assert [c.layout for c in choose_plan([first[0], second[0]], database(first, second), kernels=False).ops] == ["nchw", "nchw"]


def test_the_database_isa_is_the_hosts_unless_named(monkeypatch):
    from schedc.errors import CompileError
    from schedc.passes.cpu_config import ISA_VARIABLE, database_isa
    from schedc.targets import host_cpu_features

    monkeypatch.setenv(ISA_VARIABLE, "x86_64-avx2")
    assert database_isa() == "x86_64-avx2"
    monkeypatch.delenv(ISA_VARIABLE)
    assert database_isa() == host_isa(host_cpu_features())
    monkeypatch.setenv(ISA_VARIABLE, "avx2")
    with pytest.raises(CompileError, match="SCHEDC_CPU_ISA=avx2 is no ISA.*x86_64-avx2"):
        database_isa()
