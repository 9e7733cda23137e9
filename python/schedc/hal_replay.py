"""Static replay of a module's per-call work, on IREE's HAL-phase IR (`--compile-to=hal`).

What IREE 3.13 emits by default (memoization and indirect command buffers on): each execute
region's command buffer is recorded once, in an initializer, by a `__<f>_memoize_apply`
function, but *indirect*: inputs, outputs and transients are binding-table slots (`(%cN :
index)` at buffer positions), filled on every call by `hal.device.queue.execute.indirect`
with buffers that the call allocates (`hal.device.queue.alloca`) or receives. The CUDA HAL
cannot replay a binding table as a graph, so it re-encodes every launch on every call.

The rewrite, per exported function:

    static buffers    one `!hal.buffer` global per buffer the submissions bind (the call's
                      inputs, its queue.allocas: outputs and transients), allocated once
    recording         a copy of each memoize function with the slots replaced by those
                      globals (a subspan where a slot is a part of one) and no binding
                      capacity: a direct command buffer, recorded once into a global
    the call          copies its inputs into their static buffers, submits the recorded
                      command buffers (hal.device.queue.execute), and returns views of the
                      static output buffers; the allocas and deallocas go (their fences are
                      forwarded). The copies: none where the inputs are their static buffers;
                      for input buffers two calls in a row passed, a second recording of the
                      first submission with the copies in front, kept for those buffers (the
                      copies replay inside the one graph); else queue copies
                      (hal.device.queue.copy) before the submission
    static inputs     `__schedc_static_inputs_<f>()` returns views of the static input
                      buffers, for a caller that writes its inputs there itself (the runtime
                      does for torch tensors: torch copies them on its own stream)
    persistent fills  the fills arena-plan listed on the function (`sched.persistent_fills`:
                      padded buffers whose bytes nothing else writes) leave the recordings and
                      run once, in a one-shot command buffer that an initializer submits after
                      the static buffers are allocated: their bytes keep the fill value from
                      call to call

so a call's results live in static buffers that the next call overwrites. CUDA's graph mode
(`--cuda_use_streams=false`) instantiates a direct, reusable command buffer once and replays
it with one cuGraphLaunch; the local (CPU) drivers replay it as recorded. Concurrent waves of
the recording (dispatches between two barriers) become parallel branches of the graph.

Reading (`plan_replay`) gives plain data; `apply_replay` rewrites. A function the recipe does
not fit (dynamic shapes: sizes that are not constants, a command buffer recorded per call)
raises `ReplayError` with the function's location.
"""

from __future__ import annotations

from dataclasses import dataclass

from iree.compiler import ir

from schedc.dialects.sched import PERSISTENT_FILLS

# Buffer positions of the commands a memoized recording holds: (operand index, ...) or, for
# dispatch, the operandSegmentSizes segment of its binding buffers. A slot reference is an
# index constant at one of these positions; the same constants elsewhere are sizes or counts.
_BUFFER_OPERANDS = {
    "hal.command_buffer.copy_buffer": (1, 3),
    "hal.command_buffer.fill_buffer": (1,),
    "hal.command_buffer.update_buffer": (3,),
}
_DISPATCH_BINDINGS_SEGMENT = 7
_PLAIN_COMMANDS = {
    "hal.command_buffer.create",
    "hal.command_buffer.finalize",
    "hal.command_buffer.execution_barrier",
    "hal.command_buffer.dispatch",
    *_BUFFER_OPERANDS,
}
# hal.device.queue.execute.indirect operands: device, affinity, wait, signal, commands, then
# the binding buffers, offsets and lengths (n of each).
_EXECUTE_FIXED_OPERANDS = 5


class ReplayError(Exception):
    """The module cannot be replayed statically; `location` is the function's."""

    def __init__(self, location: ir.Location, message: str):
        super().__init__(message)
        self.location = location


@dataclass(frozen=True)
class StaticBuffer:
    """A buffer that lives as long as the module: `source` is `input N` or `alloca`."""

    name: str  # the util.global's symbol
    bytes: int
    source: str


@dataclass(frozen=True)
class Binding:
    """One binding-table slot of a submission: a part of a static or constant buffer."""

    buffer: str  # a StaticBuffer's name, or a constant !hal.buffer global
    offset: int
    length: int


@dataclass(frozen=True)
class Fill:
    """A fill of a static buffer's bytes with a constant pattern."""

    buffer: str
    offset: int
    length: int
    pattern: str  # the pattern constant's value, as `0 : i8`


@dataclass(frozen=True)
class Submission:
    """One `hal.device.queue.execute.indirect` and the memoized recording it submits."""

    recorder: str  # the util.func that records the command buffer
    bindings: tuple[Binding, ...]
    inputs: tuple[int, ...]  # the call's inputs first bound here (all are copied in before the first)
    once: tuple[tuple[int, Fill], ...] = ()  # (position in the recording, fill) run once instead


