// RUN: schedc-opt %s --split-input-file --passes=overlap-fills | filecheck %s

// A kernel reads [0, 64) and writes [64, 128) of the arena; the fill after it zeroes
// [128, 192), which the kernel does not touch: the two run side by side. The next fill zeroes
// [64, 128), which the kernel wrote (and the next kernel reads): it waits. The last fill's
// offset is not a constant: it waits too.

// CHECK-LABEL: util.func public @fills
//       CHECK:   stream.cmd.execute
//  CHECK-NEXT:     stream.cmd.concurrent {
//  CHECK-NEXT:       stream.cmd.dispatch @ex::@kernel {
//  CHECK-NEXT:         ro %[[A:.+]][%c0 for %c64]
//  CHECK-NEXT:         wo %[[A]][%c64 for %c64]
//  CHECK-NEXT:       }
//  CHECK-NEXT:       stream.cmd.fill %c0_i8, %[[A]][%c128 for %c64]
//  CHECK-NEXT:     }
//  CHECK-NEXT:     stream.cmd.fill %c0_i8, %[[A]][%c64 for %c64]
//  CHECK-NEXT:     stream.cmd.dispatch @ex::@kernel {
//  CHECK-NEXT:       ro %[[A]][%c64 for %c64]
//  CHECK-NEXT:       wo %[[A]][%c128 for %c64]
//  CHECK-NEXT:     }
//  CHECK-NEXT:     stream.cmd.fill %c0_i8, %[[A]][%arg{{[0-9]+}} for %c64]
//  CHECK-NEXT:   } => !stream.timepoint
stream.executable private @ex {
  stream.executable.export public @kernel workgroups() -> (index, index, index) {
    %c1 = arith.constant 1 : index
    stream.return %c1, %c1, %c1 : index, index, index
  }
  builtin.module {
    func.func @kernel(%in: !stream.binding, %out: !stream.binding) {
      return
    }
  }
}
util.func public @fills(%arena: !stream.resource<transient>, %offset: index) -> !stream.timepoint {
  %c0 = arith.constant 0 : index
  %c64 = arith.constant 64 : index
  %c128 = arith.constant 128 : index
  %c256 = arith.constant 256 : index
  %c0_i8 = arith.constant 0 : i8
  %done = stream.cmd.execute with(%arena as %a: !stream.resource<transient>{%c256}) {
    stream.cmd.dispatch @ex::@kernel {
      ro %a[%c0 for %c64] : !stream.resource<transient>{%c256},
      wo %a[%c64 for %c64] : !stream.resource<transient>{%c256}
    }
    stream.cmd.fill %c0_i8, %a[%c128 for %c64] : i8 -> !stream.resource<transient>{%c256}
    stream.cmd.fill %c0_i8, %a[%c64 for %c64] : i8 -> !stream.resource<transient>{%c256}
    stream.cmd.dispatch @ex::@kernel {
      ro %a[%c64 for %c64] : !stream.resource<transient>{%c256},
      wo %a[%c128 for %c64] : !stream.resource<transient>{%c256}
    }
    stream.cmd.fill %c0_i8, %a[%offset for %c64] : i8 -> !stream.resource<transient>{%c256}
  } => !stream.timepoint
  util.return %done : !stream.timepoint
}

// -----

// Offsets made by arena-plan's arithmetic (arith.addi of constants) are known. Two fills after
// a kernel, each disjoint from it and from each other, both join it; a fill after a concurrent
// group that touches none of its bytes joins that group.

// CHECK-LABEL: util.func public @arithmetic
//       CHECK:   stream.cmd.concurrent {
//  CHECK-NEXT:     stream.cmd.dispatch @ex::@kernel
//       CHECK:     stream.cmd.fill %c0_i8, %{{.+}}[%{{[0-9]+}} for %c64]
//  CHECK-NEXT:     stream.cmd.fill %c0_i8, %{{.+}}[%c256 for %c64]
//  CHECK-NEXT:   }
//  CHECK-NEXT:   stream.cmd.concurrent {
//  CHECK-NEXT:     stream.cmd.dispatch @ex::@kernel
//       CHECK:     stream.cmd.dispatch @ex::@kernel
//       CHECK:     stream.cmd.fill %c0_i8, %{{.+}}[%c320 for %c64]
//  CHECK-NEXT:   }
//  CHECK-NEXT: } => !stream.timepoint
stream.executable private @ex {
  stream.executable.export public @kernel workgroups() -> (index, index, index) {
    %c1 = arith.constant 1 : index
    stream.return %c1, %c1, %c1 : index, index, index
  }
  builtin.module {
    func.func @kernel(%in: !stream.binding, %out: !stream.binding) {
      return
    }
  }
}
util.func public @arithmetic(%arena: !stream.resource<transient>) -> !stream.timepoint {
  %c0 = arith.constant 0 : index
  %c64 = arith.constant 64 : index
  %c128 = arith.constant 128 : index
  %c256 = arith.constant 256 : index
  %c320 = arith.constant 320 : index
  %c512 = arith.constant 512 : index
  %c0_i8 = arith.constant 0 : i8
  %at192 = arith.addi %c128, %c64 : index
  %done = stream.cmd.execute with(%arena as %a: !stream.resource<transient>{%c512}) {
    stream.cmd.dispatch @ex::@kernel {
      ro %a[%c0 for %c64] : !stream.resource<transient>{%c512},
      wo %a[%c64 for %c64] : !stream.resource<transient>{%c512}
    }
    stream.cmd.fill %c0_i8, %a[%at192 for %c64] : i8 -> !stream.resource<transient>{%c512}
    stream.cmd.fill %c0_i8, %a[%c256 for %c64] : i8 -> !stream.resource<transient>{%c512}
    stream.cmd.concurrent {
      stream.cmd.dispatch @ex::@kernel {
        ro %a[%at192 for %c64] : !stream.resource<transient>{%c512},
        wo %a[%c0 for %c64] : !stream.resource<transient>{%c512}
      }
      stream.cmd.dispatch @ex::@kernel {
        ro %a[%c256 for %c64] : !stream.resource<transient>{%c512},
        wo %a[%c64 for %c64] : !stream.resource<transient>{%c512}
      }
    }
    stream.cmd.fill %c0_i8, %a[%c320 for %c64] : i8 -> !stream.resource<transient>{%c512}
  } => !stream.timepoint
  util.return %done : !stream.timepoint
}
