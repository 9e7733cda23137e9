// static-replay runs the fills arena-plan listed as persistent (`sched.persistent_fills`:
// execution region, arena bytes, offset, length) once, in an initializer, instead of in the
// recording; a listed fill whose arena does not match stays in the recording.
// RUN: schedc-opt %s --passes=static-replay | filecheck %s

// The recording: the listed fill (twice: two pads share its bytes) is gone, and so are the
// barriers it leaves with nothing before them; the fill at 4096, listed with an arena of
// another size, stays.
// CHECK-LABEL: util.func private @__padded$async_replay_record_0()
//       CHECK:   %[[CMD:.+]] = hal.command_buffer.create
//  CHECK-NEXT:   hal.command_buffer.fill_buffer<%[[CMD]] : !hal.command_buffer> target(%{{.+}} : !hal.buffer)[%c4096, %c256]
//  CHECK-NEXT:   hal.command_buffer.execution_barrier
//  CHECK-NEXT:   hal.command_buffer.dispatch
//       CHECK:   hal.command_buffer.execution_barrier
//  CHECK-NEXT:   hal.command_buffer.dispatch
//   CHECK-NOT:   hal.command_buffer.fill_buffer
//       CHECK:   hal.command_buffer.finalize

// Once, after the static buffers are allocated: a one-shot command buffer that fills the
// transient's bytes, submitted and waited for.
//       CHECK: util.initializer
//       CHECK:   hal.allocator.allocate
//       CHECK: util.initializer
//       CHECK:   %[[DONE:.+]] = hal.fence.create
//       CHECK:   %[[ONCE:.+]] = hal.command_buffer.create device(%{{.+}} : !hal.device) mode(OneShot) categories(Transfer)
//   CHECK-DAG:   %[[TMP:.+]] = util.global.load @__padded$async_replay_alloca_1 : !hal.buffer
//   CHECK-DAG:   %[[OFFSET:.+]] = arith.constant 1024 : index
//   CHECK-DAG:   %[[LENGTH:.+]] = arith.constant 256 : index
//       CHECK:   hal.command_buffer.fill_buffer<%[[ONCE]] : !hal.command_buffer> target(%[[TMP]] : !hal.buffer)[%[[OFFSET]], %[[LENGTH]]] pattern(%{{.+}} : i8)
//   CHECK-NOT:   hal.command_buffer.fill_buffer
//       CHECK:   hal.command_buffer.finalize<%[[ONCE]] : !hal.command_buffer>
//       CHECK:   hal.device.queue.execute<%{{.+}} : !hal.device> affinity(%{{.+}}) wait(%{{.+}}) signal(%[[DONE]]) commands(%[[ONCE]])
//       CHECK:   hal.fence.await until([%[[DONE]]])
//       CHECK:   util.return

