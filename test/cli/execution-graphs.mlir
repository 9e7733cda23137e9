// --execution=graphs: the module's command buffers are recorded once over static buffers
// (static-replay, on IREE's HAL phase); a wave of schedc's schedule stays a group of dispatches
// with no barrier between them, which CUDA's graph mode runs as parallel branches. On the CPU
// the same module replays with the same numbers.
// RUN: schedc %s --target=cuda --passes="memory-order,stream-schedule{mode=max-concurrency},arena-plan" --execution=graphs --emit=hal -o - | filecheck %s
// RUN: schedc %s --passes="memory-order,stream-schedule{mode=max-concurrency},arena-plan" --execution=graphs -o %t.vmfb
// RUN: schedc run %t.vmfb --function=branches --input=256xf32=1 --input=256x256xf32=0.5 | filecheck %s --check-prefix=NUMBERS
// Batch buckets need an input of dynamic batch, and a list of positive sizes.
// RUN: not schedc %s --batch-buckets=1,2 -o %t.buckets.vmfb 2>&1 | filecheck %s --check-prefix=STATIC
// RUN: not schedc %s --batch-buckets=1,two -o %t.buckets.vmfb 2>&1 | filecheck %s --check-prefix=LIST
// RUN: not ls %t.buckets.vmfb

// CHECK-LABEL: util.func private @__branches_replay_record_1()
//       CHECK:   hal.command_buffer.create device({{.+}}) affinity({{[^)]+}}) : !hal.command_buffer
//       CHECK:   hal.command_buffer.dispatch
//   CHECK-NOT:   hal.command_buffer.execution_barrier
//       CHECK:   hal.command_buffer.dispatch
//   CHECK-NOT:   hal.command_buffer.execution_barrier
//       CHECK:   hal.command_buffer.dispatch
//       CHECK:   hal.command_buffer.execution_barrier
// CHECK-LABEL: util.func public @branches(
//   CHECK-NOT:   hal.device.queue.execute.indirect
//       CHECK:   hal.device.queue.copy
//       CHECK:   hal.device.queue.execute<{{.+}} commands(%{{.+}}#0)
//       CHECK:   hal.device.queue.execute<{{.+}} commands(%__branches_replay_commands_1)
// NUMBERS: result[0]: 256xfloat32 min=640 max=640 mean=640
// STATIC: schedc: error: {{.*}}execution-graphs.mlir: --batch-buckets needs a function whose inputs have a dynamic batch (dimension 0)
// LIST: schedc: error: --batch-buckets=1,two: expected positive integers such as 1,2,4,8
func.func @branches(%a: tensor<256xf32>, %w: tensor<256x256xf32>) -> tensor<256xf32> {
  %zero = arith.constant 0.0 : f32
  %init = tensor.empty() : tensor<256xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%init : tensor<256xf32>) -> tensor<256xf32>
  %a1 = arith.addf %a, %a : tensor<256xf32>
  %a2 = arith.mulf %a, %a : tensor<256xf32>
  %a3 = arith.subf %a1, %a : tensor<256xf32>
  %m0 = linalg.matvec ins(%w, %a : tensor<256x256xf32>, tensor<256xf32>) outs(%acc : tensor<256xf32>) -> tensor<256xf32>
  %m1 = linalg.matvec ins(%w, %a1 : tensor<256x256xf32>, tensor<256xf32>) outs(%acc : tensor<256xf32>) -> tensor<256xf32>
  %m2 = linalg.matvec ins(%w, %a2 : tensor<256x256xf32>, tensor<256xf32>) outs(%acc : tensor<256xf32>) -> tensor<256xf32>
  %m3 = linalg.matvec ins(%w, %a3 : tensor<256x256xf32>, tensor<256xf32>) outs(%acc : tensor<256xf32>) -> tensor<256xf32>
  %s0 = arith.addf %m0, %m1 : tensor<256xf32>
  %s1 = arith.addf %m2, %m3 : tensor<256xf32>
  %s = arith.addf %s0, %s1 : tensor<256xf32>
  return %s : tensor<256xf32>
}