@dataclass(frozen=True)
class ReplayPlan:
    function: str
    device: str  # the !hal.device global
    buffers: tuple[StaticBuffer, ...]
    submissions: tuple[Submission, ...]

    @property
    def fills_once(self) -> list[Fill]:
        """The fills run once when the module loads (each distinct one once)."""
        return list(dict.fromkeys(fill for s in self.submissions for _, fill in s.once))

    @property
    def static_bytes(self) -> int:
        return sum(b.bytes for b in self.buffers)

    @property
    def copied_inputs(self) -> list[tuple[int, StaticBuffer]]:
        """The call's inputs that are copied in (each once, in the order of first use), with
        their static buffers."""
        statics = {b.source: b for b in self.buffers}
        return [(i, statics[f"input {i}"]) for submission in self.submissions for i in submission.inputs]

    def recording(self, number: int) -> tuple[str, str]:
        """Submission `number`'s direct recording: the function that records it and the global
        that holds the recorded command buffer."""
        return f"__{self.function}_replay_record_{number}", f"__{self.function}_replay_commands_{number}"


# ---------------------------------------------------------------------------------------------
# Reading the IR


def _symbol(op: ir.Operation, attribute: str) -> str:
    return ir.FlatSymbolRefAttr(op.attributes[attribute]).value


def _constant_int(value: ir.Value) -> int | None:
    owner = value.owner
    if isinstance(owner, ir.Block) or owner.name != "arith.constant":
        return None
    return ir.IntegerAttr(owner.attributes["value"]).value


def _top_level(module: ir.Operation) -> dict[str, ir.Operation]:
    ops = {}
    for op in module.regions[0].blocks[0].operations:
        op = op.operation
        if "sym_name" in op.attributes:
            ops[ir.StringAttr(op.attributes["sym_name"]).value] = op
    return ops


def _initializers(module: ir.Operation) -> list[ir.Operation]:
    return [op.operation for op in module.regions[0].blocks[0].operations if op.operation.name == "util.initializer"]


def _recorder_of(global_name: str, module: ir.Operation, location: ir.Location) -> str:
    """The function an initializer calls to record the command buffer stored in `global_name`."""
    for initializer in _initializers(module):
        for op in initializer.regions[0].blocks[0].operations:
            op = op.operation
            if op.name == "util.global.store" and _symbol(op, "global") == global_name:
                stored = op.operands[0].owner
                if not isinstance(stored, ir.Block) and stored.name == "util.call":
                    return _symbol(stored, "callee")
    raise ReplayError(location, f"no recording function stores the command buffer @{global_name}")


def _body(function: ir.Operation) -> list[ir.Operation]:
    return [op.operation for op in function.regions[0].blocks[0].operations]


def exported_functions(module: ir.Operation) -> list[ir.Operation]:
    """The module's public functions that submit memoized, indirect command buffers."""
    functions = []
    for op in module.regions[0].blocks[0].operations:
        op = op.operation
        if op.name != "util.func" or "iree.abi.stub" not in op.attributes or not op.regions[0].blocks:
            continue
        if any(o.operation.name.startswith("hal.") for b in op.regions[0].blocks for o in b.operations):
            functions.append(op)
    return functions


def plan_replay(function: ir.Operation, module: ir.Operation) -> ReplayPlan | None:
    """What static replay of `function` needs; None if it submits no work."""
    name = ir.StringAttr(function.attributes["sym_name"]).value
    location = function.location
    if len(function.regions[0].blocks) != 1:
        raise ReplayError(location, f"@{name} has control flow between its submissions: static replay needs one straight-line call")
    body = _body(function)
    executes = [op for op in body if op.name == "hal.device.queue.execute.indirect"]
    for op in body:
        if op.name == "hal.buffer_view.assert" and any(_constant_int(d) is None for d in op.opview.shape):
            raise ReplayError(location, f"@{name} takes a tensor of dynamic shape: static replay (--execution=graphs) needs static shapes; compile with static shapes or batch buckets, or use --execution=streams")
    if any(op.name == "hal.command_buffer.create" for op in body):
        raise ReplayError(location, f"@{name} records its command buffers on every call: static replay (--execution=graphs) needs memoized recordings of static shapes")
    if not executes:
        if any(op.name.startswith("hal.device.queue.execute") for op in body):
            raise ReplayError(location, f"@{name} submits command buffers that are not memoized: nothing to replay statically")
        return None
    device = _device_global(executes[0], location)
    buffers: dict[str, StaticBuffer] = {}
    submissions = []
    copied: set[int] = set()
    for execute in executes:
        commands = execute.operands[4].owner
        if isinstance(commands, ir.Block) or commands.name != "util.global.load":
            raise ReplayError(location, f"@{name} submits a command buffer that is not a global")
        recorder = _recorder_of(_symbol(commands, "global"), module, location)
        count = (len(execute.operands) - _EXECUTE_FIXED_OPERANDS) // 3
        operands = list(execute.operands)[_EXECUTE_FIXED_OPERANDS:]
        bindings, inputs = [], []
        for value, offset, length in zip(operands[:count], operands[count : 2 * count], operands[2 * count :]):
            offset_bytes, length_bytes = _constant_int(offset), _constant_int(length)
            if offset_bytes is None or length_bytes is None:
                raise ReplayError(location, f"@{name} binds a buffer range of dynamic size: static replay needs static shapes")
            source = _buffer_source(value, function, name, location)
            if source[0] == "constant":
                bindings.append(Binding(source[1], offset_bytes, length_bytes))
                continue
            static = _static_name(name, source)
            end = offset_bytes + length_bytes
            size = source[2] if source[0] == "alloca" else end
            previous = buffers.get(static)
            buffers[static] = StaticBuffer(static, max(size, previous.bytes if previous else 0), f"{source[0]} {source[1]}")
            bindings.append(Binding(static, offset_bytes, length_bytes))
            if source[0] == "input" and source[1] not in copied:
                copied.add(source[1])
                inputs.append(source[1])
        submissions.append(Submission(recorder, tuple(bindings), tuple(inputs)))
    submissions = _with_fills_once(function, module, submissions, buffers)
    return ReplayPlan(name, device, tuple(buffers.values()), tuple(submissions))


