// static-replay on HAL-phase IR (as `iree-compile --compile-to=hal` emits it, executables
// left out): static buffers per bound buffer, recordings with direct bindings, and a call that
// copies its inputs in and submits the recordings.
// RUN: schedc-opt %s --split-input-file --passes=static-replay | filecheck %s

// One input, an output and a transient from queue.allocas, a constant bound directly.
util.global private @__device_0 : !hal.device
util.global private @__constant_weights : !hal.buffer
util.global private @__executable : !hal.executable
util.func private @__one_region$async_memoize_apply() -> !hal.command_buffer {
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
  %cmd = hal.command_buffer.create device(%device : !hal.device) mode("None") categories("Transfer|Dispatch") affinity(%c-1_i64) bindings(%c3) : !hal.command_buffer
  hal.command_buffer.dispatch<%cmd : !hal.command_buffer> target(%executable : !hal.executable)[%c0_i64] workgroups([%c2, %c1, %c1]) bindings([
    (%c0 : index)[%c0, %c2048],
    (%weights : !hal.buffer)[%c0, %c512],
    (%c2 : index)[%c0, %c8192]
  ]) flags("None")
  hal.command_buffer.execution_barrier<%cmd : !hal.command_buffer> source("Dispatch|Transfer|CommandRetire") target("CommandIssue|Dispatch|Transfer") flags("None")
  hal.command_buffer.dispatch<%cmd : !hal.command_buffer> target(%executable : !hal.executable)[%c0_i64] workgroups([%c1, %c1, %c1]) bindings([
    (%c2 : index)[%c0, %c8192],
    (%c1 : index)[%c0, %c512]
  ]) flags("None")
  hal.command_buffer.finalize<%cmd : !hal.command_buffer>
  util.return %cmd : !hal.command_buffer
}
util.global private @__one_region$async_memoize_result_0 : !hal.command_buffer
util.initializer {
  %0 = util.call @__one_region$async_memoize_apply() : () -> !hal.command_buffer
  util.global.store %0, @__one_region$async_memoize_result_0 : !hal.command_buffer
  util.return
}
util.func public @one_region$async(%arg0: !hal.buffer_view, %arg1: !hal.fence, %arg2: !hal.fence) -> !hal.buffer_view attributes {iree.abi.model = "coarse-fences", iree.abi.stub} {
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
  %memoized = util.global.load immutable @__one_region$async_memoize_result_0 : !hal.command_buffer
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

// For input buffers kept across calls: the recording below with the copies in front, so
// they replay in the one graph (an input that is its static buffer is not copied).
// CHECK-LABEL: util.func private @__one_region$async_replay_record_0_copying(%arg0: !hal.buffer) -> !hal.command_buffer
//       CHECK:   %[[CCMD:.+]] = hal.command_buffer.create
//  CHECK-NEXT:   %[[CIN:.+]] = util.global.load @__one_region$async_replay_input_0 : !hal.buffer
//  CHECK-NEXT:   %[[CSAME:.+]] = util.cmp.eq %arg0, %[[CIN]] : !hal.buffer
//  CHECK-NEXT:   scf.if %[[CSAME]] {
//  CHECK-NEXT:   } else {
//       CHECK:     hal.command_buffer.copy_buffer<%[[CCMD]] : !hal.command_buffer> source(%arg0 : !hal.buffer)[%{{.+}}] target(%[[CIN]] : !hal.buffer)[%{{.+}}] length(%{{.+}})
//  CHECK-NEXT:   }
//  CHECK-NEXT:   hal.command_buffer.execution_barrier<%[[CCMD]] : !hal.command_buffer>
//  CHECK-NEXT:   hal.command_buffer.dispatch<%[[CCMD]] : !hal.command_buffer>
// The recording is copied with the slots replaced by the static buffers and no binding
// capacity; the constant stays bound as it was; the memoized original is gone.
// CHECK-LABEL: util.func private @__one_region$async_replay_record_0()
//   CHECK-DAG:   %[[IN:.+]] = util.global.load @__one_region$async_replay_input_0 : !hal.buffer
//   CHECK-DAG:   %[[OUT:.+]] = util.global.load @__one_region$async_replay_alloca_0 : !hal.buffer
//   CHECK-DAG:   %[[TMP:.+]] = util.global.load @__one_region$async_replay_alloca_1 : !hal.buffer
//   CHECK-DAG:   %[[W:.+]] = util.global.load immutable @__constant_weights
//       CHECK:   %[[CMD:.+]] = hal.command_buffer.create device({{.+}}) mode("None") categories("Transfer|Dispatch") affinity({{.+}}) : !hal.command_buffer
//  CHECK-NEXT:   hal.command_buffer.dispatch<%[[CMD]] : !hal.command_buffer>
//  CHECK-NEXT:     (%[[IN]] : !hal.buffer)[%{{.+}}, %{{.+}}],
//  CHECK-NEXT:     (%[[W]] : !hal.buffer)[%{{.+}}, %{{.+}}],
//  CHECK-NEXT:     (%[[TMP]] : !hal.buffer)[%{{.+}}, %{{.+}}]
//       CHECK:   hal.command_buffer.execution_barrier
//  CHECK-NEXT:   hal.command_buffer.dispatch<%[[CMD]] : !hal.command_buffer>
//  CHECK-NEXT:     (%[[TMP]] : !hal.buffer)[%{{.+}}, %{{.+}}],
//  CHECK-NEXT:     (%[[OUT]] : !hal.buffer)[%{{.+}}, %{{.+}}]
//   CHECK-NOT:   memoize
// The call: no allocas, deallocas or binding tables. An input that is its static buffer runs
// the recording as it is; an input buffer kept from earlier calls runs the kept recording,
// which copies it in first; the same buffer as the last call's records that recording (and
// keeps both in mutable globals); any other buffer is queue-copied in and remembered. The
// submission signals the caller's fence.
// CHECK-LABEL: util.func public @one_region$async(
//  CHECK-SAME:   iree.reflection = {schedc.static_result_slots = "0", schedc.static_results = "true"}
//   CHECK-NOT:   hal.device.queue.alloca
//       CHECK:   %[[OUT2:.+]] = util.global.load @__one_region$async_replay_alloca_0 : !hal.buffer
//       CHECK:   %[[SRC:.+]] = hal.buffer_view.buffer<%arg0 : !hal.buffer_view>
//  CHECK-NEXT:   %[[REC:.+]] = util.global.load @__one_region$async_replay_commands_0 : !hal.command_buffer
//  CHECK-NEXT:   %[[IN2:.+]] = util.global.load @__one_region$async_replay_input_0 : !hal.buffer
//  CHECK-NEXT:   %[[SAME:.+]] = util.cmp.eq %[[SRC]], %[[IN2]] : !hal.buffer
//  CHECK-NEXT:   %[[CHOICE:.+]]:2 = scf.if %[[SAME]] -> (!hal.command_buffer, !hal.fence) {
//  CHECK-NEXT:     scf.yield %[[REC]], %[[WAIT:.+]] : !hal.command_buffer, !hal.fence
//  CHECK-NEXT:   } else {
//  CHECK-NEXT:     %[[KEPTSRC:.+]] = util.global.load @__one_region$async_replay_kept_source_0 : !hal.buffer
//  CHECK-NEXT:     %[[ISKEPT:.+]] = util.cmp.eq %[[SRC]], %[[KEPTSRC]] : !hal.buffer
//  CHECK-NEXT:     %{{.+}}:2 = scf.if %[[ISKEPT]] -> (!hal.command_buffer, !hal.fence) {
//  CHECK-NEXT:       %[[KEPT:.+]] = util.global.load @__one_region$async_replay_kept : !hal.command_buffer
//  CHECK-NEXT:       scf.yield %[[KEPT]], %[[WAIT]] : !hal.command_buffer, !hal.fence
//  CHECK-NEXT:     } else {
//  CHECK-NEXT:       %[[LAST:.+]] = util.global.load @__one_region$async_replay_last_source_0 : !hal.buffer
//  CHECK-NEXT:       %[[AGAIN:.+]] = util.cmp.eq %[[SRC]], %[[LAST]] : !hal.buffer
//  CHECK-NEXT:       %{{.+}}:2 = scf.if %[[AGAIN]] -> (!hal.command_buffer, !hal.fence) {
//  CHECK-NEXT:         %[[NEW:.+]] = util.call @__one_region$async_replay_record_0_copying(%[[SRC]]) : (!hal.buffer) -> !hal.command_buffer
//  CHECK-NEXT:         util.global.store %[[NEW]], @__one_region$async_replay_kept : !hal.command_buffer
//  CHECK-NEXT:         util.global.store %[[SRC]], @__one_region$async_replay_kept_source_0 : !hal.buffer
//  CHECK-NEXT:         scf.yield %[[NEW]], %[[WAIT]] : !hal.command_buffer, !hal.fence
//  CHECK-NEXT:       } else {
//  CHECK-NEXT:         util.global.store %[[SRC]], @__one_region$async_replay_last_source_0 : !hal.buffer
//       CHECK:           %[[COPIED:.+]] = hal.fence.create
//       CHECK:           hal.device.queue.copy<{{.+}}> affinity({{.+}}) wait(%[[WAIT]]) signal(%[[COPIED]]) source(%[[SRC]] : !hal.buffer)[%{{.+}}] target(%{{.+}} : !hal.buffer)[%{{.+}}] length(%{{.+}})
//  CHECK-NEXT:           scf.yield %[[COPIED]] : !hal.fence
//  CHECK-NEXT:         }
//  CHECK-NEXT:         scf.yield %[[REC]], %{{.+}} : !hal.command_buffer, !hal.fence
//       CHECK:   hal.device.queue.execute<{{.+}}> affinity({{.+}}) wait(%[[CHOICE]]#1) signal(%arg2) commands(%[[CHOICE]]#0)
//   CHECK-NOT:   hal.device.queue.dealloca
//       CHECK:   hal.buffer_view.create buffer(%[[OUT2]] : !hal.buffer)
// Static buffers sized from the allocas and the input's binding, allocated once; then the
// recording, once.
//       CHECK: util.global private @__one_region$async_replay_input_0 : !hal.buffer
//       CHECK: util.initializer {
//       CHECK:   hal.allocator.allocate<{{.+}}> {{.+}} : !hal.buffer{%c2048}
//  CHECK-NEXT:   util.global.store {{.+}}, @__one_region$async_replay_input_0
//       CHECK:   hal.allocator.allocate<{{.+}}> {{.+}} : !hal.buffer{%c512}
//  CHECK-NEXT:   util.global.store {{.+}}, @__one_region$async_replay_alloca_0
//       CHECK:   hal.allocator.allocate<{{.+}}> {{.+}} : !hal.buffer{%c8192}
//  CHECK-NEXT:   util.global.store {{.+}}, @__one_region$async_replay_alloca_1
//       CHECK: util.global private @__one_region$async_replay_commands_0 : !hal.command_buffer
//       CHECK: util.initializer {
//  CHECK-NEXT:   util.call @__one_region$async_replay_record_0()
// The kept recording and the buffers it copies, and the last call's buffers: mutable, null
// until a call stores them.
//       CHECK: util.global private mutable @__one_region$async_replay_kept : !hal.command_buffer
//  CHECK-NEXT: util.global private mutable @__one_region$async_replay_kept_source_0 : !hal.buffer
//  CHECK-NEXT: util.global private mutable @__one_region$async_replay_last_source_0 : !hal.buffer
// The static input buffer, viewed for a caller that writes its input there itself.
//       CHECK: util.func public @__schedc_static_inputs_one_region$async() -> !hal.buffer_view
//  CHECK-SAME:   iree.reflection = {schedc.static_inputs_of = "one_region$async"}
//       CHECK:   %[[SIN:.+]] = util.global.load @__one_region$async_replay_input_0 : !hal.buffer
//       CHECK:   %[[SVIEW:.+]] = hal.buffer_view.create buffer(%[[SIN]] : !hal.buffer)[%{{.+}}, %c2048] shape([%c8, %c64])
//  CHECK-NEXT:   util.return %[[SVIEW]] : !hal.buffer_view

// -----

// Two execute regions over one arena (slots are parts of it: subspans), and two inputs.
util.global private @__device_0 : !hal.device
util.global private @__executable : !hal.executable
util.func private @__rec_a() -> !hal.command_buffer {
  %c-1_i64 = arith.constant -1 : i64
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c256 = arith.constant 256 : index
  %c0_i64 = arith.constant 0 : i64
  %device = util.global.load immutable @__device_0 : !hal.device
  %executable = util.global.load immutable @__executable : !hal.executable
  %cmd = hal.command_buffer.create device(%device : !hal.device) mode("None") categories("Transfer|Dispatch") affinity(%c-1_i64) bindings(%c2) : !hal.command_buffer
  hal.command_buffer.dispatch<%cmd : !hal.command_buffer> target(%executable : !hal.executable)[%c0_i64] workgroups([%c1, %c1, %c1]) bindings([
    (%c0 : index)[%c0, %c256],
    (%c1 : index)[%c0, %c256]
  ]) flags("None")
  hal.command_buffer.finalize<%cmd : !hal.command_buffer>
  util.return %cmd : !hal.command_buffer
}
util.func private @__rec_b() -> !hal.command_buffer {
  %c-1_i64 = arith.constant -1 : i64
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %c256 = arith.constant 256 : index
  %device = util.global.load immutable @__device_0 : !hal.device
  %cmd = hal.command_buffer.create device(%device : !hal.device) mode("None") categories("Transfer|Dispatch") affinity(%c-1_i64) bindings(%c3) : !hal.command_buffer
  hal.command_buffer.copy_buffer<%cmd : !hal.command_buffer> source(%c0 : index)[%c0] target(%c2 : index)[%c0] length(%c256) flags("None")
  hal.command_buffer.copy_buffer<%cmd : !hal.command_buffer> source(%c1 : index)[%c0] target(%c2 : index)[%c256] length(%c256) flags("None")
  hal.command_buffer.finalize<%cmd : !hal.command_buffer>
  util.return %cmd : !hal.command_buffer
}
util.global private @__rec_a_result : !hal.command_buffer
util.global private @__rec_b_result : !hal.command_buffer
util.initializer {
  %0 = util.call @__rec_a() : () -> !hal.command_buffer
  util.global.store %0, @__rec_a_result : !hal.command_buffer
  %1 = util.call @__rec_b() : () -> !hal.command_buffer
  util.global.store %1, @__rec_b_result : !hal.command_buffer
  util.return
}
util.func public @two_regions(%arg0: !hal.buffer_view, %arg1: !hal.buffer_view) -> !hal.buffer_view attributes {iree.abi.stub} {
  %null = util.null : !hal.fence
  %c0_i64 = arith.constant 0 : i64
  %c-1_i64 = arith.constant -1 : i64
  %c-1_i32 = arith.constant -1 : i32
  %c0 = arith.constant 0 : index
  %c64 = arith.constant 64 : index
  %c128 = arith.constant 128 : index
  %c256 = arith.constant 256 : index
  %c512 = arith.constant 512 : index
  %c768 = arith.constant 768 : index
  %memory_type = hal.memory_type<"DeviceVisible|DeviceLocal"> : i32
  %buffer_usage = hal.buffer_usage<"TransferSource|TransferTarget|Transfer|DispatchStorageRead|DispatchStorageWrite|DispatchStorage"> : i32
  %device = util.global.load immutable @__device_0 : !hal.device
  %a = util.global.load immutable @__rec_a_result : !hal.command_buffer
  %b = util.global.load immutable @__rec_b_result : !hal.command_buffer
  %f32 = hal.element_type<f32> : i32
  %dense = hal.encoding_type<dense_row_major> : i32
  hal.buffer_view.assert<%arg0 : !hal.buffer_view> message("input0") shape([%c64]) type(%f32) encoding(%dense)
  %in0 = hal.buffer_view.buffer<%arg0 : !hal.buffer_view> : !hal.buffer
  hal.buffer_view.assert<%arg1 : !hal.buffer_view> message("input1") shape([%c64]) type(%f32) encoding(%dense)
  %in1 = hal.buffer_view.buffer<%arg1 : !hal.buffer_view> : !hal.buffer
  %fence = hal.fence.create device(%device : !hal.device) flags("None") : !hal.fence
  %arena = hal.device.queue.alloca<%device : !hal.device> affinity(%c-1_i64) wait(%null) signal(%fence) pool(%c0_i64) type(%memory_type) usage(%buffer_usage) flags("None") : !hal.buffer{%c768}
  %fence_0 = hal.fence.create device(%device : !hal.device) flags("None") : !hal.fence
  hal.device.queue.execute.indirect<%device : !hal.device> affinity(%c-1_i64) wait(%fence) signal(%fence_0) commands(%a) bindings([
    (%in0 : !hal.buffer)[%c0, %c256],
    (%arena : !hal.buffer)[%c512, %c256]
  ]) flags("None")
  %fence_1 = hal.fence.create device(%device : !hal.device) flags("None") : !hal.fence
  hal.device.queue.execute.indirect<%device : !hal.device> affinity(%c-1_i64) wait(%fence_0) signal(%fence_1) commands(%b) bindings([
    (%arena : !hal.buffer)[%c512, %c256],
    (%in1 : !hal.buffer)[%c0, %c256],
    (%arena : !hal.buffer)[%c0, %c512]
  ]) flags("None")
  %status = hal.fence.await until([%fence_1]) timeout_millis(%c-1_i32) flags("None") : i32
  %view = hal.buffer_view.create buffer(%arena : !hal.buffer)[%c0, %c512] shape([%c128]) type(%f32) encoding(%dense) : !hal.buffer_view
  util.return %view : !hal.buffer_view
}

// CHECK-LABEL: util.func private @__two_regions_replay_record_0()
//   CHECK-DAG:   %[[ARENA:.+]] = util.global.load @__two_regions_replay_alloca_0
//   CHECK-DAG:   %[[PART:.+]] = hal.buffer.subspan<%[[ARENA]] : !hal.buffer>[%c512{{.*}}, %c256{{.*}}]
//   CHECK-DAG:   %[[IN0:.+]] = util.global.load @__two_regions_replay_input_0
//       CHECK:   (%[[IN0]] : !hal.buffer)
//  CHECK-NEXT:   (%[[PART]] : !hal.buffer)
// CHECK-LABEL: util.func private @__two_regions_replay_record_1()
//   CHECK-DAG:   %[[ARENA1:.+]] = util.global.load @__two_regions_replay_alloca_0
//   CHECK-DAG:   %[[HEAD:.+]] = hal.buffer.subspan<%[[ARENA1]] : !hal.buffer>[%c0{{.*}}, %c512{{.*}}]
//   CHECK-DAG:   %[[TAIL:.+]] = hal.buffer.subspan<%[[ARENA1]] : !hal.buffer>[%c512{{.*}}, %c256{{.*}}]
//   CHECK-DAG:   %[[IN1:.+]] = util.global.load @__two_regions_replay_input_1
//       CHECK:   hal.command_buffer.copy_buffer<{{.+}}> source(%[[TAIL]] : !hal.buffer)[%{{.+}}] target(%[[HEAD]] : !hal.buffer)
//  CHECK-NEXT:   hal.command_buffer.copy_buffer<{{.+}}> source(%[[IN1]] : !hal.buffer)[%{{.+}}] target(%[[HEAD]] : !hal.buffer)
// Every input is copied in before the first submission: the kept recording copies both
// (each where its input is not its static buffer), else queue copies chain both; the second
// submission waits on the first alone.
// CHECK-LABEL: util.func public @two_regions(
//       CHECK:   util.global.load @__two_regions_replay_alloca_0
//  CHECK-NEXT:   hal.fence.create
//  CHECK-NEXT:   %[[B0:.+]] = hal.buffer_view.buffer<%arg0 : !hal.buffer_view>
//  CHECK-NEXT:   %[[B1:.+]] = hal.buffer_view.buffer<%arg1 : !hal.buffer_view>
//  CHECK-NEXT:   util.global.load @__two_regions_replay_commands_0
//  CHECK-NEXT:   util.global.load @__two_regions_replay_input_0
//  CHECK-NEXT:   %[[S0:.+]] = util.cmp.eq %[[B0]], %{{.+}} : !hal.buffer
//  CHECK-NEXT:   util.global.load @__two_regions_replay_input_1
//  CHECK-NEXT:   %[[S1:.+]] = util.cmp.eq %[[B1]], %{{.+}} : !hal.buffer
//  CHECK-NEXT:   %[[BOTH:.+]] = arith.andi %[[S0]], %[[S1]] : i1
//  CHECK-NEXT:   %[[C0:.+]]:2 = scf.if %[[BOTH]] -> (!hal.command_buffer, !hal.fence) {
//       CHECK:     util.global.load @__two_regions_replay_kept_source_1
//       CHECK:       util.global.load @__two_regions_replay_last_source_1
//       CHECK:         util.call @__two_regions_replay_record_0_copying(%[[B0]], %[[B1]])
//       CHECK:         hal.device.queue.copy<{{.+}}> affinity({{.+}}) wait(%{{.+}}) signal(%[[COPIED0:[^)]+]]) source(%[[B0]] : !hal.buffer)
//       CHECK:           scf.yield %[[COPIED0]] : !hal.fence
//       CHECK:         hal.device.queue.copy<{{.+}}> affinity({{.+}}) wait(%{{.+}}) signal({{.+}}) source(%[[B1]] : !hal.buffer)
//       CHECK:   hal.device.queue.execute<{{.+}} wait(%[[C0]]#1) signal(%[[DONE0:[^)]+]]) commands(%[[C0]]#0)
//   CHECK-NOT:   scf.if
//       CHECK:   hal.device.queue.execute<{{.+}} wait(%[[DONE0]]) signal(%{{.+}}) commands(
//   CHECK-NOT:   hal.device.queue.execute.indirect
//       CHECK:   util.global private @__two_regions_replay_alloca_0 : !hal.buffer
//       CHECK:   hal.allocator.allocate<{{.+}}> {{.+}} : !hal.buffer{%c768}
