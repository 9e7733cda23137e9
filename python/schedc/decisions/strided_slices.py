"""Which strided reads of a contraction become a strided slice of their own (the decision of the
strided-slices pass, over plain data).

IREE 3.13's global optimization turns a 1x1 convolution of stride 2 (ResNet-50's downsampling
shortcuts) into a contraction that reads its image at `(d3, d1 * 2, d2 * 2)`; for some shapes it
keeps a strided `extract_slice` instead, for others (ResNet-50's 28 x 28 and 14 x 14 shortcuts)
it folds the stride into the indexing map. A map with a stride is no contraction to IREE's
tensor-core configs (`inferContractionDims` needs projected permutations), so in f16 such a
kernel got SIMT tiles. Read through a strided slice, the kernel is a plain matmul-like one, and
IREE folds the slice into the dispatch's load of the image (a load with strides), as it does
where it kept the slice itself.
"""

from __future__ import annotations


def slice_strides(terms: list[list[tuple[int, int]]] | None, has_reduction: bool) -> tuple[int, ...] | None:
    """The strides of the slice an input should be read through, one per dimension, or None.

    `terms` is the input's indexing map as sums of (loop, coefficient) terms
    (`schedc.decisions.kernel_config.map_terms`): an input qualifies when it belongs to a
    contraction (`has_reduction`) and every result of its map is one loop times a constant, at
    least one constant above 1, and no loop appears twice (a window's `d1 * 2 + d4` is a sum:
    not a stride but a convolution, left alone)."""
    if not has_reduction or terms is None or any(len(sums) != 1 for sums in terms):
        return None
    loops = [loop for ((loop, _),) in terms]
    strides = tuple(coefficient for ((_, coefficient),) in terms)
    if len(set(loops)) != len(loops) or any(s < 1 for s in strides) or all(s == 1 for s in strides):
        return None
    return strides
