// RUN: not schedc-opt %s --passes="stream-schedule{mode=fastest}" 2>&1 | filecheck %s
// RUN: not schedc-opt %s --passes="stream-schedule{streams=0}" 2>&1 | filecheck %s --check-prefix=STREAMS
// RUN: not schedc-opt %s --passes="stream-schedule{target=tpu}" 2>&1 | filecheck %s --check-prefix=TARGET
// CHECK: schedc-opt: error: pass 'stream-schedule': unknown mode 'fastest'; valid: min-memory, balanced, max-concurrency
// STREAMS: schedc-opt: error: pass 'stream-schedule': streams must be between 1 and 64, got 0
// TARGET: schedc-opt: error: pass 'stream-schedule': unknown target 'tpu'; valid: cuda, rocm, vulkan, llvm-cpu
util.func public @f(%arg0: tensor<4xf32>) -> tensor<4xf32> {
  util.return %arg0 : tensor<4xf32>
}
