"""What IREE 3.13's HAL-phase ops mean for static replay, read through the MLIR bindings' named
accessors (`op.opview.wait_fence`, ...) and built in one place.

What IREE emits by default (memoization and indirect command buffers on): each execute
region's command buffer is recorded once, in an initializer, by a `__<f>_memoize_apply`
function, but *indirect*: inputs, outputs and transients are binding-table slots (`(%cN :
index)` at buffer positions), filled on every call by `hal.device.queue.execute.indirect` with
buffers that the call allocates (`hal.device.queue.alloca`) or receives. The CUDA HAL cannot
replay a binding table as a graph, so it re-encodes every launch on every call. The rewrite
that records them once over static buffers is `passes/static_replay.py`'s.

Every `hal.device.queue.*` op starts with the same four operands: the device, the queue
affinity, the fence it waits on and the fence it signals (`QueueOperands`).
"""

from __future__ import annotations

from dataclasses import dataclass

from iree.compiler import ir

from schedc.ir.iree import constant_index, exported_functions

# Where a recording's commands bind a buffer (a slot number before the rewrite, a buffer
# after it): operand positions, or for dispatch its `binding_buffers` segment. The same index
# constants elsewhere are sizes or counts, so only these positions are slots.
_BUFFER_OPERANDS = {
    "hal.command_buffer.copy_buffer": (1, 3),  # source_buffer, target_buffer
    "hal.command_buffer.fill_buffer": (1,),  # target_buffer
    "hal.command_buffer.update_buffer": (3,),  # target_buffer
}
_DISPATCH_BINDING_BUFFERS_SEGMENT = 7  # hal.command_buffer.dispatch's operandSegmentSizes
# The commands a memoized recording holds that static replay knows how to rebind.
PLAIN_COMMANDS = frozenset({
    "hal.command_buffer.create",
    "hal.command_buffer.finalize",
    "hal.command_buffer.execution_barrier",
    "hal.command_buffer.dispatch",
    *_BUFFER_OPERANDS,
})
_SIGNAL_FENCE = 3  # the operand position of a queue op's signal fence (see QueueOperands)
_CREATE_WITHOUT_BINDINGS = 2  # hal.command_buffer.create's device and affinity, no binding capacity

BUFFER = "!hal.buffer"
COMMAND_BUFFER = "!hal.command_buffer"
DEVICE = "!hal.device"
FENCE = "!hal.fence"


# -- structure ----------------------------------------------------------------------------------


def symbol(op: ir.Operation, attribute: str) -> str:
    return ir.FlatSymbolRefAttr(op.attributes[attribute]).value


def top_level(module: ir.Operation) -> dict[str, ir.Operation]:
    """The module's symbols (globals, functions) by name."""
    ops = {}
    for op in module.regions[0].blocks[0].operations:
        op = op.operation
        if "sym_name" in op.attributes:
            ops[ir.StringAttr(op.attributes["sym_name"]).value] = op
    return ops


def initializers(module: ir.Operation) -> list[ir.Operation]:
    return [op.operation for op in module.regions[0].blocks[0].operations if op.operation.name == "util.initializer"]


def body(function: ir.Operation) -> list[ir.Operation]:
    """The ops of a function's (or initializer's) first block."""
    return [op.operation for op in function.regions[0].blocks[0].operations]


def submitting_functions(module: ir.Operation) -> list[ir.Operation]:
    """The exported functions whose bodies submit HAL work (the ones static replay rewrites)."""
    return [f for f in exported_functions(module) if any(o.operation.name.startswith("hal.") for b in f.regions[0].blocks for o in b.operations)]


def returned_view_buffers(function: ir.Operation) -> list[tuple[int, ir.Value]]:
    """(result position, the viewed buffer) of each result the function returns as a
    `hal.buffer_view.create` of a buffer."""
    returned = next(op for op in body(function) if op.name == "util.return")
    found = []
    for position, value in enumerate(returned.operands):
        view = value.owner
        if not isinstance(view, ir.Block) and view.name == "hal.buffer_view.create":
            found.append((position, view.opview.source_buffer))
    return found


