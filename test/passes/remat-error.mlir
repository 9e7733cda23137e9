// RUN: not schedc-opt %s --passes="remat{memory-budget=1.5}" 2>&1 | filecheck %s
// RUN: not schedc-opt %s --passes="remat{memory-budget=lots}" 2>&1 | filecheck %s --check-prefix=WORD
// RUN: not schedc-opt %s --passes="remat{memory-budget=0}" 2>&1 | filecheck %s --check-prefix=ZERO
// RUN: not schedc-opt %s --passes="remat{max-nodes=0}" 2>&1 | filecheck %s --check-prefix=NODES
// RUN: not schedc-opt %s --passes="remat{max-depth=-1}" 2>&1 | filecheck %s --check-prefix=DEPTH
// RUN: not schedc-opt %s --passes="remat{target=tpu}" 2>&1 | filecheck %s --check-prefix=TARGET
// RUN: not schedc-opt %s --passes="remat{objective=speed}" 2>&1 | filecheck %s --check-prefix=OBJECTIVE

// CHECK: schedc-opt: error: pass 'remat': memory-budget must be bytes (1500000) or a fraction of the peak in (0, 1] (0.6 or 60%), got '1.5'
// WORD: schedc-opt: error: pass 'remat': memory-budget must be bytes (1500000) or a fraction of the peak in (0, 1] (0.6 or 60%), got 'lots'
// ZERO: schedc-opt: error: pass 'remat': memory-budget must be bytes (1500000) or a fraction of the peak in (0, 1] (0.6 or 60%), got '0'
// NODES: schedc-opt: error: pass 'remat': max-nodes must be >= 1, got 0
// DEPTH: schedc-opt: error: pass 'remat': max-depth must be >= 0, got -1
// TARGET: schedc-opt: error: pass 'remat': unknown target 'tpu'; valid: cuda, rocm, vulkan, llvm-cpu
// OBJECTIVE: schedc-opt: error: pass 'remat': objective must be time or flops, got 'speed'
util.func public @f(%arg0: tensor<4xf32>) -> tensor<4xf32> {
  util.return %arg0 : tensor<4xf32>
}
