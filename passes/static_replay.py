"""static-replay: record each call's command buffers once, over static buffers, and replay them.

Runs on IREE's HAL phase (`iree-compile --compile-to=hal`); `schedc --execution=graphs` adds
it. Every exported function that submits memoized command buffers gets a static device buffer
per bound buffer (inputs, outputs, transients), its command buffers recorded once with direct
bindings in an initializer, and a body that copies the inputs in, submits the recordings and
returns views of the static outputs (which the next call overwrites). See
`schedc.hal_replay` for the IR before and after.

    util.func public @forward$async(...)            util.func public @forward$async(...)
      %t = hal.device.queue.alloca ... {%c512}  ->    %t = util.global.load @__forward$async_replay_alloca_0
      hal.device.queue.execute.indirect ...           hal.device.queue.copy ... source(%in) target(@..._input_0)
        commands(%memoized) bindings([(%in ...),      hal.device.queue.execute ... commands(%recorded)
                                      (%t ...)])

A function with dynamic shapes (sizes that are not constants, command buffers recorded per
call) is an error at the function's location.
"""

from __future__ import annotations

from schedc.hal_replay import ReplayError, apply_replay, drop_unused_recordings, exported_functions, plan_replay

from ._base import PassInfo


def static_replay(module, pass_, options, context) -> None:
    planned = []
    for function in exported_functions(module):
        try:
            plan = plan_replay(function, module)
        except ReplayError as e:
            e.location.emit_error(f"static-replay: {e}")
            pass_.signal_pass_failure()
            return
        if plan is not None:
            planned.append((plan, function))
    records = context.records.setdefault("static-replay", {})
    for plan, function in planned:  # every function planned first: a refusal changes nothing
        try:
            apply_replay(plan, function, module)
        except ReplayError as e:
            e.location.emit_error(f"static-replay: {e}")
            pass_.signal_pass_failure()
            return
        records[plan.function] = {
            "static_buffers": len(plan.buffers),
            "static_bytes": plan.static_bytes,
            "recorded_command_buffers": len(plan.submissions),
        }
    drop_unused_recordings(module)


PASS = PassInfo(
    name="static-replay",
    summary="record each call's command buffers once over static buffers (CUDA graph replay)",
    run=static_replay,
    phase="hal",
)
