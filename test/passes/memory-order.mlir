// RUN: schedc-opt %s --split-input-file --passes=memory-order | filecheck %s
// RUN: schedc-opt %s --split-input-file --passes="memory-order{strategy=program serialize=false}" | filecheck %s --check-prefix=PROGRAM

// Two branches interleaved in program order keep both 4 KiB tensors alive together; the
// pass finishes one branch before it starts the other.

// CHECK-LABEL: util.func public @two_branches
//  CHECK-SAME:   sched.strategy = "{{[a-z]+}}"
//  CHECK-SAME:   stream.partitioning = #stream.partitioning_config<"debug">
//       CHECK:   %[[A:.+]] = flow.dispatch @ex::@a(%arg0) {sched.position = 0 : i64}
//  CHECK-NEXT:   %[[A2:.+]] = flow.dispatch @ex::@a2(%[[A]]) {sched.position = 1 : i64}
//  CHECK-NEXT:   %[[B:.+]] = flow.dispatch @ex::@b(%arg0) {sched.position = 2 : i64}
//  CHECK-NEXT:   %[[B2:.+]] = flow.dispatch @ex::@b2(%[[B]]) {sched.position = 3 : i64}
//  CHECK-NEXT:   flow.dispatch @ex::@join(%[[A2]], %[[B2]])
// PROGRAM-LABEL: util.func public @two_branches
//   PROGRAM-NOT:   stream.partitioning
//       PROGRAM:   flow.dispatch @ex::@a(
//  PROGRAM-NEXT:   flow.dispatch @ex::@b(
//  PROGRAM-NEXT:   flow.dispatch @ex::@a2(
//  PROGRAM-NEXT:   flow.dispatch @ex::@b2(
util.func public @two_branches(%arg0: tensor<64xf32>) -> tensor<64xf32> {
  %a = flow.dispatch @ex::@a(%arg0) : (tensor<64xf32>) -> tensor<1024xf32>
  %b = flow.dispatch @ex::@b(%arg0) : (tensor<64xf32>) -> tensor<1024xf32>
  %a2 = flow.dispatch @ex::@a2(%a) : (tensor<1024xf32>) -> tensor<64xf32>
  %b2 = flow.dispatch @ex::@b2(%b) : (tensor<1024xf32>) -> tensor<64xf32>
  %r = flow.dispatch @ex::@join(%a2, %b2) : (tensor<64xf32>, tensor<64xf32>) -> tensor<64xf32>
  util.return %r : tensor<64xf32>
}

// -----

// Ops with side effects keep their order. Finishing branch a first would free its 4 KiB
// sooner, but the trace of %b comes before the trace of %a, so both stay where they are; the
// store to a mutable global stays before the load of it.

util.global private mutable @state : tensor<256xf32>

// CHECK-LABEL: util.func public @side_effects
//       CHECK:   flow.tensor.trace "b"
//  CHECK-NEXT:   flow.tensor.trace "a"
//       CHECK:   util.global.store %{{.+}}, @state
//  CHECK-NEXT:   util.global.load @state
util.func public @side_effects(%arg0: tensor<256xf32>) -> tensor<256xf32> {
  %a = flow.dispatch @ex::@a(%arg0) : (tensor<256xf32>) -> tensor<4096xf32>
  %b = flow.dispatch @ex::@b(%arg0) : (tensor<256xf32>) -> tensor<4096xf32>
  flow.tensor.trace "b" = [%b : tensor<4096xf32>]
  flow.tensor.trace "a" = [%a : tensor<4096xf32>]
  %a2 = flow.dispatch @ex::@a2(%a) : (tensor<4096xf32>) -> tensor<256xf32>
  util.global.store %a2, @state : tensor<256xf32>
  %loaded = util.global.load @state : tensor<256xf32>
  %b2 = flow.dispatch @ex::@b2(%b, %loaded) : (tensor<4096xf32>, tensor<256xf32>) -> tensor<256xf32>
  util.return %b2 : tensor<256xf32>
}

// -----

// Program order is already optimal here (a chain): nothing moves.

// CHECK-LABEL: util.func public @chain
//  CHECK-SAME:   sched.strategy = "program"
//       CHECK:   flow.dispatch @ex::@first
//  CHECK-NEXT:   flow.dispatch @ex::@second
//  CHECK-NEXT:   flow.dispatch @ex::@third
util.func public @chain(%arg0: tensor<64xf32>) -> tensor<64xf32> {
  %0 = flow.dispatch @ex::@first(%arg0) : (tensor<64xf32>) -> tensor<128xf32>
  %1 = flow.dispatch @ex::@second(%0) : (tensor<128xf32>) -> tensor<128xf32>
  %2 = flow.dispatch @ex::@third(%1) : (tensor<128xf32>) -> tensor<64xf32>
  util.return %2 : tensor<64xf32>
}

// -----

// The fill a dispatch writes in place runs just before it, not where it was written.

// CHECK-LABEL: util.func public @late_fill
//       CHECK:   flow.dispatch @ex::@big
//  CHECK-NEXT:   flow.dispatch @ex::@shrink
//  CHECK-NEXT:   flow.tensor.splat
//  CHECK-NEXT:   flow.dispatch @ex::@pad
util.func public @late_fill(%arg0: tensor<64xf32>) -> tensor<64xf32> {
  %cst = arith.constant 0.0 : f32
  %fill = flow.tensor.splat %cst : tensor<80xf32>
  %big = flow.dispatch @ex::@big(%arg0) : (tensor<64xf32>) -> tensor<8192xf32>
  %small = flow.dispatch @ex::@shrink(%big) : (tensor<8192xf32>) -> tensor<64xf32>
  %padded = flow.dispatch @ex::@pad(%small, %fill) : (tensor<64xf32>, tensor<80xf32>) -> %fill
  %conv = flow.dispatch @ex::@conv(%padded) : (tensor<80xf32>) -> tensor<64xf32>
  util.return %conv : tensor<64xf32>
}
