"""Code-generation configs for GPU kernels: signatures, candidates, a heuristic, a database.

Pure Python over plain data (no MLIR): `schedc.ir.dispatches` reads a dispatch's root op into a
`KernelSignature`, this module decides its `KernelConfig`, the `kernel-config` pass writes it on
the IR as IREE's `compilation_info`, which IREE's GPU code generation honours per op.

A config is IREE's TileAndFuse pipeline with explicit tiles, one entry per loop of the root op
(in its loop order):

    workgroup  tile of each parallel loop a workgroup computes (0: loop not tiled)
    reduction  tile of each reduction loop per step (operands staged in shared memory when
               `promote` lists them)
    thread     tile of each parallel loop one thread computes
    workgroup_size = product over tiled parallel loops of workgroup / thread

Where a config comes from, in order (`choose_config`): the database (measured on a chip by
`schedc tune`), the analytic heuristic (fill the SMs with workgroups, tile K with operand
promotion), or IREE's own choice (no config written).
"""

from __future__ import annotations

import json
import math
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path

from schedc.errors import SchedcError

# Op classes (`KernelSignature.kind`) schedc configures, and those it leaves to IREE.
TILED_KINDS = ("matmul", "batch_matmul", "matmul_like", "conv", "depthwise_conv")
# Pooling: IREE's default puts a warp's 32 lanes on 32 channels of one pixel, strided by a
# whole plane in NCHW; the heuristic tiles rows and columns instead, as for depthwise ones.
POOLING_KINDS = ("pooling",)
ELEMENTWISE_KINDS = ("elementwise",)
# A scatter (the KV cache's update at a position): IREE's default has every thread of a
# workgroup loop over all of its 64 updates, the same ones (22 us a layer's keys on the H200,
# for 768 values); the heuristic gives each thread one update.
SCATTER_KINDS = ("scatter",)
OTHER_KINDS = ("reduction", "softmax", "copy", "other")
# Loops above this range that are not multiples of 32 (a convolution's 55x55 or 28x28 output)
# also get tiles whose last one is partial, which IREE's TileAndFuse bounds (checked by
# compiling for cuda).
PARTIAL_TILE_ABOVE = 8
# The threads of one workgroup: IREE's GPU pipelines distribute by 32-lane subgroups.
SUBGROUP = 32
MAX_THREADS = 1024
DATABASE_FORMAT = 1


@dataclass(frozen=True)
class KernelSignature:
    """What decides a kernel's best config: its root op and everything fused around it.

    `key` is a digest of the whole dispatch body (root op, fused producers and consumers,
    shapes, element types, indexing maps), so two dispatches share database entries only when
    they compute the same thing; the other fields are what the heuristic and people read."""

    key: str
    kind: str  # one of TILED_KINDS, POOLING_KINDS, ELEMENTWISE_KINDS, SCATTER_KINDS, OTHER_KINDS
    root: str  # the root op's name, e.g. linalg.matmul
    loops: tuple[int, ...]  # static loop ranges of the root op, in its loop order
    iterators: tuple[str, ...]  # "parallel" or "reduction" per loop
    indexing_maps: tuple[str, ...]  # the root op's maps, as MLIR prints them
    operand_shapes: tuple[tuple[int, ...], ...]
    element_type: str  # of the root op's first operand, e.g. f16 (the type it computes in)
    fused: tuple[str, ...] = ()  # the other linalg ops in the dispatch
    name: str = ""  # IREE's summary of the dispatch, e.g. matmul_32x384x128_f32
    # The root is one of several contractions chained in the dispatch, or starts from a value
    # read from memory instead of a fill (split-concat's partial sums, which IREE fuses into
    # one dispatch): IREE's TileAndFuse failed to compile heuristic configs there.
    chained: bool = False
    result_type: str = ""  # of the root op's result (an f16 matmul's f32 accumulator); "": as element_type

    @property
    def parallel_loops(self) -> list[int]:
        return [i for i, it in enumerate(self.iterators) if it == "parallel"]

    @property
    def reduction_loops(self) -> list[int]:
        return [i for i, it in enumerate(self.iterators) if it == "reduction"]

    def describe(self) -> str:
        return f"{self.kind} {'x'.join(map(str, self.loops))} {self.element_type}"

    @property
    def structure(self) -> tuple:
        """What a config is chosen for: the root op (its kind, loops, maps, operand shapes and
        types) and the ops fused with it, without the rest of the body that the key digests.
        Two dispatches of one structure differ in their epilogue's operands only: a bias or a
        batch norm's parameters as constants inlined in the body (weights in the module), or
        as bindings (weights from a parameter archive)."""
        return (self.kind, self.root, self.loops, self.iterators, self.indexing_maps, self.operand_shapes, self.element_type,
                self.fused, self.chained, self.result_type)

    def to_json(self) -> dict:
        return asdict(self)

    @staticmethod
    def from_json(data: dict) -> "KernelSignature":
        return KernelSignature(
            key=data["key"],
            kind=data["kind"],
            root=data["root"],
            loops=tuple(data["loops"]),
            iterators=tuple(data["iterators"]),
            indexing_maps=tuple(data["indexing_maps"]),
            operand_shapes=tuple(tuple(s) for s in data["operand_shapes"]),
            element_type=data["element_type"],
            fused=tuple(data.get("fused", ())),
            name=data.get("name", ""),
            chained=data.get("chained", False),
            result_type=data.get("result_type", ""),
        )