def _with_fills_once(function: ir.Operation, module: ir.Operation, submissions: list[Submission], buffers: dict) -> list[Submission]:
    """The submissions with the fills arena-plan marked persistent (see the module docstring)
    picked out of their recordings. A mark is (execution region = submission, arena bytes,
    offset, length); a fill matches when its slot binds an allocated static buffer of the
    arena's bytes and it covers those bytes of it. A mark nothing matches leaves its fill on
    every call, which is what IREE's own module does."""
    marks = PERSISTENT_FILLS.get(function) or []
    wanted = {(marks[i], marks[i + 1], marks[i + 2], marks[i + 3]) for i in range(0, len(marks) - 3, 4)}
    if not wanted:
        return submissions
    symbols = _top_level(module)
    result = []
    for number, submission in enumerate(submissions):
        once = []
        for position, op in enumerate(_body(symbols[submission.recorder])):
            if op.name != "hal.command_buffer.fill_buffer":
                continue
            slot, offset, length = (_constant_int(v) for v in list(op.operands)[1:4])
            pattern = op.operands[4].owner
            if None in (slot, offset, length) or isinstance(pattern, ir.Block) or pattern.name != "arith.constant" or slot >= len(submission.bindings):
                continue
            binding = submission.bindings[slot]
            static = buffers.get(binding.buffer)
            if static is None or not static.source.startswith("alloca "):
                continue
            if (number, static.bytes, binding.offset + offset, length) in wanted:
                once.append((position, Fill(static.name, binding.offset + offset, length, str(pattern.attributes["value"]))))
        result.append(Submission(submission.recorder, submission.bindings, submission.inputs, tuple(once)))
    return result


def _device_global(execute: ir.Operation, location: ir.Location) -> str:
    device = execute.operands[0].owner
    if isinstance(device, ir.Block) or device.name != "util.global.load":
        raise ReplayError(location, "the submissions' device is not a module global")
    return _symbol(device, "global")


def _buffer_source(value: ir.Value, function: ir.Operation, name: str, location: ir.Location):
    """('input', argument number) | ('alloca', result id, bytes) | ('constant', global)."""
    owner = value.owner
    if not isinstance(owner, ir.Block):
        if owner.name == "hal.buffer_view.buffer":
            view = owner.operands[0]
            if isinstance(view.owner, ir.Block) and view.owner == function.regions[0].blocks[0]:
                return ("input", ir.BlockArgument(view).arg_number)
        if owner.name == "hal.device.queue.alloca":
            size = _constant_int(owner.operands[-1])
            if size is None:
                raise ReplayError(location, f"@{name} allocates a buffer of dynamic size: static replay needs static shapes")
            return ("alloca", _alloca_number(owner, function), size)
        if owner.name == "util.global.load":
            return ("constant", _symbol(owner, "global"))
    raise ReplayError(location, f"@{name} binds a buffer schedc cannot make static ({owner.name if not isinstance(owner, ir.Block) else 'a block argument'})")


def _alloca_number(op: ir.Operation, function: ir.Operation) -> int:
    """Which of the function's queue.allocas `op` is: its name until the rewrite erases them."""
    allocas = [o for o in _body(function) if o.name == "hal.device.queue.alloca"]
    return next(i for i, other in enumerate(allocas) if other == op)


def _static_name(function: str, source) -> str:
    return f"__{function}_replay_{source[0]}_{source[1]}"


# ---------------------------------------------------------------------------------------------
# Rewriting the IR


def apply_replay(plan: ReplayPlan, function: ir.Operation, module: ir.Operation) -> None:
    """Static buffers, recordings with direct bindings, and the call that replays them."""
    symbols = _top_level(module)
    end = ir.InsertionPoint(module.regions[0].blocks[0])
    with function.context, function.location:
        _allocate_static_buffers(plan, end)
        if plan.fills_once:
            _fill_once(plan, end, module)
        commands = [
            _record_direct(plan, i, submission, symbols[submission.recorder], end)
            for i, submission in enumerate(plan.submissions)
        ]
        if plan.copied_inputs:
            _record_copying(plan, [static for _, static in plan.copied_inputs], module)
        _rewrite_call(plan, function, commands, end)
        _mark_replayed(plan, function)
        _add_static_inputs_function(plan, function, module)


REFLECTION_REPLAYED = "schedc.static_results"
REFLECTION_STATIC_SLOTS = "schedc.static_result_slots"


