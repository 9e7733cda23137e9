// RUN: schedc-opt %s --split-input-file --passes="split-k" | filecheck %s
// RUN: schedc-opt %s --split-input-file --passes="split-k{parts=2}" | filecheck %s --check-prefix=FORCED
// RUN: not schedc-opt %s --passes="split-k{parts=3}" 2>&1 | filecheck %s --check-prefix=BAD

// A deep convolution with few outputs (512 -> 512 channels at 7x7: 25,088 outputs, each a sum
// of 4,608 products) becomes a grouped convolution of 16 parts of 32 input channels into zeros,
// then the parts' sum into its initial value (the broadcast bias). One whose 262,144 outputs fill
// the GPU (64 channels at 64x64) is left alone unless a part count is forced.

// CHECK-LABEL: util.func public @deep
//       CHECK:   %[[IMAGE:.+]] = tensor.expand_shape %{{.*}} {{\[\[}}0], [1, 2], [3], [4]] output_shape [1, 16, 32, 9, 9] : tensor<1x512x9x9xf16> into tensor<1x16x32x9x9xf16>
//       CHECK:   %[[FILTER:.+]] = tensor.expand_shape %{{.*}} output_shape [512, 16, 32, 3, 3] : tensor<512x512x3x3xf16> into tensor<512x16x32x3x3xf16>
//       CHECK:   %[[ZEROS:.+]] = linalg.fill {{.*}} -> tensor<1x16x512x7x7xf32>
//       CHECK:   %[[PARTS:.+]] = linalg.generic {{.*}} ins(%[[IMAGE]], %[[FILTER]] : tensor<1x16x32x9x9xf16>, tensor<512x16x32x3x3xf16>) outs(%[[ZEROS]] : tensor<1x16x512x7x7xf32>)
//       CHECK:     arith.extf
//       CHECK:   %[[SUM:.+]] = linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%[[PARTS]] : tensor<1x16x512x7x7xf32>) outs(%[[BIAS:.+]] : tensor<1x512x7x7xf32>)
//       CHECK:   util.return %[[SUM]]
//   CHECK-NOT:   linalg.conv_2d_nchw_fchw
// FORCED-LABEL: util.func public @deep
//       FORCED:   tensor<1x2x256x9x9xf16>
util.func public @deep(%x: tensor<1x512x9x9xf16>, %w: tensor<512x512x3x3xf16>, %bias: tensor<1x512x7x7xf32>) -> tensor<1x512x7x7xf32> {
  %c = linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>} ins(%x, %w : tensor<1x512x9x9xf16>, tensor<512x512x3x3xf16>) outs(%bias : tensor<1x512x7x7xf32>) -> tensor<1x512x7x7xf32>
  util.return %c : tensor<1x512x7x7xf32>
}

// -----

// CHECK-LABEL: util.func public @wide
//       CHECK:   linalg.conv_2d_nchw_fchw
// FORCED-LABEL: util.func public @wide
//       FORCED:   linalg.generic {{.*}} ins(%{{.*}}, %{{.*}} : tensor<1x2x16x66x66xf32>, tensor<64x2x16x3x3xf32>) outs(%{{.*}} : tensor<1x2x64x64x64xf32>)
//   FORCED-NOT:   linalg.conv_2d_nchw_fchw
util.func public @wide(%x: tensor<1x32x66x66xf32>, %w: tensor<64x32x3x3xf32>, %out: tensor<1x64x64x64xf32>) -> tensor<1x64x64x64xf32> {
  %c = linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>} ins(%x, %w : tensor<1x32x66x66xf32>, tensor<64x32x3x3xf32>) outs(%out : tensor<1x64x64x64xf32>) -> tensor<1x64x64x64xf32>
  util.return %c : tensor<1x64x64x64xf32>
}

// -----

