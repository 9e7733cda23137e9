"""static-replay: record each call's command buffers once, over static buffers, and replay them.

Runs on IREE's HAL phase (`iree-compile --compile-to=hal`); `schedc --execution=graphs` adds
it. IREE records each execute region's command buffer once but *indirect*, over a binding table
filled per call (`schedc.ir.hal` says what IREE emits). The rewrite, per exported function:

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
    shared pool       the transients (allocas neither returned nor holding persistent fills)
                      of every replayed function are parts of one buffer,
                      `__schedc_replay_pool`, allocated first: one call runs at a time, so
                      it is the largest function's transients, not their sum
    static inputs     `__schedc_static_inputs_<f>()` returns views of the static input
                      buffers, for a caller that writes its inputs there itself (the runtime
                      does for torch tensors: torch copies them on its own stream)
    persistent fills  the fills arena-plan listed on the function (`sched.persistent_fills`:
                      padded buffers whose bytes nothing else writes) leave the recordings and
                      run once, in a one-shot command buffer that an initializer submits after
                      the static buffers are allocated: their bytes keep the fill value from
                      call to call

    util.func public @forward$async(...)            util.func public @forward$async(...)
      %t = hal.device.queue.alloca ... {%c512}  ->    %t = util.global.load @__forward$async_replay_alloca_0
      hal.device.queue.execute.indirect ...           scf.if (%in != @..._input_0): hal.device.queue.copy ...
        commands(%memoized) bindings([(%in ...),      hal.device.queue.execute ... commands(%recorded)
                                      (%t ...)])

so a call's results live in static buffers that the next call overwrites. CUDA's graph mode
(`--cuda_use_streams=false`) instantiates a direct, reusable command buffer once and replays
it with one cuGraphLaunch; the local (CPU) drivers replay it as recorded. Concurrent waves of
the recording (dispatches between two barriers) become parallel branches of the graph.

Reading (`plan_replay`) gives the plain data of `schedc.decisions.static_replay`;
`apply_replay` rewrites. A function the recipe does not fit (dynamic shapes: sizes that are
not constants, a command buffer recorded per call) is an error at the function's location.
"""

from __future__ import annotations

from dataclasses import dataclass

from iree.compiler import ir

from schedc.decisions.static_replay import (Binding, Fill, ReplayPlan, SharedPool, StaticBuffer, Submission, in_host_memory, persistent_fill_marks,
                                            pooled_bytes, shared_pool, static_name)
from schedc.dialects.sched import PERSISTENT_FILLS
from schedc.ir import hal
from schedc.ir.iree import constant_index, function_name, set_reflection
from schedc.options import Phase
from schedc.passes.base import PassInfo
from schedc.runtime import abi


class ReplayError(Exception):
    """The module cannot be replayed statically; `location` is the function's."""

    def __init__(self, location: ir.Location, message: str):
        super().__init__(message)
        self.location = location


@dataclass(frozen=True)
class Options:
    # A generation module's token ids and positions in pinned host memory that the kernels read
    # and write (schedc.decisions.static_replay.in_host_memory); false: device memory, copied in
    # and out on every call, as every other static buffer.
    host_buffers: bool = True


def static_replay(module, pass_, options, context) -> None:
    try:
        plans, pool = replay_module(module, options.host_buffers)
    except ReplayError as e:
        e.location.emit_error(f"static-replay: {e}")
        pass_.signal_pass_failure()
        return
    records = context.records.setdefault("static-replay", {})
    pooled = pool.by_buffer if pool else {}
    context.records.setdefault("static-replay-pool", {})["module"] = {
        **pooled_bytes(plans, pool), "functions": {plan.function: sum(b.bytes for b in plan.buffers if b.name in pooled) for plan in plans},
    }
    for plan in plans:
        records[plan.function] = {
            "static_buffers": len(plan.buffers),
            "static_bytes": plan.static_bytes,
            "recorded_command_buffers": len(plan.submissions),
            "fills_once": len(plan.fills_once),
            "host_buffers": sum(b.host for b in plan.buffers),
        }


