"""Batch buckets: one static copy of each exported function per batch size.

A model imported with a dynamic batch (`schedc import --dynamic-batch`) reaches IREE's
`input` phase as exported functions that read the batch off their arguments:

    util.func public @forward$async(%arg0: !hal.buffer_view, ...) {
      %0 = hal.buffer_view.dim<%arg0 : !hal.buffer_view>[0] : index
      %1 = hal.tensor.import wait(%arg1) => %arg0 : !hal.buffer_view -> tensor<?x64xf32>{%0}
    util.func public @forward(%arg0: !hal.buffer_view) { util.call @forward$async(...) }

For each bucket b this makes `@forward$b<b>$async` (the batch read replaced by the constant b,
which IREE folds through the whole function: every kernel is compiled for batch b) and its
synchronous `@forward$b<b>`, whose reflection names the function, the bucket and which inputs
and outputs carry the batch; the dynamic originals go. The runtime (`schedc.runtime.module`) calls
the smallest bucket that holds a call's batch, on zero-padded inputs, and returns the first
rows. Each bucket is then an ordinary static function: with --execution=graphs, one static
replay per bucket.
"""

from __future__ import annotations

from iree.compiler import ir

from schedc.errors import CompileError
from schedc.runtime import abi


def parse_buckets(text: str) -> tuple[int, ...]:
    """`1,2,4,8` -> (1, 2, 4, 8); a clear error for anything but positive integers."""
    try:
        buckets = sorted({int(part) for part in text.split(",") if part.strip()}) if isinstance(text, str) else text
    except ValueError:
        raise CompileError(f"--batch-buckets={text}: expected positive integers such as 1,2,4,8") from None
    return check_buckets(buckets)


# The largest bucket: the batch dimension's bound at import (schedc.torch.importer), and far
# past what one call's buffers hold (a bucket of 2**31 compiled, then asked 512 GiB per call).
MAX_BUCKET = 65536


def check_buckets(buckets) -> tuple[int, ...]:
    if isinstance(buckets, (str, bytes)) or not all(isinstance(b, int) and not isinstance(b, bool) for b in buckets):
        raise CompileError(f"batch_buckets takes integers, such as (1, 2, 4, 8), not {buckets!r}")
    buckets = tuple(sorted(set(buckets)))
    if not buckets or buckets[0] < 1 or buckets[-1] > MAX_BUCKET:
        raise CompileError(f"batch buckets must be positive integers up to {MAX_BUCKET}, got {', '.join(map(str, buckets)) or 'none'}")
    return buckets


def _symbol(op: ir.Operation) -> str:
    return ir.StringAttr(op.attributes["sym_name"]).value


def _walk(op: ir.Operation, name: str) -> list[ir.Operation]:
    found = []

    def visit(o):
        if o.name == name:
            found.append(o)
        return ir.WalkResult.ADVANCE

    op.walk(visit)
    return found


def _batch_reads(function: ir.Operation) -> list[ir.Operation]:
    """`hal.buffer_view.dim<%argN>[0]` ops of the function's arguments: its batch."""
    reads = []
    for op in _walk(function, "hal.buffer_view.dim"):
        index = ir.IntegerAttr(op.attributes["index"]).value
        view = op.operands[0]
        if index == 0 and isinstance(view.owner, ir.Block) and view.owner.owner == function:
            reads.append(op)
    return reads


def _batched_outputs(function: ir.Operation) -> list[int]:
    """The results whose tensor has a dynamic leading dimension."""
    exports = {}
    for op in _walk(function, "hal.tensor.export"):
        source = ir.RankedTensorType(op.operands[0].type)
        exports[op.results[0]] = source.rank > 0 and source.is_dynamic_dim(0)
    returned = _walk(function, "util.return")
    if len(returned) != 1:
        return []
    return [i for i, value in enumerate(returned[0].operands) if exports.get(value, False)]


def specialize_buckets(module: ir.Operation, buckets: tuple[int, ...], source_name: str) -> None:
    """Replaces each exported function of dynamic batch by one static copy per bucket."""
    block = module.regions[0].blocks[0]
    functions = {_symbol(op.operation): op.operation for op in block.operations if op.operation.name == "util.func"}
    exported = [f for f in functions.values() if "iree.abi.stub" in f.attributes]
    plans = []
    for function in exported:
        symbol = _symbol(function)
        if not symbol.endswith("$async") and f"{symbol}$async" in functions:
            continue  # the synchronous twin of an `$async` function: specialised with it
        reads = _batch_reads(function)
        if not reads:
            continue
        # torch input: `f$async` and its synchronous `f`; other input (linalg): `f` alone
        name = symbol[: -len("$async")] if symbol.endswith("$async") else symbol
        inputs = sorted({ir.BlockArgument(r.operands[0]).arg_number for r in reads})
        synchronous = functions.get(name) if symbol.endswith("$async") else None
        plans.append((function, synchronous, name, inputs, _batched_outputs(function), symbol.endswith("$async")))
    if not plans:
        raise CompileError(
            f"{source_name}: --batch-buckets needs a function whose inputs have a dynamic batch (dimension 0); "
            "import the model with `schedc import --dynamic-batch` (or import_torch(..., dynamic_batch=True))"
        )
    for function, synchronous, name, inputs, outputs, twins in plans:
        if twins and synchronous is None:
            raise CompileError(f"{source_name}: @{name}$async has no synchronous @{name} beside it")
        for batch in buckets:
            _specialize(function, synchronous, name, batch, inputs, outputs)
        function.erase()
        if synchronous is not None:
            synchronous.erase()


def _specialize(function, synchronous, name: str, batch: int, inputs: list[int], outputs: list[int]) -> None:
    """`function` for one bucket: `name$b<batch>$async` and its synchronous wrapper, or (a
    function without an `$async` twin) `name$b<batch>` itself."""
    bucket = f"{name}$b{batch}"
    with function.context, function.location:
        copy = function.clone(ir.InsertionPoint(function))
        copy.attributes["sym_name"] = ir.StringAttr.get(f"{bucket}$async" if synchronous is not None else bucket)
        for read in _batch_reads(copy):
            with ir.InsertionPoint(read):
                constant = ir.Operation.create("arith.constant", results=[ir.IndexType.get()],
                                               attributes={"value": ir.IntegerAttr.get(ir.IndexType.get(), batch)})
            read.results[0].replace_all_uses_with(constant.results[0])
            read.erase()
        if synchronous is None:
            wrapper = copy
        else:
            wrapper = synchronous.clone(ir.InsertionPoint(synchronous))
            wrapper.attributes["sym_name"] = ir.StringAttr.get(bucket)
            for call in _walk(wrapper, "util.call"):
                if ir.FlatSymbolRefAttr(call.attributes["callee"]).value == f"{name}$async":
                    call.attributes["callee"] = ir.FlatSymbolRefAttr.get(f"{bucket}$async")
        entries = {}
        if "iree.reflection" in wrapper.attributes:
            old = ir.DictAttr(wrapper.attributes["iree.reflection"])
            entries = {old[i].name: old[i].attr for i in range(len(old))}
        entries[abi.BUCKET_OF] = ir.StringAttr.get(name)
        entries[abi.BATCH] = ir.StringAttr.get(str(batch))
        entries[abi.BATCHED_INPUTS] = ir.StringAttr.get(",".join(map(str, inputs)))
        entries[abi.BATCHED_OUTPUTS] = ir.StringAttr.get(",".join(map(str, outputs)))
        wrapper.attributes["iree.reflection"] = ir.DictAttr.get(entries)
