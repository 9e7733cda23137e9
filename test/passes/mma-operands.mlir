// RUN: schedc-opt %s --split-input-file --passes=mma-operands | filecheck %s

// A 1x1 NCHW convolution in f16 after IREE's preprocessing: the input (k, n) first, the filter
// (m, k) second. IREE 3.13's CUDA tensor-core code computes it wrongly in that order, so the
// inputs trade places, with their maps and the body's two arguments; the loops, the output
// and the arithmetic stay.

//   CHECK-DAG: #[[KN:.+]] = affine_map<(d0, d1, d2) -> (d2, d1)>
//   CHECK-DAG: #[[MK:.+]] = affine_map<(d0, d1, d2) -> (d0, d2)>
//   CHECK-DAG: #[[MN:.+]] = affine_map<(d0, d1, d2) -> (d0, d1)>
// CHECK-LABEL: flow.executable private @conv1x1
//       CHECK:   linalg.generic {indexing_maps = [#[[MK]], #[[KN]], #[[MN]]], iterator_types = ["parallel", "parallel", "reduction"]} ins(%[[FILTER:.+]], %[[INPUT:.+]] : tensor<16x64xf16>, tensor<64x3025xf16>)
//  CHECK-NEXT:   ^bb0(%[[A:.+]]: f16, %[[B:.+]]: f16, %{{.+}}: f32):
//  CHECK-NEXT:     arith.extf %[[B]] : f16 to f32
//  CHECK-NEXT:     arith.extf %[[A]] : f16 to f32
#kn = affine_map<(d0, d1, d2) -> (d2, d1)>
#mk = affine_map<(d0, d1, d2) -> (d0, d2)>
#mn = affine_map<(d0, d1, d2) -> (d0, d1)>
module {
  flow.executable private @conv1x1 {
    flow.executable.export public @conv1x1_matmul_like_16x3025x64_f16 workgroups() -> (index, index, index) {
      %x, %y, %z = iree_tensor_ext.dispatch.workgroup_count_from_slice()
      flow.return %x, %y, %z : index, index, index
    }
    builtin.module {
      func.func @conv1x1_matmul_like_16x3025x64_f16(%arg0: !iree_tensor_ext.dispatch.tensor<readonly:tensor<64x3025xf16>>, %arg1: !iree_tensor_ext.dispatch.tensor<readonly:tensor<16x64xf16>>, %arg2: !iree_tensor_ext.dispatch.tensor<writeonly:tensor<16x3025xf32>>) {
        %cst = arith.constant 0.000000e+00 : f32
        %0 = iree_tensor_ext.dispatch.tensor.load %arg0, offsets = [0, 0], sizes = [64, 3025], strides = [1, 1] : !iree_tensor_ext.dispatch.tensor<readonly:tensor<64x3025xf16>> -> tensor<64x3025xf16>
        %1 = iree_tensor_ext.dispatch.tensor.load %arg1, offsets = [0, 0], sizes = [16, 64], strides = [1, 1] : !iree_tensor_ext.dispatch.tensor<readonly:tensor<16x64xf16>> -> tensor<16x64xf16>
        %2 = tensor.empty() : tensor<16x3025xf32>
        %3 = linalg.fill ins(%cst : f32) outs(%2 : tensor<16x3025xf32>) -> tensor<16x3025xf32>
        %4 = linalg.generic {indexing_maps = [#kn, #mk, #mn], iterator_types = ["parallel", "parallel", "reduction"]} ins(%0, %1 : tensor<64x3025xf16>, tensor<16x64xf16>) outs(%3 : tensor<16x3025xf32>) {
        ^bb0(%in: f16, %in_0: f16, %out: f32):
          %5 = arith.extf %in : f16 to f32
          %6 = arith.extf %in_0 : f16 to f32
          %7 = arith.mulf %5, %6 : f32
          %8 = arith.addf %out, %7 : f32
          linalg.yield %8 : f32
        } -> tensor<16x3025xf32>
        iree_tensor_ext.dispatch.tensor.store %4, %arg2, offsets = [0, 0], sizes = [16, 3025], strides = [1, 1] : tensor<16x3025xf32> -> !iree_tensor_ext.dispatch.tensor<writeonly:tensor<16x3025xf32>>
        return
      }
    }
  }
  util.func public @conv(%x: tensor<64x3025xf16>, %w: tensor<16x64xf16>) -> tensor<16x3025xf32> {
    %0 = flow.dispatch @conv1x1::@conv1x1_matmul_like_16x3025x64_f16(%x, %w) : (tensor<64x3025xf16>, tensor<16x64xf16>) -> tensor<16x3025xf32>
    util.return %0 : tensor<16x3025xf32>
  }
}

// -----

// The same contraction in f32 (IREE's SIMT code, right in either order) and an f16 matmul whose
// first input already indexes the output's leading loop: both stay as they are.

// CHECK-LABEL: flow.executable private @f32_conv1x1
//       CHECK:   ins(%{{.+}}, %{{.+}} : tensor<64x3025xf32>, tensor<16x64xf32>)
// CHECK-LABEL: flow.executable private @f16_linear
//       CHECK:   ins(%{{.+}}, %{{.+}} : tensor<32x128xf16>, tensor<128x384xf16>)
#kn = affine_map<(d0, d1, d2) -> (d2, d1)>
#mk = affine_map<(d0, d1, d2) -> (d0, d2)>
#mn = affine_map<(d0, d1, d2) -> (d0, d1)>
module {
  flow.executable private @f32_conv1x1 {
    flow.executable.export public @f32_conv1x1_matmul_like workgroups() -> (index, index, index) {
      %x, %y, %z = iree_tensor_ext.dispatch.workgroup_count_from_slice()
      flow.return %x, %y, %z : index, index, index
    }
    builtin.module {
      func.func @f32_conv1x1_matmul_like(%arg0: !iree_tensor_ext.dispatch.tensor<readonly:tensor<64x3025xf32>>, %arg1: !iree_tensor_ext.dispatch.tensor<readonly:tensor<16x64xf32>>, %arg2: !iree_tensor_ext.dispatch.tensor<writeonly:tensor<16x3025xf32>>) {
        %cst = arith.constant 0.000000e+00 : f32
        %0 = iree_tensor_ext.dispatch.tensor.load %arg0, offsets = [0, 0], sizes = [64, 3025], strides = [1, 1] : !iree_tensor_ext.dispatch.tensor<readonly:tensor<64x3025xf32>> -> tensor<64x3025xf32>
        %1 = iree_tensor_ext.dispatch.tensor.load %arg1, offsets = [0, 0], sizes = [16, 64], strides = [1, 1] : !iree_tensor_ext.dispatch.tensor<readonly:tensor<16x64xf32>> -> tensor<16x64xf32>
        %2 = tensor.empty() : tensor<16x3025xf32>
        %3 = linalg.fill ins(%cst : f32) outs(%2 : tensor<16x3025xf32>) -> tensor<16x3025xf32>
        %4 = linalg.generic {indexing_maps = [#kn, #mk, #mn], iterator_types = ["parallel", "parallel", "reduction"]} ins(%0, %1 : tensor<64x3025xf32>, tensor<16x64xf32>) outs(%3 : tensor<16x3025xf32>) {
        ^bb0(%in: f32, %in_0: f32, %out: f32):
          %5 = arith.mulf %in, %in_0 : f32
          %6 = arith.addf %out, %5 : f32
          linalg.yield %6 : f32
        } -> tensor<16x3025xf32>
        iree_tensor_ext.dispatch.tensor.store %4, %arg2, offsets = [0, 0], sizes = [16, 3025], strides = [1, 1] : tensor<16x3025xf32> -> !iree_tensor_ext.dispatch.tensor<writeonly:tensor<16x3025xf32>>
        return
      }
    }
  }
  flow.executable private @f16_linear {
    flow.executable.export public @f16_linear_matmul_like workgroups() -> (index, index, index) {
      %x, %y, %z = iree_tensor_ext.dispatch.workgroup_count_from_slice()
      flow.return %x, %y, %z : index, index, index
    }
    builtin.module {
      func.func @f16_linear_matmul_like(%arg0: !iree_tensor_ext.dispatch.tensor<readonly:tensor<32x128xf16>>, %arg1: !iree_tensor_ext.dispatch.tensor<readonly:tensor<128x384xf16>>, %arg2: !iree_tensor_ext.dispatch.tensor<writeonly:tensor<32x384xf32>>) {
        %cst = arith.constant 0.000000e+00 : f32
        %0 = iree_tensor_ext.dispatch.tensor.load %arg0, offsets = [0, 0], sizes = [32, 128], strides = [1, 1] : !iree_tensor_ext.dispatch.tensor<readonly:tensor<32x128xf16>> -> tensor<32x128xf16>
        %1 = iree_tensor_ext.dispatch.tensor.load %arg1, offsets = [0, 0], sizes = [128, 384], strides = [1, 1] : !iree_tensor_ext.dispatch.tensor<readonly:tensor<128x384xf16>> -> tensor<128x384xf16>
        %2 = tensor.empty() : tensor<32x384xf32>
        %3 = linalg.fill ins(%cst : f32) outs(%2 : tensor<32x384xf32>) -> tensor<32x384xf32>
        %4 = linalg.generic {indexing_maps = [#mk, #kn, #mn], iterator_types = ["parallel", "parallel", "reduction"]} ins(%0, %1 : tensor<32x128xf16>, tensor<128x384xf16>) outs(%3 : tensor<32x384xf32>) {
        ^bb0(%in: f16, %in_0: f16, %out: f32):
          %5 = arith.extf %in : f16 to f32
          %6 = arith.extf %in_0 : f16 to f32
          %7 = arith.mulf %5, %6 : f32
          %8 = arith.addf %out, %7 : f32
          linalg.yield %8 : f32
        } -> tensor<32x384xf32>
        iree_tensor_ext.dispatch.tensor.store %4, %arg2, offsets = [0, 0], sizes = [32, 384], strides = [1, 1] : tensor<32x384xf32> -> !iree_tensor_ext.dispatch.tensor<writeonly:tensor<32x384xf32>>
        return
      }
    }
  }
}

// -----

// split-k's parts of an f16 1x1 convolution (768 -> 128 channels at 6x6, 4 parts): a batch of
// contractions over the parts. Past the batch loop, the output's leading loop is the filter's,
// the second input's, as in the unsplit one: the inputs trade places.

//   CHECK-DAG: #[[FGC:.+]] = affine_map<(d0, d1, d2, d3) -> (d1, d0, d3)>
//   CHECK-DAG: #[[GCP:.+]] = affine_map<(d0, d1, d2, d3) -> (d0, d3, d2)>
// CHECK-LABEL: flow.executable private @split_conv1x1
//       CHECK:   linalg.generic {indexing_maps = [#[[FGC]], #[[GCP]], #{{.+}}], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%{{.+}}, %{{.+}} : tensor<128x4x192xf16>, tensor<4x192x36xf16>)
#gcp = affine_map<(d0, d1, d2, d3) -> (d0, d3, d2)>
#fgc = affine_map<(d0, d1, d2, d3) -> (d1, d0, d3)>
#gfp = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>
module {
  flow.executable private @split_conv1x1 {
    flow.executable.export public @split_conv1x1_matmul_like_4x128x36x192_f16 workgroups() -> (index, index, index) {
      %x, %y, %z = iree_tensor_ext.dispatch.workgroup_count_from_slice()
      flow.return %x, %y, %z : index, index, index
    }
    builtin.module {
      func.func @split_conv1x1_matmul_like_4x128x36x192_f16(%arg0: !iree_tensor_ext.dispatch.tensor<readonly:tensor<4x192x36xf16>>, %arg1: !iree_tensor_ext.dispatch.tensor<readonly:tensor<128x4x192xf16>>, %arg2: !iree_tensor_ext.dispatch.tensor<writeonly:tensor<4x128x36xf32>>) {
        %cst = arith.constant 0.000000e+00 : f32
        %0 = iree_tensor_ext.dispatch.tensor.load %arg0, offsets = [0, 0, 0], sizes = [4, 192, 36], strides = [1, 1, 1] : !iree_tensor_ext.dispatch.tensor<readonly:tensor<4x192x36xf16>> -> tensor<4x192x36xf16>
        %1 = iree_tensor_ext.dispatch.tensor.load %arg1, offsets = [0, 0, 0], sizes = [128, 4, 192], strides = [1, 1, 1] : !iree_tensor_ext.dispatch.tensor<readonly:tensor<128x4x192xf16>> -> tensor<128x4x192xf16>
        %2 = tensor.empty() : tensor<4x128x36xf32>
        %3 = linalg.fill ins(%cst : f32) outs(%2 : tensor<4x128x36xf32>) -> tensor<4x128x36xf32>
        %4 = linalg.generic {indexing_maps = [#gcp, #fgc, #gfp], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%0, %1 : tensor<4x192x36xf16>, tensor<128x4x192xf16>) outs(%3 : tensor<4x128x36xf32>) {
        ^bb0(%in: f16, %in_0: f16, %out: f32):
          %5 = arith.extf %in : f16 to f32
          %6 = arith.extf %in_0 : f16 to f32
          %7 = arith.mulf %5, %6 : f32
          %8 = arith.addf %out, %7 : f32
          linalg.yield %8 : f32
        } -> tensor<4x128x36xf32>
        iree_tensor_ext.dispatch.tensor.store %4, %arg2, offsets = [0, 0, 0], sizes = [4, 128, 36], strides = [1, 1, 1] : tensor<4x128x36xf32> -> !iree_tensor_ext.dispatch.tensor<writeonly:tensor<4x128x36xf32>>
        return
      }
    }
  }
  util.func public @split(%x: tensor<4x192x36xf16>, %w: tensor<128x4x192xf16>) -> tensor<4x128x36xf32> {
    %0 = flow.dispatch @split_conv1x1::@split_conv1x1_matmul_like_4x128x36x192_f16(%x, %w) : (tensor<4x192x36xf16>, tensor<128x4x192xf16>) -> tensor<4x128x36xf32>
    util.return %0 : tensor<4x128x36xf32>
  }
}
