// schedc tune's mistakes are one line each, with what to do instead.
// RUN: not schedc tune prepare %s --target=vulkan -o %t.tune 2>&1 | filecheck %s
// RUN: not schedc tune %s --target=llvm-cpu --database=%t.missing/db.json 2>&1 | filecheck %s --check-prefix=CPUDB
// RUN: not schedc tune bench %t.nothing 2>&1 | filecheck %s --check-prefix=BENCH
// RUN: not schedc tune merge %t.nothing 2>&1 | filecheck %s --check-prefix=MERGE
// RUN: not schedc tune %s --target=cuda 2>&1 | filecheck %s --check-prefix=NOGPU
// RUN: rm -f %t.vmfb && not schedc %s --target=cuda --kernel-db=%t.missing.json -o %t.vmfb 2>&1 | filecheck %s --check-prefix=DB
// The failed compile wrote no module (a file left from an earlier run is removed above).
// RUN: not ls %t.vmfb 2>&1 | filecheck %s --check-prefix=NOMODULE
// CHECK: schedc: error: tuning is for GPU targets (cuda, rocm) and llvm-cpu, not 'vulkan'
// CPUDB: schedc: error: cannot write {{.*}}missing/db.json
// BENCH: schedc: error: {{.*}}nothing: no manifest.json; run 'schedc tune prepare' first
// MERGE: schedc: error: {{.*}}nothing: no manifest.json; run 'schedc tune prepare' first
// NOGPU: schedc: error: no cuda device here: run 'schedc tune prepare MODEL.mlir -o DIR' here, 'schedc tune bench DIR' on the GPU machine, then 'schedc tune merge DIR'
// DB: schedc: error: {{.*}}missing.json: no such kernel database
// NOMODULE: No such file or directory

func.func @f(%a: tensor<4x8xf32>, %b: tensor<8x16xf32>) -> tensor<4x16xf32> {
  %zero = arith.constant dense<0.0> : tensor<4x16xf32>
  %c = linalg.matmul ins(%a, %b : tensor<4x8xf32>, tensor<8x16xf32>) outs(%zero : tensor<4x16xf32>) -> tensor<4x16xf32>
  return %c : tensor<4x16xf32>
}