def replay_module(module: ir.Operation, host_buffers: bool = True) -> tuple[list[ReplayPlan], SharedPool | None]:
    """Plans and applies static replay to every exported function that submits work; the
    functions' transients share one pool (`schedc.decisions.static_replay.shared_pool`).
    `host_buffers`: a generation module's small inputs and results in host memory."""
    plans = []
    generation = host_buffers and _is_generation_module(module)
    for function in hal.submitting_functions(module):
        plan = plan_replay(function, module, generation)
        if plan is not None:
            plans.append((plan, function))
    # One device: the pool is that of the functions that submit to the first one's.
    pool = shared_pool([plan for plan, _ in plans if plan.device == plans[0][0].device]) if plans else None
    if pool is not None:
        with module.context, ir.Location.unknown():
            _allocate_pool(plans[0][0].device, pool, ir.InsertionPoint(module.regions[0].blocks[0]))
    for plan, function in plans:  # plan everything first: a refusal leaves the module as it was
        apply_replay(plan, function, module, pool)
    drop_unused_recordings(module)
    return [plan for plan, _ in plans], pool


# -- reading the IR into a plan ------------------------------------------------------------------


def _is_generation_module(module: ir.Operation) -> bool:
    """Whether the module is a generation module (`schedc import --generate`): its exported
    functions' reflection says so."""
    for op in module.regions[0].blocks[0]:
        if "iree.reflection" in op.attributes and abi.GENERATION in ir.DictAttr(op.attributes["iree.reflection"]):
            return True
    return False


def plan_replay(function: ir.Operation, module: ir.Operation, generation: bool = False) -> ReplayPlan | None:
    """What static replay of `function` needs; None if it submits no work. `generation`: the
    module is a generation module, whose steps' small inputs and results live in host memory
    (`schedc.decisions.static_replay.in_host_memory`)."""
    name = function_name(function)
    location = function.location
    if len(function.regions[0].blocks) != 1:
        raise ReplayError(location, f"@{name} has control flow between its submissions: static replay needs one straight-line call")
    body = hal.body(function)
    executes = [op for op in body if op.name == "hal.device.queue.execute.indirect"]
    for op in body:
        if op.name == "hal.buffer_view.assert" and any(constant_index(d) is None for d in op.opview.shape):
            raise ReplayError(location, f"@{name} takes a tensor of dynamic shape: static replay (--execution=graphs) needs static shapes; compile with static shapes or batch buckets, or use --execution=streams")
    if any(op.name == "hal.command_buffer.create" for op in body):
        raise ReplayError(location, f"@{name} records its command buffers on every call: static replay (--execution=graphs) needs memoized recordings of static shapes")
    if not executes:
        if any(op.name.startswith("hal.device.queue.execute") for op in body):
            raise ReplayError(location, f"@{name} submits command buffers that are not memoized: nothing to replay statically")
        return None
    device = hal.loaded_global(hal.queue_operands(executes[0]).device)
    if device is None:
        raise ReplayError(location, "the submissions' device is not a module global")
    buffers: dict[str, StaticBuffer] = {}
    submissions = []
    copied: set[int] = set()
    for op in executes:
        execute = hal.indirect_execute(op)
        commands = hal.loaded_global(execute.commands)
        if commands is None:
            raise ReplayError(location, f"@{name} submits a command buffer that is not a global")
        recorder = hal.recorder_of(commands, module)
        if recorder is None:
            raise ReplayError(location, f"no recording function stores the command buffer @{commands}")
        bindings, inputs = [], []
        for value, offset, length in execute.bindings:
            offset_bytes, length_bytes = constant_index(offset), constant_index(length)
            if offset_bytes is None or length_bytes is None:
                raise ReplayError(location, f"@{name} binds a buffer range of dynamic size: static replay needs static shapes")
            source = _buffer_source(value, function, name, location)
            if source[0] == "constant":
                bindings.append(Binding(source[1], offset_bytes, length_bytes))
                continue
            static = static_name(name, source[0], source[1])
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
    # A transient: an alloca the call does not return, with no fill kept in it from call to call.
    returned = {static_name(name, "alloca", n) for n in _returned_allocas(function)}
    kept = returned | {f.buffer for s in submissions for _, f in s.once}
    statics = tuple(StaticBuffer(b.name, b.bytes, b.source, b.source.startswith("alloca ") and b.name not in kept,
                                 (b.name in returned or b.source.startswith("input ")) and in_host_memory(name, b.bytes, generation))
                    for b in buffers.values())
    return ReplayPlan(name, device, statics, tuple(submissions))


