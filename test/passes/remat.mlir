// RUN: schedc-opt %s --split-input-file --passes="remat{memory-budget=0.9}" | filecheck %s
// RUN: schedc-opt %s --split-input-file --passes="remat{memory-budget=1.0}" | filecheck %s --check-prefix=NONE
// RUN: schedc-opt %s --split-input-file --passes="remat{memory-budget=0.9 max-depth=0}" | filecheck %s --check-prefix=SHALLOW
// RUN: schedc-opt %s --split-input-file --passes="remat{memory-budget=0.9}" 2>&1 >/dev/null | filecheck %s --check-prefix=WARN
// RUN: schedc-opt %s --split-input-file --passes="remat{memory-budget=0.9 split-fusions=true}" 2>&1 >/dev/null | filecheck %s --check-prefix=SPLIT
// RUN: schedc-opt %s --split-input-file --passes="remat{memory-budget=0.9 split-fusions=true}" 2>/dev/null | filecheck %s

// split-fusions changes IREE's dispatch formation, which IR given to schedc-opt already went
// through: a warning, and the same plan as without it.
// SPLIT: schedc-opt: warning: pass 'remat': --iree-dispatch-creation-fuse-multi-use=false applies to IREE's compile, which formed this IR's dispatches already: no effect here

// %a (4 KiB) is read at once and again by the last kernel, so it is alive while %c is made,
// the peak (4 + 16 + 16 KiB). A copy of its dispatch, made from the argument just before the
// last kernel, frees it there: the peak falls to 32 KiB, within 0.9x of 36 KiB. The copy calls
// a copy of the executable, under new names (IREE would merge identical dispatches back).

// CHECK-LABEL: flow.executable private @ex_a_remat0
//       CHECK:   flow.executable.export public @a_remat0
//       CHECK:   func.func @a_remat0()
// CHECK-LABEL: util.func public @long_lived
//       CHECK:   %[[A:.+]] = flow.dispatch @ex_a::@a(%arg0)
//  CHECK-NEXT:   %[[B:.+]] = flow.dispatch @ex_mid::@mid(%[[A]])
//  CHECK-NEXT:   %[[C:.+]] = flow.dispatch @ex_mid::@mid(%[[B]])
//  CHECK-NEXT:   %[[COPY:.+]] = flow.dispatch @ex_a_remat0::@a_remat0(%arg0)
//  CHECK-NEXT:   flow.dispatch @ex_mid::@mid(%[[C]], %[[COPY]])
// NONE-LABEL: util.func public @long_lived
//   NONE-NOT:   remat
// SHALLOW-LABEL: util.func public @long_lived
//       SHALLOW:   flow.dispatch @ex_a_remat0::@a_remat0(%arg0)
flow.executable private @ex_a {
  flow.executable.export public @a
  builtin.module {
    func.func @a() {
      return
    }
  }
}
flow.executable private @ex_mid {
  flow.executable.export public @mid
  builtin.module {
    func.func @mid() {
      return
    }
  }
}
util.func public @long_lived(%arg0: tensor<64xf32>) -> tensor<64xf32> {
  %a = flow.dispatch @ex_a::@a(%arg0) : (tensor<64xf32>) -> tensor<1024xf32>
  %b = flow.dispatch @ex_mid::@mid(%a) : (tensor<1024xf32>) -> tensor<4096xf32>
  %c = flow.dispatch @ex_mid::@mid(%b) : (tensor<4096xf32>) -> tensor<4096xf32>
  %d = flow.dispatch @ex_mid::@mid(%c, %a) : (tensor<4096xf32>, tensor<1024xf32>) -> tensor<64xf32>
  util.return %d : tensor<64xf32>
}

// -----

// The input of %a's dispatch, %p, is dead by the last kernel: the copy makes it again first
// (two kernels, in their order). With max-depth=0 a copy may not remake inputs: nothing moves.

// CHECK-LABEL: util.func public @remake_input
//       CHECK:   %[[B:.+]] = flow.dispatch @ex_mid::@mid(%
//  CHECK-NEXT:   %[[C:.+]] = flow.dispatch @ex_mid::@mid(%[[B]])
//  CHECK-NEXT:   %[[P:.+]] = flow.dispatch @ex_p_remat0::@p_remat0(%arg0)
//  CHECK-NEXT:   %[[COPY:.+]] = flow.dispatch @ex_a_remat0::@a_remat0(%[[P]])
//  CHECK-NEXT:   flow.dispatch @ex_mid::@mid(%[[C]], %[[COPY]])
// SHALLOW-LABEL: util.func public @remake_input
//   SHALLOW-NOT:   remat
flow.executable private @ex_p {
  flow.executable.export public @p
  builtin.module {
    func.func @p() {
      return
    }
  }
}
flow.executable private @ex_a {
  flow.executable.export public @a
  builtin.module {
    func.func @a() {
      return
    }
  }
}
flow.executable private @ex_mid {
  flow.executable.export public @mid
  builtin.module {
    func.func @mid() {
      return
    }
  }
}
util.func public @remake_input(%arg0: tensor<64xf32>) -> tensor<64xf32> {
  %p = flow.dispatch @ex_p::@p(%arg0) : (tensor<64xf32>) -> tensor<256xf32>
  %a = flow.dispatch @ex_a::@a(%p) : (tensor<256xf32>) -> tensor<1024xf32>
  %b = flow.dispatch @ex_mid::@mid(%a) : (tensor<1024xf32>) -> tensor<4096xf32>
  %c = flow.dispatch @ex_mid::@mid(%b) : (tensor<4096xf32>) -> tensor<4096xf32>
  %d = flow.dispatch @ex_mid::@mid(%c, %a) : (tensor<4096xf32>, tensor<1024xf32>) -> tensor<64xf32>
  util.return %d : tensor<64xf32>
}

// -----

// What a copy cannot make: dispatches of executables the module does not hold (a copy could
// not call an executable of its own), and a function result (not transient). The budget is
// out of reach, and the warning says how low the peak gets.

// WARN: remat.mlir:[[# @LINE + 5]]:1: warning: remat: @not_recomputable cannot get under the budget of 29,491 B by recomputation; the lowest peak it reaches is 32,768 B

// CHECK-LABEL: util.func public @not_recomputable
//   CHECK-NOT:   remat
//       CHECK:   util.return
util.func public @not_recomputable(%arg0: tensor<64xf32>) -> (tensor<64xf32>, tensor<1024xf32>) {
  %a = flow.dispatch @ex_missing::@a(%arg0) : (tensor<64xf32>) -> tensor<1024xf32>
  %b = flow.dispatch @ex_missing::@mid(%a) : (tensor<1024xf32>) -> tensor<4096xf32>
  %c = flow.dispatch @ex_missing::@mid(%b) : (tensor<4096xf32>) -> tensor<4096xf32>
  %d = flow.dispatch @ex_missing::@mid(%c, %a) : (tensor<4096xf32>, tensor<1024xf32>) -> tensor<64xf32>
  util.return %d, %a : tensor<64xf32>, tensor<1024xf32>
}
