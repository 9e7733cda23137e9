// The searches stop on work (max-states); the time limit is only a safety net. When it fires,
// the pass says so, where, and keeps the best order it has: never worse than program order.
// RUN: schedc-opt %s --passes="memory-order{time-limit=1e-9}" 2>&1 | filecheck %s
// RUN: schedc-opt %s --passes="memory-order{max-states=0 beam-states=0}" 2>&1 | filecheck %s --check-prefix=WORK

// CHECK: memory-order-deadline.mlir:[[# @LINE + 11]]:1: warning: memory-order stopped its search at the time limit (1e-09 s) for @cut_short: the order may differ between runs
// CHECK-LABEL: util.func public @cut_short
//  CHECK-SAME:   sched.strategy = "program"
//       CHECK:   flow.dispatch @ex::@a(
//  CHECK-NEXT:   flow.dispatch @ex::@b(
//  CHECK-NEXT:   flow.dispatch @ex::@a2(
// A work budget of zero states is not a deadline: no warning, and the heuristics still run.
//   WORK-NOT: warning
// WORK-LABEL: util.func public @cut_short
//       WORK:   flow.dispatch @ex::@a(
//  WORK-NEXT:   flow.dispatch @ex::@a2(
util.func public @cut_short(%arg0: tensor<64xf32>) -> tensor<64xf32> {
  %a = flow.dispatch @ex::@a(%arg0) : (tensor<64xf32>) -> tensor<1024xf32>
  %b = flow.dispatch @ex::@b(%arg0) : (tensor<64xf32>) -> tensor<1024xf32>
  %a2 = flow.dispatch @ex::@a2(%a) : (tensor<1024xf32>) -> tensor<64xf32>
  %b2 = flow.dispatch @ex::@b2(%b) : (tensor<1024xf32>) -> tensor<64xf32>
  %r = flow.dispatch @ex::@join(%a2, %b2) : (tensor<64xf32>, tensor<64xf32>) -> tensor<64xf32>
  util.return %r : tensor<64xf32>
}