def loaded_global(value: ir.Value) -> str | None:
    """The global that `value` is a `util.global.load` of, or None."""
    owner = value.owner
    if isinstance(owner, ir.Block) or owner.name != "util.global.load":
        return None
    return symbol(owner, "global")


def recorder_of(global_name: str, module: ir.Operation) -> str | None:
    """The function an initializer calls to record the command buffer stored in `global_name`."""
    for initializer in initializers(module):
        for op in body(initializer):
            if op.name == "util.global.store" and symbol(op, "global") == global_name:
                stored = op.operands[0].owner
                if not isinstance(stored, ir.Block) and stored.name == "util.call":
                    return symbol(stored, "callee")
    return None


def global_loads(module: ir.Operation) -> set[str]:
    """Every global some op of the module loads."""
    loads: set[str] = set()

    def visit(op):
        if op.name == "util.global.load":
            loads.add(symbol(op, "global"))
        return ir.WalkResult.ADVANCE

    module.walk(visit)
    return loads


def callers(module: ir.Operation, callee: str) -> list[ir.Operation]:
    found = []

    def visit(op):
        if op.name == "util.call" and symbol(op, "callee") == callee:
            found.append(op)
        return ir.WalkResult.ADVANCE

    module.walk(visit)
    return found


# -- reading ops --------------------------------------------------------------------------------


@dataclass(frozen=True)
class QueueOperands:
    device: ir.Value
    affinity: ir.Value
    wait: ir.Value
    signal: ir.Value


def queue_operands(op: ir.Operation) -> QueueOperands:
    """A `hal.device.queue.*` op's device, affinity and fences."""
    view = op.opview
    return QueueOperands(view.device, view.queue_affinity, view.wait_fence, view.signal_fence)


@dataclass(frozen=True)
class IndirectExecute:
    """A `hal.device.queue.execute.indirect`: the command buffer it submits and its binding
    table, as (buffer, offset, length) per slot."""

    commands: ir.Value
    bindings: list[tuple[ir.Value, ir.Value, ir.Value]]


def indirect_execute(op: ir.Operation) -> IndirectExecute:
    view = op.opview
    return IndirectExecute(view.command_buffer, list(zip(view.binding_buffers, view.binding_offsets, view.binding_lengths)))


@dataclass(frozen=True)
class FillCommand:
    """A `hal.command_buffer.fill_buffer`'s target (a slot number in a memoized recording),
    offset and length as constants where they are, and its pattern's value."""

    target: int | None
    offset: int | None
    length: int | None
    pattern: str | None  # the arith.constant's value, as `0 : i8`


def fill_command(op: ir.Operation) -> FillCommand:
    view = op.opview
    pattern = view.pattern.owner
    value = None if isinstance(pattern, ir.Block) or pattern.name != "arith.constant" else str(pattern.attributes["value"])
    return FillCommand(constant_index(view.target_buffer), constant_index(view.target_offset), constant_index(view.length), value)


def alloca_size(op: ir.Operation) -> int | None:
    """A `hal.device.queue.alloca`'s bytes, where constant."""
    return constant_index(op.opview.result_size)


def viewed_buffer(op: ir.Operation) -> ir.Value:
    """The buffer view a `hal.buffer_view.buffer` takes the buffer of."""
    return op.opview.buffer_view


def buffer_operand_positions(op: ir.Operation) -> list[int]:
    """The operand positions where a recorded command binds a buffer."""
    if op.name == "hal.command_buffer.dispatch":
        segments = list(ir.DenseI32ArrayAttr(op.attributes["operandSegmentSizes"]))
        start = sum(segments[:_DISPATCH_BINDING_BUFFERS_SEGMENT])
        return list(range(start, start + segments[_DISPATCH_BINDING_BUFFERS_SEGMENT]))
    return list(_BUFFER_OPERANDS.get(op.name, ()))


def has_binding_capacity(create: ir.Operation) -> bool:
    """Whether a `hal.command_buffer.create` makes an indirect command buffer (`bindings(%n)`)."""
    return create.opview.binding_capacity is not None


