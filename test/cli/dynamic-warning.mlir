// A warning about IR of one of IREE's intermediate phases (gone after the run) names the user's
// input and the phase, not a temporary file.
// RUN: schedc %s -o %t.vmfb 2>&1 | filecheck %s
// CHECK: {{.*}}dynamic-warning.mlir: in IREE's stream-phase (allocation) IR: warning: arena-plan left IREE's packing in place in dyn: 2 of its 2 slices have dynamic sizes
// CHECK-NOT: /tmp/schedc-

func.func @dyn(%a: tensor<?x64xf32>, %w: tensor<64x64xf32>) -> tensor<?x64xf32> {
  %c0 = arith.constant 0 : index
  %n = tensor.dim %a, %c0 : tensor<?x64xf32>
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty(%n) : tensor<?x64xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<?x64xf32>) -> tensor<?x64xf32>
  %0 = linalg.matmul ins(%a, %w : tensor<?x64xf32>, tensor<64x64xf32>) outs(%acc : tensor<?x64xf32>) -> tensor<?x64xf32>
  %1 = linalg.matmul ins(%0, %w : tensor<?x64xf32>, tensor<64x64xf32>) outs(%acc : tensor<?x64xf32>) -> tensor<?x64xf32>
  %2 = linalg.matmul ins(%1, %w : tensor<?x64xf32>, tensor<64x64xf32>) outs(%acc : tensor<?x64xf32>) -> tensor<?x64xf32>
  return %2 : tensor<?x64xf32>
}
