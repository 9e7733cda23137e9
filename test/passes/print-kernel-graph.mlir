// RUN: schedc-opt %s --split-input-file --passes=print-kernel-graph | filecheck %s

// A chain: the intermediate tensor is transient, the argument and the result are not.

// CHECK-LABEL: kernel-graph @chain: 2 kernels, 1 edges, 1 transient tensors (1024 B)
//  CHECK-NEXT:   kernel k0 @producer reads b0 writes b1
//  CHECK-NEXT:   kernel k1 @consumer reads b1 writes b2
//  CHECK-NEXT:   tensor b0 tensor<64xf32> 256 B argument
//  CHECK-NEXT:   tensor b1 tensor<256xf32> 1024 B transient live k0..k1
//  CHECK-NEXT:   tensor b2 tensor<64xf32> 256 B result
//  CHECK-NEXT:   edge k0 -> k1
//  CHECK-NEXT:   peak 1024 B at k0 (program order)
util.func public @chain(%arg0: tensor<64xf32>) -> tensor<64xf32> {
  %0 = flow.dispatch @ex::@producer(%arg0) : (tensor<64xf32>) -> tensor<256xf32>
  %1 = flow.dispatch @ex::@consumer(%0) : (tensor<256xf32>) -> tensor<64xf32>
  util.return %1 : tensor<64xf32>
}

// -----

// Two branches, interleaved in program order: both big tensors are alive together.

// CHECK-LABEL: kernel-graph @interleaved_branches: 5 kernels, 4 edges, 4 transient tensors (8704 B)
//       CHECK:   tensor b1 tensor<1024xf32> 4096 B transient live k0..k2
//       CHECK:   tensor b2 tensor<1024xf32> 4096 B transient live k1..k3
//       CHECK:   edge k0 -> k2
//  CHECK-NEXT:   edge k1 -> k3
//  CHECK-NEXT:   edge k2 -> k4
//       CHECK:   edge k3 -> k4
//       CHECK:   peak 8448 B at k2 (program order)
util.func public @interleaved_branches(%arg0: tensor<64xf32>) -> tensor<64xf32> {
  %a = flow.dispatch @ex::@a(%arg0) : (tensor<64xf32>) -> tensor<1024xf32>
  %b = flow.dispatch @ex::@b(%arg0) : (tensor<64xf32>) -> tensor<1024xf32>
  %a2 = flow.dispatch @ex::@a2(%a) : (tensor<1024xf32>) -> tensor<64xf32>
  %b2 = flow.dispatch @ex::@b2(%b) : (tensor<1024xf32>) -> tensor<64xf32>
  %r = flow.dispatch @ex::@join(%a2, %b2) : (tensor<64xf32>, tensor<64xf32>) -> tensor<64xf32>
  util.return %r : tensor<64xf32>
}

// -----

// A reshape is a view of its source, and an update writes into its target in place. As in
// IREE's stream phase, a dispatch whose only user is an update (through views) writes straight
// into the update's target: one buffer, and the target's producer must run first (k0 -> k1).

// CHECK-LABEL: kernel-graph @emplaced: 5 kernels, 5 edges, 0 transient tensors (0 B)
//  CHECK-NEXT:   kernel k0 @fill reads b0 writes b1
//  CHECK-NEXT:   kernel k1 @small reads b0 b1 writes -
//  CHECK-NEXT:   kernel k2 flow.tensor.reshape reads b1 writes -
//  CHECK-NEXT:   kernel k3 flow.tensor.update reads b1 writes -
//  CHECK-NEXT:   kernel k4 flow.tensor.reshape reads b1 writes -
//  CHECK-NEXT:   tensor b0 tensor<16xf32> 64 B argument
//  CHECK-NEXT:   tensor b1 tensor<4x16xf32> 256 B result
//  CHECK-NEXT:   edge k0 -> k1
util.func public @emplaced(%arg0: tensor<16xf32>) -> tensor<64xf32> {
  %c0 = arith.constant 0 : index
  %big = flow.dispatch @ex::@fill(%arg0) : (tensor<16xf32>) -> tensor<4x16xf32>
  %small = flow.dispatch @ex::@small(%arg0) : (tensor<16xf32>) -> tensor<16xf32>
  %row = flow.tensor.reshape %small : tensor<16xf32> -> tensor<1x16xf32>
  %updated = flow.tensor.update %row, %big[%c0, %c0] : tensor<1x16xf32> -> %big as tensor<4x16xf32>
  %flat = flow.tensor.reshape %updated : tensor<4x16xf32> -> tensor<64xf32>
  util.return %flat : tensor<64xf32>
}

// -----

// The update's source has a second user, so IREE cannot write it in place: it stays a
// transient of its own, alive until its last use.

// CHECK-LABEL: kernel-graph @not_emplaced: 4 kernels, 3 edges, 1 transient tensors (64 B)
//  CHECK-NEXT:   kernel k0 @fill reads b0 writes b1
//  CHECK-NEXT:   kernel k1 @small reads b0 writes b2
//  CHECK-NEXT:   kernel k2 flow.tensor.update reads b1 b2 writes -
//  CHECK-NEXT:   kernel k3 @sum reads b2 writes b3
//  CHECK-NEXT:   tensor b0 tensor<16xf32> 64 B argument
//  CHECK-NEXT:   tensor b1 tensor<64xf32> 256 B result
//  CHECK-NEXT:   tensor b2 tensor<16xf32> 64 B transient live k1..k3
util.func public @not_emplaced(%arg0: tensor<16xf32>) -> (tensor<64xf32>, tensor<f32>) {
  %c0 = arith.constant 0 : index
  %big = flow.dispatch @ex::@fill(%arg0) : (tensor<16xf32>) -> tensor<64xf32>
  %small = flow.dispatch @ex::@small(%arg0) : (tensor<16xf32>) -> tensor<16xf32>
  %updated = flow.tensor.update %small, %big[%c0] : tensor<16xf32> -> %big as tensor<64xf32>
  %sum = flow.dispatch @ex::@sum(%small) : (tensor<16xf32>) -> tensor<f32>
  util.return %updated, %sum : tensor<64xf32>, tensor<f32>
}

// -----

// A dispatch result tied to an operand is written in place: no new buffer. i1 takes a byte.

// CHECK-LABEL: kernel-graph @tied: 2 kernels, 1 edges, 1 transient tensors (32 B)
//  CHECK-NEXT:   kernel k0 @mask reads b0 writes b1
//  CHECK-NEXT:   kernel k1 @in_place reads b1 writes -
//  CHECK-NEXT:   tensor b0 tensor<32xf32> 128 B argument
//  CHECK-NEXT:   tensor b1 tensor<32xi1> 32 B transient live k0..k1
//  CHECK-NEXT:   edge k0 -> k1
//  CHECK-NEXT:   peak 32 B at k0 (program order)
util.func public @tied(%arg0: tensor<32xf32>) {
  %m = flow.dispatch @ex::@mask(%arg0) : (tensor<32xf32>) -> tensor<32xi1>
  %r = flow.dispatch @ex::@in_place(%m) : (tensor<32xi1>) -> %m
  util.return
}
