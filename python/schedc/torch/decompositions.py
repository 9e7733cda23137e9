"""Decompositions schedc applies before torch-mlir, where torch-mlir's or IREE's own lowering
of an op fails and a few torch ops express it exactly.

Each is a torch function over the op's arguments; the importer adds them to torch-mlir's
decomposition table (`run_decompositions`), so the program torch-mlir imports has the ops
below instead. Shapes are static here (the importer's static path).

- `adaptive_max_pool{1,2,3}d`: IREE 3.13's torch input conversion lowers it to a max pool of
  one window size, which is wrong where the input's size is not a multiple of the output's
  (10 -> 7: "'tensor.cast' op operand type 'tensor<1x512x9x15xf32>' and result type
  'tensor<1x512x7x13xf32>' are cast incompatible"). Here each output position's window,
  [floor(i * In / Out), ceil((i + 1) * In / Out)), is gathered (padded to the largest window
  with -inf) and reduced; the indices are the first maximum's flat position in the input
  plane, as torch's are.
- `log10`: IREE 3.13's CPU code generation leaves `log10f` to libm, which its static linker
  does not have ("undefined symbol: log10f", on an integer input converted to float): it is
  log(x) / log(10).
- `mm`, `bmm` with a zero-length contraction: IREE 3.13's compiler crashes on it (SIGFPE in
  dispatch creation); the product is zeros.
- `kthvalue`: torch-mlir lowers it to `tm_tensor.topk`, whose region IREE 3.13 refuses ("region
  block must end with a linalg_ext.yield i1"): a sort along the dimension, and its k-th
  entry (on ties, which of the equal entries' indices comes back is not specified, as it is
  not for torch's kthvalue).
- `index_put` with one bool mask (`x[mask] = values`): torch-mlir makes a scatter whose index
  count is data-dependent, and IREE 3.13 rejects its shapes ("mismatch in shape of indices and
  update value"). Here each masked position's value is gathered by the running count of the
  mask (values[cumsum(mask) - 1]) and selected with `where`: static shapes, the same result.

- `isfinite`: IREE 3.13's torch input conversion has no pattern for it ("failed to legalize
  operation 'torch.aten.isfinite'"): not NaN, and |x| != inf.

- sums and means of f16 and bf16 tensors (`sum`, `mean`, `avg_pool{1,2,3}d`,
  `_adaptive_avg_pool{1,2,3}d`): torch adds them up in f32 and rounds once, but torch-mlir's
  lowering adds them in the tensor's own type, and a mean divides only after the sum. A
  ShuffleNetV2 in f16 (bench/heldout.py) then returned NaN on IREE alone, on the CPU and on an
  H100: its global mean adds 49 values of up to thousands, past f16's 65504. Here the op runs
  in f32 and its result is rounded to the tensor's type, as torch's does. The conversion of
  the input fuses into the reduction's dispatch.

A decomposition that does not apply to its arguments returns NotImplemented: the op stays.

One more is for training steps only (`training_decompositions`):
- `max_pool2d_with_indices_backward`: torch-mlir lowers it to a scatter of the gradient by the
  saved indices, which IREE 3.13 runs as a serial loop: on an H200 the two of
  bench/remat_gpu.py's CNN step took 12,978 and 3,906 us of its 18.7 ms (Nsight Compute),
  where the whole step of torch eager took 2.9 ms. Here each window offset (i, j) selects the
  windows whose argmax it is (`indices == its position`), and their gradients are placed at
  those positions by zero insertion (stride) and padding: dense ops only, summed over the
  offsets, exactly what the scatter adds.

One rewrite is of the program's graph, after the decompositions (`widen_unsigned`):
torch-mlir 20261001 lowers uint8 as signed int8 where an op promotes it implicitly (the sum
of four uint8 200s is -224; `z * 0.5` of 200 is -28), and right where it is converted
explicitly (`z.to(torch.int64)`). Each uint8 operand of an op whose result is of another
type (not bool) is converted to the result's type first, as torch's promotion does.
"""

from __future__ import annotations

import math