@dataclass(frozen=True)
class KernelConfig:
    """IREE's TileAndFuse pipeline with explicit tile sizes (see the module docstring).

    With `mma` (one of MMA_INTRINSICS' names) the kernel runs on tensor cores: `subgroup` then
    gives, per parallel loop, how many intrinsic tiles one subgroup (32 threads) computes,
    `reduction` counts the main reduction loop's step in intrinsic K tiles, and `thread` is
    unused (zeros), as IREE's own tensor-core configs are spelled."""

    workgroup: tuple[int, ...]
    reduction: tuple[int, ...]
    thread: tuple[int, ...]
    promote: tuple[int, ...] = ()
    mma: str = ""
    subgroup: tuple[int, ...] = ()
    # Tensor cores: per loop, the size each tile is padded to where the loop's range is not a
    # multiple of it (IREE pads the operands); empty where every range is.
    padding: tuple[int, ...] = ()
    # A window convolution computed as an implicit GEMM (IREE's `use_igemm_convolution`): the
    # tile lists then follow the loops of `igemm_form(sig)` (the convolution's parallel loops,
    # then one reduction over channels and window together), not the convolution's own.
    igemm: bool = False
    # IREE's VectorDistribute pipeline, as IREE spells its own matrix-vector configs (a batch-1
    # linear layer; `schedc.decisions.kernel_config.matvec`): per loop, how many of a subgroup's 32
    # lanes and how many of the workgroup's subgroups lie along it. `thread` is then one lane's
    # tile of a step and `reduction` the partial reduction a workgroup makes per step.
    lane_basis: tuple[int, ...] = ()
    subgroup_basis: tuple[int, ...] = ()

    def __post_init__(self):
        if not (len(self.workgroup) == len(self.reduction) == len(self.thread)):
            raise ValueError(f"tile lists of different lengths: {self}")
        if self.lane_basis or self.subgroup_basis:
            self._check_vector_distribute()
            self._check_threads()
            return
        if self.mma:
            if self.mma not in MMA_INTRINSICS or len(self.subgroup) != len(self.workgroup):
                raise ValueError(f"a tensor-core config needs a known intrinsic and a subgroup tile per loop: {self}")
            return
        for wg, th in zip(self.workgroup, self.thread):
            if th and (not wg or wg % th):
                raise ValueError(f"thread tile {th} does not divide workgroup tile {wg}: {self}")
        if any(t < 0 for t in (*self.workgroup, *self.reduction, *self.thread)):
            raise ValueError(f"negative tile sizes: {self}")
        self._check_threads()

    def _check_threads(self) -> None:
        if self.workgroup_size > MAX_THREADS:
            raise ValueError(f"a workgroup of {self.workgroup_size} threads; CUDA and ROCm GPUs run at most {MAX_THREADS}: {self}")

    def _check_vector_distribute(self) -> None:
        if self.mma or not (len(self.lane_basis) == len(self.subgroup_basis) == len(self.workgroup)):
            raise ValueError(f"a vector-distribute config needs lanes and subgroups per loop, and no intrinsic: {self}")
        if math.prod(self.lane_basis) != SUBGROUP:
            raise ValueError(f"lanes {self.lane_basis} are not one subgroup of {SUBGROUP}: {self}")
        for wg, red, th, lanes, groups in zip(self.workgroup, self.reduction, self.thread, self.lane_basis, self.subgroup_basis):
            spread = lanes * groups * th
            if th and spread not in (wg, red):
                raise ValueError(f"lanes x subgroups x thread tile {spread} is neither the workgroup tile {wg} nor the step {red}: {self}")

    @property
    def vector_distribute(self) -> bool:
        return bool(self.lane_basis)

    @property
    def workgroup_size(self) -> int:
        if self.mma:
            return SUBGROUP * self.subgroups
        if self.vector_distribute:
            return SUBGROUP * math.prod(self.subgroup_basis)
        size = 1
        for wg, th in zip(self.workgroup, self.thread):
            if th:
                size *= wg // th
        return size

    @property
    def subgroups(self) -> int:
        """A tensor-core config's subgroups per workgroup: each covers `subgroup` intrinsic
        tiles of each loop (the intrinsic's M and N edges, `mma_edges`)."""
        edges = self.mma_edges
        count = 1
        for wg, sg, edge in zip(self.workgroup, self.subgroup, edges):
            if sg:
                count *= wg // (sg * edge)
        return count

    @property
    def mma_edges(self) -> tuple[int, ...]:
        """Per loop, the intrinsic tile edge that `subgroup` counts in (M's or N's), else 1.
        The M loop is the first one a subgroup tiles, the N loop the last; a loop between them
        (an implicit GEMM's output rows, beside its columns as N) counts in rows."""
        if not self.mma:
            return ()
        m, n, _ = MMA_INTRINSICS[self.mma][1]
        tiled = [i for i, sg in enumerate(self.subgroup) if sg]
        edges = [1] * len(self.subgroup)
        if tiled:
            edges[tiled[0]] = m
        if len(tiled) > 1:
            edges[tiled[-1]] = n
        return tuple(edges)

    def label(self) -> str:
        def tiles(values):
            return "x".join(str(v) for v in values if v) or "-"

        promoted = f" promote{list(self.promote)}" if self.promote else ""
        igemm = "igemm " if self.igemm else ""
        if self.vector_distribute:
            return (f"vector wg {tiles(self.workgroup)} k {tiles(self.reduction)} th {tiles(self.thread)} "
                    f"lanes {'x'.join(map(str, self.lane_basis))} sg {'x'.join(map(str, self.subgroup_basis))}")
        if self.mma:
            return f"{igemm}wg {tiles(self.workgroup)} k {tiles(self.reduction)} sg {tiles(self.subgroup)} {self.mma}{promoted}"
        padded = " padded" if self.padding else ""
        return f"{igemm}wg {tiles(self.workgroup)} k {tiles(self.reduction)} th {tiles(self.thread)}{promoted}{padded}"

    def attribute(self) -> str:
        """The `#iree_codegen.compilation_info` IREE 3.13 reads from the root op."""

        def ints(values):
            return "[" + ", ".join(str(v) for v in values) + "]"

        if self.vector_distribute:  # spelled as IREE 3.13's own matrix-vector configs are
            loops = ints(range(len(self.workgroup)))
            lowering = (f"lane_basis = [{ints(self.lane_basis)}, {loops}], partial_reduction = {ints(self.reduction)}, "
                        f"subgroup_basis = [{ints(self.subgroup_basis)}, {loops}], thread = {ints(self.thread)}, workgroup = {ints(self.workgroup)}")
            return ("#iree_codegen.compilation_info<"
                    f"lowering_config = #iree_gpu.lowering_config<{{{lowering}}}>, "
                    "translation_info = #iree_codegen.translation_info<pipeline = #iree_gpu.pipeline<VectorDistribute> "
                    f"workgroup_size = [{self.workgroup_size}, 1, 1] subgroup_size = {SUBGROUP}>>")
        if self.mma:  # spelled as IREE 3.13's own tensor-core configs are
            padding = f"padding = {ints(self.padding)}, " if self.padding else ""
            lowering = (f"convert_acc_gemm, mma_kind = #iree_gpu.mma_layout<{self.mma}>, {padding}promote_operands = {ints(self.promote)}, "
                        f"reduction = {ints(self.reduction)}, subgroup = {ints(self.subgroup)}, workgroup = {ints(self.workgroup)}")
        else:
            padding = f"padding = {ints(self.padding)}, " if self.padding else ""
            lowering = f"{padding}workgroup = {ints(self.workgroup)}, reduction = {ints(self.reduction)}, thread = {ints(self.thread)}"
            if self.promote:
                lowering += f", promote_operands = {ints(self.promote)}"
        options = ", {gpu_pipeline_options = #iree_gpu.pipeline_options<use_igemm_convolution = true>}" if self.igemm else ""
        return (
            "#iree_codegen.compilation_info<"
            f"lowering_config = #iree_gpu.lowering_config<{{{lowering}}}>, "
            "translation_info = #iree_codegen.translation_info<pipeline = #iree_gpu.pipeline<TileAndFuse> "
            f"workgroup_size = [{self.workgroup_size}, 1, 1] subgroup_size = {SUBGROUP}{options}>>"
        )

    def to_json(self) -> dict:
        data = {"workgroup": list(self.workgroup), "reduction": list(self.reduction), "thread": list(self.thread), "promote": list(self.promote)}
        if self.mma:
            data.update(mma=self.mma, subgroup=list(self.subgroup), padding=list(self.padding))
        elif self.padding:
            data["padding"] = list(self.padding)
        if self.igemm:
            data["igemm"] = True
        if self.vector_distribute:
            data.update(lane_basis=list(self.lane_basis), subgroup_basis=list(self.subgroup_basis))
        return data

    @staticmethod
    def from_json(data: dict) -> "KernelConfig":
        return KernelConfig(tuple(data["workgroup"]), tuple(data["reduction"]), tuple(data["thread"]), tuple(data.get("promote", ())),
                            data.get("mma", ""), tuple(data.get("subgroup", ())), tuple(data.get("padding", ())), bool(data.get("igemm", False)),
                            tuple(data.get("lane_basis", ())), tuple(data.get("subgroup_basis", ())))


# Tensor-core intrinsics of IREE 3.13's sm_80 target (its `mma` list) that schedc uses, by
# the contraction's (input, accumulator) element types, with their (M, N, K) tile; spelled as
# IREE's own configs for the same kernels (`convert_acc_gemm`).
MMA_INTRINSICS = {
    "NV_MMA_SYNC_F16_16x8x16_F16": (("f16", "f16"), (16, 8, 16)),
    "NV_MMA_SYNC_F32_16x8x16_F16": (("f16", "f32"), (16, 8, 16)),
    "NV_MMA_SYNC_F32_16x8x16_BF16": (("bf16", "f32"), (16, 8, 16)),
}
MMA_FOR = {types: name for name, (types, _) in MMA_INTRINSICS.items()}
# bf16 accumulated in bf16 is absent: IREE 3.13 failed to compile every tensor-core config of
# one (a 32x256x128 matmul, 40 candidates), so IREE's own choice stands there.


def mma_intrinsic(sig: "KernelSignature") -> str | None:
    """The tensor-core intrinsic for a contraction's element types, if sm_80 has one."""
    return MMA_FOR.get((sig.element_type, sig.result_type or sig.element_type))


@dataclass(frozen=True)
class Chip:
    """What the heuristic needs to know of a GPU."""

    name: str
    sms: int  # streaming multiprocessors (compute units)


CHIPS = {
    # sm_80 code JIT-compiled for the H200 (IREE 3.13 has no sm_90 target).
    "cuda": Chip("h200", 132),
    "rocm": Chip("mi300x", 304),
}


# -- the heuristic and the candidates -----------------------------------------------------


def _pow2_tiles(n: int, choices=(1, 2, 4, 8, 16, 32, 64, 128, 256), partial: bool = False) -> list[int]:
    """Tile sizes for a loop of range n: powers of two that divide it, and n itself if small;
    with `partial`, also those that do not divide it (the last workgroup's tile is partial:
    odd spatial sizes such as 55, 27 and 13 have no power-of-two divisor above 1)."""
    tiles = [c for c in choices if c <= n and (n % c == 0 or partial)]
    if n <= max(choices) and n not in tiles:
        tiles.append(n)
    return tiles or [1]


def partial_tiles(n: int) -> bool:
    """Whether a loop of range n also gets tiles that do not divide it (the last workgroup's
    is partial): ranges above PARTIAL_TILE_ABOVE that are not multiples of 32, where the
    dividing powers of two leave too few threads (55, 28, 196, a classifier's 1000)."""
    return n > PARTIAL_TILE_ABOVE and n % 32 != 0


