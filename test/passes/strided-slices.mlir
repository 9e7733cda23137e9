// RUN: schedc-opt %s --split-input-file --passes=strided-slices | filecheck %s

// A 1x1 convolution of stride 2 as IREE's global optimization leaves it: the image read at
// (d3, d1 * 2, d2 * 2). It reads a strided slice of the image instead, at plain indices.

// CHECK:       #[[PLAIN:.+]] = affine_map<(d0, d1, d2, d3) -> (d3, d1, d2)>
// CHECK-LABEL: func.func @shortcut
//       CHECK:   %[[S:.+]] = tensor.extract_slice %arg0[0, 0, 0] [8, 3, 3] [1, 2, 2] : tensor<8x6x6xf16> to tensor<8x3x3xf16>
//       CHECK:   linalg.generic {indexing_maps = [#{{.+}}, #[[PLAIN]], #{{.+}}], {{.+}} ins(%arg1, %[[S]] : tensor<16x8xf16>, tensor<8x3x3xf16>)
func.func @shortcut(%x: tensor<8x6x6xf16>, %w: tensor<16x8xf16>) -> tensor<16x3x3xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<16x3x3xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<16x3x3xf32>) -> tensor<16x3x3xf32>
  %c = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d3)>, affine_map<(d0, d1, d2, d3) -> (d3, d1 * 2, d2 * 2)>,
                                        affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>],
                       iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%w, %x : tensor<16x8xf16>, tensor<8x6x6xf16>) outs(%z : tensor<16x3x3xf32>) {
  ^bb0(%a: f16, %b: f16, %o: f32):
    %a32 = arith.extf %a : f16 to f32
    %b32 = arith.extf %b : f16 to f32
    %m = arith.mulf %a32, %b32 : f32
    %s = arith.addf %o, %m : f32
    linalg.yield %s : f32
  } -> tensor<16x3x3xf32>
  return %c : tensor<16x3x3xf32>
}

// -----

// A 3x3 convolution of stride 2 reads its image at sums (d1 * 2 + d4): a window, not a plain
// stride. It is left alone.

// CHECK-LABEL: func.func @window
//   CHECK-NOT:   tensor.extract_slice
//       CHECK:   linalg.generic {{.+}} ins(%arg0, %arg1 : tensor<8x7x7xf32>, tensor<16x8x3x3xf32>)
func.func @window(%x: tensor<8x7x7xf32>, %w: tensor<16x8x3x3xf32>) -> tensor<16x3x3xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<16x3x3xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<16x3x3xf32>) -> tensor<16x3x3xf32>
  %c = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4, d5) -> (d3, d1 * 2 + d4, d2 * 2 + d5)>,
                                        affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d3, d4, d5)>,
                                        affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d2)>],
                       iterator_types = ["parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]}
      ins(%x, %w : tensor<8x7x7xf32>, tensor<16x8x3x3xf32>) outs(%z : tensor<16x3x3xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %m = arith.mulf %a, %b : f32
    %s = arith.addf %o, %m : f32
    linalg.yield %s : f32
  } -> tensor<16x3x3xf32>
  return %c : tensor<16x3x3xf32>
}

// -----

// A strided elementwise op (a subsampling copy) has no reduction: not a contraction, left alone.

// CHECK-LABEL: func.func @subsample
//   CHECK-NOT:   tensor.extract_slice
//       CHECK:   linalg.generic {{.+}} ins(%arg0 : tensor<8x6x6xf32>)
func.func @subsample(%x: tensor<8x6x6xf32>) -> tensor<8x3x3xf32> {
  %e = tensor.empty() : tensor<8x3x3xf32>
  %c = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1 * 2, d2 * 2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>],
                       iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%x : tensor<8x6x6xf32>) outs(%e : tensor<8x3x3xf32>) {
  ^bb0(%a: f32, %o: f32):
    linalg.yield %a : f32
  } -> tensor<8x3x3xf32>
  return %c : tensor<8x3x3xf32>
}
