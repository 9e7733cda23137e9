// RUN: schedc-opt %s --split-input-file --passes='shared-concat' | filecheck %s
// RUN: schedc-opt %s --split-input-file --passes='shared-concat{enabled=false}' | filecheck %s --check-prefix=OFF

// A dense block's concatenations, each beginning with the one before's pieces: one buffer of
// the last one's size, each piece inserted once, each earlier concatenation its leading slice.

// CHECK-LABEL: func.func @dense_block
//  CHECK-SAME:   (%[[X0:.+]]: tensor<1x4x8x8xf32>, %[[X1:.+]]: tensor<1x2x8x8xf32>, %[[X2:.+]]: tensor<1x2x8x8xf32>)
//   CHECK-NOT:   tensor.concat
//       CHECK:   %[[E:.+]] = tensor.empty() : tensor<1x8x8x8xf32>
//       CHECK:   %[[B0:.+]] = tensor.insert_slice %[[X0]] into %[[E]][0, 0, 0, 0] [1, 4, 8, 8] [1, 1, 1, 1]
//       CHECK:   %[[B1:.+]] = tensor.insert_slice %[[X1]] into %[[B0]][0, 4, 0, 0] [1, 2, 8, 8] [1, 1, 1, 1]
//       CHECK:   %[[C1:.+]] = tensor.extract_slice %[[B1]][0, 0, 0, 0] [1, 6, 8, 8] [1, 1, 1, 1] : tensor<1x8x8x8xf32> to tensor<1x6x8x8xf32>
//       CHECK:   %[[Y:.+]] = linalg.generic {{.+}} ins(%[[C1]] : tensor<1x6x8x8xf32>)
//       CHECK:   %[[B2:.+]] = tensor.insert_slice %[[X2]] into %[[B1]][0, 6, 0, 0] [1, 2, 8, 8] [1, 1, 1, 1]
//   CHECK-NOT:   tensor.concat
//       CHECK:   return %[[B2]], %[[Y]]
// OFF-LABEL: func.func @dense_block
//   OFF-COUNT-2: tensor.concat
func.func @dense_block(%x0: tensor<1x4x8x8xf32>, %x1: tensor<1x2x8x8xf32>, %x2: tensor<1x2x8x8xf32>) -> (tensor<1x8x8x8xf32>, tensor<1x6x8x8xf32>) {
  %c1 = tensor.concat dim(1) %x0, %x1 : (tensor<1x4x8x8xf32>, tensor<1x2x8x8xf32>) -> tensor<1x6x8x8xf32>
  %e = tensor.empty() : tensor<1x6x8x8xf32>
  %y = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>],
                       iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%c1 : tensor<1x6x8x8xf32>) outs(%e : tensor<1x6x8x8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %z = arith.constant 0.0 : f32
    %r = arith.maximumf %in, %z : f32
    linalg.yield %r : f32
  } -> tensor<1x6x8x8xf32>
  %c2 = tensor.concat dim(1) %x0, %x1, %x2 : (tensor<1x4x8x8xf32>, tensor<1x2x8x8xf32>, tensor<1x2x8x8xf32>) -> tensor<1x8x8x8xf32>
  return %c2, %y : tensor<1x8x8x8xf32>, tensor<1x6x8x8xf32>
}

// -----

// Left as they are: a second concatenation that does not begin with the first's pieces, and a
// batch of two, whose channel slices are not contiguous.

// CHECK-LABEL: func.func @unrelated
//       CHECK:   tensor.concat
//       CHECK:   tensor.concat
func.func @unrelated(%a: tensor<1x4x8x8xf32>, %b: tensor<1x2x8x8xf32>) -> (tensor<1x6x8x8xf32>, tensor<1x8x8x8xf32>) {
  %c1 = tensor.concat dim(1) %a, %b : (tensor<1x4x8x8xf32>, tensor<1x2x8x8xf32>) -> tensor<1x6x8x8xf32>
  %c2 = tensor.concat dim(1) %b, %a, %b : (tensor<1x2x8x8xf32>, tensor<1x4x8x8xf32>, tensor<1x2x8x8xf32>) -> tensor<1x8x8x8xf32>
  return %c1, %c2 : tensor<1x6x8x8xf32>, tensor<1x8x8x8xf32>
}

// CHECK-LABEL: func.func @batch_of_two
//       CHECK:   tensor.concat
//       CHECK:   tensor.concat
func.func @batch_of_two(%a: tensor<2x4x8x8xf32>, %b: tensor<2x2x8x8xf32>, %c: tensor<2x2x8x8xf32>) -> (tensor<2x6x8x8xf32>, tensor<2x8x8x8xf32>) {
  %c1 = tensor.concat dim(1) %a, %b : (tensor<2x4x8x8xf32>, tensor<2x2x8x8xf32>) -> tensor<2x6x8x8xf32>
  %c2 = tensor.concat dim(1) %a, %b, %c : (tensor<2x4x8x8xf32>, tensor<2x2x8x8xf32>, tensor<2x2x8x8xf32>) -> tensor<2x8x8x8xf32>
  return %c1, %c2 : tensor<2x6x8x8xf32>, tensor<2x8x8x8xf32>
}
