// The runtime CLI: a good run prints each output like iree-run-module; mistakes are one line.
// RUN: schedc %S/Inputs/bad-op.mlir -o %t.vmfb
// RUN: schedc run %t.vmfb --function=f --input=4xf32=1.5 | filecheck %s
// RUN: not schedc run %t.vmfb --function=nope --input=4xf32=1 2>&1 | filecheck %s --check-prefix=FUNC
// RUN: not schedc run %t.vmfb --function=f --input=@%t.none.npy 2>&1 | filecheck %s --check-prefix=INPUT
// RUN: not schedc run %t.vmfb --function=f --device=tpu --input=4xf32=1 2>&1 | filecheck %s --check-prefix=DEVICE
// RUN: not schedc run %t.missing.vmfb 2>&1 | filecheck %s --check-prefix=MODULE
// CHECK: EXEC @f
// CHECK: result[0]: 4xfloat32 min=3 max=3 mean=3
// FUNC: schedc: error: module has no function 'nope'; it exports: f
// INPUT: schedc: error: --input=@{{.*}}none.npy: no such file
// DEVICE: schedc: error: unknown device 'tpu'; drivers in this IREE runtime: cuda, hip, local-sync, local-task, vulkan
// MODULE: schedc: error: {{.*}}missing.vmfb: no such file

// A module built for a GPU, loaded on the CPU, says which devices it needs.
// RUN: schedc %S/Inputs/bad-op.mlir --target=vulkan -o %t.vulkan.vmfb
// RUN: not schedc run %t.vulkan.vmfb --function=f --input=4xf32=1 2>&1 | filecheck %s --check-prefix=WRONG
// WRONG: schedc: error: {{.*}}vulkan.vmfb was compiled for 'vulkan' devices and cannot run on 'local-task'
