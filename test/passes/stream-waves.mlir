// RUN: schedc-opt %s --split-input-file --passes=stream-waves 2>/dev/null | filecheck %s
// RUN: schedc-opt %s --split-input-file --passes=stream-waves 2>&1 >/dev/null | filecheck %s --check-prefix=WARN

// stream-waves on IREE's stream phase after its async pipeline: the function's sched.waves
// (stream-schedule's, one wave per stream.async.dispatch in order) become
// stream.async.concurrent regions; a wave of one stays as it is.

// Three independent dispatches of wave 0 run concurrently; their consumer (wave 1) after them.
// CHECK-LABEL: util.func public @three
//       CHECK:   stream.async.execute
//       CHECK:     %[[WAVE:.+]]:3 = stream.async.concurrent with(%{{.+}} as %[[IN:.+]]: !stream.resource<external>{%{{.+}}})
//  CHECK-NEXT:       %[[A:.+]] = stream.async.dispatch @ex::@a(%[[IN]]
//  CHECK-NEXT:       %[[B:.+]] = stream.async.dispatch @ex::@a(%[[IN]]
//  CHECK-NEXT:       %[[C:.+]] = stream.async.dispatch @ex::@a(%[[IN]]
//  CHECK-NEXT:       stream.yield %[[A]], %[[B]], %[[C]]
//       CHECK:     stream.async.dispatch @ex::@a(%[[WAVE]]#0{{.*}}, %[[WAVE]]#1{{.*}}, %[[WAVE]]#2
//   CHECK-NOT:   stream.async.concurrent
stream.executable private @ex {
  stream.executable.export public @a workgroups() -> (index, index, index) {
    %c1 = arith.constant 1 : index
    stream.return %c1, %c1, %c1 : index, index, index
  }
  builtin.module {
    func.func @a(%arg0: !stream.binding, %arg1: !stream.binding) {
      return
    }
  }
}
util.func public @three(%input: !stream.resource<external>) -> !stream.resource<external> attributes {sched.waves = array<i64: 0, 0, 0, 1>} {
  %c0 = arith.constant 0 : index
  %c64 = arith.constant 64 : index
  %result, %done = stream.async.execute with(%input as %arg0: !stream.resource<external>{%c64}) -> !stream.resource<external>{%c64} {
    %a = stream.async.dispatch @ex::@a(%arg0[%c0 to %c64 for %c64]) : (!stream.resource<external>{%c64}) -> !stream.resource<transient>{%c64}
    %b = stream.async.dispatch @ex::@a(%arg0[%c0 to %c64 for %c64]) : (!stream.resource<external>{%c64}) -> !stream.resource<transient>{%c64}
    %c = stream.async.dispatch @ex::@a(%arg0[%c0 to %c64 for %c64]) : (!stream.resource<external>{%c64}) -> !stream.resource<transient>{%c64}
    %d = stream.async.dispatch @ex::@a(%a[%c0 to %c64 for %c64], %b[%c0 to %c64 for %c64], %c[%c0 to %c64 for %c64]) : (!stream.resource<transient>{%c64}, !stream.resource<transient>{%c64}, !stream.resource<transient>{%c64}) -> !stream.resource<external>{%c64}
    stream.yield %d : !stream.resource<external>{%c64}
  } => !stream.timepoint
  %ready = stream.timepoint.await %done => %result : !stream.resource<external>{%c64}
  util.return %ready : !stream.resource<external>
}

// -----