# A reduction with no divisor to step by (ViT's 197 tokens, a prime) is staged whole up to this
# length: a K step of 1 staged 197 one-element tiles, each behind a barrier.
WHOLE_K_UP_TO = 256


def k_steps(k: int) -> list[int]:
    """Reduction steps worth trying for a reduction of length k: 16, 32 and 64 where they
    divide it, else its largest divisors up to 64 (72 channels step by 36 or 24, not by 1),
    else the whole reduction in one step where it is short enough."""
    steps = [s for s in (16, 32, 64) if k % s == 0]
    if steps:
        return steps
    if k <= 64:
        return [k]
    divisors = [d for d in range(64, 3, -1) if k % d == 0]
    return divisors[:2] or ([k] if k <= WHOLE_K_UP_TO else [1])


def _reduction_tiles(sig: KernelSignature, k_tile: int) -> tuple[int, ...]:
    """Small reduction loops (a conv's window) whole; the largest one in steps of k_tile."""
    tiles = [0] * len(sig.loops)
    reductions = sig.reduction_loops
    if not reductions:
        return tuple(tiles)
    main = max(reductions, key=lambda i: sig.loops[i])
    for i in reductions:
        tiles[i] = sig.loops[i] if sig.loops[i] <= 7 and i != main else 1
    tiles[main] = k_tile if sig.loops[main] % k_tile == 0 else sig.loops[main] if sig.loops[main] <= 64 else 1
    return tuple(tiles)


def _promotable(sig: KernelSignature) -> tuple[int, ...]:
    """Inputs worth staging in shared memory: those the reduction re-reads across threads."""
    if sig.kind in ("matmul", "batch_matmul", "matmul_like", "conv"):
        return (0, 1)
    return ()


def _inner_parallel(sig: KernelSignature) -> tuple[int, int | None]:
    """The two parallel loops a workgroup tiles in 2-D: the innermost (fastest in the result,
    where threads read and write contiguously) and the next one with a range above 1."""
    parallel = sig.parallel_loops
    inner = parallel[-1]
    outer = next((i for i in reversed(parallel[:-1]) if sig.loops[i] > 1), None)
    return inner, outer


def make_config(sig: KernelSignature, tile_outer: int, tile_inner: int, th_outer: int, th_inner: int, k_tile: int, promote: bool) -> KernelConfig | None:
    """A config tiling the two inner parallel loops; None where the sizes do not fit."""
    inner, outer = _inner_parallel(sig)
    workgroup = [0] * len(sig.loops)
    thread = [0] * len(sig.loops)
    for i in sig.parallel_loops:
        workgroup[i], thread[i] = 1, 1  # other parallel loops: one index per workgroup
    workgroup[inner], thread[inner] = tile_inner, th_inner
    if outer is not None:
        workgroup[outer], thread[outer] = tile_outer, th_outer
    elif tile_outer != 1:
        return None
    for i in sig.parallel_loops:
        if workgroup[i] % thread[i] or (sig.loops[i] % workgroup[i] and not partial_tiles(sig.loops[i])):
            return None
    try:
        config = KernelConfig(tuple(workgroup), _reduction_tiles(sig, k_tile), tuple(thread), _promotable(sig) if promote else ())
    except ValueError:
        return None
    size = config.workgroup_size
    if size % SUBGROUP or size > MAX_THREADS or shared_bytes(sig, config) > MAX_SHARED_BYTES:
        return None
    return config


# Shared memory a workgroup may stage its promoted operand tiles in: the sm_80 target's limit
# is 166,912 B; a K step of 64 channels of a 3x3 convolution's 32x32 output tile needed 298,240
# and IREE refused it.
MAX_SHARED_BYTES = 128 * 1024
ELEMENT_BYTES = {"f32": 4, "f16": 2, "bf16": 2, "i8": 1, "f64": 8}


def shared_bytes(sig: KernelSignature, config: KernelConfig) -> int:
    """The bytes of the promoted operands' tiles for one K step: each operand's extent along
    each of its indexing map's results (a convolution's `d2 + d5` covers the output tile plus
    the window), from the workgroup tiles of parallel loops and the reduction tiles (a loop a
    config leaves untiled counts whole)."""
    if config.igemm:
        sig = igemm_form(sig) or sig
    if len(config.workgroup) != len(sig.loops):
        return 0  # a config for another loop nest: IREE decides
    tile = [(config.workgroup[i] if it == "parallel" else config.reduction[i]) or sig.loops[i] for i, it in enumerate(sig.iterators)]
    total = 0
    for operand in config.promote:
        if operand >= len(sig.indexing_maps) - 1:
            continue
        extents = _map_extents(sig.indexing_maps[operand], tile)
        if extents is None:
            return 0  # a map this reading does not know: IREE decides
        total += math.prod(extents) * ELEMENT_BYTES.get(sig.element_type, 4)
    return total


def map_terms(text: str) -> list[list[tuple[int, int]]] | None:
    """An affine map's results as sums of (loop, coefficient) terms: `affine_map<(d0, ..) ->
    (d1 * 2 + d4, d0)>` gives [[(1, 2), (4, 1)], [(0, 1)]]; None for anything else (the one
    reading of the indexing maps a signature holds as text)."""
    _, arrow, results = text.partition("->")
    if not arrow:
        return None
    terms = []
    for expression in results.strip().rstrip(">").strip()[1:-1].split(","):
        sums = []
        for term in expression.split("+"):
            factors = [f.strip() for f in term.split("*")]
            loops = [f for f in factors if f.startswith("d") and f[1:].isdigit()]
            constants = [f for f in factors if f.isdigit()]
            if len(loops) != 1 or len(loops) + len(constants) != len(factors):
                return None
            sums.append((int(loops[0][1:]), math.prod(int(c) for c in constants)))
        terms.append(sums)
    return terms


def _map_extents(text: str, tile: list[int]) -> list[int] | None:
    """Per result of an affine map, how many indices a tile of the loops covers: a sum of
    `dI * c` terms spans the sum of (tile - 1) * c, plus one."""
    terms = map_terms(text)
    if terms is None:
        return None
    return [sum((tile[loop] - 1) * coefficient for loop, coefficient in sums) + 1 for sums in terms]


def workgroup_count(sig: KernelSignature, config: KernelConfig) -> int:
    count = 1
    for i in sig.parallel_loops:
        if config.workgroup[i]:
            count *= math.ceil(sig.loops[i] / config.workgroup[i])
    return count


def candidate_configs(sig: KernelSignature, limit: int = 12) -> list[KernelConfig]:
    """Configs worth measuring for one kernel, best-ranked first, at most `limit`.

    Tiled kernels: 2-D workgroup tiles over the two inner parallel loops, K steps of 16-64
    with and without operand promotion, 1-4 results per thread; ranked by how well the
    workgroups fill the chip and by work per thread. Elementwise kernels: 1-D tiles with
    1-4 elements per thread. Other kinds: none (IREE's choice stands)."""
    if sig.kind not in TILED_KINDS + POOLING_KINDS + ELEMENTWISE_KINDS or not sig.parallel_loops:
        return []
    if is_matvec(sig):
        return matvec.candidates(sig, limit)
    form = igemm_form(sig)
    if form is not None:
        return _igemm_candidates(sig, form, limit)
    if forward_window_convolution(sig):
        # No implicit GEMM for it: IREE's own code. SIMT tiles of the direct convolution ran
        # 4x (f32) and 128x (f16) slower than it on ViT's patchify convolution, and 1.5-6x on
        # ResNet-18's 3x3 ones before the implicit GEMMs (H200).
        return []
    if sig.element_type in ("f16", "bf16") and sig.kind not in POOLING_KINDS:
        mma = _mma_candidates(sig, limit)
        if mma or contraction_roles(sig) is not None:
            return mma
        # Not a contraction (a depthwise convolution sums no channels): SIMT tiles, as in f32.
    if sig.element_type not in ("f32", "f16", "bf16"):
        return []
    if rows_form(sig):
        return _simt_rows_candidates(sig, sig, limit)
    padded = padded_simt_config(sig)
    simt = ([padded] if padded is not None and limit > 0 else []) + _simt_candidates(sig, limit - (padded is not None))
    form = strided_rows_form(sig) if not simt else None
    return _simt_rows_candidates(sig, form, limit) if form is not None else simt


def rows_form(sig: KernelSignature) -> bool:
    """An f32 contraction whose rows and columns stay loops (channels x rows x columns x K: a
    1x1 convolution read by a padded depthwise one), tiled as an implicit GEMM is."""
    roles = contraction_roles(sig)
    return sig.element_type == "f32" and sig.kind in TILED_KINDS and roles is not None and _row_loop(sig, roles) is not None


