// RUN: schedc-opt %s --split-input-file --passes="kernel-config{database=%S/Inputs/kernel-config-empty-db.json}" | filecheck %s
// RUN: schedc-opt %s --split-input-file --passes="kernel-config{database=%S/Inputs/kernel-config-empty-db.json heuristic=false}" | filecheck %s --check-prefix=IREE
// RUN: schedc-opt %s --split-input-file --passes="kernel-config{database=%S/Inputs/kernel-config-db.json}" | filecheck %s --check-prefix=DB
// RUN: schedc-opt %s --split-input-file --passes="kernel-config{target=rocm}" | filecheck %s --check-prefix=ROCM

// A torch linear layer's matmul (B transposed) with its bias fused: with an empty database the
// heuristic tiles its two parallel loops and steps K with both operands in shared memory (IREE's
// own config would run 32x128 tiles: 3 workgroups on 132 SMs); with heuristic=false IREE's
// stays; a database with a measured config for it gives that config and its time.

//       CHECK: #[[PIPELINE:.+]] = #iree_codegen.translation_info<pipeline = #iree_gpu.pipeline<TileAndFuse> workgroup_size = [{{[0-9]+}}, 1, 1] subgroup_size = 32>
//       CHECK: #[[CONFIG:.+]] = #iree_codegen.compilation_info<lowering_config = #iree_gpu.lowering_config<{promote_operands = [0, 1], reduction = [0, 0, {{[0-9]+}}], thread = [{{[0-9]+}}, {{[0-9]+}}, 0], workgroup = [{{[0-9]+}}, {{[0-9]+}}, 0]}>, translation_info = #[[PIPELINE]]>
// CHECK-LABEL: flow.executable private @linear
//       CHECK:   linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : tensor<32x384xf32>) -> tensor<32x384xf32>{{$}}
//       CHECK:   linalg.matmul {{.*}}compilation_info = #[[CONFIG]]
//   CHECK-NOT:   compilation_info
//       CHECK:   util.func public @linear_layer
// IREE-LABEL: flow.executable private @linear
//   IREE-NOT:   compilation_info
//       IREE:   util.func public @linear_layer
//       DB: #[[PIPELINE:.+]] = #iree_codegen.translation_info<pipeline = #iree_gpu.pipeline<TileAndFuse> workgroup_size = [256, 1, 1] subgroup_size = 32>
//       DB: #[[CONFIG:.+]] = #iree_codegen.compilation_info<lowering_config = #iree_gpu.lowering_config<{promote_operands = [0, 1], reduction = [0, 0, 32], thread = [1, 2, 0], workgroup = [16, 32, 0]}>, translation_info = #[[PIPELINE]]>
// DB-LABEL: flow.executable private @linear
//       DB:   func.func @linear_matmul_32x384x128_f32
//  DB-SAME:     sched.kernel_time_us = 1.25
//       DB:   linalg.matmul {{.*}}compilation_info = #[[CONFIG]]
// ROCM-LABEL: flow.executable private @linear
//   ROCM-NOT:   compilation_info
//       ROCM:   util.func public @linear_layer
#map3 = affine_map<(d0, d1, d2) -> (d0, d2)>
#map4 = affine_map<(d0, d1, d2) -> (d1, d2)>
#map5 = affine_map<(d0, d1, d2) -> (d0, d1)>
#map = affine_map<(d0, d1) -> (d0, d1)>
#map2 = affine_map<(d0, d1) -> (d1)>
module {
  flow.executable private @linear {
    flow.executable.export public @linear_matmul_32x384x128_f32 workgroups() -> (index, index, index) {
      %x, %y, %z = iree_tensor_ext.dispatch.workgroup_count_from_slice()
      flow.return %x, %y, %z : index, index, index
    }
    builtin.module {
      func.func @linear_matmul_32x384x128_f32(%arg0: !iree_tensor_ext.dispatch.tensor<readonly:tensor<32x128xf32>>, %arg1: !iree_tensor_ext.dispatch.tensor<readonly:tensor<384x128xf32>>, %arg2: !iree_tensor_ext.dispatch.tensor<readonly:tensor<384xf32>>, %arg3: !iree_tensor_ext.dispatch.tensor<writeonly:tensor<32x384xf32>>) {
        %cst = arith.constant 0.000000e+00 : f32
        %0 = iree_tensor_ext.dispatch.tensor.load %arg0, offsets = [0, 0], sizes = [32, 128], strides = [1, 1] : !iree_tensor_ext.dispatch.tensor<readonly:tensor<32x128xf32>> -> tensor<32x128xf32>
        %1 = iree_tensor_ext.dispatch.tensor.load %arg1, offsets = [0, 0], sizes = [384, 128], strides = [1, 1] : !iree_tensor_ext.dispatch.tensor<readonly:tensor<384x128xf32>> -> tensor<384x128xf32>
        %2 = iree_tensor_ext.dispatch.tensor.load %arg2, offsets = [0], sizes = [384], strides = [1] : !iree_tensor_ext.dispatch.tensor<readonly:tensor<384xf32>> -> tensor<384xf32>
        %3 = tensor.empty() : tensor<32x384xf32>
        %4 = linalg.fill ins(%cst : f32) outs(%3 : tensor<32x384xf32>) -> tensor<32x384xf32>
        %5 = linalg.matmul indexing_maps = [#map3, #map4, #map5] ins(%0, %1 : tensor<32x128xf32>, tensor<384x128xf32>) outs(%4 : tensor<32x384xf32>) -> tensor<32x384xf32>
        %6 = linalg.generic {indexing_maps = [#map, #map2, #map], iterator_types = ["parallel", "parallel"]} ins(%5, %2 : tensor<32x384xf32>, tensor<384xf32>) outs(%3 : tensor<32x384xf32>) {
        ^bb0(%in: f32, %in_0: f32, %out: f32):
          %7 = arith.addf %in, %in_0 : f32
          linalg.yield %7 : f32
        } -> tensor<32x384xf32>
        iree_tensor_ext.dispatch.tensor.store %6, %arg3, offsets = [0, 0], sizes = [32, 384], strides = [1, 1] : tensor<32x384xf32> -> !iree_tensor_ext.dispatch.tensor<writeonly:tensor<32x384xf32>>
        return
      }
    }
  }
  util.func public @linear_layer(%arg0: tensor<32x128xf32>, %w: tensor<384x128xf32>, %b: tensor<384xf32>) -> tensor<32x384xf32> {
    %0 = flow.dispatch @linear::@linear_matmul_32x384x128_f32(%arg0, %w, %b) : (tensor<32x128xf32>, tensor<384x128xf32>, tensor<384xf32>) -> tensor<32x384xf32>
    util.return %0 : tensor<32x384xf32>
  }
}

// -----

// A row reduction (layer norm's mean): no tile config of schedc's fits it; IREE's own stays.

// CHECK-LABEL: flow.executable private @row_mean
//   CHECK-NOT:   compilation_info
//       CHECK:   util.func public @mean
#map = affine_map<(d0, d1) -> (d0, d1)>
#map1 = affine_map<(d0, d1) -> (d0)>
module {
  flow.executable private @row_mean {
    flow.executable.export public @row_mean_reduction_32x128_f32 workgroups() -> (index, index, index) {
      %x, %y, %z = iree_tensor_ext.dispatch.workgroup_count_from_slice()
      flow.return %x, %y, %z : index, index, index
    }
    builtin.module {
      func.func @row_mean_reduction_32x128_f32(%arg0: !iree_tensor_ext.dispatch.tensor<readonly:tensor<32x128xf32>>, %arg1: !iree_tensor_ext.dispatch.tensor<writeonly:tensor<32xf32>>) {
        %cst = arith.constant 0.000000e+00 : f32
        %0 = iree_tensor_ext.dispatch.tensor.load %arg0, offsets = [0, 0], sizes = [32, 128], strides = [1, 1] : !iree_tensor_ext.dispatch.tensor<readonly:tensor<32x128xf32>> -> tensor<32x128xf32>
        %1 = tensor.empty() : tensor<32xf32>
        %2 = linalg.fill ins(%cst : f32) outs(%1 : tensor<32xf32>) -> tensor<32xf32>
        %3 = linalg.generic {indexing_maps = [#map, #map1], iterator_types = ["parallel", "reduction"]} ins(%0 : tensor<32x128xf32>) outs(%2 : tensor<32xf32>) {
        ^bb0(%in: f32, %out: f32):
          %4 = arith.addf %in, %out : f32
          linalg.yield %4 : f32
        } -> tensor<32xf32>
        iree_tensor_ext.dispatch.tensor.store %3, %arg1, offsets = [0], sizes = [32], strides = [1] : tensor<32xf32> -> !iree_tensor_ext.dispatch.tensor<writeonly:tensor<32xf32>>
        return
      }
    }
  }
  util.func public @mean(%arg0: tensor<32x128xf32>) -> tensor<32xf32> {
    %0 = flow.dispatch @row_mean::@row_mean_reduction_32x128_f32(%arg0) : (tensor<32x128xf32>) -> tensor<32xf32>
    util.return %0 : tensor<32xf32>
  }
}