def _returned_allocas(function: ir.Operation) -> set[int]:
    """The numbers of the queue.allocas whose buffers the function returns (as views)."""
    numbers = set()
    for _, buffer in hal.returned_view_buffers(function):
        source = buffer.owner
        while not isinstance(source, ir.Block) and source.name == "hal.buffer.subspan":  # a part of an alloca
            source = source.operands[0].owner
        if not isinstance(source, ir.Block) and source.name == "hal.device.queue.alloca":
            numbers.add(_alloca_number(source, function))
    return numbers


def _with_fills_once(function: ir.Operation, module: ir.Operation, submissions: list[Submission], buffers: dict) -> list[Submission]:
    """The submissions with the fills arena-plan marked persistent (see the module docstring)
    picked out of their recordings. A mark is (execution region = submission, arena bytes,
    offset, length); a fill matches when its slot binds an allocated static buffer of the
    arena's bytes and it covers those bytes of it. A mark nothing matches leaves its fill on
    every call, which is what IREE's own module does."""
    wanted = persistent_fill_marks(PERSISTENT_FILLS.get(function) or [])
    if not wanted:
        return submissions
    symbols = hal.top_level(module)
    result = []
    for number, submission in enumerate(submissions):
        once = []
        for position, op in enumerate(hal.body(symbols[submission.recorder])):
            if op.name != "hal.command_buffer.fill_buffer":
                continue
            fill = hal.fill_command(op)
            if None in (fill.target, fill.offset, fill.length, fill.pattern) or fill.target >= len(submission.bindings):
                continue
            binding = submission.bindings[fill.target]
            static = buffers.get(binding.buffer)
            if static is None or not static.source.startswith("alloca "):
                continue
            if (number, static.bytes, binding.offset + fill.offset, fill.length) in wanted:
                once.append((position, Fill(static.name, binding.offset + fill.offset, fill.length, fill.pattern)))
        result.append(Submission(submission.recorder, submission.bindings, submission.inputs, tuple(once)))
    return result


def _buffer_source(value: ir.Value, function: ir.Operation, name: str, location: ir.Location):
    """('input', argument number) | ('alloca', its number, bytes) | ('constant', global)."""
    owner = value.owner
    if not isinstance(owner, ir.Block):
        if owner.name == "hal.buffer_view.buffer":
            view = hal.viewed_buffer(owner)
            if isinstance(view.owner, ir.Block) and view.owner == function.regions[0].blocks[0]:
                return ("input", ir.BlockArgument(view).arg_number)
        if owner.name == "hal.device.queue.alloca":
            size = hal.alloca_size(owner)
            if size is None:
                raise ReplayError(location, f"@{name} allocates a buffer of dynamic size: static replay needs static shapes")
            return ("alloca", _alloca_number(owner, function), size)
        if owner.name == "util.global.load":
            return ("constant", hal.loaded_global(value))
    raise ReplayError(location, f"@{name} binds a buffer schedc cannot make static ({owner.name if not isinstance(owner, ir.Block) else 'a block argument'})")


def _alloca_number(op: ir.Operation, function: ir.Operation) -> int:
    """Which of the function's queue.allocas `op` is: its name until the rewrite erases them."""
    allocas = [o for o in hal.body(function) if o.name == "hal.device.queue.alloca"]
    return next(i for i, other in enumerate(allocas) if other == op)


# -- rewriting the IR from the plan -----------------------------------------------------------


def apply_replay(plan: ReplayPlan, function: ir.Operation, module: ir.Operation, pool: SharedPool | None = None) -> None:
    """Static buffers, recordings with direct bindings, and the call that replays them."""
    symbols = hal.top_level(module)
    end = ir.InsertionPoint(module.regions[0].blocks[0])
    with function.context, function.location:
        _allocate_static_buffers(plan, end, pool)
        if plan.fills_once:
            _fill_once(plan, end)
        commands = [
            _record_direct(plan, i, submission, symbols[submission.recorder], end)
            for i, submission in enumerate(plan.submissions)
        ]
        if plan.copied_inputs:
            _record_copying(plan, [static for _, static in plan.copied_inputs], module)
        _rewrite_call(plan, function, commands, end)
        _mark_replayed(plan, function)
        _add_static_inputs_function(plan, function, module)