# -- building ops ------------------------------------------------------------------------------


def op(name: str, results=(), operands=(), attributes: dict[str, str] | None = None, regions: int = 0) -> ir.Operation:
    """An op at the current insertion point; attributes as their MLIR text."""
    attrs = {k: ir.Attribute.parse(v) for k, v in (attributes or {}).items()}
    return ir.Operation.create(name, results=list(results), operands=list(operands), attributes=attrs, regions=regions)


def index(value: int) -> ir.Value:
    return op("arith.constant", [ir.IndexType.get()], attributes={"value": f"{value} : index"}).result


def load(global_name: str, type_text: str) -> ir.Value:
    return op("util.global.load", [ir.Type.parse(type_text)], attributes={"global": f"@{global_name}"}).result


def store(value: ir.Value, global_name: str) -> None:
    op("util.global.store", operands=[value], attributes={"global": f"@{global_name}"})


def declare_global(name: str, type_text: str, mutable: bool = False) -> None:
    """A private global; a mutable one is what a call stores into (null until it does)."""
    attributes = {"sym_name": f'"{name}"', "sym_visibility": '"private"', "type": type_text}
    op("util.global", attributes={**attributes, "is_mutable": "unit"} if mutable else attributes)


def initializer() -> ir.Block:
    """A new `util.initializer` at the insertion point; returns its body to fill."""
    made = op("util.initializer", attributes={"function_type": "() -> ()"}, regions=1)
    return made.regions[0].blocks.append()


def call(callee: str, result_type: str, operands=()) -> ir.Value:
    return op("util.call", [ir.Type.parse(result_type)], operands, {"callee": f"@{callee}"}).result


# hal.memory_type and hal.buffer_usage bits (iree/hal/buffer.h).
DEVICE_LOCAL = 48  # DeviceVisible|DeviceLocal
HOST_LOCAL_DEVICE_VISIBLE = 86  # HostLocal (HostVisible|HostCoherent|Optimal)|DeviceVisible
TRANSFER_DISPATCH = 3075  # Transfer|DispatchStorage
TRANSFER_DISPATCH_MAPPING = TRANSFER_DISPATCH | 1 << 24 | 1 << 27  # and Mapping (MappingScoped|MappingAccessRandom)


def allocate_device_buffers(device_global: str, buffers: list[tuple[str, int]], host: bool = False) -> None:
    """Allocates each (global, bytes) as a device-local buffer for transfers and dispatches,
    or with `host` in host memory the device reads and writes and the host maps, and stores it
    in its global (in an initializer's body)."""
    device = load(device_global, DEVICE)
    allocator = op("hal.device.allocator", [ir.Type.parse("!hal.allocator")], [device]).result
    affinity = op("arith.constant", [ir.IntegerType.get_signless(64)], attributes={"value": "-1 : i64"}).result
    memory = op("hal.memory_type", [ir.IntegerType.get_signless(32)],
                attributes={"type": f"{HOST_LOCAL_DEVICE_VISIBLE if host else DEVICE_LOCAL} : i32"}).result
    usage = op("hal.buffer_usage", [ir.IntegerType.get_signless(32)],
               attributes={"usage": f"{TRANSFER_DISPATCH_MAPPING if host else TRANSFER_DISPATCH} : i32"}).result
    for name, size in buffers:
        allocated = op("hal.allocator.allocate", [ir.Type.parse(BUFFER)], [allocator, affinity, memory, usage, index(size)]).result
        store(allocated, name)


def buffer_subspan(buffer: ir.Value, offset: int, length: int) -> ir.Value:
    start, size = index(offset), index(length)
    return op("hal.buffer.subspan", [ir.Type.parse(BUFFER)], [buffer, start, size]).result


def queue_execute(queue: QueueOperands, commands: ir.Value) -> None:
    op("hal.device.queue.execute", operands=[queue.device, queue.affinity, queue.wait, queue.signal, commands], attributes={"flags": "0 : i64"})


