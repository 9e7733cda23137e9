"""expanded-slices: a slice that a reshape splits is taken after the reshape, so that the
dispatches reading it take the slice in instead of IREE copying it out first.

GPT-2's attention slices its fused Q/K/V projection into three column blocks and splits each
into heads; IREE 3.13 made each slice a copy of its own (a `slow_memcpy` dispatch: three per
layer of a prefill), since an `expand_shape` between a slice and its reader keeps the slice
out of the reader's dispatch. The pass makes

    %s = tensor.extract_slice %qkv[0, 0, 768] [1, 32, 768] [1, 1, 1] : tensor<1x32x2304xf16> to tensor<32x768xf16>
    %k = tensor.expand_shape %s [[0], [1, 2]] output_shape [32, 12, 64] : tensor<32x768xf16> into tensor<32x12x64xf16>
into
    %e = tensor.expand_shape %qkv [[0], [1], [2, 3]] output_shape [1, 32, 36, 64] : ... into tensor<1x32x36x64xf16>
    %k = tensor.extract_slice %e[0, 0, 12, 0] [1, 32, 12, 64] [1, 1, 1, 1] : tensor<1x32x36x64xf16> to tensor<32x12x64xf16>

Which slices qualify: `schedc.decisions.expanded_slices`. The count per function goes to the
report.
"""

from __future__ import annotations

from dataclasses import dataclass

from iree.compiler import ir

from schedc.decisions.expanded_slices import expanded_slice
from schedc.ir.iree import function_name, function_ops, ops_named
from schedc.ir.rewrite import inline_values, tensor_type
from schedc.options import Phase
from schedc.passes.base import PassInfo


@dataclass(frozen=True)
class Options:
    enabled: bool = True  # false: IREE's copies of such slices, for comparison


def expanded_slices(module, pass_, options: Options, context) -> None:
    if not options.enabled:
        return
    records = context.records.setdefault("expanded-slices", {})
    for func in function_ops(module):
        moved = sum(_slice_after(op) for op in ops_named(func, "tensor.expand_shape"))
        if moved:
            records[function_name(func)] = {"slices_after_reshapes": moved}


def _static(op: ir.Operation, name: str) -> tuple[int, ...]:
    return tuple(ir.DenseI64ArrayAttr(op.attributes[name]))


def _slice_after(reshape: ir.Operation) -> int:
    """Rewrites `reshape` (a tensor.expand_shape) of a slice as a slice of the reshaped source
    where the decision allows; 1 if it did."""
    source = reshape.operands[0]
    if not isinstance(source, ir.OpResult) or source.owner.operation.name != "tensor.extract_slice":
        return 0
    slice_ = source.owner.operation
    if len(slice_.operands) != 1:  # dynamic offsets, sizes or strides
        return 0
    whole = ir.RankedTensorType(slice_.operands[0].type)
    sliced, expanded = ir.RankedTensorType(source.type), ir.RankedTensorType(reshape.results[0].type)
    if not (whole.has_static_shape and sliced.has_static_shape and expanded.has_static_shape):
        return 0
    groups = tuple(tuple(ir.IntegerAttr(i).value for i in group) for group in ir.ArrayAttr(reshape.attributes["reassociation"]))
    plan = expanded_slice(tuple(whole.shape), _static(slice_, "static_offsets"), _static(slice_, "static_sizes"),
                          _static(slice_, "static_strides"), tuple(sliced.shape), groups, tuple(expanded.shape))
    if plan is None:
        return 0
    element = whole.element_type
    wide, result = tensor_type(plan.shape, element), tensor_type(expanded.shape, element)
    reassociation = ", ".join(f"[{', '.join(map(str, g))}]" for g in plan.groups)
    text = f"""
func.func private @expanded_slice(%x: {tensor_type(whole.shape, element)}) -> {result} {{
  %e = tensor.expand_shape %x [{reassociation}] output_shape [{', '.join(map(str, plan.shape))}] : {tensor_type(whole.shape, element)} into {wide}
  %s = tensor.extract_slice %e[{', '.join(map(str, plan.offsets))}] [{', '.join(map(str, plan.sizes))}] [{', '.join(['1'] * len(plan.shape))}] : {wide} to {result}
  return %s : {result}
}}"""
    with reshape.context, reshape.location:
        helper = ir.Module.parse(text)
        (value,) = inline_values(helper.body.operations[0], [slice_.operands[0]], before=reshape)
    reshape.results[0].replace_all_uses_with(value)
    reshape.erase()
    if not list(slice_.results[0].uses):
        slice_.erase()
    return 1


PASS = PassInfo(
    name="expanded-slices",
    summary="a slice that a reshape splits (attention's Q/K/V columns into heads) is taken after the reshape, so the dispatches reading it take it in instead of a copy",
    run=expanded_slices,
    options=Options,
    phase=Phase.PREPROCESSING,
    implicit_for=("cuda",),
)
