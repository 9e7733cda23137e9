// Inputs schedc cannot compile: one line each, with the file's name, exit code 1, no output.
// RUN: rm -rf %t && mkdir -p %t

// Bytes that are not UTF-8: IREE's diagnostic, no UnicodeDecodeError.
// RUN: printf '\377\376 module' > %t/bytes.mlir
// RUN: not schedc %t/bytes.mlir -o %t/bytes.vmfb 2>&1 | filecheck %s --check-prefix=BYTES
// RUN: not ls %t/bytes.vmfb
// BYTES: bytes.mlir:1:1: error: unexpected character
// BYTES-NOT: Traceback

// No functions: an empty file, or an empty module.
// RUN: touch %t/empty.mlir
// RUN: not schedc %t/empty.mlir -o %t/empty.vmfb 2>&1 | filecheck %s --check-prefix=EMPTY
// RUN: echo 'module {}' > %t/module.mlir
// RUN: not schedc %t/module.mlir -o %t/module.vmfb 2>&1 | filecheck %s --check-prefix=MODULE
// RUN: not ls %t/empty.vmfb %t/module.vmfb
// EMPTY: schedc: error: {{.*}}empty.mlir: the input has no functions: nothing to compile
// MODULE: schedc: error: {{.*}}module.mlir: the input has no functions: nothing to compile

// Standard input, like schedc-opt; it needs -o.
// RUN: cat %s | schedc - -o %t/stdin.vmfb
// RUN: test -s %t/stdin.vmfb
// RUN: cat %s | not schedc - 2>&1 | filecheck %s --check-prefix=STDIN
// STDIN: schedc: error: reading the input from stdin (-), give the output's name with -o

// Options with no value.
// RUN: not schedc %s --target= 2>&1 | filecheck %s --check-prefix=TARGET
// RUN: not schedc %s --cuda-arch= --target=cuda 2>&1 | filecheck %s --check-prefix=ARCH
// RUN: not schedc %s --passes="memory-order{strategy}" 2>&1 | filecheck %s --check-prefix=NOVALUE
// TARGET: schedc: error: unknown target ''; valid targets: llvm-cpu, cuda, rocm, vulkan
// ARCH: schedc: error: --cuda-arch is empty; leave it out for the default
// NOVALUE: schedc: error: pass 'memory-order': option 'strategy' needs a value (strategy=...)

func.func @f(%a: tensor<4xf32>) -> tensor<4xf32> {
  %0 = arith.addf %a, %a : tensor<4xf32>
  return %0 : tensor<4xf32>
}