def _mark_replayed(plan: ReplayPlan, function: ir.Operation) -> None:
    """Says in the function's reflection that its results live in static buffers (the
    runtime copies numpy results and documents torch ones as overwritten by the next call),
    and which results are views of the same static buffer on every call (a comma list of
    result positions: the runtime hands out the tensor it exported for one again, unchecked)."""
    statics = {b.name for b in plan.buffers}
    returned = next(op for op in _body(function) if op.name == "util.return")
    slots = []
    for position, value in enumerate(returned.operands):
        view = value.owner
        if isinstance(view, ir.Block) or view.name != "hal.buffer_view.create":
            continue
        load = view.operands[0].owner
        if not isinstance(load, ir.Block) and load.name == "util.global.load" and _symbol(load, "global") in statics:
            slots.append(str(position))
    entries = {}
    if "iree.reflection" in function.attributes:
        old = ir.DictAttr(function.attributes["iree.reflection"])
        entries = {old[i].name: old[i].attr for i in range(len(old))}
    entries[REFLECTION_REPLAYED] = ir.StringAttr.get("true")
    entries[REFLECTION_STATIC_SLOTS] = ir.StringAttr.get(",".join(slots))
    function.attributes["iree.reflection"] = ir.DictAttr.get(entries)


def _op(name: str, results=(), operands=(), attributes: dict[str, str] | None = None, regions: int = 0) -> ir.Operation:
    attrs = {k: ir.Attribute.parse(v) for k, v in (attributes or {}).items()}
    return ir.Operation.create(name, results=list(results), operands=list(operands), attributes=attrs, regions=regions)


def _index(value: int) -> ir.Value:
    return _op("arith.constant", [ir.IndexType.get()], attributes={"value": f"{value} : index"}).result


def _load(global_name: str, type_text: str) -> ir.Value:
    return _op("util.global.load", [ir.Type.parse(type_text)], attributes={"global": f"@{global_name}"}).result


def _global(name: str, type_text: str, mutable: bool = False) -> None:
    """A private global; a mutable one is what a call stores into (null until it does)."""
    attributes = {"sym_name": f'"{name}"', "sym_visibility": '"private"', "type": type_text}
    _op("util.global", attributes={**attributes, "is_mutable": "unit"} if mutable else attributes)


def _initializer() -> ir.Block:
    op = _op("util.initializer", attributes={"function_type": "() -> ()"}, regions=1)
    return op.regions[0].blocks.append()


def _allocate_static_buffers(plan: ReplayPlan, end: ir.InsertionPoint) -> None:
    with end:
        for buffer in plan.buffers:
            _global(buffer.name, "!hal.buffer")
        block = _initializer()
    with ir.InsertionPoint(block):
        device = _load(plan.device, "!hal.device")
        allocator = _op("hal.device.allocator", [ir.Type.parse("!hal.allocator")], [device]).result
        affinity = _op("arith.constant", [ir.IntegerType.get_signless(64)], attributes={"value": "-1 : i64"}).result
        memory = _op("hal.memory_type", [ir.IntegerType.get_signless(32)], attributes={"type": "48 : i32"}).result  # DeviceVisible|DeviceLocal
        usage = _op("hal.buffer_usage", [ir.IntegerType.get_signless(32)], attributes={"usage": "3075 : i32"}).result  # Transfer|DispatchStorage
        for buffer in plan.buffers:
            allocated = _op("hal.allocator.allocate", [ir.Type.parse("!hal.buffer")], [allocator, affinity, memory, usage, _index(buffer.bytes)]).result
            _op("util.global.store", operands=[allocated], attributes={"global": f"@{buffer.name}"})
        _op("util.return")


def _fill_once(plan: ReplayPlan, end: ir.InsertionPoint, module: ir.Operation) -> None:
    """An initializer, after the one that allocates the static buffers, that fills the
    persistent fills' bytes: one one-shot command buffer of fills, submitted and waited for.

    Not `hal.device.queue.fill`: with a queue fill per pattern, 4 of 10 processes that loaded
    inception's pinned module under Nsight Compute died of a corrupted host heap ("malloc():
    unaligned tcache chunk detected"), and none of 8 with this command buffer, nor of 5 with
    the module unpinned (H200, IREE 3.13 runtime, 2026-11-30)."""
    buffers = sorted({fill.buffer for fill in plan.fills_once})
    lines = [
        f'%d = util.global.load @"{plan.device}" : !hal.device',
        "%affinity = arith.constant -1 : i64",
        "%forever = arith.constant -1 : i32",
        "%wait = util.null : !hal.fence",
        '%done = hal.fence.create device(%d : !hal.device) flags("None") : !hal.fence',
        '%cmd = hal.command_buffer.create device(%d : !hal.device) mode("OneShot") categories("Transfer") affinity(%affinity) : !hal.command_buffer',
    ]
    lines += [f'%b{i} = util.global.load @"{name}" : !hal.buffer' for i, name in enumerate(buffers)]
    for i, fill in enumerate(plan.fills_once):
        pattern_type = fill.pattern.rsplit(":", 1)[1].strip()
        lines += [
            f"%o{i} = arith.constant {fill.offset} : index",
            f"%n{i} = arith.constant {fill.length} : index",
            f"%p{i} = arith.constant {fill.pattern}",
            f"hal.command_buffer.fill_buffer<%cmd : !hal.command_buffer> target(%b{buffers.index(fill.buffer)} : !hal.buffer)"
            f'[%o{i}, %n{i}] pattern(%p{i} : {pattern_type}) flags("None")',
        ]
    lines += [
        "hal.command_buffer.finalize<%cmd : !hal.command_buffer>",
        'hal.device.queue.execute<%d : !hal.device> affinity(%affinity) wait(%wait) signal(%done) commands(%cmd) flags("None")',
        '%status = hal.fence.await until([%done]) timeout_millis(%forever) flags("None") : i32',
        'util.status.check_ok %status, "static replay: failed to fill the persistent fills"',
        "util.return",
    ]
    declared = [f'util.global private @"{name}" : !hal.buffer' for name in buffers] + [f'util.global private @"{plan.device}" : !hal.device']
    _clone_parsed("\n".join(["module {", *declared, "util.initializer {", *lines, "}", "}"]), "util.initializer", end)


