// RUN: schedc-opt %s --split-input-file --passes="arena-plan{verify=true}" | filecheck %s

// IREE's layout takes slices in IR order: a (512 B), then b on top of it, then c on top of b,
// 2560 B in all. Greedy by size places b and c first and reaches LOAD, 2048 B.

// CHECK-LABEL: util.func public @reuse
//   CHECK-NOT:   stream.resource.pack
//   CHECK-DAG:   %[[TOTAL:.+]] = arith.constant 2048 : index
//   CHECK-DAG:   %[[ZERO:.+]] = arith.constant 0 : index
//   CHECK-DAG:   %[[HIGH:.+]] = arith.constant 1024 : index
//       CHECK:   stream.resource.alloca uninitialized : {sched.arena_load = 2048 : i64, sched.arena_method = "size", sched.arena_offsets = array<i64: 1024, 0, 1024>, sched.arena_size = 2048 : i64} !stream.resource<transient>{%[[TOTAL]]}
//       CHECK:   util.return %{{.+}}, %[[ZERO]], %{{.+}} : index, index, index
util.func public @reuse() -> (index, index, index) {
  %c512 = arith.constant 512 : index
  %c1024 = arith.constant 1024 : index
  %total, %a, %b, %c = stream.resource.pack slices({
    [0, 1] = %c512,
    [1, 2] = %c1024,
    [2, 3] = %c1024
  }) : index
  %arena, %ready = stream.resource.alloca uninitialized : !stream.resource<transient>{%total} => !stream.timepoint
  util.return %a, %b, %c : index, index, index
}

// -----

// Sizes round up to the 64-byte alignment; slices alive together never share a byte.

// CHECK-LABEL: util.func public @aligned
//   CHECK-DAG:   arith.constant 128 : index
//       CHECK:   sched.arena_offsets = array<i64: 0, 64>, sched.arena_size = 128 : i64
util.func public @aligned() -> (index, index) {
  %c10 = arith.constant 10 : index
  %c60 = arith.constant 60 : index
  %total, %a, %b = stream.resource.pack slices({
    [0, 2] = %c10,
    [1, 2] = %c60
  }) : index
  %arena, %ready = stream.resource.alloca uninitialized : !stream.resource<transient>{%total} => !stream.timepoint
  util.return %a, %b : index, index
}

// -----

// A pack for constants (not a transient arena) is left to IREE.

// CHECK-LABEL: util.func public @constants
//       CHECK:   stream.resource.pack
util.func public @constants() -> index {
  %c64 = arith.constant 64 : index
  %total, %a = stream.resource.pack slices({
    [0, 0] = %c64
  }) : index
  %arena, %ready = stream.resource.alloca uninitialized : !stream.resource<constant>{%total} => !stream.timepoint
  util.return %a : index
}