def _mark_replayed(plan: ReplayPlan, function: ir.Operation) -> None:
    """Says in the function's reflection that its results live in static buffers (the
    runtime copies numpy results and documents torch ones as overwritten by the next call),
    and which results are views of the same static buffer on every call (a comma list of
    result positions: the runtime hands out the tensor it exported for one again, unchecked)."""
    statics = {b.name for b in plan.buffers}
    slots = [str(position) for position, buffer in hal.returned_view_buffers(function) if hal.loaded_global(buffer) in statics]
    set_reflection(function, abi.STATIC_RESULTS, "true")
    set_reflection(function, abi.STATIC_RESULT_SLOTS, ",".join(slots))


def _allocate_pool(device: str, pool: SharedPool, end: ir.InsertionPoint) -> None:
    """The shared pool's global and its allocation, in an initializer before the functions'."""
    with end:
        hal.declare_global(pool.name, hal.BUFFER)
        block = hal.initializer()
    with ir.InsertionPoint(block):
        hal.allocate_device_buffers(device, [(pool.name, pool.bytes)])
        hal.op("util.return")


def _allocate_static_buffers(plan: ReplayPlan, end: ir.InsertionPoint, pool: SharedPool | None = None) -> None:
    """Each static buffer allocated, or a transient in the shared pool: a part of it."""
    pooled = pool.by_buffer if pool else {}
    with end:
        for buffer in plan.buffers:
            hal.declare_global(buffer.name, hal.BUFFER)
        block = hal.initializer()
    with ir.InsertionPoint(block):
        for host in (False, True):
            own = [(buffer.name, buffer.bytes) for buffer in plan.buffers if buffer.name not in pooled and buffer.host == host]
            if own:
                hal.allocate_device_buffers(plan.device, own, host=host)
        shared = [b for b in plan.buffers if b.name in pooled]
        if shared:
            whole = hal.load(pool.name, hal.BUFFER)
            for buffer in shared:
                hal.store(hal.buffer_subspan(whole, pooled[buffer.name], buffer.bytes), buffer.name)
        hal.op("util.return")


def _fill_once(plan: ReplayPlan, end: ir.InsertionPoint) -> None:
    """An initializer, after the one that allocates the static buffers, that fills the
    persistent fills' bytes: one one-shot command buffer of fills, submitted and waited for.

    Not `hal.device.queue.fill`: with a queue fill per pattern, 4 of 10 processes that loaded
    inception's pinned module under Nsight Compute died of a corrupted host heap ("malloc():
    unaligned tcache chunk detected"), and none of 8 with this command buffer, nor of 5 with
    the module unpinned (H200, IREE 3.13 runtime, 2026-11-30)."""
    fills = [(fill.buffer, fill.offset, fill.length, fill.pattern) for fill in plan.fills_once]
    hal.fill_once_initializer(plan.device, fills, end)