def _windows(size: int, out: int):
    """Each output position's window start and end, as int64 tensors (made by arange: a
    decomposition may not hold tensor constants)."""
    import torch

    position = torch.arange(out, dtype=torch.int64)
    start = torch.div(position * size, out, rounding_mode="floor")
    end = torch.div((position + 1) * size + out - 1, out, rounding_mode="floor")
    return start, end


def adaptive_max_pool(x, output_size, dims: int):
    """(values, indices) of an adaptive max pool over the last `dims` dimensions of x."""
    import torch

    spatial = list(x.shape[-dims:])
    sizes = [int(o) if o is not None else s for o, s in zip(output_size, spatial)]
    lead = x.dim() - dims
    gathered = x
    window_widths, starts = [], []
    for d, (size, out) in enumerate(zip(spatial, sizes)):
        start, end = _windows(size, out)
        width = max(-((-(i + 1) * size) // out) - (i * size) // out for i in range(out))
        offset = torch.arange(width, dtype=torch.int64)
        index = (start.unsqueeze(1) + offset.unsqueeze(0)).clamp(max=size - 1)  # (out, width)
        valid = (start.unsqueeze(1) + offset.unsqueeze(0)) < end.unsqueeze(1)
        axis = lead + 2 * d  # each earlier dimension became (out, width)
        gathered = gathered.index_select(axis, index.reshape(-1))
        shape = list(gathered.shape)
        gathered = gathered.reshape(shape[:axis] + [out, width] + shape[axis + 1:])
        mask_shape = [1] * gathered.dim()
        mask_shape[axis], mask_shape[axis + 1] = out, width
        gathered = gathered.masked_fill(~valid.reshape(mask_shape), float("-inf"))
        window_widths.append(width)
        starts.append(start)
    # (..., O1, K1, O2, K2, ...) -> (..., O1, O2, ..., K1 * K2 * ...)
    outs = [lead + 2 * d for d in range(dims)]
    widths = [lead + 2 * d + 1 for d in range(dims)]
    gathered = gathered.permute(list(range(lead)) + outs + widths)
    flat = gathered.reshape(list(gathered.shape[: lead + dims]) + [-1])
    values, local = flat.max(dim=-1)
    # The window-local position back to the input plane's flat index.
    index = torch.zeros_like(local)
    remainder = local
    for d in range(dims):
        inner = math.prod(window_widths[d + 1:])
        offset = torch.div(remainder, inner, rounding_mode="floor")
        remainder = remainder - offset * inner
        start_shape = [1] * local.dim()
        start_shape[lead + d] = sizes[d]
        index = index + (starts[d].reshape(start_shape) + offset) * math.prod(spatial[d + 1:])
    return values, index


def _adaptive_max_pool1d(x, output_size):
    return adaptive_max_pool(x, output_size, 1)


def _adaptive_max_pool2d(x, output_size):
    return adaptive_max_pool(x, output_size, 2)


def _adaptive_max_pool3d(x, output_size):
    return adaptive_max_pool(x, output_size, 3)


def _log10(x):
    import torch

    return torch.log(x) * (1.0 / math.log(10.0))


def _zero_k(a, b):
    if a.shape[-1] != 0:
        return NotImplemented
    return a.new_zeros(list(a.shape[:-1]) + [b.shape[-1]])


def _kthvalue(x, k: int, dim: int = -1, keepdim: bool = False):
    import torch

    if x.dim() == 0:
        return NotImplemented
    values, indices = torch.sort(x, dim=dim)  # torch-mlir has no aten.sort.stable
    value, index = values.narrow(dim, k - 1, 1), indices.narrow(dim, k - 1, 1)
    if not keepdim:
        value, index = value.squeeze(dim), index.squeeze(dim)
    return value, index


def _index_put_bool_mask(x, indices, values, accumulate: bool = False):
    import torch

    if len(indices) != 1 or indices[0] is None or indices[0].dtype != torch.bool:
        return NotImplemented
    mask = indices[0]
    if list(mask.shape) != list(x.shape[: mask.dim()]):
        return NotImplemented
    rest = list(x.shape[mask.dim():])
    if values.dim() == len(rest) + 1 and values.shape[0] != 1:  # one row of values per masked position
        flat = mask.reshape(-1)
        position = (torch.cumsum(flat.to(torch.int64), 0) - 1).clamp(min=0)
        update = values.index_select(0, position).reshape(list(mask.shape) + rest)
    else:  # one value for every masked position
        update = values.reshape(values.shape[1:]) if values.dim() == len(rest) + 1 else values
    where = mask.reshape(list(mask.shape) + [1] * len(rest))
    update = update.to(x.dtype)
    if accumulate:
        return x + torch.where(where, update, torch.zeros_like(x))
    return torch.where(where, update, x)


def _isfinite(x):
    if not x.dtype.is_floating_point:
        return NotImplemented
    return ~x.isnan() & (x.abs() != float("inf"))


def _narrow(x) -> bool:
    """Whether x is a floating-point tensor that torch reduces in f32 (f16, bf16)."""
    import torch

    return x.dtype in (torch.float16, torch.bfloat16)


def _sum_dim(x, dim, keepdim: bool = False, dtype=None):
    import torch

    if dtype is not None or not _narrow(x):
        return NotImplemented
    return torch.ops.aten.sum.dim_IntList(x, dim, keepdim, dtype=torch.float32).to(x.dtype)


def _sum(x, dtype=None):
    return _sum_dim(x, None, False, dtype)


def _mean_dim(x, dim, keepdim: bool = False, dtype=None):
    import torch

    if dtype is not None or not _narrow(x):
        return NotImplemented
    dims = range(x.dim()) if not dim else [d % x.dim() for d in dim]
    count = math.prod(x.shape[d] for d in set(dims))
    return (torch.ops.aten.sum.dim_IntList(x, dim, keepdim, dtype=torch.float32) / count).to(x.dtype)


def _mean(x, dtype=None):
    return _mean_dim(x, None, False, dtype)


def _in_f32(op):
    """`op` (a pooling that averages) run on the f32 conversion of an f16 or bf16 input."""

    def widened(x, *args):
        import torch

        if not _narrow(x):
            return NotImplemented
        return op(x.to(torch.float32), *args).to(x.dtype)

    return widened


def _zero_insert(x, stride: int, dim: int):
    """x with stride - 1 zeros after each entry along `dim`, trimmed after its last entry
    (the positions a strided window's outputs map to), by concatenation and a reshape."""
    import torch

    if stride == 1:
        return x
    shape = list(x.shape)
    zeros = torch.zeros(shape[: dim + 1] + [stride - 1] + shape[dim + 1:], dtype=x.dtype, device=x.device)
    spread = torch.cat([x.unsqueeze(dim + 1), zeros], dim + 1).reshape(shape[:dim] + [shape[dim] * stride] + shape[dim + 1:])
    return spread.narrow(dim, 0, (shape[dim] - 1) * stride + 1)


def _place(x, start: int, size: int, dim: int):
    """x placed along `dim` at offset `start` (negative: its first -start entries fall
    outside) of a zero tensor of length `size`."""
    import torch

    if start < 0:
        x = x.narrow(dim, min(-start, x.shape[dim]), max(x.shape[dim] + start, 0))
        start = 0
    length = min(x.shape[dim], max(size - start, 0))
    x = x.narrow(dim, 0, length)
    before, after = list(x.shape), list(x.shape)
    before[dim], after[dim] = start, size - start - length
    parts = [torch.zeros(before, dtype=x.dtype, device=x.device), x, torch.zeros(after, dtype=x.dtype, device=x.device)]
    return torch.cat([p for p in parts if p.shape[dim]], dim)


def _max_pool2d_backward(grad_output, x, kernel_size, stride, padding, dilation, ceil_mode, indices):
    import torch

    def pair(values, default):
        values = list(values) if values else list(default)
        return values * 2 if len(values) == 1 else values

    kh, kw = pair(kernel_size, ())
    sh, sw = pair(stride, (kh, kw))
    ph, pw = pair(padding, (0, 0))
    dh, dw = pair(dilation, (1, 1))
    height, width = x.shape[-2], x.shape[-1]
    rows, cols = grad_output.shape[-2], grad_output.shape[-1]
    out_rows = torch.arange(rows, dtype=torch.int64).reshape(rows, 1)
    out_cols = torch.arange(cols, dtype=torch.int64).reshape(1, cols)
    grad = None
    for i in range(kh):
        for j in range(kw):
            top, left = i * dh - ph, j * dw - pw
            position = (out_rows * sh + top) * width + out_cols * sw + left  # this offset's input position
            picked = torch.where(indices == position, grad_output, torch.zeros_like(grad_output))
            placed = _place(_zero_insert(picked, sh, picked.dim() - 2), top, height, picked.dim() - 2)
            placed = _place(_zero_insert(placed, sw, placed.dim() - 1), left, width, placed.dim() - 1)
            grad = placed if grad is None else grad + placed
    return grad


def training_decompositions() -> dict:
    """The decompositions of a training step's backward ops (see the module docstring)."""
    import torch

    return {torch.ops.aten.max_pool2d_with_indices_backward.default: _max_pool2d_backward}


def decompositions() -> dict:
    """schedc's decompositions by the aten op they replace."""
    import torch

    aten = torch.ops.aten
    table = {
        aten.adaptive_max_pool2d.default: _adaptive_max_pool2d,
        aten.adaptive_max_pool3d.default: _adaptive_max_pool3d,
        aten.log10.default: _log10,
        aten.mm.default: _zero_k,
        aten.bmm.default: _zero_k,
        aten.kthvalue.default: _kthvalue,
        aten.index_put.default: _index_put_bool_mask,
        aten.isfinite.default: _isfinite,
    }
    if hasattr(aten, "adaptive_max_pool1d"):
        table[aten.adaptive_max_pool1d.default] = _adaptive_max_pool1d
    table.update({aten.sum.dim_IntList: _sum_dim, aten.sum.default: _sum, aten.mean.dim: _mean_dim, aten.mean.default: _mean})
    for name in ("avg_pool1d", "avg_pool2d", "avg_pool3d", "_adaptive_avg_pool1d", "_adaptive_avg_pool2d", "_adaptive_avg_pool3d"):
        if hasattr(aten, name):
            op = getattr(aten, name).default
            table[op] = _in_f32(op)
    return table


# Ops that convert explicitly (torch-mlir lowers these right) or only read shapes, and the
# integer contractions, whose lowering extends each operand by its own signedness (the
# e2e suite's mixed uint8 x int8 matmuls pass as they are, and fail once one side is widened).
_CONVERSIONS = {"_to_copy", "to", "convert_element_type", "view", "_unsafe_view", "reshape", "expand", "permute", "select", "slice", "clone", "copy",
                "mm", "_int_mm", "bmm", "matmul", "addmm", "baddbmm", "convolution", "_convolution"}


def widen_unsigned(program) -> int:
    """Converts each uint8 tensor operand of an op with a result of another (non-bool) dtype
    to that dtype first (see the module's docstring); returns how many it converted."""
    import torch

    graph = program.graph_module.graph
    quantized = {getattr(torch, n) for n in ("quint8", "qint8", "qint32", "quint4x2", "quint2x4") if hasattr(torch, n)}
    widened = 0
    for node in list(graph.nodes):
        if node.op != "call_function" or not hasattr(node.target, "_schema"):
            continue
        result = node.meta.get("val")
        dtype = getattr(result, "dtype", None)
        op = node.target._schema.name.split("::")[-1]
        if dtype is None or dtype in (torch.uint8, torch.bool) or dtype in quantized or op in _CONVERSIONS:
            continue
        if "quantize" in op or "quantized" in op:  # uint8 is the storage of a quantized tensor there
            continue
        for operand in list(node.all_input_nodes):
            value = operand.meta.get("val")
            if getattr(value, "dtype", None) != torch.uint8:
                continue
            with graph.inserting_before(node):
                wide = graph.call_function(torch.ops.aten._to_copy.default, (operand,), {"dtype": dtype})
            wide.meta["val"] = value.to(dtype)
            node.replace_input_with(operand, wide)
            widened += 1
    if widened:
        graph.lint()
        program.graph_module.recompile()
    return widened
