// Outputs: a device is written in place (never replaced by a file), a symlink is followed, and
// a run that fails writes nothing: not the module, not the report.
// RUN: rm -rf %t && mkdir -p %t

// RUN: schedc %s -o /dev/null
// RUN: test -c /dev/null
// RUN: not schedc %s -o /dev/full 2>&1 | filecheck %s --check-prefix=FULL
// RUN: test -c /dev/full
// FULL: schedc: error: /dev/full: cannot write (No space left on device)

// RUN: touch %t/real.vmfb && ln -s real.vmfb %t/link.vmfb
// RUN: schedc %s -o %t/link.vmfb
// RUN: test -L %t/link.vmfb && test -s %t/real.vmfb

// RUN: not schedc %s -o /proc/x.vmfb 2>&1 | filecheck %s --check-prefix=PROC
// PROC: schedc: error: /proc/x.vmfb: cannot write (No such file or directory)
// RUN: not schedc %s -o %t 2>&1 | filecheck %s --check-prefix=DIR
// DIR: schedc: error: {{.*}}: is a directory; the output must be a file

// -o naming the input is refused before anything runs: the source stays as it was.
// RUN: cp %s %t/in.mlir && not schedc %t/in.mlir -o %t/in.mlir 2>&1 | filecheck %s --check-prefix=SAME
// RUN: cmp %s %t/in.mlir
// SAME: schedc: error: {{.*}}in.mlir: the output is the input file; choose another -o

// RUN: touch %t/file && not schedc %s --dump-phases %t/file -o %t/d.vmfb 2>&1 | filecheck %s --check-prefix=DUMP
// RUN: not ls %t/d.vmfb
// DUMP: schedc: error: --dump-phases {{.*}}file: exists and is not a directory

// An unwritable report: the module is not left behind either.
// RUN: not schedc %s --report=/proc/r.json -o %t/r.vmfb 2>&1 | filecheck %s --check-prefix=REPORT
// RUN: not ls %t/r.vmfb
// REPORT: schedc: error: /proc/r.json: cannot write
// REPORT-NOT: Traceback
// REPORT-NOT: wrote

// Every file written is named: the module and the report.
// RUN: schedc %s --report=%t/named.json -o %t/named.vmfb 2>&1 | filecheck %s
// CHECK: wrote {{.*}}named.vmfb and {{.*}}named.json

func.func @f(%a: tensor<4xf32>) -> tensor<4xf32> {
  %0 = arith.addf %a, %a : tensor<4xf32>
  return %0 : tensor<4xf32>
}