def _record_direct(plan: ReplayPlan, number: int, submission: Submission, recorder: ir.Operation, end: ir.InsertionPoint) -> str:
    """A copy of the memoized recording with direct bindings, recorded once into a global."""
    direct = recorder.clone(ir.InsertionPoint(recorder))  # beside the original, before its users
    name, commands = plan.recording(number)
    direct.attributes["sym_name"] = ir.StringAttr.get(name)
    block = direct.regions[0].blocks[0]
    body = [op.operation for op in block.operations]
    unknown = [op.name for op in body if op.name.startswith("hal.command_buffer.") and op.name not in hal.PLAIN_COMMANDS]
    if unknown:
        raise ReplayError(recorder.location, f"the recording @{function_name(recorder)} holds {unknown[0]}, which static replay does not handle")
    slots: dict[int, ir.Value] = {}
    loads: dict[str, ir.Value] = {}
    first = block.operations[0]  # new values go before the recording, in creation order

    def slot_buffer(slot: int) -> ir.Value:
        if slot not in slots:
            with ir.InsertionPoint(first):
                binding = submission.bindings[slot]
                if binding.buffer not in loads:
                    loads[binding.buffer] = hal.load(binding.buffer, hal.BUFFER)
                static = loads[binding.buffer]
                size = next((b.bytes for b in plan.buffers if b.name == binding.buffer), None)
                if binding.offset == 0 and binding.length == size:
                    slots[slot] = static
                else:
                    slots[slot] = hal.buffer_subspan(static, binding.offset, binding.length)
        return slots[slot]

    if submission.once:
        for position in sorted((p for p, _ in submission.once), reverse=True):
            body.pop(position).erase()  # runs once, when the module loads
        body = _without_empty_barriers(body)
    for op in body:
        for position in hal.buffer_operand_positions(op):
            operand = op.operands[position]
            if not isinstance(operand.type, ir.IndexType):
                continue  # a buffer bound directly (a constant)
            slot = constant_index(operand)
            if slot is None or slot >= len(submission.bindings):
                raise ReplayError(recorder.location, f"a slot reference of @{name} is not a constant slot number")
            op.operands[position] = slot_buffer(slot)
        if op.name == "hal.command_buffer.create" and hal.has_binding_capacity(op):
            hal.without_binding_capacity(op)
    with end:
        hal.declare_global(commands, hal.COMMAND_BUFFER)
        init = hal.initializer()
    with ir.InsertionPoint(init):
        hal.store(hal.call(name, hal.COMMAND_BUFFER), commands)
        hal.op("util.return")
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


def _rewrite_call(plan: ReplayPlan, function: ir.Operation, commands: list[str], end: ir.InsertionPoint) -> None:
    body = hal.body(function)
    block = function.regions[0].blocks[0]
    executes = [op for op in body if op.name == "hal.device.queue.execute.indirect"]
    statics = {b.source: b for b in plan.buffers}
    # Allocas: their buffers become the static ones, their fences forward their waits.
    allocas = [op for op in body if op.name == "hal.device.queue.alloca"]
    for number, op in enumerate(allocas):
        if f"alloca {number}" in statics:
            with ir.InsertionPoint(op), op.location:
                static = hal.load(statics[f"alloca {number}"].name, hal.BUFFER)
            op.results[0].replace_all_uses_with(static)
            hal.forward_fence(op)
    # Submissions: copy the inputs in, then submit the recorded command buffer.
    copied = plan.copied_inputs
    for number, (execute, name) in enumerate(zip(executes, commands)):
        queue = hal.queue_operands(execute)
        with ir.InsertionPoint(execute), execute.location:
            if number == 0 and copied:  # every input copied in before the first submission
                views = [block.arguments[i] for i, _ in copied]
                recorded, wait = _copy_in(plan, queue, views, [static for _, static in copied], end)
                queue = hal.QueueOperands(queue.device, queue.affinity, wait, queue.signal)
            else:
                recorded = hal.load(name, hal.COMMAND_BUFFER)
            hal.queue_execute(queue, recorded)
        memoized = hal.indirect_execute(execute).commands.owner
        execute.erase()
        if not list(memoized.results[0].uses):
            memoized.erase()
    # Deallocas of static buffers: nothing to free; their fences are forwarded.
    for op in hal.body(function):
        if op.name == "hal.device.queue.dealloca":
            hal.forward_fence(op)


