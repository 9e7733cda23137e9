// RUN: schedc-opt %s --split-input-file --passes="cpu-config{database=%S/Inputs/cpu-config-db.json}" | filecheck %s
// RUN: schedc-opt %s --split-input-file --passes="cpu-config{database=%S/Inputs/cpu-config-db.json layout=winograd}" | filecheck %s --check-prefix=WINOGRAD
// RUN: schedc-opt %s --split-input-file --passes="cpu-config{database=%S/Inputs/cpu-config-db-tiled.json per-op-tiling=true}" | filecheck %s --check-prefix=TILED
// RUN: schedc-opt %s --split-input-file --passes="cpu-config{database=%S/Inputs/cpu-config-db.json layout=gemm}" | filecheck %s --check-prefix=GEMM
// RUN: schedc-opt %s --split-input-file --passes="cpu-config{database=%S/Inputs/cpu-config-db.json layout=gemm mode=channels-last}" | filecheck %s --check-prefix=NHWC

// Two convolutions as IREE's input conversion leaves a torch model's. The database measured an
// im2col matmul fastest for the 3x3 one and IREE's own NCHW build for the 1x1 one: only the
// first is rewritten, in place, and the function keeps its NCHW interface. Forcing a layout
// rewrites every convolution that may take it: Winograd takes only the 3x3 window at stride 1
// into a zero output. Chosen per op (a database where data tiling pays for the 3x3 one's
// im2col matmul), IREE's hint marks that matmul alone, not the 1x1 convolution (IREE 3.13
// data-tiles exactly the ops marked once any is). In schedc's own kernels (`gemm`) each
// convolution is one dispatch of their executable: the 3x3 one in the convolution kernel, its
// filter packed into panels of 16 output channels by ops IREE evaluates at compile time, the
// 1x1 one in the matmul kernel (filter times image). The executable links the kernels' object,
// built from C.