def strided_rows_form(sig: KernelSignature) -> KernelSignature | None:
    """A strided f32 1x1 convolution (ResNet-50's downsampling shortcut, `(d3, d1 * 2, d2 * 2)`)
    as the unstrided one whose rows and columns stay loops (`rows_form`), to tile as that one is;
    None for anything else. Only where the plain SIMT tiles find nothing: an output of 7 x 7
    pixels gives no workgroup of whole subgroups, and IREE's default for ResNet-50's 2048 x 7 x
    7 x 1024 shortcut ran about 25 ms and gave wrong results (f32, H100, twenty-fifth session)."""
    if sig.element_type != "f32" or sig.kind not in TILED_KINDS:
        return None
    terms = [map_terms(text) for text in sig.indexing_maps]
    if any(t is None or any(len(sums) != 1 for sums in t) for t in terms):
        return None
    if all(coefficient == 1 for t in terms for ((_, coefficient),) in t):
        return None
    plain = tuple(text.partition("->")[0] + "-> (" + ", ".join(f"d{loop}" for ((loop, _),) in t) + ")>"
                  for text, t in zip(sig.indexing_maps, terms))
    form = replace(sig, indexing_maps=plain)
    return form if rows_form(form) else None


def _simt_candidates(sig: KernelSignature, limit: int) -> list[KernelConfig]:
    """SIMT tiles over a kernel's two inner parallel loops (see `candidate_configs`)."""
    inner, outer = _inner_parallel(sig)
    inner_range = sig.loops[inner]
    outer_range = sig.loops[outer] if outer is not None else 1
    found: dict[KernelConfig, float] = {}
    if sig.kind in ELEMENTWISE_KINDS:
        shapes = [(to, ti, 1, th) for ti in _pow2_tiles(inner_range, (32, 64, 128, 256)) for to in _pow2_tiles(outer_range, (1, 2, 4)) for th in (1, 2, 4)]
        k_tiles, promotes = [1], [False]
    else:
        shapes = [
            (to, ti, tho, thi)
            for ti in _pow2_tiles(inner_range, (8, 16, 32, 64, 128), partial_tiles(inner_range))
            for to in _pow2_tiles(outer_range, (1, 2, 4, 8, 16, 32, 64), partial_tiles(outer_range))
            for thi in (1, 2, 4)
            for tho in (1, 2, 4)
        ]
        main_k = max((sig.loops[i] for i in sig.reduction_loops), default=1)
        k_tiles = k_steps(main_k)
        promotes = [True, False] if _promotable(sig) else [False]
    for to, ti, tho, thi in shapes:
        for k in k_tiles:
            for promote in promotes:
                config = make_config(sig, to, ti, tho, thi, k, promote)
                if config is not None and config not in found:
                    found[config] = _score(sig, config)
    ranked = sorted(found, key=lambda c: (found[c], c.label()))
    return _spread(ranked, limit)


def contraction_roles(sig: KernelSignature) -> tuple[list[int], int, int, int] | None:
    """A contraction's batch loops (indexed by both operands), its two other parallel loops in
    loop order (each indexed by one operand), which IREE's tensor-core configs tile with the
    intrinsic's M and N edges, and its reduction loop, read from the root's indexing maps;
    None for anything else (a convolution's window)."""
    if len(sig.indexing_maps) < 3 or len(sig.reduction_loops) != 1:
        return None
    first, second = (_map_dims(m) for m in sig.indexing_maps[:2])
    if first is None or second is None:
        return None
    batch, others = [], []
    for i in sig.parallel_loops:
        if i in first and i in second:
            batch.append(i)
        elif i in first or i in second:
            others.append(i)
        else:
            return None
    if len(others) < 2:
        return None
    # N is the innermost loop; M the first loop indexed by the other operand. A convolution
    # with its rows and columns as loops (channels, rows, columns), or a batch indexed by the
    # image only: the loops on N's side besides N are tiled like a batch, as IREE's own
    # configs tile them.
    n = others[-1]
    m = next((i for i in others if (i in first) != (n in first)), None)
    if m is None:
        return None
    middle = [i for i in others if i not in (m, n)]
    if any((i in first) != (n in first) for i in middle):
        return None
    return sorted(batch + middle), m, n, sig.reduction_loops[0]


def vector_roles(sig: KernelSignature) -> tuple[list[int], int, int] | None:
    """A matrix-vector product with no loop of range 1: its batch loops (indexed by both
    operands), its one output loop (indexed by the matrix alone) and its reduction loop. IREE
    folds the unit M of a batch-1 linear layer away once the matmul is a linalg.generic
    (`--iree-opt-generalize-matmul`, which lets a layer norm fuse into the projection after
    it); None for anything else."""
    if len(sig.indexing_maps) < 3 or len(sig.reduction_loops) != 1:
        return None
    first, second = (_map_dims(m) for m in sig.indexing_maps[:2])
    k = sig.reduction_loops[0]
    if first is None or second is None or k not in first or k not in second:
        return None
    batch = [i for i in sig.parallel_loops if i in first and i in second]
    others = [i for i in sig.parallel_loops if i not in batch]
    if len(others) != 1 or not any(others[0] in dims for dims in (first, second)):
        return None
    return batch, others[0], k


def igemm_form(sig: KernelSignature) -> KernelSignature | None:
    """A window convolution (3x3, 5x5, strided, dilated, grouped; not depthwise) as the
    contraction IREE's implicit GEMM computes (`use_igemm_convolution`): the convolution's
    parallel loops, then one reduction loop over its input channels and window together
    (IREE's im2col). Its maps read `image[batch.., K, rows, columns]` and
    `filter[batch.., channels, K]`; a config with `igemm` tiles these loops. None for any
    other kernel (a 1x1 convolution already is a contraction; a depthwise one sums no
    channels)."""
    if sig.kind not in ("matmul_like", "conv") or len(sig.indexing_maps) < 3 or sig.chained:
        return None
    parallel, reductions = sig.parallel_loops, sig.reduction_loops
    if parallel != list(range(len(parallel))) or len(reductions) < 2:
        return None
    operands = [map_terms(m) for m in sig.indexing_maps[:2]]
    if any(terms is None for terms in operands):
        return None
    windowed = [any(len(sums) > 1 for sums in terms) for terms in operands]
    if windowed.count(True) != 1:
        return None
    image, filter_ = (operands[0], operands[1]) if windowed[0] else (operands[1], operands[0])
    plain_image = {sums[0][0] for sums in image if len(sums) == 1}
    plain_filter = {sums[0][0] for sums in filter_}  # the filter has no window term (windowed)
    summed = {loop for sums in image if len(sums) > 1 for loop, _ in sums}
    # Each window term pairs an output position (parallel) with a window offset (reduction) no
    # longer than it: a weight gradient's `d2 + d5` sums over its output rows (a reduction
    # longer than the window it produces) and is not an implicit GEMM IREE can stage.
    for sums in image:
        if len(sums) > 1:
            kinds = [sig.iterators[loop] for loop, _ in sums]
            if sorted(kinds) != ["parallel", "reduction"]:
                return None
            (out, stride), (win, _) = sorted(sums, key=lambda term: sig.iterators[term[0]] != "parallel")
            if sig.loops[win] > sig.loops[out] and stride < sig.loops[win]:
                return None  # (a patchify convolution, stride >= window, is an implicit GEMM)
    channels = [r for r in reductions if r in plain_image and r in plain_filter]
    window = [r for r in reductions if r in summed]
    if not channels or not window or set(channels) | set(window) != set(reductions):
        return None
    k = len(parallel)
    batch = [i for i in parallel if i in plain_filter and (i in plain_image or i in summed)]
    rows = [i for i in parallel if i in summed or (i in plain_image and i not in plain_filter)]
    kept = [i for i in parallel if i in plain_filter and i not in batch]
    if set(batch) | set(rows) | set(kept) != set(parallel):
        return None

    def affine(results):
        dims = ", ".join(f"d{i}" for i in range(k + 1))
        return f"affine_map<({dims}) -> ({', '.join(f'd{i}' for i in results)})>"

    reduction = math.prod(sig.loops[r] for r in reductions)
    loops = tuple(sig.loops[i] for i in parallel) + (reduction,)
    image_dims, filter_dims = batch + [k] + rows, batch + kept + [k]
    maps = [affine(image_dims), affine(filter_dims)]
    shapes = [tuple(loops[i] for i in image_dims), tuple(loops[i] for i in filter_dims)]
    if not windowed[0]:
        maps.reverse()
        shapes.reverse()
    return replace(sig, kind="matmul_like", loops=loops, iterators=("parallel",) * k + ("reduction",),
                   indexing_maps=(*maps, affine(parallel)), operand_shapes=(*shapes, tuple(loops[:k])))