def _copy_in(plan: ReplayPlan, queue: hal.QueueOperands, views: list[ir.Value], statics: list[StaticBuffer], end: ir.InsertionPoint) -> tuple[ir.Value, ir.Value]:
    """The first submission's command buffer and the fence it waits on, with the call's inputs
    copied into their static buffers first. Three cases:

    - the inputs are their static buffers (the runtime writes torch tensors there through
      `__<f>_static_inputs`): the recording as it is, after the call's wait fence;
    - the input buffers are the ones kept (passed by two calls in a row before, as a serving
      loop over preallocated inputs does): a recording of the copies followed by the first
      submission's commands, made for those buffers and kept with them in globals, so the
      copies are part of the one graph CUDA replays (no submission of their own, no wait
      between them and the kernels);
    - other buffers: queue copies, after which the recording runs; the buffers are remembered,
      and the next call with the same ones records the kept recording for them.

    The globals keep the remembered buffers alive, so a buffer freed meanwhile is never
    mistaken for them."""
    fence, command_buffer, buffer = ir.Type.parse(hal.FENCE), ir.Type.parse(hal.COMMAND_BUFFER), ir.Type.parse(hal.BUFFER)
    wait = queue.wait
    kept, kept_sources, last_sources = plan.kept_recording, [], []
    with end:
        hal.declare_global(kept, hal.COMMAND_BUFFER, mutable=True)
        for i in range(len(views)):
            kept_sources.append(plan.kept_source(i))
            last_sources.append(plan.last_source(i))
            hal.declare_global(kept_sources[-1], hal.BUFFER, mutable=True)
            hal.declare_global(last_sources[-1], hal.BUFFER, mutable=True)

    def same_as(sources: list[ir.Value], names: list[str]) -> ir.Value:
        flags = [hal.buffers_equal(s, hal.load(n, hal.BUFFER)) for s, n in zip(sources, names)]
        for flag in flags[1:]:
            flags[0] = hal.op("arith.andi", [ir.IntegerType.get_signless(1)], [flags[0], flag]).result
        return flags[0]

    def branch(condition: ir.Value):
        choice = hal.op("scf.if", [command_buffer, fence], [condition], regions=2)
        return choice, ir.InsertionPoint(choice.regions[0].blocks.append()), ir.InsertionPoint(choice.regions[1].blocks.append())

    sources = [hal.op("hal.buffer_view.buffer", [buffer], [view]).result for view in views]
    recorded = hal.load(plan.recording(0)[1], hal.COMMAND_BUFFER)
    in_place, then, otherwise = branch(same_as(sources, [static.name for static in statics]))
    with then:
        hal.op("scf.yield", operands=[recorded, wait])
    with otherwise:
        known, then, otherwise = branch(same_as(sources, kept_sources))
        with then:
            hal.op("scf.yield", operands=[hal.load(kept, hal.COMMAND_BUFFER), wait])
        with otherwise:
            again, then, otherwise = branch(same_as(sources, last_sources))
            with then:
                record = hal.call(f"{plan.recording(0)[0]}_copying", hal.COMMAND_BUFFER, sources)
                hal.store(record, kept)
                for source, name in zip(sources, kept_sources):
                    hal.store(source, name)
                hal.op("scf.yield", operands=[record, wait])
            with otherwise:
                ready = wait
                for source, name, static in zip(sources, last_sources, statics):
                    hal.store(source, name)
                    ready = _queue_copy(queue, ready, source, static)
                hal.op("scf.yield", operands=[recorded, ready])
            hal.op("scf.yield", operands=list(again.results))
        hal.op("scf.yield", operands=list(known.results))
    return in_place.results[0], in_place.results[1]


def _queue_copy(queue: hal.QueueOperands, wait: ir.Value, source: ir.Value, static: StaticBuffer) -> ir.Value:
    """A queue copy of `source` into its static buffer after `wait` (none where `source` is that
    buffer); the fence that follows it."""
    target = hal.load(static.name, hal.BUFFER)
    same = hal.buffers_equal(source, target)
    choice = hal.op("scf.if", [ir.Type.parse(hal.FENCE)], [same], regions=2)
    with ir.InsertionPoint(choice.regions[0].blocks.append()):
        hal.op("scf.yield", operands=[wait])
    with ir.InsertionPoint(choice.regions[1].blocks.append()):
        copied = hal.fence_create(queue.device)
        hal.queue_copy(hal.QueueOperands(queue.device, queue.affinity, wait, copied), source, target, static.bytes)
        hal.op("scf.yield", operands=[copied])
    return choice.results[0]


