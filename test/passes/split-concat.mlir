// RUN: schedc-opt %s --split-input-file --passes='split-concat{when=always}' | filecheck %s
// RUN: schedc-opt %s --split-input-file --passes='split-concat{when=never}' | filecheck %s --check-prefix=NEVER

// when=never keeps every concatenation.
// NEVER-LABEL: func.func @conv_of_concat
//       NEVER:   tensor.insert_slice
// NEVER-LABEL: func.func @nchw_conv_of_torch_cat
//       NEVER:   tensor.concat

// A 1x1 convolution (a contraction over channels, d2) of a concatenation of two 8-channel
// pieces: it becomes two contractions, the second starting from the first's result, each with
// its slice of the weights; the concatenation is gone.

// CHECK-LABEL: func.func @conv_of_concat
//  CHECK-SAME:   (%[[A:.+]]: tensor<8x16xf32>, %[[B:.+]]: tensor<8x16xf32>, %[[W:.+]]: tensor<4x16xf32>, %[[INIT:.+]]: tensor<4x16xf32>)
//   CHECK-NOT:   tensor.insert_slice
//       CHECK:   %[[W0:.+]] = tensor.extract_slice %[[W]][0, 0] [4, 8] [1, 1] : tensor<4x16xf32> to tensor<4x8xf32>
//       CHECK:   %[[R0:.+]] = linalg.generic {{.+}} ins(%[[A]], %[[W0]] : tensor<8x16xf32>, tensor<4x8xf32>) outs(%[[INIT]] : tensor<4x16xf32>)
//       CHECK:   %[[W1:.+]] = tensor.extract_slice %[[W]][0, 8] [4, 8] [1, 1] : tensor<4x16xf32> to tensor<4x8xf32>
//       CHECK:   %[[R1:.+]] = linalg.generic {{.+}} ins(%[[B]], %[[W1]] : tensor<8x16xf32>, tensor<4x8xf32>) outs(%[[R0]] : tensor<4x16xf32>)
//   CHECK-NOT:   tensor.insert_slice
//       CHECK:   return %[[R1]]
func.func @conv_of_concat(%a: tensor<8x16xf32>, %b: tensor<8x16xf32>, %w: tensor<4x16xf32>, %init: tensor<4x16xf32>) -> tensor<4x16xf32> {
  %e = tensor.empty() : tensor<1x16x16xf32>
  %c0 = tensor.insert_slice %a into %e[0, 0, 0] [1, 8, 16] [1, 1, 1] : tensor<8x16xf32> into tensor<1x16x16xf32>
  %c1 = tensor.insert_slice %b into %c0[0, 8, 0] [1, 8, 16] [1, 1, 1] : tensor<8x16xf32> into tensor<1x16x16xf32>
  %cat = tensor.collapse_shape %c1 [[0, 1], [2]] : tensor<1x16x16xf32> into tensor<16x16xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d2, d1)>, affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d0, d1)>],
                       iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%cat, %w : tensor<16x16xf32>, tensor<4x16xf32>) outs(%init : tensor<4x16xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %m = arith.mulf %x, %y : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  } -> tensor<4x16xf32>
  return %r : tensor<4x16xf32>
}

// -----

// The concatenation has another reader (it must be built anyway): left as it is.

// CHECK-LABEL: func.func @concat_read_twice
//       CHECK:   tensor.insert_slice
//       CHECK:   tensor.insert_slice
//   CHECK-NOT:   tensor.extract_slice
func.func @concat_read_twice(%a: tensor<8x16xf32>, %b: tensor<8x16xf32>, %w: tensor<4x16xf32>, %init: tensor<4x16xf32>) -> (tensor<4x16xf32>, tensor<16x16xf32>) {
  %e = tensor.empty() : tensor<16x16xf32>
  %c0 = tensor.insert_slice %a into %e[0, 0] [8, 16] [1, 1] : tensor<8x16xf32> into tensor<16x16xf32>
  %cat = tensor.insert_slice %b into %c0[8, 0] [8, 16] [1, 1] : tensor<8x16xf32> into tensor<16x16xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d2, d1)>, affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d0, d1)>],
                       iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%cat, %w : tensor<16x16xf32>, tensor<4x16xf32>) outs(%init : tensor<4x16xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %m = arith.mulf %x, %y : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  } -> tensor<4x16xf32>
  return %r, %cat : tensor<4x16xf32>, tensor<16x16xf32>
}

// -----

// The pieces split a dimension the contraction does not reduce (d1, parallel): left as it is.