def _record_direct(plan: ReplayPlan, number: int, submission: Submission, recorder: ir.Operation, end: ir.InsertionPoint) -> str:
    """A copy of the memoized recording with direct bindings, recorded once into a global."""
    direct = recorder.clone(ir.InsertionPoint(recorder))  # beside the original, before its users
    name, commands = plan.recording(number)
    direct.attributes["sym_name"] = ir.StringAttr.get(name)
    block = direct.regions[0].blocks[0]
    body = [op.operation for op in block.operations]
    unknown = [op.name for op in body if op.name.startswith("hal.command_buffer.") and op.name not in _PLAIN_COMMANDS]
    if unknown:
        raise ReplayError(recorder.location, f"the recording @{ir.StringAttr(recorder.attributes['sym_name']).value} holds {unknown[0]}, which static replay does not handle")
    slots: dict[int, ir.Value] = {}
    loads: dict[str, ir.Value] = {}
    first = block.operations[0]  # new values go before the recording, in creation order

    def slot_buffer(slot: int) -> ir.Value:
        if slot not in slots:
            with ir.InsertionPoint(first):
                binding = submission.bindings[slot]
                if binding.buffer not in loads:
                    loads[binding.buffer] = _load(binding.buffer, "!hal.buffer")
                static = loads[binding.buffer]
                size = next((b.bytes for b in plan.buffers if b.name == binding.buffer), None)
                if binding.offset == 0 and binding.length == size:
                    slots[slot] = static
                else:
                    offset, length = _index(binding.offset), _index(binding.length)
                    slots[slot] = _op("hal.buffer.subspan", [ir.Type.parse("!hal.buffer")], [static, offset, length]).result
        return slots[slot]

    if submission.once:
        for position in sorted((p for p, _ in submission.once), reverse=True):
            body.pop(position).erase()  # runs once, when the module loads
        body = _without_empty_barriers(body)
    for op in body:
        for position in _buffer_positions(op):
            operand = op.operands[position]
            if not isinstance(operand.type, ir.IndexType):
                continue  # a buffer bound directly (a constant)
            slot = _constant_int(operand)
            if slot is None or slot >= len(submission.bindings):
                raise ReplayError(recorder.location, f"a slot reference of @{name} is not a constant slot number")
            op.operands[position] = slot_buffer(slot)
        if op.name == "hal.command_buffer.create" and len(op.operands) == 3:
            _without_binding_capacity(op)
    with end:
        _global(commands, "!hal.command_buffer")
        init = _initializer()
    with ir.InsertionPoint(init):
        recorded = _op("util.call", [ir.Type.parse("!hal.command_buffer")], attributes={"callee": f"@{name}"}).result
        _op("util.global.store", operands=[recorded], attributes={"global": f"@{commands}"})
        _op("util.return")
    return commands


def _without_empty_barriers(body: list[ir.Operation]) -> list[ir.Operation]:
    """The recording without execution barriers that order nothing (right after the command
    buffer's creation or another barrier), which removed fills leave behind."""
    kept, after_command = [], False
    for op in body:
        if op.name == "hal.command_buffer.execution_barrier" and not after_command:
            op.erase()
            continue
        if op.name.startswith("hal.command_buffer.") and op.name not in ("hal.command_buffer.create", "hal.command_buffer.finalize"):
            after_command = op.name != "hal.command_buffer.execution_barrier"
        kept.append(op)
    return kept


def _buffer_positions(op: ir.Operation) -> list[int]:
    if op.name == "hal.command_buffer.dispatch":
        segments = list(ir.DenseI32ArrayAttr(op.attributes["operandSegmentSizes"]))
        start = sum(segments[:_DISPATCH_BINDINGS_SEGMENT])
        return list(range(start, start + segments[_DISPATCH_BINDINGS_SEGMENT]))
    return list(_BUFFER_OPERANDS.get(op.name, ()))


def _without_binding_capacity(create: ir.Operation) -> None:
    """hal.command_buffer.create without `bindings(%n)`: a direct command buffer."""
    with ir.InsertionPoint(create), create.location:
        attributes = {name: str(create.attributes[name]) for name in create.attributes}
        direct = _op("hal.command_buffer.create", [create.results[0].type], list(create.operands)[:2], attributes)
    create.results[0].replace_all_uses_with(direct.results[0])
    create.erase()