// CHECK-LABEL: util.func public @two_convs
//   CHECK-NOT:   iree.opt.data_tiling
//  CHECK-SAME:   (%[[IMAGE:.+]]: tensor<1x16x18x18xf32>
//   CHECK-NOT:   linalg.conv_2d_nchw_fchw {{.*}}tensor<32x16x3x3xf32>
//       CHECK:   linalg.generic {{.*}}ins(%[[IMAGE]] : tensor<1x16x18x18xf32>) outs(%{{.*}} : tensor<1x16x3x3x16x16xf32>)
//       CHECK:   linalg.matmul
//       CHECK:   linalg.conv_2d_nchw_fchw {{.*}}tensor<1x32x16x16xf32>, tensor<8x32x1x1xf32>
//       CHECK:   util.return %{{.*}} : tensor<1x8x16x16xf32>
// WINOGRAD-LABEL: util.func public @two_convs
//       WINOGRAD:   iree_linalg_ext.winograd.filter_transform
//       WINOGRAD:   iree_linalg_ext.winograd.input_transform
//       WINOGRAD:   iree_linalg_ext.winograd.output_transform
//       WINOGRAD:   linalg.conv_2d_nchw_fchw {{.*}}tensor<8x32x1x1xf32>
// TILED-LABEL: util.func public @two_convs
//       TILED:   linalg.matmul {iree.opt.data_tiling}
//       TILED:   linalg.conv_2d_nchw_fchw {dilations
// GEMM-LABEL: util.func public @two_convs
//  GEMM-SAME:   (%[[IMAGE:.+]]: tensor<1x16x18x18xf32>, %[[W3:.+]]: tensor<32x16x3x3xf32>, %[[W1:.+]]: tensor<8x32x1x1xf32>
//       GEMM:   %[[P3:.+]] = tensor.expand_shape %[[W3]] {{\[}}[0, 1], [2], [3], [4]] output_shape [2, 16, 16, 3, 3] : tensor<32x16x3x3xf32> into tensor<2x16x16x3x3xf32>
//       GEMM:   linalg.transpose ins(%[[P3]] : tensor<2x16x16x3x3xf32>) outs(%{{.*}} : tensor<2x16x3x3x16xf32>) permutation = [0, 2, 3, 4, 1]
//       GEMM:   tensor.collapse_shape %{{.*}} {{\[}}[0], [1, 2, 3], [4]] : tensor<2x16x3x3x16xf32> into tensor<2x144x16xf32>
//       GEMM:   %[[Y:.+]] = flow.dispatch @schedc_gemm::@conv{{.*}}(%[[IMAGE]], %{{.*}}) : (tensor<1x16x18x18xf32>, tensor<2x144x16xf32>, {{.*}}) -> tensor<1x32x16x16xf32>
//       GEMM:   %[[X:.+]] = tensor.collapse_shape %[[Y]] {{\[}}[0, 1], [2, 3]] : tensor<1x32x16x16xf32> into tensor<32x256xf32>
//       GEMM:   %[[F1:.+]] = tensor.collapse_shape %[[W1]] {{\[}}[0], [1, 2, 3]] : tensor<8x32x1x1xf32> into tensor<8x32xf32>
//       GEMM:   flow.dispatch @schedc_gemm::@matmul{{.*}}(%[[F1]], %[[X]], {{.*}}) : (tensor<8x32xf32>, tensor<32x256xf32>, {{.*}}) -> tensor<8x256xf32>
//       GEMM: stream.executable private @schedc_gemm attributes {hal.executable.objects = {{.*}}path = "{{.*}}gemm_x86_64-{{avx2|avx512}}-{{[0-9a-f]+}}.o"
//       GEMM:   stream.executable.export public @matmul
//       GEMM:   stream.executable.export public @conv
//       GEMM:   func.func private @schedc_sgemm_workgroup({{.*}}) attributes {hal.import.static}
//       GEMM:   func.func private @schedc_sconv_workgroup({{.*}}) attributes {hal.import.static}
util.func public @two_convs(%image: tensor<1x16x18x18xf32>, %w3: tensor<32x16x3x3xf32>, %w1: tensor<8x32x1x1xf32>) -> tensor<1x8x16x16xf32> {
  %zero = arith.constant 0.0 : f32
  %e1 = tensor.empty() : tensor<1x32x16x16xf32>
  %f1 = linalg.fill ins(%zero : f32) outs(%e1 : tensor<1x32x16x16xf32>) -> tensor<1x32x16x16xf32>
  %c1 = linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>} ins(%image, %w3 : tensor<1x16x18x18xf32>, tensor<32x16x3x3xf32>) outs(%f1 : tensor<1x32x16x16xf32>) -> tensor<1x32x16x16xf32>
  %e2 = tensor.empty() : tensor<1x8x16x16xf32>
  %f2 = linalg.fill ins(%zero : f32) outs(%e2 : tensor<1x8x16x16xf32>) -> tensor<1x8x16x16xf32>
  %c2 = linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>} ins(%c1, %w1 : tensor<1x32x16x16xf32>, tensor<8x32x1x1xf32>) outs(%f2 : tensor<1x8x16x16xf32>) -> tensor<1x8x16x16xf32>
  util.return %c2 : tensor<1x8x16x16xf32>
}

// -----

// Unmeasured, a matmul keeps IREE's build (not data-tiled per op, nor in schedc's kernel), and
// a dynamic convolution is left to IREE.

