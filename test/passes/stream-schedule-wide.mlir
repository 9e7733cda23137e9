// RUN: schedc-opt %s --passes="stream-schedule{mode=max-concurrency streams=64 target=cuda}" | filecheck %s
// RUN: schedc-opt %s --passes="stream-schedule{mode=max-concurrency streams=64 target=rocm}" | filecheck %s --check-prefix=ROCM

// Forty independent kernels: CUDA graphs take at most 32 branches between two barriers, so
// the wave splits there; other targets take the 40 at once.

// CHECK-LABEL: util.func public @wide
//  CHECK-SAME:   sched.waves = array<i64: 0, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 2, 2, 2, 2, 2, 2, 2, 2, 3>
// ROCM-LABEL: util.func public @wide
//  ROCM-SAME:   sched.waves = array<i64: 0, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 2>
util.func public @wide(%arg0: tensor<64xf32>) -> tensor<64xf32> {
  %x = flow.dispatch @ex::@stem(%arg0) : (tensor<64xf32>) -> tensor<64xf32>
  %b0 = flow.dispatch @ex::@b0(%x) : (tensor<64xf32>) -> tensor<64xf32>
  %b1 = flow.dispatch @ex::@b1(%x) : (tensor<64xf32>) -> tensor<64xf32>
  %b2 = flow.dispatch @ex::@b2(%x) : (tensor<64xf32>) -> tensor<64xf32>
  %b3 = flow.dispatch @ex::@b3(%x) : (tensor<64xf32>) -> tensor<64xf32>
  %b4 = flow.dispatch @ex::@b4(%x) : (tensor<64xf32>) -> tensor<64xf32>
  %b5 = flow.dispatch @ex::@b5(%x) : (tensor<64xf32>) -> tensor<64xf32>
  %b6 = flow.dispatch @ex::@b6(%x) : (tensor<64xf32>) -> tensor<64xf32>
  %b7 = flow.dispatch @ex::@b7(%x) : (tensor<64xf32>) -> tensor<64xf32>
  %b8 = flow.dispatch @ex::@b8(%x) : (tensor<64xf32>) -> tensor<64xf32>
  %b9 = flow.dispatch @ex::@b9(%x) : (tensor<64xf32>) -> tensor<64xf32>
  %b10 = flow.dispatch @ex::@b10(%x) : (tensor<64xf32>) -> tensor<64xf32>
  %b11 = flow.dispatch @ex::@b11(%x) : (tensor<64xf32>) -> tensor<64xf32>
  %b12 = flow.dispatch @ex::@b12(%x) : (tensor<64xf32>) -> tensor<64xf32>
  %b13 = flow.dispatch @ex::@b13(%x) : (tensor<64xf32>) -> tensor<64xf32>
  %b14 = flow.dispatch @ex::@b14(%x) : (tensor<64xf32>) -> tensor<64xf32>
  %b15 = flow.dispatch @ex::@b15(%x) : (tensor<64xf32>) -> tensor<64xf32>
  %b16 = flow.dispatch @ex::@b16(%x) : (tensor<64xf32>) -> tensor<64xf32>
  %b17 = flow.dispatch @ex::@b17(%x) : (tensor<64xf32>) -> tensor<64xf32>
  %b18 = flow.dispatch @ex::@b18(%x) : (tensor<64xf32>) -> tensor<64xf32>
  %b19 = flow.dispatch @ex::@b19(%x) : (tensor<64xf32>) -> tensor<64xf32>
  %b20 = flow.dispatch @ex::@b20(%x) : (tensor<64xf32>) -> tensor<64xf32>
  %b21 = flow.dispatch @ex::@b21(%x) : (tensor<64xf32>) -> tensor<64xf32>
  %b22 = flow.dispatch @ex::@b22(%x) : (tensor<64xf32>) -> tensor<64xf32>
  %b23 = flow.dispatch @ex::@b23(%x) : (tensor<64xf32>) -> tensor<64xf32>
  %b24 = flow.dispatch @ex::@b24(%x) : (tensor<64xf32>) -> tensor<64xf32>
  %b25 = flow.dispatch @ex::@b25(%x) : (tensor<64xf32>) -> tensor<64xf32>
  %b26 = flow.dispatch @ex::@b26(%x) : (tensor<64xf32>) -> tensor<64xf32>
  %b27 = flow.dispatch @ex::@b27(%x) : (tensor<64xf32>) -> tensor<64xf32>
  %b28 = flow.dispatch @ex::@b28(%x) : (tensor<64xf32>) -> tensor<64xf32>
  %b29 = flow.dispatch @ex::@b29(%x) : (tensor<64xf32>) -> tensor<64xf32>
  %b30 = flow.dispatch @ex::@b30(%x) : (tensor<64xf32>) -> tensor<64xf32>
  %b31 = flow.dispatch @ex::@b31(%x) : (tensor<64xf32>) -> tensor<64xf32>
  %b32 = flow.dispatch @ex::@b32(%x) : (tensor<64xf32>) -> tensor<64xf32>
  %b33 = flow.dispatch @ex::@b33(%x) : (tensor<64xf32>) -> tensor<64xf32>
  %b34 = flow.dispatch @ex::@b34(%x) : (tensor<64xf32>) -> tensor<64xf32>
  %b35 = flow.dispatch @ex::@b35(%x) : (tensor<64xf32>) -> tensor<64xf32>
  %b36 = flow.dispatch @ex::@b36(%x) : (tensor<64xf32>) -> tensor<64xf32>
  %b37 = flow.dispatch @ex::@b37(%x) : (tensor<64xf32>) -> tensor<64xf32>
  %b38 = flow.dispatch @ex::@b38(%x) : (tensor<64xf32>) -> tensor<64xf32>
  %b39 = flow.dispatch @ex::@b39(%x) : (tensor<64xf32>) -> tensor<64xf32>
  %r = flow.dispatch @ex::@join(%b0, %b1, %b2, %b3, %b4, %b5, %b6, %b7, %b8, %b9, %b10, %b11, %b12, %b13, %b14, %b15, %b16, %b17, %b18, %b19, %b20, %b21, %b22, %b23, %b24, %b25, %b26, %b27, %b28, %b29, %b30, %b31, %b32, %b33, %b34, %b35, %b36, %b37, %b38, %b39) : (tensor<64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>) -> tensor<64xf32>
  util.return %r : tensor<64xf32>
}
