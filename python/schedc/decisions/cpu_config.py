"""cpu-config's decision: how IREE's llvm-cpu code generation should build each convolution and
matmul, from times measured on CPUs. Pure Python over plain data.

Which of IREE 3.13's CPU levers apply to one op and which to the whole module was measured
(bench/README.md, "CPU"); the choice follows:
- per op: a convolution's layout. `nchw` is IREE's own build of it; `im2col` is a matmul over
  an im2col'd image; `winograd` is IREE's Winograd F(6,3) for 3x3 windows at stride 1. IREE's
  passes for these are whole-function passes; schedc applies them one op at a time
  (schedc.ir.cpu_ops.rewrite_op). `gemm` is a matmul, or a convolution's im2col matmul, run by
  schedc's own kernel (schedc.kernels: AVX2/FMA or AVX-512, f32) in place of IREE's code.
- per module: the mode. `data-tiling` packs matmuls into the target's register tiles
  (`--iree-opt-data-tiling` with micro-kernels, `--iree-llvmcpu-enable-ukernels=all`; data
  tiling without micro-kernels was slower than either on every model measured).
  `channels-last` has IREE convert the convolutions left in `nchw` to NHWC in its
  preprocessing, where its transposes cancel between neighbours and its filter transposes fold
  at compile time: the same pass applied to one op at a time left them in, and a ResNet-18 ran
  7x slower than IREE alone, against 0.26x with the module-wide flag. Both may be combined.
  IREE takes all of these as flags only.

Each op's time in each mode and layout comes from a database of measurements (`CpuDatabase`):
an entry measured for the same shape wins (`schedc tune --target=llvm-cpu` writes them);
otherwise neighbours estimate it (`estimate`; the built-in database is a synthetic sweep,
`python bench/sweep.py cpu`). The plan takes, for each mode, the fastest layout of every op,
and the mode whose sum is least. IREE's own build (plain, nchw) is always among the
candidates, so the plan is never estimated slower than IREE alone.
"""

from __future__ import annotations

import json
import math
import statistics
from dataclasses import asdict, dataclass, field
from pathlib import Path

from schedc.errors import SchedcError

LAYOUTS = ("nchw", "im2col", "winograd", "nhwc", "gemm")
# The layouts that run schedc's own kernel (schedc.kernels), where it can be built.
KERNEL_LAYOUTS = ("gemm",)
IREE_DEFAULT = ("plain", "nchw")
_DATA_TILING = ("--iree-opt-data-tiling", "--iree-llvmcpu-enable-ukernels=all")
_CHANNELS_LAST = ("--iree-preprocessing-pass-pipeline=builtin.module(util.func(iree-preprocessing-convert-conv-to-channels-last))",)
MODE_FLAGS = {
    "plain": (),
    "data-tiling": _DATA_TILING,
    "channels-last": _CHANNELS_LAST,
    "channels-last+data-tiling": _CHANNELS_LAST + _DATA_TILING,
}
MODES = tuple(MODE_FLAGS)
CHANNELS_LAST_MODES = ("channels-last", "channels-last+data-tiling")
# In a channels-last mode a depthwise convolution stays NCHW (IREE's pass leaves it), between
# neighbours in NHWC: the transposes into and out of it move the bytes it reads and writes
# again, so it counts this many times its own time.
DEPTHWISE_IN_CHANNELS_LAST = 2.0
# im2col materialises a window convolution's patches (its input channels x window x output
# pixels: 6.6 MB for the demo's 64 channels 5x5 at 32x32, 12x the rest of its transients), so a
# window convolution takes it only where it is estimated at least this much faster than the
# mode's best other layout. (A 1x1 convolution's im2col is a reshape: no patches.)
IM2COL_MIN_GAIN = 1.25
# IREE's CPU code generation rejects a dispatch whose stack buffers pass 32 KiB (its default);
# data tiling and im2col made some just over it (34,816 B on bench/models.py's randwire, which
# then ran correctly on IREE's task runtime). Every plan but IREE's own takes twice the room.
STACK_FLAG = "--iree-llvmcpu-stack-allocation-limit=65536"
# IREE's const-eval JIT-compiles and runs the constant work hoisted out of the model (filter
# transposes of channels-last, packs of data tiling and of schedc's kernel) at compile time;
# off, the same work runs once when the module loads. On this 2-core host it took ResNet-18's
# compile from 23.3 to 17.9 s, SqueezeNet's from 5.2 to 4.5 and ViT's from 5.3 to 4.8 (medians,
# compiles alternating), with the same per-call times, load times and outputs (bench/README.md,
# "Const-eval at load"). Every plan but IREE's own takes it.
LOAD_TIME_FLAG = "--iree-opt-const-eval=false"
PLAN_FLAGS = (STACK_FLAG, LOAD_TIME_FLAG)
KINDS = ("conv", "depthwise", "matmul")
# The largest filter (input x output channels) whose Winograd transform IREE 3.13 hoisted to
# load time in the sweep (120 x 40, 10x faster than its NCHW build); from 128 x 128 up it was
# recomputed every call, 2-16x slower (under --iree-opt-const-expr-max-size-increase-threshold's
# default). Between the two nothing was measured: the bound stays at what was.
WINOGRAD_MAX_CHANNEL_PAIRS = 120 * 40
FORMAT = "schedc-cpu-kernels/1"