def queue_copy(queue: QueueOperands, source: ir.Value, target: ir.Value, length: int) -> None:
    """A queue copy of `length` bytes from the start of `source` to the start of `target`."""
    zero = index(0)
    op("hal.device.queue.copy", operands=[queue.device, queue.affinity, queue.wait, queue.signal, source, zero, target, zero, index(length)],
       attributes={"flags": "0 : i64"})


def fence_create(device: ir.Value) -> ir.Value:
    return op("hal.fence.create", [ir.Type.parse(FENCE)], [device], {"flags": "0 : i64"}).result


def command_buffer_copy(commands: ir.Value, source: ir.Value, target: ir.Value, length: int) -> None:
    zero = index(0)
    op("hal.command_buffer.copy_buffer", operands=[commands, source, zero, target, zero, index(length)], attributes={"flags": "0 : i64"})


def dispatch_barrier(commands: ir.Value) -> None:
    """An execution barrier as IREE's own between dispatches: Dispatch|Transfer|CommandRetire
    -> CommandIssue|Dispatch|Transfer."""
    op("hal.command_buffer.execution_barrier", operands=[commands], attributes={"flags": "0 : i64", "source_stage_mask": "28 : i32", "target_stage_mask": "13 : i32"})


def buffers_equal(a: ir.Value, b: ir.Value) -> ir.Value:
    return op("util.cmp.eq", [ir.IntegerType.get_signless(1)], [a, b]).result


def without_binding_capacity(create: ir.Operation) -> None:
    """hal.command_buffer.create without `bindings(%n)`: a direct command buffer."""
    with ir.InsertionPoint(create), create.location:
        attributes = {name: str(create.attributes[name]) for name in create.attributes}
        direct = op("hal.command_buffer.create", [create.results[0].type], list(create.operands)[:_CREATE_WITHOUT_BINDINGS], attributes)
    create.results[0].replace_all_uses_with(direct.results[0])
    create.erase()


def forward_fence(queue_op: ir.Operation) -> None:
    """Erases a queue op that only orders (an alloca or dealloca of a static buffer).

    Its signal fence, where the function created it, is replaced by its wait fence; a fence
    the caller gave (the function's signal fence) is signalled by the producer of the wait
    fence instead, or by a barrier where there is no single producer."""
    queue = queue_operands(queue_op)
    wait, signal = queue.wait, queue.signal
    creator = signal.owner
    if not isinstance(creator, ir.Block) and creator.name == "hal.fence.create":
        signal.replace_all_uses_with(wait)
        queue_op.erase()
        creator.erase()
        return
    producer = wait.owner
    signallers = [u.owner.operation for u in wait.uses if u.operand_number == _SIGNAL_FENCE and u.owner.operation.name.startswith("hal.device.queue.")]
    others = [u for u in wait.uses if u.owner.operation != queue_op and u.owner.operation not in signallers]
    if not isinstance(producer, ir.Block) and producer.name == "hal.fence.create" and len(signallers) == 1 and not others:
        signallers[0].operands[_SIGNAL_FENCE] = signal
        queue_op.erase()
        producer.erase()
        return
    with ir.InsertionPoint(queue_op), queue_op.location:
        op("hal.device.queue.barrier", operands=[queue.device, queue.affinity, wait, signal], attributes={"flags": "0 : i64"})
    queue_op.erase()


