"""Matrix-vector products (a batch-1 linear layer, a decode step's projections, attention over
a KV cache for one token): configs over IREE's VectorDistribute pipeline. Pure Python over
`KernelSignature` data.

IREE 3.13's own config for every matvec is one output per workgroup of 32 lanes, each lane
reading 8 consecutive elements of the reduction per step (`thread = [0, 0, 8]`, `lane_basis`
along K). That reads the matrix contiguously only where K is its innermost dimension (the
weight of `nn.Linear`, N x K). A matrix stored K x N (`x @ W`: GPT-2's Conv1D, `torch.addmm`;
attention's P @ V over the cache) is then read one element per 32-byte sector, each by a
different workgroup. A config here puts a subgroup's lanes along the output where the matrix
is contiguous along it (each lane a few adjacent outputs), and the workgroup's subgroups along
K, whose partial sums IREE adds at the end:

    matrix K x N, f16:  workgroup [1, 8, 0]   lanes [1, 4, 8]  subgroups [1, 1, 8]
    (GPT-2's 3072 -> 768) thread [0, 2, 8]      partial reduction [0, 0, 512]
    one workgroup: 8 outputs, 8 subgroups of 8 lanes along K taking 8 rows each a step

Where K is innermost, the lanes stay along K (as IREE's) and a workgroup may take several
outputs, one subgroup each.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from schedc.decisions.kernel_config import ELEMENT_BYTES, MAX_THREADS, SUBGROUP, KernelConfig, KernelSignature, contraction_roles, map_terms, vector_roles

# The element types the configs are made for.
ELEMENT_TYPES = ("f32", "f16", "bf16")
# A lane's widest load: 16 bytes.
LOAD_BYTES = 16


@dataclass(frozen=True)
class MatvecForm:
    """Which loop is which in a matrix-vector product."""

    batch: tuple[int, ...]  # loops both operands index (attention's heads)
    ones: tuple[int, ...]  # parallel loops of range 1 (the vector's M, or N)
    out: int  # the output loop the matrix indexes besides K
    k: int
    matrix: int  # the matrix's operand index
    k_inner: bool  # K is the matrix's innermost dimension (nn.Linear's N x K)

    @staticmethod
    def of(sig: KernelSignature) -> "MatvecForm | None":
        """The form of a contraction with M or N of 1 (or folded away) and plain projections
        as maps, else None."""
        if sig.element_type not in ELEMENT_TYPES:
            return None
        roles = contraction_roles(sig)
        if roles is None:
            vector = vector_roles(sig)
            if vector is None:
                return None
            batch, out, k = vector
            ones = ()
        else:
            batch, m, n, k = roles
            if sig.loops[m] != 1 and sig.loops[n] != 1:
                return None
            out = n if sig.loops[m] == 1 else m
            ones = tuple(i for i in (m, n) if i != out)
        matrix = next((i for i in (0, 1) if _indexes(sig.indexing_maps[i], out)), None)
        if matrix is None:
            return None
        inner = map_terms(sig.indexing_maps[matrix])[-1]
        return MatvecForm(tuple(batch), ones, out, k, matrix, inner == [(k, 1)])


def _indexes(text: str, loop: int) -> bool:
    terms = map_terms(text)
    return terms is not None and any(sums == [(loop, 1)] for sums in terms)


def make_config(sig: KernelSignature, form: MatvecForm, out_lanes: int, out_thread: int, out_groups: int,
                k_groups: int, k_thread: int) -> KernelConfig | None:
    """A config with `out_lanes` of the 32 lanes along the output (the rest along K), each lane
    `out_thread` outputs and `k_thread` K elements a step, and `out_groups` x `k_groups`
    subgroups; None where the tiles do not divide the loops."""
    if SUBGROUP % out_lanes:
        return None
    k_lanes = SUBGROUP // out_lanes
    size = len(sig.loops)
    workgroup, reduction, thread = [0] * size, [0] * size, [0] * size
    lanes, groups = [1] * size, [1] * size
    for i in (*form.batch, *form.ones):
        workgroup[i] = 1
    workgroup[form.out] = out_lanes * out_thread * out_groups
    reduction[form.k] = k_lanes * k_groups * k_thread
    thread[form.out], thread[form.k] = out_thread, k_thread
    lanes[form.out], lanes[form.k] = out_lanes, k_lanes
    groups[form.out], groups[form.k] = out_groups, k_groups
    if sig.loops[form.out] % workgroup[form.out] or sig.loops[form.k] % reduction[form.k]:
        return None
    if SUBGROUP * out_groups * k_groups > MAX_THREADS:
        return None
    return KernelConfig(tuple(workgroup), tuple(reduction), tuple(thread), lane_basis=tuple(lanes), subgroup_basis=tuple(groups))


def grid(sig: KernelSignature, form: MatvecForm) -> list[KernelConfig]:
    """Every config of the shapes worth measuring. Where the matrix is contiguous along the
    output: 8-32 lanes along it, each loading 4-16 bytes of a row, 2-8 subgroups along K, 2-8
    K rows a lane takes a step; and 4-8 lanes each loading 2-4 bytes, with 4-16 subgroups.
    Where K is innermost: 1-4 lanes along the output (rows of 64 elements or fewer fill a
    subgroup), loads of 8-16 bytes along K, 1-8 subgroups along the output (outputs a
    workgroup makes) and 1-4 along K."""
    elem = ELEMENT_BYTES[sig.element_type]
    widths = [w for w in (1, 2, 4, 8) if w * elem <= LOAD_BYTES]
    if form.k_inner:
        shapes = [(ol, 1, og, kg, kt) for ol in (1, 2, 4) for og in (1, 2, 4, 8) for kg in (1, 2, 4) for kt in widths if kt * elem >= 8]
    else:
        shapes = [(ol, ot, 1, kg, kt) for ol in (8, 16, 32) for ot in widths if ot * elem >= 4 for kg in (2, 4, 8) for kt in (2, 4, 8)]
        # Fewer outputs a workgroup, more subgroups along K: more workgroups where the outputs
        # are few and K long (GPT-2's 3072 -> 768 projection made 48 of 16 outputs).
        shapes += [(ol, ot, 1, kg, kt) for ol in (4, 8) for ot in widths if ot * elem <= 4 for kg in (4, 8, 16) for kt in (4, 8)]
    found = []
    for shape in shapes:
        config = make_config(sig, form, *shape)
        if config is not None and config not in found:
            found.append(config)
    return found


# -- the choice -------------------------------------------------------------------------------
# Per matrix layout ("kn": contiguous along the output; "nk": K innermost) and element type:
# config shapes (`make_config`'s out_lanes, out_thread, out_groups, k_groups, k_thread) in the
# order of their geometric mean time over the synthetic sweep's matvecs, relative to each one's
# fastest config, and a target count of workgroups. The choice is, of the listed shapes whose
# tiles divide the kernel's loops, the one whose workgroups come nearest the target (as a
# ratio; the earlier one on a tie): 8 outputs a workgroup where the outputs are few (a down
# projection of GPT-2's 3072 -> 768), 16 where they are many. Both are fitted by `python
# bench/sweep.py fit-matvec` on `schedc tune bench`'s measurements of the sweep (bench/sweep.py
# MATVECS_*, MATVEC_ATTENTION, NARROW_*: 42 matvecs, 3,239 configs, H200), never on a held-out
# model. No layout listed: IREE's own config stands.
# The fit's picks: 1.063x the fastest config (geometric mean; worst 1.33x) and 2.18x faster
# than IREE's own for "kn" f16; 1.055x (1.28x) and 1.98x for f32; 1.074x (1.13x) and 1.52x for
# "nk" f16; 1.067x (1.22x) and 1.47x for f32.
RANKED_SHAPES: dict[tuple[str, str], tuple[tuple[int, int, int, int, int], ...]] = {
    ("kn", "f16"): ((4, 2, 1, 8, 8), (4, 2, 1, 4, 8), (4, 2, 1, 8, 4), (4, 2, 1, 4, 4), (8, 2, 1, 4, 2), (8, 2, 1, 4, 8)),
    ("kn", "f32"): ((8, 1, 1, 4, 8), (8, 1, 1, 4, 4), (4, 1, 1, 8, 4), (4, 1, 1, 8, 8), (4, 1, 1, 4, 8), (8, 1, 1, 4, 2), (4, 1, 1, 4, 4), (8, 2, 1, 4, 8)),
    ("nk", "f16"): ((4, 1, 1, 4, 8), (2, 1, 8, 4, 4), (2, 1, 8, 1, 8), (2, 1, 8, 2, 8), (2, 1, 4, 1, 4), (2, 1, 8, 2, 4)),
    ("nk", "f32"): ((2, 1, 8, 4, 4), (4, 1, 8, 2, 2), (4, 1, 8, 1, 4), (4, 1, 8, 2, 4), (1, 1, 2, 4, 4), (1, 1, 2, 4, 2)),
}
TARGET_WORKGROUPS: dict[tuple[str, str], int] = {("kn", "f16"): 96, ("kn", "f32"): 384, ("nk", "f16"): 64, ("nk", "f32"): 384}


def layout(form: MatvecForm) -> str:
    return "nk" if form.k_inner else "kn"


def shape_of(form: MatvecForm, config: KernelConfig) -> tuple[int, int, int, int, int]:
    """`make_config`'s arguments that give `config`."""
    return (config.lane_basis[form.out], config.thread[form.out], config.subgroup_basis[form.out],
            config.subgroup_basis[form.k], config.thread[form.k])


