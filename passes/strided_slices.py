"""strided-slices: a contraction that reads an input at a stride (a 1x1 convolution of stride 2)
reads it through a strided slice instead, so that the kernel is a plain matmul-like one.

IREE 3.13's global optimization leaves some strided 1x1 convolutions as

    %c = linalg.generic {indexing_maps = [(d0, d3), (d3, d1 * 2, d2 * 2), (d0, d1, d2)] ...}
           ins(%w, %x : tensor<512x256xf16>, tensor<256x56x56xf16>)
and the pass makes them
    %s = tensor.extract_slice %x[0, 0, 0] [256, 28, 28] [1, 2, 2]
    %c = linalg.generic {indexing_maps = [(d0, d3), (d3, d1, d2), (d0, d1, d2)] ...} ins(%w, %s ...)

which IREE folds into the dispatch's load of `%x` (a load with strides), as it does where its
own global optimization kept such a slice. A strided map is no contraction to IREE's tensor-core
configs, so kernel-config gave ResNet-50's f16 shortcuts of 28 x 28 and 14 x 14 pixels SIMT
tiles (its 7 x 7 one, which IREE kept as a slice, got tensor cores). Which inputs qualify:
`schedc.decisions.strided_slices`. The count per function goes to the report.
"""

from __future__ import annotations

from dataclasses import dataclass

from iree.compiler import ir

from schedc.decisions.kernel_config import map_terms
from schedc.decisions.strided_slices import slice_strides
from schedc.ir.costs import loop_ranges
from schedc.ir.iree import function_name, function_ops, ops_named
from schedc.ir.rewrite import strided_slice
from schedc.options import Phase
from schedc.passes.base import PassInfo


@dataclass(frozen=True)
class Options:
    enabled: bool = True  # false: IREE's strided reads, for comparison (the pass runs implicitly on cuda)


def strided_slices(module, pass_, options: Options, context) -> None:
    if not options.enabled:
        return
    records = context.records.setdefault("strided-slices", {})
    for func in function_ops(module):
        sliced = sum(_slice_strided_inputs(op) for op in ops_named(func, "linalg.generic"))
        if sliced:
            records[function_name(func)] = {"strided_reads_sliced": sliced}


def _slice_strided_inputs(generic: ir.Operation) -> int:
    """Gives each strided input of `generic` a strided slice; how many it gave."""
    has_reduction = any("reduction" in str(t) for t in ir.ArrayAttr(generic.attributes["iterator_types"]))
    inputs = ir.DenseI32ArrayAttr(generic.attributes["operandSegmentSizes"])[0]
    maps = [ir.AffineMapAttr(a).value for a in ir.ArrayAttr(generic.attributes["indexing_maps"])]
    ranges = loop_ranges(generic)
    if not has_reduction or ranges is None:
        return 0
    sliced = 0
    for i in range(inputs):
        operand = generic.operands[i]
        terms = map_terms(str(maps[i]))
        strides = slice_strides(terms, has_reduction)
        if strides is None or not isinstance(operand.type, ir.RankedTensorType):
            continue
        loops = [loop for ((loop, _),) in terms]
        with generic.context, generic.location, ir.InsertionPoint(generic):
            generic.operands[i] = strided_slice(operand, [ranges[loop] for loop in loops], list(strides))
            maps[i] = ir.AffineMap.get(maps[i].n_dims, maps[i].n_symbols, [ir.AffineDimExpr.get(loop) for loop in loops])
        sliced += 1
    if sliced:
        with generic.context:
            generic.attributes["indexing_maps"] = ir.ArrayAttr.get([ir.AffineMapAttr.get(m) for m in maps])
    return sliced


PASS = PassInfo(
    name="strided-slices",
    summary="on cuda, a contraction's strided read (a 1x1 convolution of stride 2) becomes a strided slice, so the kernel is a plain matmul (tensor cores in f16)",
    run=strided_slices,
    options=Options,
    phase=Phase.PREPROCESSING,
    implicit_for=("cuda",),
)
