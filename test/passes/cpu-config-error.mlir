// RUN: not schedc-opt %s --passes="cpu-config{layout=nhcw}" 2>&1 | filecheck %s
// RUN: not schedc-opt %s --passes="cpu-config{mode=fast}" 2>&1 | filecheck %s --check-prefix=MODE
// RUN: not schedc-opt %s --passes="cpu-config{database=%S/Inputs/cpu-config-not-a-db.json}" 2>&1 | filecheck %s --check-prefix=FORMAT
// RUN: not schedc-opt %s --passes="cpu-config{database=%S/Inputs/no-such-db.json}" 2>&1 | filecheck %s --check-prefix=MISSING

// CHECK: schedc-opt: error: pass 'cpu-config': unknown layout 'nhcw'; layouts: nchw, im2col, winograd
// MODE: schedc-opt: error: pass 'cpu-config': unknown mode 'fast'; modes: plain, data-tiling, channels-last, channels-last+data-tiling
// FORMAT: cpu-config-not-a-db.json: not a CPU kernel database (its format is not schedc-cpu-kernels/1)
// MISSING: cannot read the CPU kernel database {{.*}}no-such-db.json: No such file or directory
util.func public @f(%arg0: tensor<4xf32>) -> tensor<4xf32> {
  util.return %arg0 : tensor<4xf32>
}
