// RUN: not schedc-opt %s --split-input-file --passes=print-kernel-graph 2>&1 | filecheck %s
// RUN: not schedc-opt %s --passes=no-such-pass 2>&1 | filecheck %s --check-prefix=UNKNOWN
// RUN: not schedc-opt %s --passes=print-kernel-graph{depth=2} 2>&1 | filecheck %s --check-prefix=OPTION
// RUN: not schedc-opt %t.does-not-exist --passes=print-kernel-graph 2>&1 | filecheck %s --check-prefix=MISSING

// UNKNOWN: schedc-opt: error: unknown pass 'no-such-pass'; available passes: {{.*}}print-kernel-graph
// OPTION: schedc-opt: error: pass 'print-kernel-graph' has no option 'depth'; its options: none
// MISSING: schedc-opt: error: {{.*}}.does-not-exist: no such file

// A use of an undefined value: the error names this file, line and column.
// CHECK: print-kernel-graph-error.mlir:[[# @LINE + 2]]:37: error: use of undeclared SSA value name
util.func public @undefined_value(%arg0: tensor<4xf32>) -> tensor<4xf32> {
  %0 = flow.dispatch @ex::@k(%arg0, %missing) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  util.return %0 : tensor<4xf32>
}

// -----

// A type mismatch in the second case is reported with its line in this file.
// CHECK: print-kernel-graph-error.mlir:[[# @LINE + 3]]:{{[0-9]+}}: error:
util.func public @bad_return(%arg0: tensor<4xf32>) -> tensor<8xf32> {
  %0 = flow.dispatch @ex::@k(%arg0) : (tensor<4xf32>) -> tensor<4xf32>
  util.return %0 : tensor<4xf32>
}
