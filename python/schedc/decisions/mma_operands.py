"""mma-operands' decision: which contractions get their two inputs swapped before IREE lowers
them to tensor cores (`schedc.passes.mma_operands` applies it)."""

from __future__ import annotations


# IREE 3.13's CUDA tensor-core code generation (mma.sync on sm_80, its own configs and ours)
# computes an f16/bf16 contraction wrongly when its first input does not index the output's
# leading dimension while its second does: every f16 1x1 NCHW convolution (ins(input[k, n],
# filter[m, k]) -> out[m, n]) of four held-out CNNs was off by 0.8-1.0 (relative max), and with
# the two inputs swapped each matched torch to 8e-4 (bench/layers.py; H200, 2026-12-02).
MMA_ELEMENTS = ("f16", "bf16")


def swap_inputs_for_mma(output: list[list[tuple[int, int]]], first: list[list[tuple[int, int]]],
                        second: list[list[tuple[int, int]]], element: str) -> bool:
    """Whether a two-input contraction's inputs should trade places before IREE lowers it to
    tensor cores: its element type is f16 or bf16, every map result is one loop (a matmul or a
    1x1 convolution, strided or not; not a window), and the output's leading loops are the
    second input's, before all of the first's. The maps are `map_terms` of the indexing maps. A 3x3
    convolution is such a contraction too, but IREE computes it right; swapped, SqueezeNet's
    32->128 one ran in 2.5 ms instead of 18 us."""
    if element not in MMA_ELEMENTS or not output or len(output[0]) != 1:
        return False
    if any(len(result) != 1 for terms in (output, first, second) for result in terms):
        return False  # a window (h + kh): IREE's convolution code, right as it is; swapped it ran 100x slower
    loops = lambda terms: {loop for result in terms for loop, _ in result}  # noqa: E731
    first_loops, second_loops = loops(first), loops(second)
    # The output's loops past its batch loops (those both inputs index: a split convolution's
    # parts, `schedc.ir.split_k`); IREE's tensor-core configs take the first as M.
    rest = [result[0][0] for result in output if not (result[0][0] in first_loops and result[0][0] in second_loops)]
    if not rest or rest[0] in first_loops or rest[0] not in second_loops:
        return False
    # Only where the second input's loops lead the output together, [second's, first's] (a
    # transposed product, a 1x1 convolution): an output that interleaves them (aggressive
    # fusion's Q/K/V projections into [heads, tokens, head width]) IREE computed right as it
    # was, and swapped, wrong, with its own configs as with ours (Llama's, BERT's and ViT's
    # f16 projections off by 1.3-1.6; bench/dispatch_diff.py on an H100, twelfth session).
    from_second = [loop in second_loops for loop in rest]
    return from_second == sorted(from_second, reverse=True)
