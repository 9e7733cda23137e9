// schedc-opt given IR of another phase than its pass's: an error that says which phase the
// pass takes and how to get it, where the pass would otherwise exit 0 and change nothing.
// RUN: not schedc-opt %S/../passes/memory-order.mlir --split-input-file --passes=arena-plan 2>&1 | filecheck %s
// CHECK: schedc-opt: error: {{.*}}memory-order.mlir: 'arena-plan' runs on stream-phase IR, and this is flow-phase IR: it would change nothing. stream-phase IR of a model: schedc --emit=stream
// RUN: not schedc-opt %S/../passes/memory-order.mlir --split-input-file --passes=cpu-config 2>&1 | filecheck %s --check-prefix=INPUT
// INPUT: schedc-opt: error: {{.*}}'cpu-config' runs on input-phase IR, and this is flow-phase IR
// RUN: not schedc-opt %S/../passes/memory-order.mlir --split-input-file --passes=reduction-config 2>&1 | filecheck %s --check-prefix=CONFIGS
// CONFIGS: schedc-opt: error: {{.*}}'reduction-config' runs on configurations-phase IR, and this is flow-phase IR: it would change nothing. configurations-phase IR of a model: schedc --dump-phases DIR (its configurations file)
// RUN: not schedc-opt %S/../passes/reduction-config.mlir --split-input-file --passes=static-replay 2>&1 | filecheck %s --check-prefix=HAL
// HAL: schedc-opt: error: {{.*}}'static-replay' runs on hal-phase IR, and this is configurations-phase IR
