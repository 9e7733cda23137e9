"""The sum of split-k's parts: a config that reads the parts coalesced. Pure Python over
`KernelSignature` data; `heuristic_config` calls it.

split-k writes a split kernel's G partial results as one tensor `parts[g, outputs...]` and sums
them in a dispatch of its own, into which IREE fuses the split op's consumers (a bias, a batch
norm, a residual sum). IREE 3.13's own config for that sum gives a workgroup of 32 threads a
block across the outer loops: ResNet-18's 16 parts of 512 x 7 x 7 get workgroup [32, 1, 1],
one channel a thread, so a subgroup's 32 loads are 49 floats apart (H100, f16 ResNet-18: 16
sums, 84.6 us of the model's 370.3 us of kernels).

Here consecutive threads take consecutive outputs, each summing its G parts serially: the
innermost loops are taken whole while a workgroup holds at most SUM_THREADS threads, then the
largest divisor of the next loop that fits.

    512 x 7 x 7, 16 parts:  workgroup [4, 7, 7, 0]  thread [1, 1, 1, 0]  reduction [0, 0, 0, 16]
                            196 threads, 128 workgroups
"""

from __future__ import annotations

from schedc.decisions.kernel_config import KernelConfig, map_terms

# The most threads a workgroup of a sum holds (0: IREE's own config for every sum).
SUM_THREADS = 256
# The most parts a sum adds (split-k makes at most 16).
MAX_SUM_PARTS = 64
# Fewer threads than a subgroup a workgroup: IREE's own config instead.
MIN_SUM_THREADS = 32


def _projection(text: str) -> list[int] | None:
    """The loops `affine_map<(d0, ..) -> (d3, d0, ..)>` reads, in order; None for any other map."""
    terms = map_terms(text)
    if terms is None or any(len(sums) != 1 or sums[0][1] != 1 for sums in terms):
        return None
    return [sums[0][0] for sums in terms]


def parts_sum_form(sig) -> bool:
    """Whether the dispatch's root sums its input over a short leading loop: loops (outputs...,
    g), input `[g, outputs...]`, output `[outputs...]`, as split-k's sums of parts read."""
    if sig.kind != "reduction" or sig.chained or len(sig.indexing_maps) != 2 or len(sig.loops) < 2:
        return False
    *outputs, parts = range(len(sig.loops))
    if sig.iterators != ("parallel",) * len(outputs) + ("reduction",) or sig.loops[parts] > MAX_SUM_PARTS:
        return False
    return _projection(sig.indexing_maps[0]) == [parts, *outputs] and _projection(sig.indexing_maps[1]) == outputs


def parts_sum_config(sig):
    """The config of a sum of parts (`parts_sum_form`), or None when SUM_THREADS is 0 or whole
    tiles would leave a workgroup under MIN_SUM_THREADS threads."""
    if not SUM_THREADS or not parts_sum_form(sig):
        return None
    *extents, parts = sig.loops
    tiles = [1] * len(extents)
    threads = 1
    for i in reversed(range(len(extents))):
        if threads * extents[i] <= SUM_THREADS:
            tiles[i] = extents[i]
            threads *= extents[i]
            continue
        tiles[i] = max(d for d in range(1, SUM_THREADS // threads + 1) if extents[i] % d == 0)
        threads *= tiles[i]
        break
    if threads < MIN_SUM_THREADS:
        return None  # a long prime row (1,009 outputs): no whole tile fills a subgroup
    zeros = [0] * len(extents)
    return KernelConfig(workgroup=(*tiles, 0), reduction=(*zeros, parts), thread=(*[1] * len(extents), 0))