def igemm_channels_last(sig: KernelSignature) -> bool:
    """A window convolution whose image keeps its channels innermost (a channels-last image,
    as ConvNeXt's downsampling layers read). IREE's implicit GEMM of one is left alone: in
    f32 the SIMT configs of ConvNeXt's 2x2 convolutions of 48 and 96 channels gave wrong
    outputs (relative error 1.4-1.6, K steps of 16-64 alike), and of 192 channels ran 1.5x
    IREE's own code; in f16 IREE 3.13 did not finish compiling any tensor-core config of them
    in 5 minutes (H200, 2026-12-03)."""
    for text in sig.indexing_maps[:2]:
        terms = map_terms(text)
        if terms and any(len(sums) > 1 for sums in terms):  # the image
            last = terms[-1]
            return len(last) == 1 and sig.iterators[last[0][0]] == "reduction"
    return False


def forward_window_convolution(sig: KernelSignature) -> bool:
    """A forward convolution with a window that also sums channels (not depthwise, not
    pooling, not a weight gradient, whose window terms pair an output position with a
    reduction over output positions longer than it)."""
    if sig.kind not in ("matmul_like", "conv") or len(sig.indexing_maps) < 3:
        return False
    operands = [map_terms(m) for m in sig.indexing_maps[:2]]
    if any(terms is None for terms in operands):
        return False
    windows = [sums for terms in operands for sums in terms if len(sums) > 1]
    if not windows:
        return False
    for sums in windows:
        loops = {sig.iterators[loop]: loop for loop, _ in sums}
        if set(loops) == {"parallel", "reduction"} and sig.loops[loops["reduction"]] > sig.loops[loops["parallel"]]:
            return False  # a weight gradient's
    plain = [{sums[0][0] for sums in terms if len(sums) == 1} for terms in operands]
    return any(r in plain[0] and r in plain[1] for r in sig.reduction_loops)


def _map_dims(text: str) -> set[int] | None:
    """The loop dimensions an affine map's results use: `affine_map<(d0, d1, d2) -> (d0, d2)>`
    gives {0, 2}; None for a map that is not a plain projection."""
    terms = map_terms(text)
    if terms is None or any(sums != [(sums[0][0], 1)] for sums in terms):
        return None
    return {sums[0][0] for sums in terms}


# The tensor-core estimate's constants per class of contraction (`mma_class`): multiply-adds
# per cycle of an SM's mma.sync, a K step's barrier and shared-memory handoff, and, since a K
# step's operand tiles go through each thread's registers on their way to shared memory, what
# each element a thread stages a step past a budget costs (register pressure, and a padded
# tile's masked loads one after the other: MobileNetV2's 960 -> 160 projection ran 2.3x slower
# in K steps of 128 than of 32, H100).
# - implicit GEMMs (window convolutions): 256 / 320 and no staging term, fitted by `python
#   bench/sweep.py fit` on the first synthetic sweep (windows 1-7, f32 and f16, H200);
# - matmuls and 1x1 convolutions: fitted by `python bench/sweep.py fit-mma` on the synthetic
#   sweep's f16 matmuls and odd-row matmuls (20 dispatches) and 1x1 convolutions and expansions
#   (15), 3,439 configs on an H100: the estimate's pick within 1.25x of the fastest measured
#   for 85% and 73% of them (55% and 47% with the implicit GEMMs' constants); judged on the
#   held-out suite's 40 and 48 such f16 dispatches, never fitted on, geometric mean of pick /
#   fastest 1.155 -> 1.112 and 1.199 -> 1.109 (bench/README.md, "The tensor-core estimate per class").
MMA_CONSTANTS = {  # class -> (multiply-adds a cycle, cycles a K step, stage budget, cycles an element past it)
    "implicit GEMM": (256, 320, 1 << 20, 0),
    "matmul": (128, 80, 24, 10),
    "1x1 convolution": (128, 80, 48, 10),
}


def mma_class(sig: KernelSignature, config: KernelConfig) -> str:
    """Which of MMA_CONSTANTS a tensor-core config is estimated with."""
    if config.igemm:
        return "implicit GEMM"
    return "matmul" if sig.kind in ("matmul", "batch_matmul") else "1x1 convolution"


