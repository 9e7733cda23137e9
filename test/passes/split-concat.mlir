// RUN: schedc-opt %s --split-input-file --passes=split-concat | filecheck %s

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
