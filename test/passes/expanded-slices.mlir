// RUN: schedc-opt %s --split-input-file --passes=expanded-slices | filecheck %s

// GPT-2's keys: columns 768..1535 of the fused Q/K/V projection, split into 12 heads of 64. The
// whole projection is split into 36 heads first, and heads 12..23 sliced, so that the reader
// takes the slice into its dispatch (no expand_shape between them).

// CHECK-LABEL: func.func @keys
//       CHECK:   %[[E:.+]] = tensor.expand_shape %arg0 {{\[\[}}0], [1], [2, 3]] output_shape [1, 8, 36, 64] : tensor<1x8x2304xf16> into tensor<1x8x36x64xf16>
//       CHECK:   %[[K:.+]] = tensor.extract_slice %[[E]][0, 0, 12, 0] [1, 8, 12, 64] [1, 1, 1, 1] : tensor<1x8x36x64xf16> to tensor<8x12x64xf16>
//   CHECK-NOT:   tensor.extract_slice
//       CHECK:   return %[[K]]
func.func @keys(%qkv: tensor<1x8x2304xf16>) -> tensor<8x12x64xf16> {
  %s = tensor.extract_slice %qkv[0, 0, 768] [1, 8, 768] [1, 1, 1] : tensor<1x8x2304xf16> to tensor<8x768xf16>
  %k = tensor.expand_shape %s [[0], [1, 2]] output_shape [8, 12, 64] : tensor<8x768xf16> into tensor<8x12x64xf16>
  return %k : tensor<8x12x64xf16>
}

// -----

// A slice that starts inside a head (offset 700 is no multiple of 64) is left alone, and so is
// a slice whose other reader needs it whole (it stays, beside the new form).

// CHECK-LABEL: func.func @misaligned
//       CHECK:   %[[S:.+]] = tensor.extract_slice %arg0[0, 700] [8, 768] [1, 1]
//       CHECK:   tensor.expand_shape %[[S]] {{\[\[}}0], [1, 2]] output_shape [8, 12, 64]
func.func @misaligned(%x: tensor<8x2304xf16>) -> tensor<8x12x64xf16> {
  %s = tensor.extract_slice %x[0, 700] [8, 768] [1, 1] : tensor<8x2304xf16> to tensor<8x768xf16>
  %k = tensor.expand_shape %s [[0], [1, 2]] output_shape [8, 12, 64] : tensor<8x768xf16> into tensor<8x12x64xf16>
  return %k : tensor<8x12x64xf16>
}

// CHECK-LABEL: func.func @also_read_whole
//       CHECK:   %[[S:.+]] = tensor.extract_slice %arg0[0, 768] [8, 768] [1, 1] : tensor<8x2304xf16> to tensor<8x768xf16>
//       CHECK:   %[[E:.+]] = tensor.expand_shape %arg0 {{\[\[}}0], [1, 2]] output_shape [8, 36, 64]
//       CHECK:   %[[K:.+]] = tensor.extract_slice %[[E]][0, 12, 0] [8, 12, 64] [1, 1, 1] : tensor<8x36x64xf16> to tensor<8x12x64xf16>
//       CHECK:   return %[[K]], %[[S]]
func.func @also_read_whole(%x: tensor<8x2304xf16>) -> (tensor<8x12x64xf16>, tensor<8x768xf16>) {
  %s = tensor.extract_slice %x[0, 768] [8, 768] [1, 1] : tensor<8x2304xf16> to tensor<8x768xf16>
  %k = tensor.expand_shape %s [[0], [1, 2]] output_shape [8, 12, 64] : tensor<8x768xf16> into tensor<8x12x64xf16>
  return %k, %s : tensor<8x12x64xf16>, tensor<8x768xf16>
}
