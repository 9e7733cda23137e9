// schedc's waves are what IREE runs concurrently: the independent kernels of each level become
// one stream.cmd.concurrent (the prologue's two, then the four matrix-vector products);
// min-memory runs them one at a time. The numbers do not change.
// RUN: schedc %s --target=cuda --passes="memory-order,stream-schedule{mode=max-concurrency},arena-plan" --emit=stream -o - | filecheck %s
// RUN: schedc %s --target=cuda --passes="memory-order,stream-schedule{mode=min-memory},arena-plan" --emit=stream -o - | filecheck %s --check-prefix=SERIAL
// RUN: schedc %s --passes="memory-order,stream-schedule{mode=max-concurrency},arena-plan" -o %t.vmfb
// RUN: schedc run %t.vmfb --function=branches --input=256xf32=1 --input=256x256xf32=0.5 | filecheck %s --check-prefix=NUMBERS

// CHECK-LABEL: util.func public @branches(
//       CHECK: stream.cmd.concurrent
//  CHECK-COUNT-2: stream.cmd.dispatch @branches_dispatch_{{[0-9]+}}
//       CHECK: stream.cmd.concurrent
//  CHECK-COUNT-4: stream.cmd.dispatch @branches_dispatch_{{[0-9]+}}
//   CHECK-NOT: stream.cmd.dispatch
// SERIAL-NOT: stream.cmd.concurrent
// NUMBERS: result[0]: 256xfloat32 min=640 max=640 mean=640
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
