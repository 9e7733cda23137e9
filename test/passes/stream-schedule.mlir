// RUN: schedc-opt %s --split-input-file --passes="stream-schedule{mode=max-concurrency streams=4}" | filecheck %s
// RUN: schedc-opt %s --split-input-file --passes="stream-schedule{mode=balanced streams=4 memory-budget=24000}" | filecheck %s --check-prefix=BUDGET
// RUN: schedc-opt %s --split-input-file --passes="stream-schedule{mode=min-memory}" | filecheck %s --check-prefix=SERIAL

// Four independent branches, each a big tensor reduced to a small one: with no budget the big
// kernels share one wave on four streams (36 KiB alive); a budget of 24000 B lets two run at a
// time; min-memory runs one kernel at a time. The join always waits for all four.

// CHECK-LABEL: util.func public @four_branches
//  CHECK-SAME:   sched.waves = array<i64: 0, 1, 1, 1, 1, 2, 2, 2, 2, 3>
//       CHECK:   flow.dispatch @ex::@stem
//  CHECK-SAME:     sched.wave = 0
//   CHECK-DAG:   flow.dispatch @ex::@a1({{.*}}sched.stream = {{[0-3]}} : i64, sched.wave = 1 : i64}
//   CHECK-DAG:   flow.dispatch @ex::@b1({{.*}}sched.wave = 1 : i64}
//   CHECK-DAG:   flow.dispatch @ex::@c1({{.*}}sched.wave = 1 : i64}
//   CHECK-DAG:   flow.dispatch @ex::@d1({{.*}}sched.wave = 1 : i64}
//       CHECK:   flow.dispatch @ex::@join
//  CHECK-SAME:     sched.wave = 3
// BUDGET-LABEL: util.func public @four_branches
//  BUDGET-SAME:   sched.waves = array<i64: 0, 1, 1, 2, 2, 3, 3, 4, 4, 5>
// min-memory: the memory-aware order (each branch to its end before the next), one kernel at
// a time as memory-order runs it, and no sched.waves for stream-waves to make regions of.
// SERIAL-LABEL: util.func public @four_branches
//  SERIAL-SAME:   attributes {stream.partitioning = #stream.partitioning_config<"debug">} {
//       SERIAL:   flow.dispatch @ex::@stem
//  SERIAL-SAME:     sched.wave = 0
//  SERIAL-NEXT:   flow.dispatch @ex::@[[BRANCH:[a-d]]]1
//  SERIAL-SAME:     sched.wave = 1
//  SERIAL-NEXT:   flow.dispatch @ex::@[[BRANCH]]2
//  SERIAL-SAME:     sched.wave = 2
util.func public @four_branches(%arg0: tensor<64xf32>) -> tensor<64xf32> {
  %x = flow.dispatch @ex::@stem(%arg0) : (tensor<64xf32>) -> tensor<1024xf32>
  %a = flow.dispatch @ex::@a1(%x) : (tensor<1024xf32>) -> tensor<2048xf32>
  %b = flow.dispatch @ex::@b1(%x) : (tensor<1024xf32>) -> tensor<2048xf32>
  %c = flow.dispatch @ex::@c1(%x) : (tensor<1024xf32>) -> tensor<2048xf32>
  %d = flow.dispatch @ex::@d1(%x) : (tensor<1024xf32>) -> tensor<2048xf32>
  %a2 = flow.dispatch @ex::@a2(%a) : (tensor<2048xf32>) -> tensor<64xf32>
  %b2 = flow.dispatch @ex::@b2(%b) : (tensor<2048xf32>) -> tensor<64xf32>
  %c2 = flow.dispatch @ex::@c2(%c) : (tensor<2048xf32>) -> tensor<64xf32>
  %d2 = flow.dispatch @ex::@d2(%d) : (tensor<2048xf32>) -> tensor<64xf32>
  %r = flow.dispatch @ex::@join(%a2, %b2, %c2, %d2) : (tensor<64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>) -> tensor<64xf32>
  util.return %r : tensor<64xf32>
}

// -----

// A chain never overlaps: every kernel waits for the one before it. With no concurrent wave
// the function stays as memory-order leaves it, run one kernel at a time, and gets no
// sched.waves: stream-waves' regions would make a fill's buffer live a kernel early.

// CHECK-LABEL: util.func public @chain
//  CHECK-SAME:   attributes {stream.partitioning = #stream.partitioning_config<"debug">} {
util.func public @chain(%arg0: tensor<64xf32>) -> tensor<64xf32> {
  %0 = flow.dispatch @ex::@first(%arg0) : (tensor<64xf32>) -> tensor<128xf32>
  %1 = flow.dispatch @ex::@second(%0) : (tensor<128xf32>) -> tensor<128xf32>
  %2 = flow.dispatch @ex::@third(%1) : (tensor<128xf32>) -> tensor<64xf32>
  util.return %2 : tensor<64xf32>
}