def fill_once_initializer(device_global: str, fills: list[tuple[str, int, int, str]], where: ir.InsertionPoint) -> None:
    """A `util.initializer` that fills (buffer global, offset, length, pattern) ranges once:
    one one-shot command buffer of fills, submitted and waited for."""
    buffers = sorted({buffer for buffer, _, _, _ in fills})
    lines = [
        f'%d = util.global.load @"{device_global}" : !hal.device',
        "%affinity = arith.constant -1 : i64",
        "%forever = arith.constant -1 : i32",
        "%wait = util.null : !hal.fence",
        '%done = hal.fence.create device(%d : !hal.device) flags("None") : !hal.fence',
        '%cmd = hal.command_buffer.create device(%d : !hal.device) mode("OneShot") categories("Transfer") affinity(%affinity) : !hal.command_buffer',
    ]
    lines += [f'%b{i} = util.global.load @"{name}" : !hal.buffer' for i, name in enumerate(buffers)]
    for i, (buffer, offset, length, pattern) in enumerate(fills):
        pattern_type = pattern.rsplit(":", 1)[1].strip()
        lines += [
            f"%o{i} = arith.constant {offset} : index",
            f"%n{i} = arith.constant {length} : index",
            f"%p{i} = arith.constant {pattern}",
            f"hal.command_buffer.fill_buffer<%cmd : !hal.command_buffer> target(%b{buffers.index(buffer)} : !hal.buffer)"
            f'[%o{i}, %n{i}] pattern(%p{i} : {pattern_type}) flags("None")',
        ]
    lines += [
        "hal.command_buffer.finalize<%cmd : !hal.command_buffer>",
        'hal.device.queue.execute<%d : !hal.device> affinity(%affinity) wait(%wait) signal(%done) commands(%cmd) flags("None")',
        '%status = hal.fence.await until([%done]) timeout_millis(%forever) flags("None") : i32',
        'util.status.check_ok %status, "static replay: failed to fill the persistent fills"',
        "util.return",
    ]
    declared = [f'util.global private @"{name}" : !hal.buffer' for name in buffers] + [f'util.global private @"{device_global}" : !hal.device']
    clone_parsed("\n".join(["module {", *declared, "util.initializer {", *lines, "}", "}"]), "util.initializer", where)


@dataclass(frozen=True)
class StaticView:
    """A buffer view over a whole static buffer global: its bytes, shape and element type and
    encoding (as the `hal.element_type<...>` / `hal.encoding_type<...>` ops print them)."""

    buffer: str
    bytes: int
    shape: list[int]
    element_type: str
    encoding_type: str


def views_function(name: str, reflection: dict[str, str], views: list[StaticView], where: ir.InsertionPoint) -> None:
    """A public function `name()` that returns a buffer view over each static buffer, in order,
    with `reflection` for the runtime."""
    lines, results, globals_ = [], [], []
    for number, view in enumerate(views):
        globals_.append(f'util.global private @"{view.buffer}" : !hal.buffer')
        shape = ", ".join(f"%d{number}_{i}" for i in range(len(view.shape)))
        lines += [f"%d{number}_{i} = arith.constant {d} : index" for i, d in enumerate(view.shape)]
        lines += [
            f'%b{number} = util.global.load @"{view.buffer}" : !hal.buffer',
            f"%n{number} = arith.constant {view.bytes} : index",
            f"%e{number} = {view.element_type}",
            f"%k{number} = {view.encoding_type}",
            f"%v{number} = hal.buffer_view.create buffer(%b{number} : !hal.buffer)[%c0, %n{number}] shape([{shape}]) "
            f"type(%e{number}) encoding(%k{number}) : !hal.buffer_view",
        ]
        results.append(f"%v{number}")
    types = ", ".join("!hal.buffer_view" for _ in results)
    entries = ", ".join(f'{key} = "{value}"' for key, value in reflection.items())
    text = "\n".join([
        "module {", *globals_,
        f'util.func public @"{name}"() -> ({types}) attributes {{iree.abi.stub, iree.reflection = {{{entries}}}}} {{',
        "%c0 = arith.constant 0 : index", *lines, f"util.return {', '.join(results)} : {types}", "}", "}",
    ])
    clone_parsed(text, "util.func", where)


def clone_parsed(text: str, name: str, where: ir.InsertionPoint) -> None:
    """Parses a module of text and clones its `name` op to `where`; the module's other ops
    only declare what that op refers to."""
    parsed = ir.Module.parse(text, where.block.owner.context)
    next(o for o in parsed.body.operations if o.operation.name == name).operation.clone(where)


def attribute_op_text(attribute_op: ir.Operation) -> str:
    """`hal.element_type<f32> : i32` of an op that has only attributes, without its result name."""
    return str(attribute_op).split("=", 1)[1].strip()