def _rewrite_call(plan: ReplayPlan, function: ir.Operation, commands: list[str], end: ir.InsertionPoint) -> None:
    body = _body(function)
    block = function.regions[0].blocks[0]
    executes = [op for op in body if op.name == "hal.device.queue.execute.indirect"]
    statics = {b.source: b for b in plan.buffers}
    # Allocas: their buffers become the static ones, their fences forward their waits.
    allocas = [op for op in body if op.name == "hal.device.queue.alloca"]
    for number, op in enumerate(allocas):
        if f"alloca {number}" in statics:
            with ir.InsertionPoint(op), op.location:
                static = _load(statics[f"alloca {number}"].name, "!hal.buffer")
            op.results[0].replace_all_uses_with(static)
            _forward_fence(op)
    # Submissions: copy the inputs in, then submit the recorded command buffer.
    copied = plan.copied_inputs
    for number, (execute, name) in enumerate(zip(executes, commands)):
        device, affinity, wait, signal = list(execute.operands)[:4]
        with ir.InsertionPoint(execute), execute.location:
            if number == 0 and copied:  # every input copied in before the first submission
                views = [block.arguments[i] for i, _ in copied]
                recorded, wait = _copy_in(plan, device, affinity, wait, views, [static for _, static in copied], end)
            else:
                recorded = _load(name, "!hal.command_buffer")
            _op("hal.device.queue.execute", operands=[device, affinity, wait, signal, recorded], attributes={"flags": "0 : i64"})
        memoized = execute.operands[4].owner
        execute.erase()
        if not list(memoized.results[0].uses):
            memoized.erase()
    # Deallocas of static buffers: nothing to free; their fences are forwarded.
    for op in _body(function):
        if op.name == "hal.device.queue.dealloca":
            _forward_fence(op)


def _copy_in(plan: ReplayPlan, device: ir.Value, affinity: ir.Value, wait: ir.Value, views: list[ir.Value], statics: list[StaticBuffer], end: ir.InsertionPoint) -> tuple[ir.Value, ir.Value]:
    """The first submission's command buffer and the fence it waits on, with the call's inputs
    copied into their static buffers first. Three cases:

    - the inputs are their static buffers (the runtime writes torch tensors there through
      `__<f>_static_inputs`): the recording as it is, after `wait`;
    - the input buffers are the ones kept (passed by two calls in a row before, as a serving
      loop over preallocated inputs does): a recording of the copies followed by the first
      submission's commands, made for those buffers and kept with them in globals, so the
      copies are part of the one graph CUDA replays (no submission of their own, no wait
      between them and the kernels);
    - other buffers: queue copies, after which the recording runs; the buffers are remembered,
      and the next call with the same ones records the kept recording for them.

    The globals keep the remembered buffers alive, so a buffer freed meanwhile is never
    mistaken for them."""
    i1, fence = ir.IntegerType.get_signless(1), ir.Type.parse("!hal.fence")
    buffer, command_buffer = ir.Type.parse("!hal.buffer"), ir.Type.parse("!hal.command_buffer")
    kept, kept_sources, last_sources = f"__{plan.function}_replay_kept", [], []
    with end:
        _global(kept, "!hal.command_buffer", mutable=True)
        for i in range(len(views)):
            kept_sources.append(f"{kept}_source_{i}")
            last_sources.append(f"__{plan.function}_replay_last_source_{i}")
            _global(kept_sources[-1], "!hal.buffer", mutable=True)
            _global(last_sources[-1], "!hal.buffer", mutable=True)

    def same_as(sources: list[ir.Value], names: list[str]) -> ir.Value:
        flags = [_op("util.cmp.eq", [i1], [s, _load(n, "!hal.buffer")]).result for s, n in zip(sources, names)]
        for flag in flags[1:]:
            flags[0] = _op("arith.andi", [i1], [flags[0], flag]).result
        return flags[0]

    def branch(condition: ir.Value):
        choice = _op("scf.if", [command_buffer, fence], [condition], regions=2)
        return choice, ir.InsertionPoint(choice.regions[0].blocks.append()), ir.InsertionPoint(choice.regions[1].blocks.append())

    sources = [_op("hal.buffer_view.buffer", [buffer], [view]).result for view in views]
    recorded = _load(plan.recording(0)[1], "!hal.command_buffer")
    in_place, then, otherwise = branch(same_as(sources, [static.name for static in statics]))
    with then:
        _op("scf.yield", operands=[recorded, wait])
    with otherwise:
        known, then, otherwise = branch(same_as(sources, kept_sources))
        with then:
            _op("scf.yield", operands=[_load(kept, "!hal.command_buffer"), wait])
        with otherwise:
            again, then, otherwise = branch(same_as(sources, last_sources))
            with then:
                record = _op("util.call", [command_buffer], sources, {"callee": f"@{plan.recording(0)[0]}_copying"}).result
                _op("util.global.store", operands=[record], attributes={"global": f"@{kept}"})
                for source, name in zip(sources, kept_sources):
                    _op("util.global.store", operands=[source], attributes={"global": f"@{name}"})
                _op("scf.yield", operands=[record, wait])
            with otherwise:
                ready = wait
                for source, name, static in zip(sources, last_sources, statics):
                    _op("util.global.store", operands=[source], attributes={"global": f"@{name}"})
                    ready = _queue_copy(device, affinity, ready, source, static)
                _op("scf.yield", operands=[recorded, ready])
            _op("scf.yield", operands=list(again.results))
        _op("scf.yield", operands=list(known.results))
    return in_place.results[0], in_place.results[1]