@dataclass(frozen=True)
class OpShape:
    """A convolution or matmul as IREE's input phase has it (NCHW images, FCHW filters)."""

    kind: str  # conv, depthwise or matmul (batch matmuls too)
    dtype: str
    batch: int = 1
    cin: int = 0
    cout: int = 0
    h: int = 0  # the image's size, padding included
    w: int = 0
    kh: int = 1
    kw: int = 1
    stride: tuple[int, int] = (1, 1)
    dilation: tuple[int, int] = (1, 1)
    groups: int = 1
    m: int = 0  # matmuls: (batch x) m x k times k x n
    n: int = 0
    k: int = 0
    # The op adds into an output that is not zero (torch's bias, broadcast into it): not part
    # of the key, since the time is the same.
    accumulates: bool = False

    def __post_init__(self):
        if self.kind not in KINDS:
            raise ValueError(f"unknown op kind '{self.kind}'; kinds: {', '.join(KINDS)}")
        object.__setattr__(self, "stride", tuple(self.stride))
        object.__setattr__(self, "dilation", tuple(self.dilation))

    @property
    def out_hw(self) -> tuple[int, int]:
        oh = (self.h - self.dilation[0] * (self.kh - 1) - 1) // self.stride[0] + 1
        ow = (self.w - self.dilation[1] * (self.kw - 1) - 1) // self.stride[1] + 1
        return oh, ow

    @property
    def work(self) -> int:
        """Multiply-adds."""
        if self.kind == "matmul":
            return self.batch * self.m * self.n * self.k
        oh, ow = self.out_hw
        per_output = self.kh * self.kw * (self.cin // self.groups)
        return self.batch * self.cout * oh * ow * per_output

    @property
    def key(self) -> str:
        if self.kind == "matmul":
            return f"matmul {self.batch}x{self.m}x{self.n}x{self.k} {self.dtype}"
        return (f"{self.kind} {self.batch}x{self.cin}x{self.h}x{self.w} -> {self.cout} k{self.kh}x{self.kw} "
                f"s{self.stride[0]}x{self.stride[1]} d{self.dilation[0]}x{self.dilation[1]} {self.dtype}")

    def layouts(self, mode: str = IREE_DEFAULT[0]) -> tuple[str, ...]:
        """The layouts this op may take in `mode` (IREE builds some of them only for some ops: a
        measured database entry has times for those it built): matmuls have none to choose;
        in a channels-last mode a convolution is IREE's NHWC one or, a window or strided one,
        schedc's NHWC kernel; Winograd is for 3x3 windows at stride 1 into a zero output."""
        gemm = ("gemm",) if self.dtype == "f32" else ()
        if self.kind == "matmul":
            return ("nchw", *gemm)
        if mode in CHANNELS_LAST_MODES:
            # IREE's NHWC build, or schedc's NHWC kernel for a window or strided convolution
            # (its transposes cancel against the neighbours' in the mode; a 1x1 one at stride 1
            # stays IREE's NHWC matmul).
            pointwise = (self.kh, self.kw, self.stride) == (1, 1, (1, 1))
            return ("nchw", *gemm) if self.kind == "conv" and not pointwise else ("nchw",)
        if self.kind == "depthwise":
            # NHWC between transposes (schedc.ir.cpu_ops) for windows of 5x5 and up: with its
            # 7x7 ones in it ConvNeXt ran 0.31-0.35x IREE alone (0.48x before); on 3x3 ones the
            # transposes cost more than they save (RandWire 0.82x -> 1.65x IREE alone;
            # bench/cpu.py, bench/README.md "Depthwise convolutions in NHWC").
            return ("nchw", "nhwc") if self.kh * self.kw >= 25 else ("nchw",)
        # IREE's Winograd drops what the output held before (a bias broadcast into it was lost:
        # 3% off on test/python/test_cpu_end_to_end.py's net), so it takes zero outputs only;
        # and it is fast only where IREE hoists the filter transform to load time, which it
        # does for small filters only (WINOGRAD_MAX_CHANNEL_PAIRS).
        winograd = ((self.kh, self.kw, self.stride, self.dilation) == (3, 3, (1, 1), (1, 1)) and not self.accumulates
                    and self.cin * self.cout <= WINOGRAD_MAX_CHANNEL_PAIRS)
        return tuple(layout for layout in LAYOUTS if layout != "nhwc" and (winograd or layout != "winograd") and (gemm or layout != "gemm"))

    def features(self) -> tuple[float, ...]:
        """Log-scale coordinates for the nearest measured shape."""
        if self.kind == "matmul":
            dims = (self.batch * self.m, self.n, self.k)
        else:
            oh, ow = self.out_hw
            dims = (self.cin, self.cout, oh * ow, self.kh * self.kw, self.stride[0] * self.stride[1])
        return tuple(math.log2(max(d, 1)) for d in dims)

    def to_json(self) -> dict:
        return {k: list(v) if isinstance(v, tuple) else v for k, v in asdict(self).items()}

    @staticmethod
    def from_json(data: dict) -> "OpShape":
        return OpShape(**data)


@dataclass(frozen=True)
class CpuEntry:
    """Measured times of one op, in microseconds, by "mode/layout" (e.g. "plain/nchw")."""

    shape: OpShape
    times_us: dict

    def time(self, mode: str, layout: str) -> float | None:
        return self.times_us.get(f"{mode}/{layout}")


@dataclass
class CpuDatabase:
    """Measured CPU op times for one host ISA (x86_64 with AVX-512, ...)."""

    isa: str
    entries: dict = field(default_factory=dict)  # key -> CpuEntry
    path: str | None = None

    def add(self, entry: CpuEntry) -> None:
        self.entries[entry.shape.key] = entry

    def exact(self, shape: OpShape) -> CpuEntry | None:
        return self.entries.get(shape.key)

    def nearest(self, shape: OpShape, count: int = 1) -> list[CpuEntry]:
        """The `count` measured entries of the same kind and element type closest in
        log-shape, nearest first: among those whose op takes the same layouts where there are
        any. A layout is measured only on the ops that take it, so a 7x7 depthwise convolution
        read beside 3x3 ones had no estimate in NHWC and stayed in IREE's NCHW build at 4-7x
        the time (ConvNeXt's 48-channel ones; bench/README.md, "Neighbours that take the
        op's layouts")."""
        same = [e for e in self.entries.values() if e.shape.kind == shape.kind and e.shape.dtype == shape.dtype]
        alike = [e for e in same if e.shape.layouts() == shape.layouts()]
        same = alike or same
        here = shape.features()
        return sorted(same, key=lambda e: (sum((a - b) ** 2 for a, b in zip(here, e.shape.features())), e.shape.key))[:count]

    def to_json(self) -> dict:
        return {
            "format": FORMAT, "isa": self.isa,
            "entries": [{"shape": e.shape.to_json(), "times_us": e.times_us} for _, e in sorted(self.entries.items())],
        }

    def save(self, path: str) -> None:
        from schedc.outputs import write_output

        write_output(str(path), json.dumps(self.to_json(), indent=1) + "\n")

    @staticmethod
    def load(path: str) -> "CpuDatabase":
        try:
            data = json.loads(Path(path).read_text())
        except OSError as e:
            raise SchedcError(f"cannot read the CPU kernel database {path}: {e.strerror}") from None
        except (json.JSONDecodeError, UnicodeDecodeError) as e:
            raise SchedcError(f"{path}: not a CPU kernel database: {e}") from None
        if not isinstance(data, dict) or data.get("format") != FORMAT:
            raise SchedcError(f"{path}: not a CPU kernel database (its format is not {FORMAT})")
        try:
            database = CpuDatabase(str(data["isa"]), path=str(path))
            for item in data["entries"]:
                database.add(CpuEntry(OpShape.from_json(item["shape"]), {str(k): float(v) for k, v in item["times_us"].items()}))
        except (KeyError, TypeError, ValueError, AttributeError) as e:
            raise SchedcError(f"{path}: a malformed CPU kernel database ({type(e).__name__}: {e})") from None
        return database


def data_tiles(shape: OpShape, layout: str) -> bool:
    """Whether IREE's data tiling reaches this op in this layout: a matmul, or the matmul a
    convolution becomes in im2col or Winograd (IREE 3.13 data-tiles no convolution); not
    schedc's own kernel."""
    return layout != "gemm" and (shape.kind == "matmul" or (shape.kind == "conv" and layout in ("im2col", "winograd")))


# The modes a plan chooses among, per op, when data tiling is chosen op by op: IREE 3.13
# data-tiles only the ops marked with its hint (`iree.opt.data_tiling`) once any op carries one
# (`schedc.ir.cpu_ops.rewrite_op` marks them), so data tiling is a choice per op, while
# channels-last stays one for the module.
FAMILIES = {"plain": ("plain", "data-tiling"), "channels-last": ("channels-last", "channels-last+data-tiling")}
DATA_TILING_MODES = ("data-tiling", "channels-last+data-tiling")


@dataclass(frozen=True)
class OpChoice:
    shape: OpShape
    layout: str
    source: str  # "measured" (an entry for this shape), "nearest" (a similar shape's), "none"
    time_us: float | None  # estimated in the plan's mode and layout
    data_tiling: bool = False  # IREE data-tiles this op (its hint)


@dataclass(frozen=True)
class CpuPlan:
    mode: str  # plain or channels-last (FAMILIES), or one of MODES for every op
    ops: tuple[OpChoice, ...]
    estimates_us: dict  # mode -> the model's estimated convolution and matmul time

    @property
    def is_iree_default(self) -> bool:
        return self.mode == IREE_DEFAULT[0] and all(c.layout == IREE_DEFAULT[1] and not c.data_tiling for c in self.ops)

    @property
    def iree_flags(self) -> tuple[str, ...]:
        if self.is_iree_default:
            return ()
        tiled = _DATA_TILING if any(c.data_tiling for c in self.ops) else ()
        return (_CHANNELS_LAST if self.mode in CHANNELS_LAST_MODES else ()) + tiled + PLAN_FLAGS


# Neighbours an unmeasured op's estimate reads. The times of CPU code across shapes have cliffs
# (a Winograd filter transform IREE hoists to load time or not, by its size; a shape the
# vector width divides or not), so one neighbour is not enough: a choice's ratio to IREE's own
# build is the median of three neighbours'. (The largest of the three, tried too, kept
# channels-last and im2col from SqueezeNet's and ConvNeXt's convolutions, one neighbour's
# cliff outvoting two: 4.4x and 1.3x torch eager, against 0.6x and 0.9x.)
NEIGHBOURS = 3
# Except for the cliffs of IREE's own NCHW build of a window convolution. Across the AVX2
# sweep's 38 window convolutions it ran 0.5-16x the time of their im2col matmul, high and low
# among shapes side by side (64 -> 64 channels 3x3: 1.1x at 44x44 outputs, 12x at 30x30), and
# no neighbour foretells it; im2col and Winograd build matmuls, whose times are smooth. So a
# window convolution's layout is chosen cautiously: their ratio to IREE's build at the least
# among the neighbours', IREE's build taken only where no neighbour fell off its cliff. Left
# out one at a time, each of the 38 estimated from the other 37 (`python bench/sweep.py
# cpu-loo`): the chosen layout ran at most 2.0x the fastest (geometric mean 1.05x), against
# 9.9x (1.10x) chosen on the median. The plan's time still counts the median: the caution
# is in the choice, not in the estimate that modes are compared by.
SMOOTH_LAYOUTS = ("im2col", "winograd", "gemm")
# The layouts that materialise a window convolution's patches (IM2COL_MIN_GAIN); schedc's
# convolution kernel reads its image in place.
PATCH_LAYOUTS = ("im2col",)


def estimate(shape: OpShape, database: CpuDatabase | None, cautious: bool = False) -> tuple[str, dict]:
    """(source, {"mode/layout": us}) for one op: its own entry's times; else IREE's build
    from the nearest entry scaled by the work ratio, and each other mode/layout at the
    median ratio to IREE's build among the NEIGHBOURS nearest entries, when all measured it
    (`cautious`: a window convolution's im2col and Winograd at the least, SMOOTH_LAYOUTS)."""
    if database is None:
        return "none", {}
    entry = database.exact(shape)
    if entry is not None:
        return "measured", dict(entry.times_us)
    neighbours = database.nearest(shape, NEIGHBOURS)
    default = "/".join(IREE_DEFAULT)
    if not neighbours:
        return "none", {}
    iree_time = neighbours[0].times_us[default] * shape.work / max(neighbours[0].shape.work, 1)
    candidates = {k for e in neighbours for k in e.times_us}
    window = shape.kind == "conv" and shape.kh * shape.kw > 1
    times = {}
    for candidate in sorted(candidates):
        ratios = [e.times_us[candidate] / e.times_us[default] for e in neighbours if candidate in e.times_us]
        if len(ratios) == len(neighbours):  # a layout some neighbour lacks (IREE could not build it) is not guessed
            mode, layout = candidate.split("/")
            least = cautious and window and layout in SMOOTH_LAYOUTS and mode not in CHANNELS_LAST_MODES
            times[candidate] = iree_time * (min(ratios) if least else statistics.median(ratios))
    return "nearest", times


@dataclass(frozen=True)
class _Option:
    time: float  # the estimate
    choosing: float  # the cautious one (SMOOTH_LAYOUTS)
    order: tuple  # IREE's own build first: ties go to it
    layout: str
    mode: str


def _choose(options: list[_Option]) -> _Option:
    """The fastest option: among im2col and Winograd (matmuls, smooth) and among the rest on
    their estimates, between the two on the cautious estimate of the first."""
    smooth = [o for o in options if o.layout in SMOOTH_LAYOUTS]
    rough = [o for o in options if o.layout not in SMOOTH_LAYOUTS]
    fastest = lambda found: min(found, key=lambda o: (o.time, o.order))  # noqa: E731
    if not smooth or not rough:
        return fastest(smooth or rough)
    s, r = fastest(smooth), fastest(rough)
    return s if s.choosing < r.time else r


# IREE fuses an op's elementwise consumers (bias, batch norm, activation) into its dispatch; a
# dispatch of schedc's kernels takes none, so they run in one more dispatch over its output,
# which an op timed alone does not show. It counts this much per op plus per MB of output, a
# small charge: three bench models timed alternating under charges of 5 + 20/MB, 2 + 5/MB and
# none ran within 4% of each other (bench/README.md, CPU), the bench transformer's small
# matmuls kept in IREE's build by the larger charges, half of them by this one.
UNFUSED_US, UNFUSED_US_PER_MB = 2.0, 5.0


def _unfused(shape: OpShape, layout: str) -> float:
    """The estimated time of the dispatch an op in schedc's kernels adds for its consumers."""
    if layout not in KERNEL_LAYOUTS:
        return 0.0
    if shape.kind == "matmul":
        elements = shape.batch * shape.m * shape.n
    else:
        oh, ow = shape.out_hw
        elements = shape.batch * shape.cout * oh * ow
    return UNFUSED_US + UNFUSED_US_PER_MB * elements * 4 / 2**20


def _key(shape: OpShape, mode: str, layout: str) -> str:
    """The database's time for `shape` in `mode` and `layout`. A mode's flag changes only the ops
    it reaches: schedc's kernels are the same code in every mode (but a convolution's in a
    channels-last mode, the NHWC kernel), so their plain (channels-last) time counts in all, and
    an op data tiling does not reach counts its time without it. Read apart, the noise between
    one op's times in two modes chose a mode for nothing (five of nine held-out models went to
    data-tiling, GPT-2 with no op left to tile)."""
    if layout in KERNEL_LAYOUTS:
        family = "channels-last" if shape.kind == "conv" and mode in CHANNELS_LAST_MODES else IREE_DEFAULT[0]
        return f"{family}/{layout}"
    if mode in DATA_TILING_MODES and not data_tiles(shape, layout):
        mode = next(family for family, members in FAMILIES.items() if mode in members)
    return f"{mode}/{layout}"


def choose_plan(shapes: list[OpShape], database: CpuDatabase | None, modes=MODES, im2col_min_gain: float = IM2COL_MIN_GAIN,
                cautious: bool = True, per_op_tiling: bool = False, kernels: bool = True) -> CpuPlan:
    """The mode, and each op's layout, estimated fastest, a window convolution's im2col only
    where `im2col_min_gain` times faster than its best other layout. With `per_op_tiling`,
    each op that data tiling reaches takes it or not on its own (FAMILIES); otherwise one mode
    holds for every op. Layouts are chosen on the cautious estimate (`cautious`), modes on the
    plain one (SMOOTH_LAYOUTS). `kernels`: schedc's own kernels can be built (KERNEL_LAYOUTS).
    Ops with no estimate keep IREE's layout and count the same in every mode. IREE's own build
    wins ties."""
    estimates = [estimate(s, database) for s in shapes]
    choices = [estimate(s, database, cautious=True)[1] for s in shapes] if cautious else [times for _, times in estimates]
    if sum(s.kind == "conv" for s in shapes) < 2:
        # Channels-last pays where neighbouring convolutions cancel each other's transposes; a
        # lone one (a ViT's patch embedding) has both ends at a transpose that its measurement
        # between neighbours leaves out (ViT ran 2.3x slower in the mode than without it).
        modes = tuple(m for m in modes if m not in CHANNELS_LAST_MODES) or modes
    if per_op_tiling:
        plans = {family: tuple(m for m in members if m in modes) for family, members in FAMILIES.items()}
        plans = {family: members for family, members in plans.items() if members and family in modes}
    else:
        plans = {mode: (mode,) for mode in modes}
    plans = plans or {mode: (mode,) for mode in modes}
    best: dict[str, list[tuple[str, float | None, bool]]] = {}
    totals: dict[str, float] = {}
    for name, members in plans.items():
        picks, total = [], 0.0
        for shape, (_, times), choosing in zip(shapes, estimates, choices):
            default = times.get("/".join(IREE_DEFAULT))
            options = [_Option(times[key] + _unfused(shape, layout), choosing[key] + _unfused(shape, layout), (j, i), layout, mode)
                       for j, mode in enumerate(members) for i, layout in enumerate(shape.layouts(mode)) if (key := _key(shape, mode, layout)) in choosing
                       and (kernels or layout not in KERNEL_LAYOUTS)
                       and (mode not in DATA_TILING_MODES or data_tiles(shape, layout) or len(members) == 1)]
            if default is None:  # nothing known: IREE's layout, the same in every mode
                picks.append(("nchw", None, members[0] in DATA_TILING_MODES and data_tiles(shape, "nchw")))
                continue
            if not options:  # not measured in this mode: IREE's layout at IREE's time
                options = [_Option(default, default, (0, 0), "nchw", members[0])]
            pick = _choose(options)
            others = [option for option in options if option.layout not in PATCH_LAYOUTS]
            if pick.layout in PATCH_LAYOUTS and shape.kh * shape.kw > 1 and others:
                other = _choose(others)
                if other.time < (pick.time if other.layout in SMOOTH_LAYOUTS else pick.choosing) * im2col_min_gain:
                    pick = other
            time = pick.time
            if shape.kind == "depthwise" and pick.mode in CHANNELS_LAST_MODES:
                time *= DEPTHWISE_IN_CHANNELS_LAST
            picks.append((pick.layout, time, pick.mode in DATA_TILING_MODES and data_tiles(shape, pick.layout)))
            total += time
        best[name], totals[name] = picks, total
    mode = min(plans, key=lambda m: (totals[m], m != IREE_DEFAULT[0]))
    ops = tuple(OpChoice(s, layout, source, time, tiled) for s, (source, _), (layout, time, tiled) in zip(shapes, estimates, best[mode]))
    return CpuPlan(mode, ops, {m: round(t, 1) for m, t in totals.items()})


# schedc's matmul kernel (schedc.kernels) computes one workgroup's tile of the result, rows x
# columns, in strips of 6 rows and panels of 16 columns, over all of K. A tile streams its rows
# of A once; each of its panels of B is packed once per tile. So more tiles across the columns
# read A again, and more down the rows pack B again. `gemm_tiles` weighs both against the
# padding of partial strips and panels, in multiply-adds: a byte of A read from memory counts
# A_BYTE_COST of them, an element of B packed B_PACK_COST. Set by hand on this 2-core AVX2 host
# (bench/README.md, CPU).
GEMM_MAX_ROWS, GEMM_MAX_COLUMNS = 96, 256
A_BYTE_COST, B_PACK_COST = 2.5, 2.0
# Workgroups enough for IREE's task runtime to share among cores, where the op has them.
GEMM_MIN_TILES = 6


def _up(value: int, step: int) -> int:
    return -(-value // step) * step


def gemm_tiles(batch: int, m: int, n: int, k: int) -> tuple[int, int]:
    """The rows and columns of the result one workgroup of schedc's matmul computes: of the
    tilings with at least GEMM_MIN_TILES workgroups (or the most there can be), the one of
    least estimated cost; ties to larger tiles."""
    rows = sorted({min(r, _up(m, 6)) for r in range(6, GEMM_MAX_ROWS + 1, 6)} | ({_up(m, 6)} if m <= GEMM_MAX_ROWS + 6 else set()))
    columns = sorted({min(c, _up(n, 16)) for c in range(16, GEMM_MAX_COLUMNS + 1, 16)})

    def padded(size: int, tile: int, panel: int) -> int:
        rest = size % tile
        return size - rest + (0 if rest == 0 else 8 if panel == 16 and rest <= 8 else _up(rest, panel))

    def cost(r: int, c: int) -> float:
        row_tiles, column_tiles = -(-m // r), -(-n // c)
        columns_done = padded(n, c, 16)
        return batch * (padded(m, r, 6) * columns_done * k + A_BYTE_COST * 4 * column_tiles * m * k + B_PACK_COST * row_tiles * k * columns_done)

    tiles = lambda r, c: batch * -(-m // r) * -(-n // c)  # noqa: E731
    enough = min(GEMM_MIN_TILES, tiles(rows[0], columns[0]))
    return min(((r, c) for r in rows for c in columns if tiles(r, c) >= enough), key=lambda t: (cost(*t), -t[0] * t[1]))


# schedc's convolution kernel computes a workgroup's tile of output channels x output pixels in
# panels of 16 channels and strips of 6 pixels. On four ResNet-18 layers (64 channels at 56x56 to
# 512 at 7x7) tiles of 64 x 96 ran at 0.7-1.0x torch's time and within 5% of the best of seven
# tilings measured (bench/README.md, CPU).
CONV_CHANNELS, CONV_PIXELS = 64, 96


def conv_tiles(batch: int, channels: int, pixels: int) -> tuple[int, int]:
    """The output channels and pixels one workgroup of schedc's convolution computes: up to
    CONV_CHANNELS x CONV_PIXELS, the pixels halved (in strips of 6), then the channels (in
    panels of 16), until there are GEMM_MIN_TILES workgroups or no smaller tile."""
    rows, columns = min(_up(channels, 16), CONV_CHANNELS), min(_up(pixels, 6), CONV_PIXELS)
    tiles = lambda: batch * -(-channels // rows) * -(-pixels // columns)  # noqa: E731
    while tiles() < GEMM_MIN_TILES and columns > 6:
        columns = _up(columns // 2, 6)
    while tiles() < GEMM_MIN_TILES and rows > 16:
        rows -= 16
    return rows, columns


# Each ISA a database can be measured for, by the host CPU flag that names it (widest first).
ISA_FLAGS = (("avx512f", "x86_64-avx512"), ("avx2", "x86_64-avx2"), ("sve", "aarch64-sve"), ("asimd", "aarch64-neon"))
ISAS = tuple(name for _, name in ISA_FLAGS) + ("generic",)


def host_isa(cpu_flags: set[str]) -> str:
    """The database name for a host: its architecture and widest vector extension."""
    for flag, name in ISA_FLAGS:
        if flag in cpu_flags:
            return name
    return "generic"


def default_database_path(isa: str) -> Path | None:
    """The built-in database file for the host's ISA, or the x86_64 AVX-512 one, whose ratios
    between layouts are the best guess measured anywhere."""
    folder = Path(__file__).resolve().parent.parent / "kernel_db"
    for name in (isa, "x86_64-avx512"):
        path = folder / f"cpu-{name}.json"
        if path.exists():
            return path
    return None


def default_database(isa: str) -> CpuDatabase | None:
    path = default_database_path(isa)
    return CpuDatabase.load(str(path)) if path is not None else None


# Max pools run in schedc's kernel (its `maxpool`: stride 1, the image read unpadded) in up to
# POOL_TILES workgroups of whole channels, so both of a 2-core machine's workers get several.
POOL_TILES = 16
# The kernel's limits (gemm_x86_64.c): a window of at most POOL_WINDOW rows and columns, and
# its ring of the window's rows of column maxima, POOL_RING floats on the stack.
POOL_WINDOW, POOL_RING = 16, 2048


@dataclass(frozen=True)
class PoolShape:
    """A max pool as plain data: what schedc's kernel needs to know of it."""

    element: str
    strides: tuple[int, int]
    dilations: tuple[int, int]
    padding: tuple[int, int, int, int]  # rows above and below, columns left and right
    window: tuple[int, int]
    out_width: int


def pool_kernel(pool: PoolShape) -> bool:
    """Whether schedc's kernel runs the max pool: f32, stride and dilation 1 (the kernel reads
    a window's columns as one contiguous row), padding narrower than the window (a torch pool's
    is at most half of it), so every output sees part of the image, and within the kernel's
    limits."""
    top, bottom, left, right = pool.padding
    rows, columns = pool.window
    return (pool.element == "f32" and pool.strides == (1, 1) and pool.dilations == (1, 1)
            and max(top, bottom) < rows and max(left, right) < columns
            and max(rows, columns) <= POOL_WINDOW and rows * pool.out_width <= POOL_RING)


def pool_tiles(channels: int) -> int:
    """The channels one workgroup of schedc's max pool computes."""
    return -(-channels // min(channels, POOL_TILES))


# Depthwise convolutions of stride 1 or 2 run in schedc's kernel (its `depthwise`: the image read
# unpadded, the taps outside it skipped) in up to DEPTHWISE_TILES workgroups of whole channels,
# where the module stays NCHW; windows of at most DEPTHWISE_WINDOW rows and columns.
DEPTHWISE_TILES, DEPTHWISE_WINDOW = 16, 16


@dataclass(frozen=True)
class DepthwiseShape:
    """A depthwise convolution as plain data: what schedc's kernel needs to know of it."""

    element: str
    strides: tuple[int, int]
    dilations: tuple[int, int]
    padding: tuple[int, int, int, int]  # zero rows above and below, columns left and right
    window: tuple[int, int]
    multiplier: int  # output channels per input channel


def depthwise_kernel(conv: DepthwiseShape) -> bool:
    """Whether schedc's kernel runs the depthwise convolution: f32, the same stride of 1 or 2
    along both axes (the kernel reads a window's columns as a row, or a row's even elements),
    dilation 1, one output channel per input channel, padding narrower than the window (so
    every output reads part of the image), and a window within the kernel's limit."""
    top, bottom, left, right = conv.padding
    rows, columns = conv.window
    return (conv.element == "f32" and conv.strides in ((1, 1), (2, 2)) and conv.dilations == (1, 1) and conv.multiplier == 1
            and max(top, bottom) < rows and max(left, right) < columns and max(rows, columns) <= DEPTHWISE_WINDOW)


def depthwise_tiles(channels: int) -> int:
    """The channels one workgroup of schedc's depthwise convolution computes."""
    return -(-channels // min(channels, DEPTHWISE_TILES))

