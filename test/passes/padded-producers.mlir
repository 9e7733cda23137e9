// RUN: schedc-opt %s --split-input-file --passes=padded-producers | filecheck %s

// A ResNet block's input: a 3x3 convolution reads it padded, the residual sum (elementwise)
// reads it as it is. The producer's result goes into a fill of the padded shape, the pad is
// gone, and the sum reads the padded tensor through an indexing map moved by the padding.

// CHECK:       #[[MOVED:.+]] = affine_map<(d0, d1, d2) -> (d0, d1 + 1, d2 + 1)>
// CHECK-LABEL: func.func @residual
//       CHECK:   %[[Y:.+]] = linalg.generic {{.+}} ins(%{{.+}} : tensor<4x6x6xf32>)
//       CHECK:   %[[F:.+]] = linalg.fill ins(%{{.+}} : f32) outs(%{{.+}} : tensor<4x8x8xf32>)
//       CHECK:   %[[P:.+]] = tensor.insert_slice %[[Y]] into %[[F]][0, 1, 1] [4, 6, 6] [1, 1, 1] : tensor<4x6x6xf32> into tensor<4x8x8xf32>
//   CHECK-NOT:   tensor.pad
//       CHECK:   %[[C:.+]] = linalg.generic {{.+}} ins(%[[P]], %{{.+}} : tensor<4x8x8xf32>, tensor<4x4x3x3xf32>)
//       CHECK:   linalg.generic {indexing_maps = [#{{.+}}, #[[MOVED]], #{{.+}}], {{.+}} ins(%[[C]], %[[P]] : tensor<4x6x6xf32>, tensor<4x8x8xf32>)
func.func @residual(%x: tensor<4x6x6xf32>, %w: tensor<4x4x3x3xf32>) -> tensor<4x6x6xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x6x6xf32>
  %y = linalg.generic {indexing_maps = [affine_map<(c, h, w) -> (c, h, w)>, affine_map<(c, h, w) -> (c, h, w)>], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%x : tensor<4x6x6xf32>) outs(%e : tensor<4x6x6xf32>) {
  ^bb0(%a: f32, %o: f32):
    %r = arith.maximumf %a, %zero : f32
    linalg.yield %r : f32
  } -> tensor<4x6x6xf32>
  %p = tensor.pad %y low[0, 1, 1] high[0, 1, 1] {
  ^bb0(%i: index, %j: index, %k: index):
    tensor.yield %zero : f32
  } : tensor<4x6x6xf32> to tensor<4x8x8xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<4x6x6xf32>) -> tensor<4x6x6xf32>
  %c = linalg.generic {indexing_maps = [affine_map<(f, h, w, c, i, j) -> (c, h + i, w + j)>, affine_map<(f, h, w, c, i, j) -> (f, c, i, j)>,
                                        affine_map<(f, h, w, c, i, j) -> (f, h, w)>],
                       iterator_types = ["parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]}
      ins(%p, %w : tensor<4x8x8xf32>, tensor<4x4x3x3xf32>) outs(%z : tensor<4x6x6xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %m = arith.mulf %a, %b : f32
    %s = arith.addf %o, %m : f32
    linalg.yield %s : f32
  } -> tensor<4x6x6xf32>
  %sum = linalg.generic {indexing_maps = [affine_map<(c, h, w) -> (c, h, w)>, affine_map<(c, h, w) -> (c, h, w)>, affine_map<(c, h, w) -> (c, h, w)>], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%c, %y : tensor<4x6x6xf32>, tensor<4x6x6xf32>) outs(%e : tensor<4x6x6xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %s = arith.addf %a, %b : f32
    linalg.yield %s : f32
  } -> tensor<4x6x6xf32>
  return %sum : tensor<4x6x6xf32>
}

// -----

// A squeeze output read by a padded 3x3 and by a 1x1 convolution (a contraction): the 1x1
// reads the interior through a reshape and a slice, which canonicalization does not fold back
// into the producer's result; a strided slice (a stride-2 shortcut's input) moves by the padding.

// CHECK-LABEL: func.func @beside_a_contraction
//       CHECK:   %[[Y:.+]] = linalg.generic {{.+}} ins(%{{.+}} : tensor<4x6x6xf32>)
//       CHECK:   %[[P:.+]] = tensor.insert_slice %[[Y]] into %{{.+}}[0, 1, 1] [4, 6, 6] [1, 1, 1]
//       CHECK:   %[[P1:.+]] = tensor.expand_shape %[[P]] {{\[\[}}0, 1], [2], [3]] output_shape [1, 4, 8, 8]
//       CHECK:   %[[I:.+]] = tensor.extract_slice %[[P1]][0, 0, 1, 1] [1, 4, 6, 6] [1, 1, 1, 1] : tensor<1x4x8x8xf32> to tensor<4x6x6xf32>
//       CHECK:   tensor.extract_slice %[[P]][0, 1, 1] [4, 3, 3] [1, 2, 2] : tensor<4x8x8xf32> to tensor<4x3x3xf32>
//       CHECK:   linalg.generic {{.+}} ins(%[[P]], %{{.+}} : tensor<4x8x8xf32>, tensor<4x4x3x3xf32>)
//       CHECK:   linalg.generic {{.+}} ins(%[[I]], %{{.+}} : tensor<4x6x6xf32>, tensor<4x4xf32>)
func.func @beside_a_contraction(%x: tensor<4x6x6xf32>, %w: tensor<4x4x3x3xf32>, %v: tensor<4x4xf32>) -> (tensor<4x6x6xf32>, tensor<4x6x6xf32>, tensor<4x3x3xf32>) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x6x6xf32>
  %y = linalg.generic {indexing_maps = [affine_map<(c, h, w) -> (c, h, w)>, affine_map<(c, h, w) -> (c, h, w)>], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%x : tensor<4x6x6xf32>) outs(%e : tensor<4x6x6xf32>) {
  ^bb0(%a: f32, %o: f32):
    %r = arith.maximumf %a, %zero : f32
    linalg.yield %r : f32
  } -> tensor<4x6x6xf32>
  %strided = tensor.extract_slice %y[0, 0, 0] [4, 3, 3] [1, 2, 2] : tensor<4x6x6xf32> to tensor<4x3x3xf32>
  %p = tensor.pad %y low[0, 1, 1] high[0, 1, 1] {
  ^bb0(%i: index, %j: index, %k: index):
    tensor.yield %zero : f32
  } : tensor<4x6x6xf32> to tensor<4x8x8xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<4x6x6xf32>) -> tensor<4x6x6xf32>
  %c = linalg.generic {indexing_maps = [affine_map<(f, h, w, c, i, j) -> (c, h + i, w + j)>, affine_map<(f, h, w, c, i, j) -> (f, c, i, j)>,
                                        affine_map<(f, h, w, c, i, j) -> (f, h, w)>],
                       iterator_types = ["parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]}
      ins(%p, %w : tensor<4x8x8xf32>, tensor<4x4x3x3xf32>) outs(%z : tensor<4x6x6xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %m = arith.mulf %a, %b : f32
    %s = arith.addf %o, %m : f32
    linalg.yield %s : f32
  } -> tensor<4x6x6xf32>
  %d = linalg.generic {indexing_maps = [affine_map<(f, h, w, c) -> (c, h, w)>, affine_map<(f, h, w, c) -> (f, c)>, affine_map<(f, h, w, c) -> (f, h, w)>],
                       iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%y, %v : tensor<4x6x6xf32>, tensor<4x4xf32>) outs(%z : tensor<4x6x6xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %m = arith.mulf %a, %b : f32
    %s = arith.addf %o, %m : f32
    linalg.yield %s : f32
  } -> tensor<4x6x6xf32>
  return %c, %d, %strided : tensor<4x6x6xf32>, tensor<4x6x6xf32>, tensor<4x3x3xf32>
}

// -----

// What stays: a pad whose source another reader reshapes, and one of a function argument.

// CHECK-LABEL: func.func @left_alone
//       CHECK:   tensor.pad %{{.+}} low[0, 1, 1]
//       CHECK:   tensor.pad %{{.+}} low[0, 1, 1]
//   CHECK-NOT:   tensor.insert_slice
func.func @left_alone(%x: tensor<4x6x6xf32>) -> (tensor<4x8x8xf32>, tensor<4x36xf32>, tensor<4x8x8xf32>) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x6x6xf32>
  %y = linalg.generic {indexing_maps = [affine_map<(c, h, w) -> (c, h, w)>, affine_map<(c, h, w) -> (c, h, w)>], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%x : tensor<4x6x6xf32>) outs(%e : tensor<4x6x6xf32>) {
  ^bb0(%a: f32, %o: f32):
    %r = arith.maximumf %a, %zero : f32
    linalg.yield %r : f32
  } -> tensor<4x6x6xf32>
  %p = tensor.pad %y low[0, 1, 1] high[0, 1, 1] {
  ^bb0(%i: index, %j: index, %k: index):
    tensor.yield %zero : f32
  } : tensor<4x6x6xf32> to tensor<4x8x8xf32>
  %flat = tensor.collapse_shape %y [[0], [1, 2]] : tensor<4x6x6xf32> into tensor<4x36xf32>
  %q = tensor.pad %x low[0, 1, 1] high[0, 1, 1] {
  ^bb0(%i: index, %j: index, %k: index):
    tensor.yield %zero : f32
  } : tensor<4x6x6xf32> to tensor<4x8x8xf32>
  return %p, %flat, %q : tensor<4x8x8xf32>, tensor<4x36xf32>, tensor<4x8x8xf32>
}