def _mma_candidates(sig: KernelSignature, limit: int, igemm: bool = False) -> list[KernelConfig]:
    """Tensor-core configs for an f16/bf16 contraction (matmuls, batch matmuls, linear layers,
    1x1 convolutions, window convolutions in their `igemm_form`): workgroup tiles of 16-64 (M)
    by 8-128 (N), 1-2 by 1-4 intrinsic tiles per subgroup, 1-8 subgroups, K steps of 2-8
    intrinsic tiles; an implicit GEMM's narrow output rows (7 or 14 columns) also 2 or 4 rows
    per workgroup. A range that is not a multiple of its tile is padded (as IREE's own configs
    pad small matmuls). Ranked by the estimate."""
    roles = contraction_roles(sig)
    intrinsic = mma_intrinsic(sig)
    if roles is None or intrinsic is None or sig.kind not in ("matmul", "batch_matmul", "matmul_like"):
        return []
    batch, m, n, k = roles
    edge_m, edge_n, edge_k = MMA_INTRINSICS[intrinsic][1]
    size_m, size_n, size_k = sig.loops[m], sig.loops[n], sig.loops[k]
    row = _row_loop(sig, roles) if igemm else None
    found = {}
    # A generic contraction (a 1x1 convolution: its pixels are N) with a workgroup one
    # intrinsic wide in N gave wrong outputs and ran 2-27x slower than the best wider tile on
    # all three such kernels of the synthetic sweep (bench/sweep.py, H200): tile N by 16 or
    # more there.
    narrowest_n = 16 if sig.kind == "matmul_like" else edge_n
    # A batched contraction's K steps divide its K where they can (a batch loop both inputs
    # read: a batch matmul, or split-k's parts): an f16 1x1 convolution split in parts (384 -> 64
    # channels in 8 parts of 48) stepped by 64, K padded, came out NaN on an H100 where IREE's
    # own config did not (bench/dispatch_diff.py, fifteenth session).
    k_choices = (2, 4, 8)
    both = (_map_dims(sig.indexing_maps[0]) or set()) & (_map_dims(sig.indexing_maps[1]) or set())
    if not igemm and size_k % edge_k == 0 and any(b in both for b in batch):
        k_choices = tuple(d for d in range(2, 9) if (size_k // edge_k) % d == 0) or (1,)
    for rows in ((1, 2, 4) if row is not None and size_n <= 16 else (1,)):
        if row is not None and rows > sig.loops[row]:
            continue
        for wg_m in (16, 32, 64):
            for wg_n in (8, 16, 32, 64, 128):
                if wg_n < narrowest_n // rows:
                    continue
                if wg_m > max(size_m, edge_m) * 2 or wg_n > max(size_n, edge_n) * 2:
                    continue  # mostly padding
                for sg_m in (1, 2):
                    for sg_n in (1, 2, 4):
                        if wg_m % (sg_m * edge_m) or wg_n % (sg_n * edge_n):
                            continue
                        subgroups = (wg_m // (sg_m * edge_m)) * (wg_n // (sg_n * edge_n))
                        if not 1 <= subgroups <= 8:
                            continue
                        for k_tiles in k_choices:
                            k_tile = k_tiles * edge_k
                            if k_tile > max(size_k, edge_k) * 2:
                                continue
                            config = _mma_config(sig, intrinsic, batch, (m, n, k), (wg_m, wg_n, k_tiles), (sg_m, sg_n), row, rows, igemm)
                            found[config] = _mma_score(sig, config, (m, n, k))
    ranked = sorted(found, key=lambda c: (found[c], c.label()))
    return _spread(ranked, limit)


def _row_loop(sig: KernelSignature, roles) -> int | None:
    """An implicit GEMM's output rows: the loop just outside N on N's side, if any."""
    batch, _, n, _ = roles
    first = _map_dims(sig.indexing_maps[0]) or set()
    return n - 1 if n - 1 in batch and (n - 1 in first) == (n in first) else None


def _mma_config(sig, intrinsic, batch, loops, tiles, subgroups, row, rows, igemm) -> KernelConfig:
    """A tensor-core config from its tiles: (M, N, K) loops, (M, N) workgroup tiles with K in
    intrinsic steps, (M, N) intrinsic tiles per subgroup, and `rows` of the row loop per
    workgroup (each subgroup covering all of them); padded where a range is not a multiple."""
    m, n, k = loops
    wg_m, wg_n, k_tiles = tiles
    sg_m, sg_n = subgroups
    k_tile = k_tiles * MMA_INTRINSICS[intrinsic][1][2]
    workgroup, reduction, subgroup = [0] * len(sig.loops), [0] * len(sig.loops), [0] * len(sig.loops)
    for b in batch:
        workgroup[b] = 1
    workgroup[m], workgroup[n], reduction[k] = wg_m, wg_n, k_tiles
    subgroup[m], subgroup[n] = sg_m, sg_n
    if row is not None and rows > 1:
        workgroup[row] = subgroup[row] = rows
    padding = ()
    if any(sig.loops[i] % workgroup[i] for i in (*batch, m, n)) or sig.loops[k] % k_tile or igemm:
        padding = [0] * len(sig.loops)
        for b in batch:
            padding[b] = workgroup[b]
        padding[m], padding[n], padding[k] = wg_m, wg_n, k_tile
        padding = tuple(padding)
    return KernelConfig(tuple(workgroup), tuple(reduction), (0,) * len(sig.loops), (0, 1), intrinsic, tuple(subgroup), padding, igemm)


def _mma_score(sig: KernelSignature, config: KernelConfig, loops: tuple[int, int, int], sms: int = 132) -> float:
    """Estimated cycles of a tensor-core config, to rank: the SM with the most workgroups runs
    them one after the other; each does its tile's multiply-adds at the SM's tensor-core rate
    (a workgroup of fewer than 4 subgroups leaves the SM's other schedulers idle), loads its
    operand tiles once per K step, and stages each step's tiles through its threads' registers."""
    return mma_cost(mma_terms(sig, config, loops, sms), *MMA_CONSTANTS[mma_class(sig, config)])


def mma_terms(sig: KernelSignature, config: KernelConfig, loops: tuple[int, int, int], sms: int = 132) -> tuple[float, ...]:
    """What `_mma_score` weighs, apart from its constants: (workgroups on the busiest SM,
    a workgroup's multiply-adds over its occupancy, operand loads, K steps, elements staged per
    thread a step). bench/sweep.py's fit evaluates its grid of constants on these."""
    m, n, k = loops
    per_sm = math.ceil(workgroup_count(sig, config) / sms)
    tile_m = config.workgroup[m]
    tile_n = math.prod(config.workgroup[i] for i in sig.parallel_loops if config.workgroup[i]) // tile_m  # N with its rows
    k_tile = config.reduction[k] * MMA_INTRINSICS[config.mma][1][2]
    size_k = math.ceil(sig.loops[k] / k_tile) * k_tile  # padded
    occupancy = min(config.subgroups, 4) / 4
    return (per_sm, tile_m * tile_n * size_k / occupancy, (tile_m + tile_n) * size_k / SM_LOADS, size_k / k_tile,
            (tile_m + tile_n) * k_tile / (config.subgroups * SUBGROUP))


def mma_cost(terms: tuple[float, ...], fmas: float, step_cycles: float, stage_budget: float, stage_cycles: float) -> float:
    per_sm, work, loads, steps, staged = terms
    return per_sm * (work / fmas + loads + steps * (step_cycles + max(0.0, staged - stage_budget) * stage_cycles))


def _igemm_candidates(sig: KernelSignature, form: KernelSignature, limit: int) -> list[KernelConfig]:
    """Configs for a window convolution as an implicit GEMM (`igemm_form`): tensor-core ones
    in f16/bf16; in f32, SIMT tiles of M (output channels) by N (output columns), 1-4 output
    rows, 1-4 results per thread in each, K in steps of 16-64 with both operands in shared
    memory. Ranked by the estimate of the same model as the other contractions."""
    if igemm_channels_last(sig):
        return []
    if sig.element_type in ("f16", "bf16"):
        return _mma_candidates(form, limit, igemm=True)
    roles = contraction_roles(form)
    if sig.element_type != "f32" or roles is None or form.loops[roles[1]] < IGEMM_MIN_CHANNELS_F32:
        return []
    return _simt_rows_candidates(sig, form, limit, igemm=True)


def _simt_rows_candidates(sig: KernelSignature, form: KernelSignature, limit: int, igemm: bool = False) -> list[KernelConfig]:
    """SIMT tiles of a contraction's M (output channels) by N (output columns) with 1-4 of
    its output rows, 1-4 results per thread in each, K in steps with both operands in shared
    memory: an implicit GEMM's (`form`, with `igemm`), or a 1x1 convolution's whose rows and
    columns stay loops (an expansion a padded depthwise convolution reads)."""
    roles = contraction_roles(form)
    batch, m, n, k = roles
    row = _row_loop(form, roles)
    size_m, size_n = form.loops[m], form.loops[n]
    found: dict[KernelConfig, float] = {}
    for rows in (1, 2, 4) if row is not None else (1,):
        for wg_m in _pow2_tiles(size_m, (4, 8, 16, 32, 64), partial_tiles(size_m)):
            for wg_n in _pow2_tiles(size_n, (8, 16, 32, 64), partial_tiles(size_n)):
                for th_m in (1, 2, 4):
                    for th_n in (1, 2, 4):
                        for k_tile in k_steps(form.loops[k]):
                            config = _igemm_simt_config(form, batch, (m, n, k), (wg_m, wg_n, k_tile), (th_m, th_n), row, rows, igemm, sig)
                            if config is not None:
                                found[config] = _score(form, config)
    ranked = sorted(found, key=lambda c: (found[c], c.label()))
    return _spread(ranked, limit)


def _igemm_simt_config(form, batch, loops, tiles, threads, row, rows, igemm=True, reads=None) -> KernelConfig | None:
    """One SIMT config of `form`'s M x N tiles; None where it does not fit. Its shared memory is
    counted on `reads`, the kernel as IREE tiles it (a strided read's tiles span more than its
    form's), or on `form`."""
    m, n, k = loops
    wg_m, wg_n, k_tile = tiles
    th_m, th_n = threads
    workgroup, reduction, thread = [0] * len(form.loops), [0] * len(form.loops), [0] * len(form.loops)
    for b in batch:
        workgroup[b] = thread[b] = 1
    if row is not None:
        workgroup[row], thread[row] = min(rows, form.loops[row]), 1
    workgroup[m], workgroup[n], thread[m], thread[n] = wg_m, wg_n, th_m, th_n
    reduction[k] = k_tile if form.loops[k] % k_tile == 0 else 1
    if wg_m % th_m or wg_n % th_n:
        return None
    try:
        config = KernelConfig(tuple(workgroup), tuple(reduction), tuple(thread), (0, 1), igemm=igemm)
    except ValueError:
        return None
    if config.workgroup_size % SUBGROUP or shared_bytes(reads or form, config) > MAX_SHARED_BYTES:
        return None
    return config


def _spread(ranked: list[KernelConfig], limit: int) -> list[KernelConfig]:
    """A varied set from the ranked configs: the best K step of each tile and thread shape
    (two thirds of the set), then the other K steps of the best shapes (the estimate cannot
    rank K steps: that is for the measurement)."""
    shapes = {}
    for config in ranked:
        shapes.setdefault((config.workgroup, config.thread, config.subgroup), config)
    firsts = list(shapes.values())
    chosen = firsts[: max(1, (2 * limit) // 3)]
    for best in firsts[:4]:
        for config in ranked:
            if len(chosen) >= limit:
                return chosen
            if (config.workgroup, config.thread, config.subgroup) == (best.workgroup, best.thread, best.subgroup) and config not in chosen:
                chosen.append(config)
    for config in firsts[len(chosen):]:
        if len(chosen) >= limit:
            break
        chosen.append(config)
    return chosen[:limit]


# The SIMT estimate's constants: FP32 lanes of one SM (4 schedulers x 32 on Ampere and
# Hopper), operand elements one SM loads per cycle, how many times more an unpromoted operand
# is read, and the cycles of one K step's barrier and shared-memory handoff (which makes
# larger K steps win where they fit). SM_LANES and SM_LOADS are the datasheet's; the other two
# were fitted by `python bench/sweep.py fit` on the synthetic sweep's measurements (H200,
# bench/sweep.py), never on the held-out models that judge them.
SM_LANES = 128
SM_LOADS = 32
UNPROMOTED_READS = 4
SIMT_STEP_CYCLES = 800
# f32 implicit GEMMs (window convolutions): the image tile is gathered through the window
# (im2col), at IM2COL_READS times a contiguous tile's cost, and a workgroup's time grows by
# IGEMM_SIZE_COST per factor its thread count is off IGEMM_THREADS. These four constants were
# fitted on the synthetic sweep's 22 f32 window convolutions (bench/sweep.py convs and
# wide_convs, H200, 2026-12-03, with every pick of the fit's grid measured: the pick within
# 1.25x of the fastest for 6 of them with the previous constants, 22 after); never on the
# held-out models, where it is 19 of 21 (6 before).
IM2COL_READS = 2
IGEMM_THREADS = 256
IGEMM_SIZE_COST = 0.25
# ... each result a thread computes along N (output columns) costs it one more gathered image
# element per K step, where results along M share theirs (IGEMM_N_THREAD_COST per extra
# result, as a factor), and a partial last tile's idle threads still take their turn
# (IGEMM_WASTE_COST times the share of the workgroups' work that is padding).
IGEMM_N_THREAD_COST = 0.5
IGEMM_WASTE_COST = 4.0
# ... and with fewer output channels than this the implicit GEMM reuses each gathered element
# too little: the sweep's 7x7 convolution of 16 channels ran 1.95x IREE's direct code.
IGEMM_MIN_CHANNELS_F32 = 32


def _score(sig: KernelSignature, config: KernelConfig, sms: int = 132) -> float:
    """Estimated cycles (lower is better), to rank configs: the SM that gets the most
    workgroups runs them one after the other, each as threads / SM_LANES rounds of every
    thread's results times the reduction steps; plus loading each step's operand tiles from
    memory. Unpromoted contraction operands are re-read by every thread. It ranks; it does not
    predict microseconds: `schedc tune` measures."""
    groups = workgroup_count(sig, config)
    per_sm = math.ceil(groups / sms)
    threads = config.workgroup_size
    per_thread = math.prod(t for t in config.thread if t)
    steps = math.prod(sig.loops[i] for i in sig.reduction_loops) if sig.reduction_loops else 1
    tile_edges = _operand_tile_extent(sig, config)
    compute = per_sm * max(threads / SM_LANES, 1.0) * per_thread * steps
    loads = per_sm * tile_edges * steps / SM_LOADS
    if _promotable(sig) and not config.promote:
        loads *= UNPROMOTED_READS
    k_steps_run = 1
    for i in sig.reduction_loops:
        if config.reduction[i]:
            k_steps_run *= math.ceil(sig.loops[i] / config.reduction[i])
    cycles = compute + loads + per_sm * k_steps_run * SIMT_STEP_CYCLES
    if config.igemm:
        cycles *= _igemm_factor(sig, config)
    return cycles


def _igemm_factor(form: KernelSignature, config: KernelConfig) -> float:
    """What an f32 implicit GEMM costs beyond the SIMT model (constants above, fitted by
    `bench/sweep.py fit`): workgroups far from IGEMM_THREADS threads, results per thread
    along N, and the padding of partial last tiles."""
    threads = config.workgroup_size
    threads_off = max(threads / IGEMM_THREADS, IGEMM_THREADS / threads)
    factor = 1 + IGEMM_SIZE_COST * (threads_off - 1)
    roles = contraction_roles(form)
    if roles is not None:
        factor *= 1 + IGEMM_N_THREAD_COST * (max(config.thread[roles[2]], 1) - 1)
    useful = padded = 1
    for i in form.parallel_loops:
        tile = config.workgroup[i]
        if tile:
            useful *= form.loops[i]
            padded *= math.ceil(form.loops[i] / tile) * tile
    return factor * (1 + IGEMM_WASTE_COST * (1 - useful / padded))


def _operand_tile_extent(sig: KernelSignature, config: KernelConfig) -> int:
    """The rows of both operand tiles one K step loads: a contraction's M tile plus its N
    tile, where N counts every loop on its side (an implicit GEMM's output rows times its
    columns); for other kernels the sum of the tiled parallel loops' tiles."""
    roles = contraction_roles(sig)
    if roles is None:
        return sum(config.workgroup[i] for i in sig.parallel_loops if config.workgroup[i] > 1) or 1
    batch, m, n, _ = roles
    first, second = (_map_dims(text) or set() for text in sig.indexing_maps[:2])
    n_side = [n] + [i for i in batch if (i in first) == (n in first) and not (i in first and i in second)]
    n_tile = math.prod(max(config.workgroup[i], 1) for i in n_side)
    return max(config.workgroup[m], 1) + (IM2COL_READS if config.igemm else 1) * n_tile


def estimate(sig: KernelSignature, config: KernelConfig, chip: Chip | None = None) -> float:
    """The analytic estimate of a config (lower is better), as the heuristic ranks them: the
    tensor-core model for a tensor-core config, else the SIMT one."""
    sms = (chip or CHIPS["cuda"]).sms
    if config.vector_distribute:
        return matvec.rank(sig, config)
    if config.igemm:
        sig = igemm_form(sig) or sig
    if config.mma:
        roles = contraction_roles(sig)
        return _mma_score(sig, config, roles[1:], sms)
    return _score(sig, config, sms)


def is_matvec(sig: KernelSignature) -> bool:
    """A contraction whose M or N is 1 (a batch-1 linear layer). IREE's own code for it, a
    reduction over K across a warp, ran ShuffleNet's classifier (1x1000x1024) in 4.2 us where
    the heuristic's tiles took 50.1 us (f32; 3.3 against 8.4 in f16; bench/layers.py, H200)."""
    roles = contraction_roles(sig)
    if roles is None:
        return vector_roles(sig) is not None
    return 1 in (sig.loops[roles[1]], sig.loops[roles[2]])


def scatter_config(sig: KernelSignature) -> KernelConfig | None:
    """One update per thread: the innermost update dimension in workgroups of up to 128
    threads, one index of each other per workgroup. None for updates too few to fill a
    subgroup (IREE's own code stands)."""
    if not sig.loops:
        return None
    inner = sig.loops[-1]
    tile = next((t for t in (128, 64, 32) if inner % t == 0), None)
    if tile is None:
        return None
    ones = (1,) * (len(sig.loops) - 1)
    return KernelConfig((*ones, tile), (0,) * len(sig.loops), (*ones, 1), ())


# A weight gradient's parts (`schedc.ir.split_k.split_conv_rows`): loops (n, g, f, y, x) parallel,
# (c, i, j) reduced, the image read at row y * s + (g * R + i) * d. IREE 3.13 gives such a
# generic a VectorDistribute reduction config that its CUDA code generation fails to lower
# ("failed to pack reduction dimensions"); whole, IREE gives it TileAndFuse with one output per
# thread, 32 threads along the output channels, reduction steps of 1 x 4 x 4. The parts get the
# same.
WINDOW_PARTS_CHANNELS = 32
WINDOW_PARTS_STEP = 4


def window_parts_form(sig: KernelSignature) -> bool:
    """Whether `sig` is a weight gradient split over its window rows (see above)."""
    if sig.kind != "matmul_like" or len(sig.loops) != 8 or sig.iterators != ("parallel",) * 5 + ("reduction",) * 3:
        return False
    image = map_terms(sig.indexing_maps[0]) if sig.indexing_maps else None
    return image is not None and any({1, 6} <= {loop for loop, _ in result} for result in image)


def window_parts_config(sig: KernelSignature) -> KernelConfig | None:
    """One output per thread, as IREE's own config of the whole weight gradient; None for any
    other kernel."""
    if not window_parts_form(sig) or sig.chained:
        return None
    channels = sig.loops[2]
    tile = next((t for t in (WINDOW_PARTS_CHANNELS, 16, 8, 4, 2) if channels % t == 0), 1)
    step = lambda n: next(t for t in (WINDOW_PARTS_STEP, 2, 1) if n % t == 0)  # noqa: E731
    return KernelConfig((1, 1, tile, 1, 1, 0, 0, 0), (0, 0, 0, 0, 0, 1, step(sig.loops[6]), step(sig.loops[7])), (1, 1, 1, 1, 1, 0, 0, 0))


# f32 matmuls whose rows or columns the tiles do not divide (a ViT's 197 tokens): a 16x32 tile,
# 2x2 results per thread, the operands padded to the tiles (IREE's `padding`). Measured on nine
# synthetic shapes (bench/sweep.py odd_matmuls, every SIMT tiling padded and not, H200): partial
# tiles ran 2-9x slower than padded ones whatever their size (300x1024x256: 99.1 us at best, 16.9
# padded); this tile came within 1.25x of the fastest padded one on 7 of 9, 1.54x at worst. In a
# batch matmul, padded tiles of one row per thread gave wrong results (34 of 132 configs), so
# the thread tile is 2 rows.
PADDED_TILE = (16, 32)
PADDED_THREAD = (2, 2)


def padded_simt_config(sig: KernelSignature) -> KernelConfig | None:
    """The padded f32 config above, for a matmul or batch matmul a 16x32 tile does not divide
    and that spans at least one tile; None for any other kernel."""
    if sig.element_type != "f32" or sig.kind not in ("matmul", "batch_matmul") or sig.chained:
        return None
    roles = contraction_roles(sig)
    if roles is None:
        return None
    batch, m, n, k = roles
    if sig.loops[m] % PADDED_TILE[0] == 0 and sig.loops[n] % PADDED_TILE[1] == 0:
        return None
    if sig.loops[m] < PADDED_TILE[0] or sig.loops[n] < PADDED_TILE[1]:
        return None  # mostly padding (a few rows: the SIMT tiles that fit them)
    workgroup, thread = [0] * len(sig.loops), [0] * len(sig.loops)
    for i in batch:
        workgroup[i], thread[i] = 1, 1
    (workgroup[m], workgroup[n]), (thread[m], thread[n]) = PADDED_TILE, PADDED_THREAD
    reduction = [0] * len(sig.loops)
    reduction[k] = max(k_steps(sig.loops[k]))
    config = padded_to_tiles(KernelConfig(tuple(workgroup), tuple(reduction), tuple(thread), _promotable(sig)))
    return config if shared_bytes(sig, config) <= MAX_SHARED_BYTES else None


def padded_to_tiles(config: KernelConfig) -> KernelConfig:
    """A SIMT config with every loop padded to its tile (its workgroup tile, else its
    reduction step): static tiles where one does not divide its loop."""
    return replace(config, padding=tuple(w or r for w, r in zip(config.workgroup, config.reduction)))


def heuristic_config(sig: KernelSignature, chip: Chip | None = None) -> KernelConfig | None:
    """The analytic choice for a kernel never tuned: the best-scored candidate for the chip's
    SM count. Only for tiled kernels (matmuls, convolutions) that start from a fill: there
    IREE's default leaves most SMs idle; and for the sums of split-k's parts (`sums`), which
    IREE reads uncoalesced; elsewhere IREE's own choice is kept."""
    if sig.kind in SCATTER_KINDS:
        return scatter_config(sig)
    if window_parts_form(sig):
        return window_parts_config(sig)
    if sums.parts_sum_form(sig):
        return sums.parts_sum_config(sig)
    if sig.kind not in TILED_KINDS + POOLING_KINDS or sig.chained:
        return None
    if is_matvec(sig):
        if (chip or CHIPS["cuda"]) is not CHIPS["cuda"]:
            return None  # measured on the H200 alone, in 32-lane subgroups
        return matvec.heuristic(sig)
    padded = padded_simt_config(sig)
    if padded is not None:
        return padded
    candidates = candidate_configs(sig, limit=1000)
    if not candidates:
        return None
    return min(candidates, key=lambda c: (estimate(sig, c, chip), c.label()))


# -- the database ---------------------------------------------------------------------------


@dataclass(frozen=True)
class TunedEntry:
    signature: KernelSignature
    config: KernelConfig | None  # None: IREE's own config measured fastest
    time_us: float  # measured time of the chosen config
    iree_time_us: float  # IREE's default config on the same chip, same method
    candidates: int = 0  # configs measured

    def to_json(self) -> dict:
        return {
            "signature": self.signature.to_json(),
            "config": self.config.to_json() if self.config else None,
            "time_us": round(self.time_us, 3),
            "iree_time_us": round(self.iree_time_us, 3),
            "candidates": self.candidates,
        }

    @staticmethod
    def from_json(data: dict) -> "TunedEntry":
        config = KernelConfig.from_json(data["config"]) if data.get("config") else None
        return TunedEntry(KernelSignature.from_json(data["signature"]), config, float(data["time_us"]), float(data["iree_time_us"]), int(data.get("candidates", 0)))


@dataclass
class KernelDatabase:
    """Tuned configs of one chip, keyed by kernel signature (see docs in database files)."""

    chip: str
    target: str  # schedc target: cuda, rocm
    arch: str  # the code-generation arch the times were measured with, e.g. sm_80
    entries: dict[str, TunedEntry] = field(default_factory=dict)
    path: str | None = None

    def lookup(self, sig: KernelSignature) -> TunedEntry | None:
        """The entry measured for this dispatch (its key); else one measured for a dispatch of
        the same structure (`KernelSignature.structure`), the fastest where several are."""
        entry = self.entries.get(sig.key)
        if entry is not None:
            return entry
        twins = [e for e in self.entries.values() if e.signature.structure == sig.structure]
        return min(twins, key=lambda e: (e.time_us, e.signature.key)) if twins else None

    def merge(self, entry: TunedEntry) -> bool:
        """Keeps the faster of the old and new entry; True if the new one was kept."""
        old = self.entries.get(entry.signature.key)
        if old is not None and old.time_us <= entry.time_us:
            return False
        self.entries[entry.signature.key] = entry
        return True

    def to_json(self) -> dict:
        return {
            "format": DATABASE_FORMAT,
            "chip": self.chip,
            "target": self.target,
            "arch": self.arch,
            "entries": [self.entries[k].to_json() for k in sorted(self.entries)],
        }

    def save(self, path: str | Path) -> None:
        from schedc.outputs import write_output

        write_output(str(path), json.dumps(self.to_json(), indent=1, sort_keys=True) + "\n")

    @staticmethod
    def load(path: str | Path) -> "KernelDatabase":
        path = Path(path)
        try:
            data = json.loads(path.read_text())
        except FileNotFoundError:
            raise SchedcError(f"{path}: no such kernel database") from None
        except (OSError, UnicodeDecodeError, json.JSONDecodeError) as e:
            raise SchedcError(f"{path}: not a kernel database ({e})") from None
        if not isinstance(data, dict) or data.get("format") != DATABASE_FORMAT:
            raise SchedcError(f"{path}: not a schedc kernel database of format {DATABASE_FORMAT}")
        if not isinstance(data.get("entries"), list) or not all(isinstance(e, dict) for e in data["entries"]):
            raise SchedcError(f"{path}: malformed kernel database: 'entries' must be a list of objects")
        if not all(isinstance(data.get(k), str) for k in ("chip", "target", "arch")):
            raise SchedcError(f"{path}: malformed kernel database: 'chip', 'target' and 'arch' must be strings")
        db = KernelDatabase(data["chip"], data["target"], data["arch"], path=str(path))
        for number, raw in enumerate(data["entries"]):
            try:
                entry = TunedEntry.from_json(raw)
                if not isinstance(entry.signature.key, str):
                    raise TypeError(f"its signature's key is a {type(entry.signature.key).__name__}, not a string")
            except (KeyError, TypeError, ValueError, AttributeError) as e:
                raise SchedcError(f"{path}: malformed kernel database entry {number} ({type(e).__name__}: {e})") from None
            db.entries[entry.signature.key] = entry
        return db

    def check_for(self, target: str, arch: str) -> None:
        """A database measured for another target or chip is an error, not applied."""
        if (self.target, self.arch) != (target, arch):
            raise SchedcError(f"{self.path}: the kernel database was measured for {self.target} {self.arch}; "
                              f"this compile is for {target} {arch}")


BUILTIN_DATABASES = Path(__file__).resolve().parents[2] / "kernel_db"  # python/schedc/kernel_db


def default_database(target: str, arch: str) -> KernelDatabase | None:
    """The database committed for a target and code-generation arch, if any."""
    for path in sorted(BUILTIN_DATABASES.glob(f"{target}-*.json")):
        db = KernelDatabase.load(path)
        if db.arch == arch:
            return db
    return None


@dataclass(frozen=True)
class Choice:
    """The config a kernel gets and where it came from."""

    config: KernelConfig | None
    source: str  # "database", "heuristic" or "iree"
    time_us: float | None = None  # measured (database) time, where known


def choose_config(sig: KernelSignature, database: KernelDatabase | None, heuristic: bool = True, chip: Chip | None = None) -> Choice:
    """The database's config, else the heuristic's, else IREE's own (no config)."""
    if database is not None:
        entry = database.lookup(sig)
        if entry is not None:
            if entry.config is not None and not entry.config.mma and shared_bytes(sig, entry.config) > MAX_SHARED_BYTES:
                raise SchedcError(f"{database.path}: the config for {sig.name} ({entry.config.label()}) needs "
                                  f"{shared_bytes(sig, entry.config):,} bytes of shared memory; the chip has {MAX_SHARED_BYTES:,}")
            return Choice(entry.config, "database", entry.time_us)  # config None: IREE's was fastest
    if heuristic:
        config = heuristic_config(sig, chip)
        if config is not None:
            return Choice(config, "heuristic")
    return Choice(None, "iree")


# Matrix-vector products and the sums of split-k's parts: their own modules, which build on the
# types above.
from schedc.decisions.kernel_config import matvec, sums  # noqa: E402
