// RUN: not schedc-opt %s --passes="memory-order{strategy=fastest}" 2>&1 | filecheck %s --check-prefix=STRATEGY
// RUN: not schedc-opt %s --passes="memory-order{exact-limit=many}" 2>&1 | filecheck %s --check-prefix=LIMIT
// RUN: not schedc-opt %s --passes="memory-order{beam=4}" 2>&1 | filecheck %s --check-prefix=OPTION
// RUN: not schedc-opt %s --passes="memory-order{strategy}" 2>&1 | filecheck %s --check-prefix=NOVALUE
// RUN: not schedc-opt %s --passes="memory-order{time-limit=-1}" 2>&1 | filecheck %s --check-prefix=TIME
// RUN: not schedc-opt %s --passes="memory-order{time-limit=nan}" 2>&1 | filecheck %s --check-prefix=NAN
// RUN: not schedc-opt %s --passes="memory-order{max-states=-5}" 2>&1 | filecheck %s --check-prefix=STATES
// RUN: not schedc-opt %s --passes="memory-order{exact-limit=-1}" 2>&1 | filecheck %s --check-prefix=EXACT
// RUN: not schedc-opt %s --passes=memory-order 2>&1 | filecheck %s

// STRATEGY: schedc-opt: error: pass 'memory-order': unknown strategy 'fastest'; valid: auto, program, dfs, bfs, greedy, xla, exact, beam
// LIMIT: schedc-opt: error: memory-order{exact-limit}: expected int, got 'many'
// OPTION: schedc-opt: error: pass 'memory-order' has no option 'beam'; its options: beam-states, exact-limit, max-states, serialize, strategy, time-limit
// NOVALUE: schedc-opt: error: pass 'memory-order': option 'strategy' needs a value (strategy=...)
// TIME: schedc-opt: error: pass 'memory-order': time-limit must be > 0 seconds, got -1.0
// NAN: schedc-opt: error: memory-order{time-limit}: expected a finite number, got 'nan'
// STATES: schedc-opt: error: pass 'memory-order': max-states must be >= 0, got -5
// EXACT: schedc-opt: error: pass 'memory-order': exact-limit must be >= 0, got -1

// A kernel that uses a value before it is defined: the error names the line and column.
// CHECK: memory-order-error.mlir:[[# @LINE + 2]]:8: error: operand #0 does not dominate this use
util.func public @use_before_def(%arg0: tensor<4xf32>) -> tensor<4xf32> {
  %0 = flow.dispatch @ex::@k(%1) : (tensor<4xf32>) -> tensor<4xf32>
  %1 = flow.dispatch @ex::@k(%arg0) : (tensor<4xf32>) -> tensor<4xf32>
  util.return %0 : tensor<4xf32>
}
