// Inputs other than torch: linalg on tensors compiles through the same pipeline.
// RUN: schedc %s --emit=flow --passes=print-kernel-graph -o %t.flow.mlir | filecheck %s
// RUN: filecheck %s --check-prefix=FLOW < %t.flow.mlir
// RUN: rm -rf %t.phases %t.executables
// RUN: schedc %s --passes=print-kernel-graph --dump-phases %t.phases -o %t.vmfb
// RUN: ls %t.phases | filecheck %s --check-prefix=PHASES
// RUN: schedc %s --emit=hal -o %t.hal.mlir
// RUN: filecheck %s --check-prefix=HAL < %t.hal.mlir
// RUN: schedc %s --emit=executables -o %t.executables
// RUN: ls %t.executables | filecheck %s --check-prefix=EXECUTABLES

// The header names the function the user wrote, not IREE's @add_mul$async twin.
// CHECK: kernel-graph @add_mul: 2 kernels
// FLOW: util.func public @add_mul
// FLOW: flow.dispatch
// Every file of the compile, in the order it was made: IREE's linalg, where cpu-config runs for
// llvm-cpu, first; IREE's executables (their LLVM IR and objects) come with the hal phase.
// PHASES: 00-input.mlir
// PHASES-NEXT: 01-linalg.mlir
// PHASES-NEXT: 02-linalg-schedc.mlir
// PHASES-NEXT: 03-flow.mlir
// PHASES-NEXT: 04-flow-schedc.mlir
// PHASES-NEXT: 05-stream.mlir
// PHASES-NEXT: 06-executables
// PHASES-NEXT: 07-hal.mlir
// PHASES-NEXT: 08-module.vmfb
// HAL: hal.executable private @add_mul_dispatch_0
// HAL: hal.executable.binary public @embedded_elf_x86_64 <format = "embedded-elf-x86_64"
// EXECUTABLES: add_mul_dispatch_0_embedded_elf_x86_64.linked.ll
// EXECUTABLES: add_mul_dispatch_0_embedded_elf_x86_64.so
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
// JSON: "pipeline": "write-in-place,memory-order,arena-plan"
// JSON: "memory-order": {
// JSON: "program_peak_bytes": 1024
// JSON: "iree_transient_bytes": {
// JSON: "without_schedc":
