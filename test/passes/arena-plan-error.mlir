// A pack with a dynamic slice size cannot be planned: by default IREE's packing stays, with a
// warning that says why; with strict=true it is an error.
// RUN: schedc-opt %s --passes=arena-plan 2>&1 | filecheck %s
// RUN: not schedc-opt %s --passes="arena-plan{strict=true}" 2>&1 | filecheck %s --check-prefix=STRICT
// RUN: not schedc-opt %s --passes="arena-plan{alignment=48}" 2>&1 | filecheck %s --check-prefix=ALIGN
// RUN: not schedc-opt %s --passes="arena-plan{time-limit=-1}" 2>&1 | filecheck %s --check-prefix=TIME
// RUN: not schedc-opt %s --passes="arena-plan{time-limit=nan}" 2>&1 | filecheck %s --check-prefix=NAN
// RUN: not schedc-opt %s --passes="arena-plan{max-checks=-1}" 2>&1 | filecheck %s --check-prefix=WORK

// CHECK: arena-plan-error.mlir:[[# @LINE + 8]]:{{[0-9]+}}: warning: arena-plan left IREE's packing in place in {{.*}}: 1 of its 2 slices have dynamic sizes
// CHECK: util.func public @dynamic
// CHECK: stream.resource.pack
// STRICT: arena-plan-error.mlir:[[# @LINE + 5]]:{{[0-9]+}}: error: arena-plan cannot plan this pack: 1 of its 2 slices have dynamic sizes
// STRICT-NOT: util.func
// ALIGN: schedc-opt: error: pass 'arena-plan': alignment must be a power of two from 1 to 2097152 bytes, got 48
util.func public @dynamic(%n: index) -> (index, index) {
  %c64 = arith.constant 64 : index
  %total, %a, %b = stream.resource.pack slices({
    [0, 1] = %c64,
    [1, 2] = %n
  }) : index
  %arena, %ready = stream.resource.alloca uninitialized : !stream.resource<transient>{%total} => !stream.timepoint
  util.return %a, %b : index, index
}

// TIME: schedc-opt: error: pass 'arena-plan': time-limit must be > 0 seconds, got -1.0
// NAN: schedc-opt: error: arena-plan{time-limit}: expected a finite number, got 'nan'
// WORK: schedc-opt: error: pass 'arena-plan': max-checks must be >= 0, got -1