// An f16 Linear layer (its inputs widened to f32, as torch-mlir writes it) with a long reduction
// and few outputs (an MLP's down projection: 64 rows, K 1,024, 256 columns) is split over K by the
// rule of the 1x1 convolution it is: 16 parts of 64 read the f16 inputs through reshapes (the rows
// past a barrier that keeps IREE from moving the reshape into their producers) and widen them in
// the body. An f32 one stays whole unless a part count is forced.

// CHECK-LABEL: util.func public @down_projection
//       CHECK:   %[[ROWS:.+]] = iree_tensor_ext.compute_barrier.end %arg0 : tensor<64x1024xf16> -> tensor<64x1024xf16>
//       CHECK:   %[[ROWSG:.+]] = tensor.expand_shape %[[ROWS]] {{\[\[}}0], [1, 2]] output_shape [64, 16, 64] : tensor<64x1024xf16> into tensor<64x16x64xf16>
//       CHECK:   %[[WG:.+]] = tensor.expand_shape %arg1 {{\[\[}}0, 1], [2]] output_shape [16, 64, 256] : tensor<1024x256xf16> into tensor<16x64x256xf16>
//       CHECK:   %[[PARTS:.+]] = linalg.generic {{.*}} ins(%[[ROWSG]], %[[WG]] : tensor<64x16x64xf16>, tensor<16x64x256xf16>) outs(%{{.*}} : tensor<16x64x256xf32>)
//       CHECK:     arith.extf
//       CHECK:   %[[SUM:.+]] = linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "reduction"]} ins(%[[PARTS]] : tensor<16x64x256xf32>) outs(%{{.*}} : tensor<64x256xf32>)
//       CHECK:   util.return %[[SUM]]
//   CHECK-NOT:   linalg.matmul
// FORCED-LABEL: util.func public @down_projection
//       FORCED:   tensor<64x2x512xf16>
util.func public @down_projection(%x: tensor<64x1024xf16>, %w: tensor<1024x256xf16>) -> tensor<64x256xf32> {
  %xe = tensor.empty() : tensor<64x1024xf32>
  %xw = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<64x1024xf16>) outs(%xe : tensor<64x1024xf32>) {
  ^bb0(%in: f16, %out: f32):
    %e = arith.extf %in : f16 to f32
    linalg.yield %e : f32
  } -> tensor<64x1024xf32>
  %we = tensor.empty() : tensor<1024x256xf32>
  %ww = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%w : tensor<1024x256xf16>) outs(%we : tensor<1024x256xf32>) {
  ^bb0(%in: f16, %out: f32):
    %e = arith.extf %in : f16 to f32
    linalg.yield %e : f32
  } -> tensor<1024x256xf32>
  %zero = arith.constant 0.0 : f32
  %oe = tensor.empty() : tensor<64x256xf32>
  %o = linalg.fill ins(%zero : f32) outs(%oe : tensor<64x256xf32>) -> tensor<64x256xf32>
  %y = linalg.matmul ins(%xw, %ww : tensor<64x1024xf32>, tensor<1024x256xf32>) outs(%o : tensor<64x256xf32>) -> tensor<64x256xf32>
  util.return %y : tensor<64x256xf32>
}

// -----

// CHECK-LABEL: util.func public @f32_linear
//       CHECK:   linalg.matmul
// FORCED-LABEL: util.func public @f32_linear
//       FORCED:   tensor<64x2x512xf32>
//   FORCED-NOT:   linalg.matmul
util.func public @f32_linear(%x: tensor<64x1024xf32>, %w: tensor<1024x256xf32>, %o: tensor<64x256xf32>) -> tensor<64x256xf32> {
  %y = linalg.matmul ins(%x, %w : tensor<64x1024xf32>, tensor<1024x256xf32>) outs(%o : tensor<64x256xf32>) -> tensor<64x256xf32>
  util.return %y : tensor<64x256xf32>
}

// BAD: schedc-opt: error: pass 'split-k': parts must be 0 (chosen) or a power of two up to 64, not 3