def _record_copying(plan: ReplayPlan, statics: list[StaticBuffer], module: ir.Operation) -> None:
    """`__<f>_replay_record_0_copying(sources...)`: the first recording with copies of the
    given buffers into the static inputs first (each skipped where it is its static buffer),
    then a barrier, then the recording's own commands."""
    name = plan.recording(0)[0]
    recorder = hal.top_level(module)[name]
    copying = recorder.clone(ir.InsertionPoint(recorder))
    copying.attributes["sym_name"] = ir.StringAttr.get(f"{name}_copying")
    buffer = ir.Type.parse(hal.BUFFER)
    copying.attributes["function_type"] = ir.TypeAttr.get(ir.FunctionType.get([buffer] * len(statics), [ir.Type.parse(hal.COMMAND_BUFFER)]))
    if "tied_operands" in copying.attributes:
        del copying.attributes["tied_operands"]
    block = copying.regions[0].blocks[0]
    sources = [block.add_argument(buffer, copying.location) for _ in statics]
    body = [op.operation for op in block.operations]
    create = next(i for i, op in enumerate(body) if op.name == "hal.command_buffer.create")
    commands = body[create].results[0]
    with ir.InsertionPoint(body[create + 1]), copying.location:  # a recording ends in finalize and return
        for source, static in zip(sources, statics):
            target = hal.load(static.name, hal.BUFFER)
            same = hal.buffers_equal(source, target)
            copy = hal.op("scf.if", [], [same], regions=2)
            with ir.InsertionPoint(copy.regions[0].blocks.append()):
                hal.op("scf.yield")
            with ir.InsertionPoint(copy.regions[1].blocks.append()):
                hal.command_buffer_copy(commands, source, target, static.bytes)
                hal.op("scf.yield")
        hal.dispatch_barrier(commands)


def _add_static_inputs_function(plan: ReplayPlan, function: ir.Operation, module: ir.Operation) -> None:
    """`__schedc_static_inputs_<f>()`: views of `f`'s static input buffers, in argument order
    (an argument that binds nothing has none), for a caller to write its inputs into."""
    asserts = {}
    for op in hal.body(function):
        if op.name == "hal.buffer_view.assert" and isinstance(op.operands[0].owner, ir.Block):
            asserts[ir.BlockArgument(op.operands[0]).arg_number] = op
    statics = {b.source: b for b in plan.buffers}
    inputs = sorted(int(source.split()[1]) for source in statics if source.startswith("input "))
    if not inputs or inputs != list(range(len(inputs))) or any(n not in asserts for n in inputs):
        return  # the runtime then copies through the call as before
    views = []
    for number in inputs:
        static, check = statics[f"input {number}"], asserts[number].opview
        dims = [constant_index(d) for d in check.shape]
        element, encoding = check.element_type.owner, check.encoding_type.owner
        if any(d is None for d in dims) or isinstance(element, ir.Block) or isinstance(encoding, ir.Block):
            return
        views.append(hal.StaticView(static.name, static.bytes, dims, hal.attribute_op_text(element), hal.attribute_op_text(encoding)))
    name = f"{abi.STATIC_INPUTS_PREFIX}{plan.function}"
    hal.views_function(name, {abi.STATIC_INPUTS_OF: plan.function}, views, ir.InsertionPoint(module.regions[0].blocks[0]))


def drop_unused_recordings(module: ir.Operation) -> None:
    """Erases memoized recordings that no function submits any more, and their initializers'
    calls (a recording costs memory and, on CUDA, a graph each)."""
    loads = hal.global_loads(module)
    top = hal.top_level(module)
    unused = {
        name for name, op in top.items()
        if op.name == "util.global" and name not in loads
        and str(ir.TypeAttr(op.attributes["type"]).value) == hal.COMMAND_BUFFER
    }
    for initializer in hal.initializers(module):
        for op in hal.body(initializer):
            if op.name != "util.global.store" or hal.symbol(op, "global") not in unused:
                continue
            call = op.operands[0].owner
            op.erase()
            if not isinstance(call, ir.Block) and call.name == "util.call" and not list(call.results[0].uses):
                callee = hal.symbol(call, "callee")
                call.erase()
                if not hal.callers(module, callee) and callee in top:
                    top[callee].erase()
        if [op.name for op in hal.body(initializer)] == ["util.return"]:
            initializer.erase()
    for name in unused:
        top[name].erase()


PASS = PassInfo(
    name="static-replay",
    summary="record each call's command buffers once over static buffers (CUDA graph replay)",
    run=static_replay,
    options=Options,
    phase=Phase.HAL,
)