def workgroups(sig: KernelSignature, form: MatvecForm, config: KernelConfig) -> int:
    batch = 1
    for i in form.batch:
        batch *= sig.loops[i]
    return batch * (sig.loops[form.out] // config.workgroup[form.out])


def rank(sig: KernelSignature, config: KernelConfig) -> float:
    """A config's place in its layout's ranked shapes (lower is better; unranked last)."""
    form = MatvecForm.of(sig)
    shapes = RANKED_SHAPES.get((layout(form), sig.element_type), ())
    shape = shape_of(form, config)
    return float(shapes.index(shape)) if shape in shapes else float(len(shapes))


def candidates(sig: KernelSignature, limit: int) -> list[KernelConfig]:
    """The grid's configs, the ranked shapes first."""
    form = MatvecForm.of(sig)
    if form is None:
        return []
    ranked = sorted(grid(sig, form), key=lambda c: (rank(sig, c), c.label()))
    return ranked[:limit]


def heuristic(sig: KernelSignature, shapes=None, target: int | None = None) -> KernelConfig | None:
    """Of the ranked shapes that fit the kernel, the one whose workgroups come nearest the
    target; None where no shape is listed or fits (IREE's own config stands). `shapes` and
    `target` replace the fitted ones (the fit tries its own)."""
    form = MatvecForm.of(sig)
    if form is None:
        return None
    key = (layout(form), sig.element_type)
    shapes = RANKED_SHAPES.get(key, ()) if shapes is None else shapes
    target = TARGET_WORKGROUPS.get(key, 1) if target is None else target
    fitting = [c for c in (make_config(sig, form, *shape) for shape in shapes) if c is not None]
    if not fitting:
        return None
    return min(fitting, key=lambda c: abs(math.log(workgroups(sig, form, c) / target)))  # min keeps the earlier on a tie
