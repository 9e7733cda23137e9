// static-replay refuses what it cannot make static, at the function's location, and writes
// nothing.
// RUN: not schedc-opt %s --split-input-file --passes=static-replay 2>&1 | filecheck %s

// CHECK: static-replay-error.mlir:[[# @LINE + 2]]:1: error: static-replay: @dynamic_batch takes a tensor of dynamic shape: static replay (--execution=graphs) needs static shapes
// CHECK-NOT: util.func
util.func public @dynamic_batch(%arg0: !hal.buffer_view) -> !hal.buffer_view attributes {iree.abi.stub} {
  %c8 = arith.constant 8 : index
  %f32 = hal.element_type<f32> : i32
  %dense = hal.encoding_type<dense_row_major> : i32
  %dim = hal.buffer_view.dim<%arg0 : !hal.buffer_view>[0] : index
  hal.buffer_view.assert<%arg0 : !hal.buffer_view> message("input0") shape([%dim, %c8]) type(%f32) encoding(%dense)
  util.return %arg0 : !hal.buffer_view
}

// -----

// CHECK: static-replay-error.mlir:[[# @LINE + 2]]:1: error: static-replay: @per_call_recording records its command buffers on every call
util.global private @__device_0 : !hal.device
util.func public @per_call_recording() attributes {iree.abi.stub} {
  %c-1_i64 = arith.constant -1 : i64
  %device = util.global.load immutable @__device_0 : !hal.device
  %cmd = hal.command_buffer.create device(%device : !hal.device) mode("OneShot") categories("Transfer|Dispatch") affinity(%c-1_i64) : !hal.command_buffer
  hal.command_buffer.finalize<%cmd : !hal.command_buffer>
  util.return
}
