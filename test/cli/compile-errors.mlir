// Malformed input: file:line:col, exit code 1, and no output file left behind.
// RUN: rm -f %t.vmfb
// RUN: not schedc %s -o %t.vmfb 2>&1 | filecheck %s
// RUN: not ls %t.vmfb

// RUN: not schedc %s --target=tpu 2>&1 | filecheck %s --check-prefix=TARGET
// RUN: not schedc %s --target=cuda --cuda-arch=sm_90 2>&1 | filecheck %s --check-prefix=HOPPER
// RUN: not schedc %s --target=rocm --rocm-arch=gfx000 2>&1 | filecheck %s --check-prefix=ROCM
// RUN: not schedc %s --target=vulkan --vulkan-target=voodoo 2>&1 | filecheck %s --check-prefix=VULKAN
// RUN: not schedc %s --passes=no-such-pass 2>&1 | filecheck %s --check-prefix=PASS
// RUN: not schedc %t.missing.mlir 2>&1 | filecheck %s --check-prefix=MISSING
// RUN: not schedc %S/Inputs/bad-op.mlir --cpu=bogus -o %t.cpu.vmfb 2>&1 | filecheck %s --check-prefix=CPU
// TARGET: schedc: error: unknown target 'tpu'; valid targets: llvm-cpu, cuda, rocm, vulkan
// HOPPER: schedc: error: unknown --cuda-arch 'sm_90' (IREE 3.13 has no sm_90/sm_100 target{{.*}}); valid: sm_60,{{.*}}sm_80
// ROCM: schedc: error: unknown --rocm-arch 'gfx000'; valid: {{.*}}gfx942
// VULKAN: schedc: error: unknown --vulkan-target 'voodoo'; valid: ampere
// PASS: schedc: error: unknown pass 'no-such-pass'; available passes:
// MISSING: schedc: error: {{.*}}.missing.mlir: no such file
// CPU: List of accepted CPUs: {{.*}}znver4
// CPU: reproduce with: {{.*}}iree-compile {{.*}}--iree-llvmcpu-target-cpu=bogus

// The user's own syntax is schedc's located parse error: no IREE repro line, no kept folder.
// CHECK: compile-errors.mlir:[[# @LINE + 6]]:10: error: use of value '%0' expects different type
// CHECK-NOT: Traceback
// CHECK-NOT: kept in
// CHECK-NOT: reproduce with
func.func @f(%a: tensor<4xf32>) -> tensor<4xf32> {
  %0 = arith.addf %a, %a : tensor<4xf32>
  return %0 : tensor<8xf32>
}