def _queue_copy(device: ir.Value, affinity: ir.Value, wait: ir.Value, source: ir.Value, static: StaticBuffer) -> ir.Value:
    """A queue copy of `source` into its static buffer after `wait` (none where `source` is that
    buffer); the fence that follows it."""
    fence = ir.Type.parse("!hal.fence")
    target = _load(static.name, "!hal.buffer")
    same = _op("util.cmp.eq", [ir.IntegerType.get_signless(1)], [source, target]).result
    choice = _op("scf.if", [fence], [same], regions=2)
    with ir.InsertionPoint(choice.regions[0].blocks.append()):
        _op("scf.yield", operands=[wait])
    with ir.InsertionPoint(choice.regions[1].blocks.append()):
        copied = _op("hal.fence.create", [fence], [device], {"flags": "0 : i64"}).result
        zero = _index(0)
        _op("hal.device.queue.copy", operands=[device, affinity, wait, copied, source, zero, target, zero, _index(static.bytes)], attributes={"flags": "0 : i64"})
        _op("scf.yield", operands=[copied])
    return choice.results[0]


def _record_copying(plan: ReplayPlan, statics: list[StaticBuffer], module: ir.Operation) -> None:
    """`__<f>_replay_record_0_copying(sources...)`: the first recording with copies of the
    given buffers into the static inputs first (each skipped where it is its static buffer),
    then a barrier, then the recording's own commands."""
    symbols = _top_level(module)
    name = plan.recording(0)[0]
    recorder = symbols[name]
    copying = recorder.clone(ir.InsertionPoint(recorder))
    copying.attributes["sym_name"] = ir.StringAttr.get(f"{name}_copying")
    buffer = ir.Type.parse("!hal.buffer")
    copying.attributes["function_type"] = ir.TypeAttr.get(ir.FunctionType.get([buffer] * len(statics), [ir.Type.parse("!hal.command_buffer")]))
    if "tied_operands" in copying.attributes:
        del copying.attributes["tied_operands"]
    block = copying.regions[0].blocks[0]
    sources = [block.add_argument(buffer, copying.location) for _ in statics]
    body = [op.operation for op in block.operations]
    create = next(i for i, op in enumerate(body) if op.name == "hal.command_buffer.create")
    commands = body[create].results[0]
    with ir.InsertionPoint(body[create + 1]), copying.location:  # a recording ends in finalize and return
        i1 = ir.IntegerType.get_signless(1)
        for source, static in zip(sources, statics):
            target = _load(static.name, "!hal.buffer")
            same = _op("util.cmp.eq", [i1], [source, target]).result
            copy = _op("scf.if", [], [same], regions=2)
            with ir.InsertionPoint(copy.regions[0].blocks.append()):
                _op("scf.yield")
            with ir.InsertionPoint(copy.regions[1].blocks.append()):
                zero = _index(0)
                _op("hal.command_buffer.copy_buffer", operands=[commands, source, zero, target, zero, _index(static.bytes)], attributes={"flags": "0 : i64"})
                _op("scf.yield")
        # Dispatch|Transfer|CommandRetire -> CommandIssue|Dispatch|Transfer, as IREE's own barriers
        _op("hal.command_buffer.execution_barrier", operands=[commands], attributes={"flags": "0 : i64", "source_stage_mask": "28 : i32", "target_stage_mask": "13 : i32"})


STATIC_INPUTS_PREFIX = "__schedc_static_inputs_"