// One input, an output and a transient from queue.allocas, a constant bound directly.
util.global private @__device_0 : !hal.device
util.global private @__constant_weights : !hal.buffer
util.global private @__executable : !hal.executable
util.func private @__padded$async_memoize_apply() -> !hal.command_buffer {
  %c-1_i64 = arith.constant -1 : i64
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %c512 = arith.constant 512 : index
  %c2048 = arith.constant 2048 : index
  %c8192 = arith.constant 8192 : index
  %c0_i64 = arith.constant 0 : i64
  %device = util.global.load immutable @__device_0 : !hal.device
  %weights = util.global.load immutable @__constant_weights : !hal.buffer
  %executable = util.global.load immutable @__executable : !hal.executable
  %c1024 = arith.constant 1024 : index
  %c4096 = arith.constant 4096 : index
  %c256 = arith.constant 256 : index
  %c0_i8 = arith.constant 0 : i8
  %cmd = hal.command_buffer.create device(%device : !hal.device) mode("None") categories("Transfer|Dispatch") affinity(%c-1_i64) bindings(%c3) : !hal.command_buffer
  hal.command_buffer.fill_buffer<%cmd : !hal.command_buffer> target(%c2 : index)[%c1024, %c256] pattern(%c0_i8 : i8) flags("None")
  hal.command_buffer.fill_buffer<%cmd : !hal.command_buffer> target(%c2 : index)[%c4096, %c256] pattern(%c0_i8 : i8) flags("None")
  hal.command_buffer.execution_barrier<%cmd : !hal.command_buffer> source("Dispatch|Transfer|CommandRetire") target("CommandIssue|Dispatch|Transfer") flags("None")
  hal.command_buffer.dispatch<%cmd : !hal.command_buffer> target(%executable : !hal.executable)[%c0_i64] workgroups([%c2, %c1, %c1]) bindings([
    (%c0 : index)[%c0, %c2048],
    (%weights : !hal.buffer)[%c0, %c512],
    (%c2 : index)[%c0, %c8192]
  ]) flags("None")
  hal.command_buffer.execution_barrier<%cmd : !hal.command_buffer> source("Dispatch|Transfer|CommandRetire") target("CommandIssue|Dispatch|Transfer") flags("None")
  hal.command_buffer.fill_buffer<%cmd : !hal.command_buffer> target(%c2 : index)[%c1024, %c256] pattern(%c0_i8 : i8) flags("None")
  hal.command_buffer.execution_barrier<%cmd : !hal.command_buffer> source("Dispatch|Transfer|CommandRetire") target("CommandIssue|Dispatch|Transfer") flags("None")
  hal.command_buffer.dispatch<%cmd : !hal.command_buffer> target(%executable : !hal.executable)[%c0_i64] workgroups([%c1, %c1, %c1]) bindings([
    (%c2 : index)[%c0, %c8192],
    (%c1 : index)[%c0, %c512]
  ]) flags("None")
  hal.command_buffer.finalize<%cmd : !hal.command_buffer>
  util.return %cmd : !hal.command_buffer
}
util.global private @__padded$async_memoize_result_0 : !hal.command_buffer
util.initializer {
  %0 = util.call @__padded$async_memoize_apply() : () -> !hal.command_buffer
  util.global.store %0, @__padded$async_memoize_result_0 : !hal.command_buffer
  util.return
}
util.func public @padded$async(%arg0: !hal.buffer_view, %arg1: !hal.fence, %arg2: !hal.fence) -> !hal.buffer_view attributes {iree.abi.model = "coarse-fences", iree.abi.stub, sched.persistent_fills = array<i64: 0, 8192, 1024, 256, 0, 8192, 1024, 256, 0, 4096, 4096, 256>} {
  %c0_i64 = arith.constant 0 : i64
  %c-1_i64 = arith.constant -1 : i64
  %c0 = arith.constant 0 : index
  %c8 = arith.constant 8 : index
  %c16 = arith.constant 16 : index
  %c64 = arith.constant 64 : index
  %c512 = arith.constant 512 : index
  %c2048 = arith.constant 2048 : index
  %c8192 = arith.constant 8192 : index
  %memory_type = hal.memory_type<"DeviceVisible|DeviceLocal"> : i32
  %buffer_usage = hal.buffer_usage<"TransferSource|TransferTarget|Transfer|DispatchStorageRead|DispatchStorageWrite|DispatchStorage"> : i32
  %device = util.global.load immutable @__device_0 : !hal.device
  %memoized = util.global.load immutable @__padded$async_memoize_result_0 : !hal.command_buffer
  %f32 = hal.element_type<f32> : i32
  %dense = hal.encoding_type<dense_row_major> : i32
  hal.buffer_view.assert<%arg0 : !hal.buffer_view> message("tensor") shape([%c8, %c64]) type(%f32) encoding(%dense)
  %buffer = hal.buffer_view.buffer<%arg0 : !hal.buffer_view> : !hal.buffer
  %fence = hal.fence.create device(%device : !hal.device) flags("None") : !hal.fence
  %output = hal.device.queue.alloca<%device : !hal.device> affinity(%c-1_i64) wait(%arg1) signal(%fence) pool(%c0_i64) type(%memory_type) usage(%buffer_usage) flags("None") : !hal.buffer{%c512}
  %fence_0 = hal.fence.create device(%device : !hal.device) flags("None") : !hal.fence
  %transient = hal.device.queue.alloca<%device : !hal.device> affinity(%c-1_i64) wait(%arg1) signal(%fence_0) pool(%c0_i64) type(%memory_type) usage(%buffer_usage) flags("None") : !hal.buffer{%c8192}
  %fence_1 = hal.fence.join at([%fence, %fence_0]) flags("None") -> !hal.fence
  %fence_2 = hal.fence.create device(%device : !hal.device) flags("None") : !hal.fence
  hal.device.queue.execute.indirect<%device : !hal.device> affinity(%c-1_i64) wait(%fence_1) signal(%fence_2) commands(%memoized) bindings([
    (%buffer : !hal.buffer)[%c0, %c2048],
    (%output : !hal.buffer)[%c0, %c512],
    (%transient : !hal.buffer)[%c0, %c8192]
  ]) flags("None")
  hal.device.queue.dealloca<%device : !hal.device> affinity(%c-1_i64) wait(%fence_2) signal(%arg2) buffer(%transient : !hal.buffer) flags("None")
  %view = hal.buffer_view.create buffer(%output : !hal.buffer)[%c0, %c512] shape([%c8, %c16]) type(%f32) encoding(%dense) : !hal.buffer_view
  util.return %view : !hal.buffer_view
}

