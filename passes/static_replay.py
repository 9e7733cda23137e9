"""static-replay: record each call's command buffers once, over static buffers, and replay them.

Runs on IREE's HAL phase (`iree-compile --compile-to=hal`); `schedc --execution=graphs` adds
it. Every exported function that submits memoized command buffers gets a static device buffer
per bound buffer (inputs, outputs, transients), its command buffers recorded once with direct
bindings in an initializer, and a body that copies the inputs in (unless an input is its static
buffer already), submits the recordings and returns views of the static outputs (which the
next call overwrites); `__schedc_static_inputs_<f>` returns views of the static input buffers
for a caller to write into. Fills that arena-plan marked persistent (`persistent-fills=true`)
run once, when the module loads. See `schedc.hal_replay` for the IR before and after.

    util.func public @forward$async(...)            util.func public @forward$async(...)
      %t = hal.device.queue.alloca ... {%c512}  ->    %t = util.global.load @__forward$async_replay_alloca_0
      hal.device.queue.execute.indirect ...           scf.if (%in != @..._input_0): hal.device.queue.copy ...
        commands(%memoized) bindings([(%in ...),      hal.device.queue.execute ... commands(%recorded)
                                      (%t ...)])

A function with dynamic shapes (sizes that are not constants, command buffers recorded per
call) is an error at the function's location.
"""

from __future__ import annotations

from schedc.hal_replay import ReplayError, replay_module

from ._base import PassInfo


def static_replay(module, pass_, options, context) -> None:
    try:
        plans = replay_module(module)
    except ReplayError as e:
        e.location.emit_error(f"static-replay: {e}")
        pass_.signal_pass_failure()
        return
    records = context.records.setdefault("static-replay", {})
    for plan in plans:
        records[plan.function] = {
            "static_buffers": len(plan.buffers),
            "static_bytes": plan.static_bytes,
            "recorded_command_buffers": len(plan.submissions),
            "fills_once": len(plan.fills_once),
        }


PASS = PassInfo(
    name="static-replay",
    summary="record each call's command buffers once over static buffers (CUDA graph replay)",
    run=static_replay,
    phase="hal",
)