// -----

// A concatenation a max pool alone reads (a SqueezeNet fire before its pool): the pieces go
// into the fill of the padded shape, the larger first, at the pad's offsets; the reshape that
// dropped the unit batch is gone. A concatenation another op also reads stays.

// CHECK-LABEL: func.func @concatenated
//       CHECK:   %[[F:.+]] = linalg.fill ins(%{{.+}} : f32) outs(%{{.+}} : tensor<6x7x7xf32>)
//       CHECK:   %[[P:.+]] = tensor.insert_slice %{{.+}} into %[[F]][2, 0, 0] [4, 5, 5] [1, 1, 1] : tensor<4x5x5xf32> into tensor<6x7x7xf32>
//       CHECK:   %[[Q:.+]] = tensor.insert_slice %{{.+}} into %[[P]][0, 0, 0] [2, 5, 5] [1, 1, 1] : tensor<2x5x5xf32> into tensor<6x7x7xf32>
//   CHECK-NOT:   tensor.collapse_shape
//       CHECK:   return %[[Q]]
// CHECK-LABEL: func.func @concatenation_read_twice
//       CHECK:   tensor.pad
func.func @concatenated(%a: tensor<2x5x5xf32>, %b: tensor<4x5x5xf32>) -> tensor<6x7x7xf32> {
  %ninf = arith.constant 0xFF800000 : f32
  %e = tensor.empty() : tensor<1x6x5x5xf32>
  %c0 = tensor.insert_slice %a into %e[0, 0, 0, 0] [1, 2, 5, 5] [1, 1, 1, 1] : tensor<2x5x5xf32> into tensor<1x6x5x5xf32>
  %c1 = tensor.insert_slice %b into %c0[0, 2, 0, 0] [1, 4, 5, 5] [1, 1, 1, 1] : tensor<4x5x5xf32> into tensor<1x6x5x5xf32>
  %c = tensor.collapse_shape %c1 [[0, 1], [2], [3]] : tensor<1x6x5x5xf32> into tensor<6x5x5xf32>
  %p = tensor.pad %c low[0, 0, 0] high[0, 2, 2] {
  ^bb0(%i: index, %j: index, %k: index):
    tensor.yield %ninf : f32
  } : tensor<6x5x5xf32> to tensor<6x7x7xf32>
  return %p : tensor<6x7x7xf32>
}

func.func @concatenation_read_twice(%a: tensor<2x5x5xf32>, %b: tensor<4x5x5xf32>) -> (tensor<6x7x7xf32>, tensor<6x5x5xf32>) {
  %ninf = arith.constant 0xFF800000 : f32
  %e = tensor.empty() : tensor<6x5x5xf32>
  %c0 = tensor.insert_slice %a into %e[0, 0, 0] [2, 5, 5] [1, 1, 1] : tensor<2x5x5xf32> into tensor<6x5x5xf32>
  %c = tensor.insert_slice %b into %c0[2, 0, 0] [4, 5, 5] [1, 1, 1] : tensor<4x5x5xf32> into tensor<6x5x5xf32>
  %p = tensor.pad %c low[0, 0, 0] high[0, 2, 2] {
  ^bb0(%i: index, %j: index, %k: index):
    tensor.yield %ninf : f32
  } : tensor<6x5x5xf32> to tensor<6x7x7xf32>
  return %p, %c : tensor<6x7x7xf32>, tensor<6x5x5xf32>
}
