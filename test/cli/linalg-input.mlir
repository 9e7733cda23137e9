// Inputs other than torch: linalg on tensors compiles through the same pipeline.
// RUN: schedc %s --emit=flow --passes=print-kernel-graph -o %t.flow.mlir | filecheck %s
// RUN: filecheck %s --check-prefix=FLOW < %t.flow.mlir
// RUN: schedc %s --passes=print-kernel-graph --dump-phases %t.phases -o %t.vmfb
// RUN: ls %t.phases | filecheck %s --check-prefix=PHASES

// CHECK: kernel-graph @add_mul{{.*}}: 2 kernels
// FLOW: util.func public @add_mul
// FLOW: flow.dispatch
// PHASES: 00-input.mlir
// PHASES: 01-flow.mlir
// PHASES: 02-flow-schedc.mlir
// PHASES: 03-stream.mlir
// PHASES: 04-module.vmfb
func.func @add_mul(%a: tensor<256xf32>, %b: tensor<256x256xf32>) -> tensor<256xf32> {
  %init = tensor.empty() : tensor<256xf32>
  %zero = arith.constant 0.0 : f32
  %acc = linalg.fill ins(%zero : f32) outs(%init : tensor<256xf32>) -> tensor<256xf32>
  %mv = linalg.matvec ins(%b, %a : tensor<256x256xf32>, tensor<256xf32>) outs(%acc : tensor<256xf32>) -> tensor<256xf32>
  %mv2 = linalg.matvec ins(%b, %mv : tensor<256x256xf32>, tensor<256xf32>) outs(%acc : tensor<256xf32>) -> tensor<256xf32>
  return %mv2 : tensor<256xf32>
}

// The report: what memory-order decided, and IREE's transient bytes with and without schedc.
// RUN: schedc %s --summary --report %t.json -o %t.report.vmfb | filecheck %s --check-prefix=SUMMARY
// RUN: filecheck %s --check-prefix=JSON < %t.json
// SUMMARY: @add_mul: {{[0-9]+}} kernels, order '{{[a-z]+}}', estimated peak 1,024 B -> 1,024 B (optimum 1,024 B); arena 1,024 B (1.000x LOAD 1,024 B, '{{[a-z]+}}'; IREE's packing 1,024 B); IREE transient {{[0-9,]+}} B -> 1,024 B
// JSON: "pipeline": "memory-order,arena-plan"
// JSON: "memory-order": {
// JSON: "program_peak_bytes": 1024
// JSON: "iree_transient_bytes": {
// JSON: "without_schedc":