// CHECK-LABEL: func.func @concat_along_a_parallel_dim
//       CHECK:   tensor.insert_slice
//   CHECK-NOT:   tensor.extract_slice
func.func @concat_along_a_parallel_dim(%a: tensor<16x8xf32>, %b: tensor<16x8xf32>, %w: tensor<4x16xf32>, %init: tensor<4x16xf32>) -> tensor<4x16xf32> {
  %e = tensor.empty() : tensor<16x16xf32>
  %c0 = tensor.insert_slice %a into %e[0, 0] [16, 8] [1, 1] : tensor<16x8xf32> into tensor<16x16xf32>
  %cat = tensor.insert_slice %b into %c0[0, 8] [16, 8] [1, 1] : tensor<16x8xf32> into tensor<16x16xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d2, d1)>, affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d0, d1)>],
                       iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%cat, %w : tensor<16x16xf32>, tensor<4x16xf32>) outs(%init : tensor<4x16xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %m = arith.mulf %x, %y : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  } -> tensor<4x16xf32>
  return %r : tensor<4x16xf32>
}

// -----

// A body that reads its loop indices (linalg.index) would see each piece's own: left as it is.

// CHECK-LABEL: func.func @body_reads_its_indices
//       CHECK:   tensor.insert_slice
//   CHECK-NOT:   tensor.extract_slice
func.func @body_reads_its_indices(%a: tensor<8x16xf32>, %b: tensor<8x16xf32>, %w: tensor<4x16xf32>, %init: tensor<4x16xf32>) -> tensor<4x16xf32> {
  %e = tensor.empty() : tensor<16x16xf32>
  %c0 = tensor.insert_slice %a into %e[0, 0] [8, 16] [1, 1] : tensor<8x16xf32> into tensor<16x16xf32>
  %cat = tensor.insert_slice %b into %c0[8, 0] [8, 16] [1, 1] : tensor<8x16xf32> into tensor<16x16xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d2, d1)>, affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d0, d1)>],
                       iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%cat, %w : tensor<16x16xf32>, tensor<4x16xf32>) outs(%init : tensor<4x16xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %k = linalg.index 2 : index
    %ki = arith.index_cast %k : index to i32
    %kf = arith.sitofp %ki : i32 to f32
    %m = arith.mulf %x, %kf : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  } -> tensor<4x16xf32>
  return %r : tensor<4x16xf32>
}

// -----

// torch's cat, as IREE's input phase has it (tensor.concat), read by a named 1x1 convolution
// over its channels (dimension 1 of the image and of the filter): one convolution per piece,
// each adding into the previous one's result, with its slice of the filter.

// CHECK-LABEL: func.func @nchw_conv_of_torch_cat
//  CHECK-SAME:   (%[[A:.+]]: tensor<1x8x4x4xf32>, %[[B:.+]]: tensor<1x24x4x4xf32>, %[[W:.+]]: tensor<16x32x1x1xf32>, %[[INIT:.+]]: tensor<1x16x4x4xf32>)
//   CHECK-NOT:   tensor.concat
//       CHECK:   %[[W0:.+]] = tensor.extract_slice %[[W]][0, 0, 0, 0] [16, 8, 1, 1] [1, 1, 1, 1]
//       CHECK:   %[[R0:.+]] = linalg.conv_2d_nchw_fchw {{.+}} ins(%[[A]], %[[W0]] : tensor<1x8x4x4xf32>, tensor<16x8x1x1xf32>) outs(%[[INIT]] : tensor<1x16x4x4xf32>)
//       CHECK:   %[[W1:.+]] = tensor.extract_slice %[[W]][0, 8, 0, 0] [16, 24, 1, 1] [1, 1, 1, 1]
//       CHECK:   %[[R1:.+]] = linalg.conv_2d_nchw_fchw {{.+}} ins(%[[B]], %[[W1]] : tensor<1x24x4x4xf32>, tensor<16x24x1x1xf32>) outs(%[[R0]] : tensor<1x16x4x4xf32>)
//       CHECK:   return %[[R1]]
func.func @nchw_conv_of_torch_cat(%a: tensor<1x8x4x4xf32>, %b: tensor<1x24x4x4xf32>, %w: tensor<16x32x1x1xf32>, %init: tensor<1x16x4x4xf32>) -> tensor<1x16x4x4xf32> {
  %cat = tensor.concat dim(1) %a, %b : (tensor<1x8x4x4xf32>, tensor<1x24x4x4xf32>) -> tensor<1x32x4x4xf32>
  %r = linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>}
      ins(%cat, %w : tensor<1x32x4x4xf32>, tensor<16x32x1x1xf32>) outs(%init : tensor<1x16x4x4xf32>) -> tensor<1x16x4x4xf32>
  return %r : tensor<1x16x4x4xf32>
}