// CHECK-LABEL: util.func public @left_alone
//       CHECK:   linalg.matmul ins(%{{.*}}, %{{.*}} : tensor<4x8xf32>, tensor<8x16xf32>)
//       CHECK:   linalg.conv_2d_nchw_fchw {{.*}}tensor<?x16x18x18xf32>
// TILED-LABEL: util.func public @left_alone
//   TILED-NOT:   iree.opt.data_tiling
// In schedc's kernel the matmul starts from zero: the value its output held is added after it.
// GEMM-LABEL: util.func public @left_alone
//  GEMM-SAME:   (%[[A:.+]]: tensor<4x8xf32>, %[[B:.+]]: tensor<8x16xf32>, %[[C:.+]]: tensor<4x16xf32>
//       GEMM:   %[[AB:.+]] = flow.dispatch @schedc_gemm::@matmul{{.*}}(%[[A]], %[[B]], {{.*}}) : (tensor<4x8xf32>, tensor<8x16xf32>, {{.*}}) -> tensor<4x16xf32>
//       GEMM:   linalg.generic {{.*}} ins(%[[AB]], %[[C]] : tensor<4x16xf32>, tensor<4x16xf32>)
//       GEMM:     arith.addf
//       GEMM:   linalg.conv_2d_nchw_fchw {{.*}}tensor<?x16x18x18xf32>
util.func public @left_alone(%a: tensor<4x8xf32>, %b: tensor<8x16xf32>, %c: tensor<4x16xf32>, %image: tensor<?x16x18x18xf32>, %w: tensor<32x16x3x3xf32>, %out: tensor<?x32x16x16xf32>) -> (tensor<4x16xf32>, tensor<?x32x16x16xf32>) {
  %m = linalg.matmul ins(%a, %b : tensor<4x8xf32>, tensor<8x16xf32>) outs(%c : tensor<4x16xf32>) -> tensor<4x16xf32>
  %conv = linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>} ins(%image, %w : tensor<?x16x18x18xf32>, tensor<32x16x3x3xf32>) outs(%out : tensor<?x32x16x16xf32>) -> tensor<?x32x16x16xf32>
  util.return %m, %conv : tensor<4x16xf32>, tensor<?x32x16x16xf32>
}

// -----

// In a channels-last mode schedc's kernel runs NHWC between transposes (IREE cancels them
// against those around its NHWC neighbours), and reads its image's zero padding in place: the
// pad goes, and the kernel takes the image unpadded with the rows above and columns left of it.
// TILED-LABEL: util.func public @padded_conv
// NHWC-LABEL: util.func public @padded_conv
//  NHWC-SAME:   (%[[IMAGE:.+]]: tensor<1x16x12x12xf32>
//   NHWC-NOT:   tensor.pad
//       NHWC:   %[[X:.+]] = linalg.transpose ins(%[[IMAGE]] : tensor<1x16x12x12xf32>) outs(%{{.*}} : tensor<1x12x12x16xf32>) permutation = [0, 2, 3, 1]
//       NHWC:   linalg.transpose ins(%{{.*}} : tensor<2x16x16x3x3xf32>) outs(%{{.*}} : tensor<2x3x3x16x16xf32>) permutation = [0, 3, 4, 2, 1]
//       NHWC:   %[[Y:.+]] = flow.dispatch @schedc_gemm::@conv_nhwc[{{.*}}](%[[X]], %{{.*}}) : (tensor<1x12x12x16xf32>, tensor<2x144x16xf32>, {{.*}}) -> tensor<1x12x12x32xf32>
//       NHWC:   linalg.transpose ins(%[[Y]] : tensor<1x12x12x32xf32>) outs(%{{.*}} : tensor<1x32x12x12xf32>) permutation = [0, 3, 1, 2]
//       NHWC:   stream.executable.export public @conv_nhwc
//       NHWC:   func.func private @schedc_sconv_nhwc_workgroup
util.func public @padded_conv(%image: tensor<1x16x12x12xf32>, %w: tensor<32x16x3x3xf32>) -> tensor<1x32x12x12xf32> {
  %zero = arith.constant 0.0 : f32
  %padded = tensor.pad %image low[0, 0, 1, 1] high[0, 0, 1, 1] {
  ^bb0(%n: index, %c: index, %y: index, %x: index):
    tensor.yield %zero : f32
  } : tensor<1x16x12x12xf32> to tensor<1x16x14x14xf32>
  %e = tensor.empty() : tensor<1x32x12x12xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<1x32x12x12xf32>) -> tensor<1x32x12x12xf32>
  %conv = linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>} ins(%padded, %w : tensor<1x16x14x14xf32>, tensor<32x16x3x3xf32>) outs(%f : tensor<1x32x12x12xf32>) -> tensor<1x32x12x12xf32>
  util.return %conv : tensor<1x32x12x12xf32>
}