def _add_static_inputs_function(plan: ReplayPlan, function: ir.Operation, module: ir.Operation) -> None:
    """`__schedc_static_inputs_<f>()`: views of `f`'s static input buffers, in argument order
    (an argument that binds nothing has none), for a caller to write its inputs into."""
    asserts = {}
    for op in _body(function):
        if op.name == "hal.buffer_view.assert" and isinstance(op.operands[0].owner, ir.Block):
            asserts[ir.BlockArgument(op.operands[0]).arg_number] = op
    statics = {b.source: b for b in plan.buffers}
    inputs = sorted(int(source.split()[1]) for source in statics if source.startswith("input "))
    if not inputs or inputs != list(range(len(inputs))) or any(n not in asserts for n in inputs):
        return  # the runtime then copies through the call as before
    lines, results, globals_ = [], [], []
    for number in inputs:
        static, check = statics[f"input {number}"], asserts[number].opview
        dims = [_constant_int(d) for d in check.shape]
        element, encoding = check.element_type.owner, check.encoding_type.owner
        if any(d is None for d in dims) or isinstance(element, ir.Block) or isinstance(encoding, ir.Block):
            return
        globals_.append(f'util.global private @"{static.name}" : !hal.buffer')
        shape = ", ".join(f"%d{number}_{i}" for i in range(len(dims)))
        lines += [f"%d{number}_{i} = arith.constant {d} : index" for i, d in enumerate(dims)]
        lines += [
            f'%b{number} = util.global.load @"{static.name}" : !hal.buffer',
            f"%n{number} = arith.constant {static.bytes} : index",
            f"%e{number} = {_attribute_op_text(element)}",
            f"%k{number} = {_attribute_op_text(encoding)}",
            f"%v{number} = hal.buffer_view.create buffer(%b{number} : !hal.buffer)[%c0, %n{number}] shape([{shape}]) "
            f"type(%e{number}) encoding(%k{number}) : !hal.buffer_view",
        ]
        results.append(f"%v{number}")
    types = ", ".join("!hal.buffer_view" for _ in results)
    text = "\n".join([
        "module {", *globals_,
        f'util.func public @"{STATIC_INPUTS_PREFIX}{plan.function}"() -> ({types}) attributes {{iree.abi.stub, '
        f'iree.reflection = {{schedc.static_inputs_of = "{plan.function}"}}}} {{',
        "%c0 = arith.constant 0 : index", *lines, f"util.return {', '.join(results)} : {types}", "}", "}",
    ])
    _clone_parsed(text, "util.func", ir.InsertionPoint(module.regions[0].blocks[0]))


def _clone_parsed(text: str, name: str, where: ir.InsertionPoint) -> None:
    """Parses a module of text and clones its `name` op to `where`; the module's other ops
    only declare what that op refers to."""
    parsed = ir.Module.parse(text, where.block.owner.context)
    next(op for op in parsed.body.operations if op.operation.name == name).operation.clone(where)


def _attribute_op_text(op: ir.Operation) -> str:
    """`hal.element_type<f32> : i32` of an op that has only attributes, without its result name."""
    return str(op).split("=", 1)[1].strip()


def _forward_fence(op: ir.Operation) -> None:
    """Erases a queue op that only orders (an alloca or dealloca of a static buffer).

    Its signal fence, where the function created it, is replaced by its wait fence; a fence
    the caller gave (the function's signal fence) is signalled by the producer of the wait
    fence instead, or by a barrier where there is no single producer."""
    device, affinity, wait, signal = list(op.operands)[:4]
    creator = signal.owner
    if not isinstance(creator, ir.Block) and creator.name == "hal.fence.create":
        signal.replace_all_uses_with(wait)
        op.erase()
        creator.erase()
        return
    producer = wait.owner
    signallers = [u.owner.operation for u in wait.uses if u.operand_number == 3 and u.owner.operation.name.startswith("hal.device.queue.")]
    others = [u for u in wait.uses if u.owner.operation != op and u.owner.operation not in signallers]
    if not isinstance(producer, ir.Block) and producer.name == "hal.fence.create" and len(signallers) == 1 and not others:
        signallers[0].operands[3] = signal
        op.erase()
        producer.erase()
        return
    with ir.InsertionPoint(op), op.location:
        _op("hal.device.queue.barrier", operands=[device, affinity, wait, signal], attributes={"flags": "0 : i64"})
    op.erase()


def drop_unused_recordings(module: ir.Operation) -> None:
    """Erases memoized recordings that no function submits any more, and their initializers'
    calls (a recording costs memory and, on CUDA, a graph each)."""
    loads: set[str] = set()
    module.walk(lambda op: _collect_loads(op, loads))
    top = _top_level(module)
    unused = {
        name for name, op in top.items()
        if op.name == "util.global" and name not in loads
        and str(ir.TypeAttr(op.attributes["type"]).value) == "!hal.command_buffer"
    }
    for initializer in _initializers(module):
        for op in _body(initializer):
            if op.name != "util.global.store" or _symbol(op, "global") not in unused:
                continue
            call = op.operands[0].owner
            op.erase()
            if not isinstance(call, ir.Block) and call.name == "util.call" and not list(call.results[0].uses):
                callee = _symbol(call, "callee")
                call.erase()
                if not _callers(module, callee) and callee in top:
                    top[callee].erase()
        if [op.name for op in _body(initializer)] == ["util.return"]:
            initializer.erase()
    for name in unused:
        top[name].erase()


def _collect_loads(op: ir.Operation, loads: set) -> ir.WalkResult:
    if op.name == "util.global.load":
        loads.add(_symbol(op, "global"))
    return ir.WalkResult.ADVANCE


def _callers(module: ir.Operation, callee: str) -> list[ir.Operation]:
    found = []

    def visit(op):
        if op.name == "util.call" and _symbol(op, "callee") == callee:
            found.append(op)
        return ir.WalkResult.ADVANCE

    module.walk(visit)
    return found


def replay_module(module: ir.Operation) -> list[ReplayPlan]:
    """Plans and applies static replay to every exported function that submits work."""
    plans = []
    for function in exported_functions(module):
        plan = plan_replay(function, module)
        if plan is not None:
            plans.append((plan, function))
    for plan, function in plans:  # plan everything first: a refusal leaves the module as it was
        apply_replay(plan, function, module)
    drop_unused_recordings(module)
    return [plan for plan, _ in plans]