// A fill that a wave-1 dispatch writes into (tied) joins wave 0, as IREE's own scheduling
// does; the tie survives the region: the concurrent result is tied to its operand.
// CHECK-LABEL: util.func public @fill
//       CHECK:     %[[W0:.+]]:2 = stream.async.concurrent
//  CHECK-NEXT:       stream.async.splat
//  CHECK-NEXT:       stream.async.dispatch @ex::@a
//       CHECK:     stream.async.concurrent with(%[[W0]]#1 as %[[X:.+]]: {{.+}}, %[[W0]]#0 as %[[F:.+]]: {{.+}}) -> (%[[W0]]#0{%{{.+}}}, !stream.resource<transient>
//  CHECK-NEXT:       stream.async.dispatch @ex::@a(%[[X]]{{.*}}, %[[F]]{{.*}}) : {{.*}} -> %[[F]]{
stream.executable private @ex {
  stream.executable.export public @a workgroups() -> (index, index, index) {
    %c1 = arith.constant 1 : index
    stream.return %c1, %c1, %c1 : index, index, index
  }
  builtin.module {
    func.func @a(%arg0: !stream.binding, %arg1: !stream.binding) {
      return
    }
  }
}
util.func public @fill(%input: !stream.resource<external>) -> !stream.resource<external> attributes {sched.waves = array<i64: 0, 1, 1, 2>} {
  %c0 = arith.constant 0 : index
  %c64 = arith.constant 64 : index
  %zero = arith.constant 0 : i32
  %result, %done = stream.async.execute with(%input as %arg0: !stream.resource<external>{%c64}) -> !stream.resource<external>{%c64} {
    %x = stream.async.dispatch @ex::@a(%arg0[%c0 to %c64 for %c64]) : (!stream.resource<external>{%c64}) -> !stream.resource<transient>{%c64}
    %f = stream.async.splat %zero : i32 -> !stream.resource<transient>{%c64}
    %y = stream.async.dispatch @ex::@a(%x[%c0 to %c64 for %c64], %f[%c0 to %c64 for %c64]) : (!stream.resource<transient>{%c64}, !stream.resource<transient>{%c64}) -> %f{%c64}
    %z = stream.async.dispatch @ex::@a(%x[%c0 to %c64 for %c64]) : (!stream.resource<transient>{%c64}) -> !stream.resource<transient>{%c64}
    %w = stream.async.dispatch @ex::@a(%y[%c0 to %c64 for %c64], %z[%c0 to %c64 for %c64]) : (!stream.resource<transient>{%c64}, !stream.resource<transient>{%c64}) -> !stream.resource<external>{%c64}
    stream.yield %w : !stream.resource<external>{%c64}
  } => !stream.timepoint
  %ready = stream.timepoint.await %done => %result : !stream.resource<external>{%c64}
  util.return %ready : !stream.resource<external>
}

// -----

// Waves for more dispatches than the function has (IREE merged some): IREE's serial order
// stays, with a warning.
// WARN: stream-waves.mlir:[[# @LINE + 14]]:{{[0-9]+}}: warning: stream-waves realized 0 of the planned waves; the rest run one kernel at a time
// CHECK-LABEL: util.func public @merged
//   CHECK-NOT:   stream.async.concurrent
stream.executable private @ex {
  stream.executable.export public @a workgroups() -> (index, index, index) {
    %c1 = arith.constant 1 : index
    stream.return %c1, %c1, %c1 : index, index, index
  }
  builtin.module {
    func.func @a(%arg0: !stream.binding, %arg1: !stream.binding) {
      return
    }
  }
}
util.func public @merged(%input: !stream.resource<external>) -> !stream.resource<external> attributes {sched.waves = array<i64: 0, 0, 1>} {
  %c0 = arith.constant 0 : index
  %c64 = arith.constant 64 : index
  %result, %done = stream.async.execute with(%input as %arg0: !stream.resource<external>{%c64}) -> !stream.resource<external>{%c64} {
    %a = stream.async.dispatch @ex::@a(%arg0[%c0 to %c64 for %c64]) : (!stream.resource<external>{%c64}) -> !stream.resource<external>{%c64}
    stream.yield %a : !stream.resource<external>{%c64}
  } => !stream.timepoint
  %ready = stream.timepoint.await %done => %result : !stream.resource<external>{%c64}
  util.return %ready : !stream.resource<external>
}