// -----

// A matmul over a concatenation of its K columns: one matmul per piece, B sliced by rows.

// CHECK-LABEL: func.func @matmul_of_torch_cat
//       CHECK:   %[[B0:.+]] = tensor.extract_slice %{{.+}}[0, 0] [4, 6] [1, 1]
//       CHECK:   %[[R0:.+]] = linalg.matmul ins(%{{.+}}, %[[B0]] : tensor<3x4xf32>, tensor<4x6xf32>)
//       CHECK:   %[[B1:.+]] = tensor.extract_slice %{{.+}}[4, 0] [2, 6] [1, 1]
//       CHECK:   linalg.matmul ins(%{{.+}}, %[[B1]] : tensor<3x2xf32>, tensor<2x6xf32>) outs(%[[R0]] : tensor<3x6xf32>)
func.func @matmul_of_torch_cat(%a: tensor<3x4xf32>, %b: tensor<3x2xf32>, %w: tensor<6x6xf32>, %init: tensor<3x6xf32>) -> tensor<3x6xf32> {
  %cat = tensor.concat dim(1) %a, %b : (tensor<3x4xf32>, tensor<3x2xf32>) -> tensor<3x6xf32>
  %r = linalg.matmul ins(%cat, %w : tensor<3x6xf32>, tensor<6x6xf32>) outs(%init : tensor<3x6xf32>) -> tensor<3x6xf32>
  return %r : tensor<3x6xf32>
}

// -----

// Concatenated along the image's height, which the convolution does not reduce: left as it is.

// CHECK-LABEL: func.func @conv_of_cat_along_height
//       CHECK:   tensor.concat dim(2)
//   CHECK-NOT:   tensor.extract_slice
func.func @conv_of_cat_along_height(%a: tensor<1x8x2x4xf32>, %b: tensor<1x8x2x4xf32>, %w: tensor<16x8x1x1xf32>, %init: tensor<1x16x4x4xf32>) -> tensor<1x16x4x4xf32> {
  %cat = tensor.concat dim(2) %a, %b : (tensor<1x8x2x4xf32>, tensor<1x8x2x4xf32>) -> tensor<1x8x4x4xf32>
  %r = linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>}
      ins(%cat, %w : tensor<1x8x4x4xf32>, tensor<16x8x1x1xf32>) outs(%init : tensor<1x16x4x4xf32>) -> tensor<1x16x4x4xf32>
  return %r : tensor<1x16x4x4xf32>
}

// -----

// Channels last (NHWC image, HWCF filter): the channels are the image's dimension 3 and the
// filter's dimension 2.

// CHECK-LABEL: func.func @nhwc_conv_of_torch_cat
//       CHECK:   %[[W0:.+]] = tensor.extract_slice %{{.+}}[0, 0, 0, 0] [1, 1, 8, 16] [1, 1, 1, 1]
//       CHECK:   %[[R0:.+]] = linalg.conv_2d_nhwc_hwcf {{.+}} ins(%{{.+}}, %[[W0]] : tensor<1x4x4x8xf32>, tensor<1x1x8x16xf32>)
//       CHECK:   %[[W1:.+]] = tensor.extract_slice %{{.+}}[0, 0, 8, 0] [1, 1, 4, 16] [1, 1, 1, 1]
//       CHECK:   linalg.conv_2d_nhwc_hwcf {{.+}} ins(%{{.+}}, %[[W1]] : tensor<1x4x4x4xf32>, tensor<1x1x4x16xf32>) outs(%[[R0]] : tensor<1x4x4x16xf32>)
func.func @nhwc_conv_of_torch_cat(%a: tensor<1x4x4x8xf32>, %b: tensor<1x4x4x4xf32>, %w: tensor<1x1x12x16xf32>, %init: tensor<1x4x4x16xf32>) -> tensor<1x4x4x16xf32> {
  %cat = tensor.concat dim(3) %a, %b : (tensor<1x4x4x8xf32>, tensor<1x4x4x4xf32>) -> tensor<1x4x4x12xf32>
  %r = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>}
      ins(%cat, %w : tensor<1x4x4x12xf32>, tensor<1x1x12x16xf32>) outs(%init : tensor<1x4x4x16xf32>) -> tensor<1x4x4x16xf32>
  return %r : tensor<1x4x4x16xf32>
}
