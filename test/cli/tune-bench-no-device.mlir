// A prepared cuda folder benched on a machine without a CUDA device (CI's): one line that
// says where the step runs instead, not IREE's "Exception for last tried follows." alone.
// UNSUPPORTED: cuda-device
// RUN: rm -rf %t.prepared && schedc tune prepare %s --target=cuda --candidates=1 -o %t.prepared
// RUN: not schedc tune bench %t.prepared 2>&1 | filecheck %s
// CHECK: schedc: error: this machine has no 'cuda' device: run 'schedc tune bench {{.*}}prepared' on the machine with it (it needs only iree-base-runtime and numpy), then 'schedc tune merge {{.*}}prepared' here
// CHECK-NOT: follows

func.func @f(%a: tensor<4x8xf32>, %b: tensor<8x16xf32>) -> tensor<4x16xf32> {
  %zero = arith.constant dense<0.0> : tensor<4x16xf32>
  %c = linalg.matmul ins(%a, %b : tensor<4x8xf32>, tensor<8x16xf32>) outs(%zero : tensor<4x16xf32>) -> tensor<4x16xf32>
  return %c : tensor<4x16xf32>
}
