// RUN: schedc-opt %s --split-input-file --passes=reduction-config | filecheck %s
// RUN: schedc-opt %s --split-input-file --passes="reduction-config{thread=2 subgroups=2}" | filecheck %s --check-prefix=FORCED

// A softmax over 197 f16 keys as IREE 3.13 configures it (--compile-to=executable-configurations):
// TileAndFuse, one thread per row. It becomes what IREE gives rows of 256: a subgroup per row,
// 8 elements a lane, one step of 256 of which IREE masks the last 59; the max and the sum are
// partial reductions, the division a serial step, the root (the sum) keeps one row per workgroup.

//       CHECK: #[[VD:.+]] = #iree_codegen.translation_info<pipeline = #iree_gpu.pipeline<VectorDistribute> workgroup_size = [32, 1, 1] subgroup_size = 32>
// CHECK-LABEL: hal.executable private @softmax_197
//       CHECK:   func.func @softmax_197_softmax_3x197x197xf32_generic() attributes {translation_info = #[[VD]]}
//       CHECK:     linalg.generic {{.*}} ins(%{{.+}} : tensor<3x197x197xf16>) outs(%{{.+}} : tensor<3x197xf32>) attrs =  {lowering_config = #iree_gpu.lowering_config<{lane_basis = {{\[}}[1, 1, 32], [0, 1, 2]], partial_reduction = [0, 0, 256], subgroup_basis = {{\[}}[1, 1, 1], [0, 1, 2]], thread = [0, 0, 8]}>}
//       CHECK:     lowering_config = #iree_gpu.lowering_config<{lane_basis = {{\[}}[1, 1, 32], [0, 1, 2]], partial_reduction = [0, 0, 256], subgroup_basis = {{\[}}[1, 1, 1], [0, 1, 2]], thread = [0, 0, 8], workgroup = [1, 1, 0]}>
//       CHECK:     lowering_config = #iree_gpu.lowering_config<{lane_basis = {{\[}}[1, 1, 32], [0, 1, 2]], serial = [0, 0, 256], subgroup_basis = {{\[}}[1, 1, 1], [0, 1, 2]], thread = [0, 0, 8]}>

//       FORCED: #iree_codegen.translation_info<pipeline = #iree_gpu.pipeline<VectorDistribute> workgroup_size = [64, 1, 1] subgroup_size = 32>
// FORCED-LABEL: hal.executable private @softmax_197
//       FORCED:   lowering_config = #iree_gpu.lowering_config<{lane_basis = {{\[}}[1, 1, 32], [0, 1, 2]], partial_reduction = [0, 0, 128], subgroup_basis = {{\[}}[1, 1, 2], [0, 1, 2]], thread = [0, 0, 2]}>
module {
  hal.executable private @softmax_197 {
    hal.executable.variant public @cuda_nvptx_fb target(<"cuda", "cuda-nvptx-fb", {iree_codegen.target_info = #iree_gpu.target<arch = "sm_80", features = "+ptx76", wgp = <compute = fp64|fp32|fp16|int64|int32|int16|int8, storage = b64|b32|b16|b8, subgroup = shuffle|arithmetic, dot = dp4xi8toi32, mma = [<NV_MMA_SYNC_F32_16x8x16_F16>, <NV_MMA_SYNC_F16_16x8x16_F16>, <NV_MMA_SYNC_F32_16x8x16_BF16>, <NV_WMMA_F32_16x16x16_F16>, <NV_WMMA_F16_16x16x16_F16>], subgroup_size_choices = [32], max_workgroup_sizes = [1024, 1024, 1024], max_thread_count_per_workgroup = 1024, max_workgroup_memory_bytes = 166912, max_workgroup_counts = [2147483647, 65535, 65535]>>}>) {
      hal.executable.export public @softmax_197_softmax_3x197x197xf32_generic ordinal(0) layout(#hal.pipeline.layout<bindings = [#hal.pipeline.binding<storage_buffer, "ReadOnly|Indirect">, #hal.pipeline.binding<storage_buffer, Indirect>], flags = Indirect>) count(%arg0: !hal.device) -> (index, index, index) {
        %x, %y, %z = iree_tensor_ext.dispatch.workgroup_count_from_slice()
        hal.return %x, %y, %z : index, index, index
      }
      builtin.module {
        func.func @softmax_197_softmax_3x197x197xf32_generic() attributes {translation_info = #iree_codegen.translation_info<pipeline = #iree_gpu.pipeline<TileAndFuse> workgroup_size = [32, 1, 1] subgroup_size = 32>} {
          %cst = arith.constant 0.000000e+00 : f32
          %cst_0 = arith.constant 0xFFC00000 : f32
          %c0 = arith.constant 0 : index
          %0 = hal.interface.binding.subspan layout(<bindings = [#hal.pipeline.binding<storage_buffer, "ReadOnly|Indirect">, #hal.pipeline.binding<storage_buffer, Indirect>], flags = Indirect>) binding(0) alignment(64) offset(%c0) flags("ReadOnly|Indirect") : memref<3x197x197xf16, #hal.descriptor_type<storage_buffer>>
          %1 = hal.interface.binding.subspan layout(<bindings = [#hal.pipeline.binding<storage_buffer, "ReadOnly|Indirect">, #hal.pipeline.binding<storage_buffer, Indirect>], flags = Indirect>) binding(1) alignment(64) offset(%c0) flags(Indirect) : memref<3x197x197xf16, #hal.descriptor_type<storage_buffer>>
          %2 = iree_codegen.load_from_buffer %0 : memref<3x197x197xf16, #hal.descriptor_type<storage_buffer>> -> tensor<3x197x197xf16>
          %3 = tensor.empty() : tensor<3x197x197xf16>
          %4 = tensor.empty() : tensor<3x197xf32>
          %5 = linalg.fill ins(%cst_0 : f32) outs(%4 : tensor<3x197xf32>) -> tensor<3x197xf32>
          %6 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1)>], iterator_types = ["parallel", "parallel", "reduction"]} ins(%2 : tensor<3x197x197xf16>) outs(%5 : tensor<3x197xf32>) {
          ^bb0(%in: f16, %out: f32):
            %10 = arith.extf %in : f16 to f32
            %11 = arith.maxnumf %10, %out : f32
            linalg.yield %11 : f32
          } -> tensor<3x197xf32>
          %7 = linalg.fill ins(%cst : f32) outs(%4 : tensor<3x197xf32>) -> tensor<3x197xf32>
          %8 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1)>, affine_map<(d0, d1, d2) -> (d0, d1)>], iterator_types = ["parallel", "parallel", "reduction"]} ins(%2, %6 : tensor<3x197x197xf16>, tensor<3x197xf32>) outs(%7 : tensor<3x197xf32>) attrs =  {lowering_config = #iree_gpu.lowering_config<{reduction = [0, 0, 1], thread = [1, 1, 0], workgroup = [4, 8, 0]}>} {
          ^bb0(%in: f16, %in_1: f32, %out: f32):
            %10 = arith.extf %in : f16 to f32
            %11 = arith.subf %10, %in_1 : f32
            %12 = math.exp %11 : f32
            %13 = arith.addf %12, %out : f32
            linalg.yield %13 : f32
          } -> tensor<3x197xf32>
          %9 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1)>, affine_map<(d0, d1, d2) -> (d0, d1)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%2, %6, %8 : tensor<3x197x197xf16>, tensor<3x197xf32>, tensor<3x197xf32>) outs(%3 : tensor<3x197x197xf16>) {
          ^bb0(%in: f16, %in_1: f32, %in_2: f32, %out: f16):
            %10 = arith.extf %in : f16 to f32
            %11 = arith.subf %10, %in_1 : f32
            %12 = math.exp %11 : f32
            %13 = arith.divf %12, %in_2 : f32
            %14 = arith.truncf %13 : f32 to f16
            linalg.yield %14 : f16
          } -> tensor<3x197x197xf16>
          iree_codegen.store_to_buffer %9, %1 : tensor<3x197x197xf16> into memref<3x197x197xf16, #hal.descriptor_type<storage_buffer>>
          return
        }
        iree_codegen.dispatch_config @softmax_197_softmax_3x197x197xf32_generic {
        ^bb0(%arg0: !hal.device):
          %x, %y, %z = iree_tensor_ext.dispatch.workgroup_count_from_slice()
          iree_codegen.yield %x, %y, %z : index, index, index
        }
      }
    }
  }
}

// -----

// Rows of 256: IREE already reduces them by subgroup (VectorDistribute); its configs stay.

// CHECK-LABEL: hal.executable private @softmax_256
//       CHECK:   func.func @softmax_256_softmax_3x256x256xf32_generic() attributes {translation_info = #{{.+}}}
//   CHECK-NOT:   workgroup_size = [64, 1, 1]
//       CHECK:   lowering_config = #iree_gpu.lowering_config<{lane_basis = {{\[}}[1, 1, 32], [0, 1, 2]], partial_reduction = [0, 0, 256], subgroup_basis = {{\[}}[1, 1, 1], [0, 1, 2]], thread = [0, 0, 8]}>
// FORCED-LABEL: hal.executable private @softmax_256
//       FORCED:   partial_reduction = [0, 0, 256], subgroup_basis = {{\[}}[1, 1, 1], [0, 1, 2]], thread = [0, 0, 8]
module {
  hal.executable private @softmax_256 {
    hal.executable.variant public @cuda_nvptx_fb target(<"cuda", "cuda-nvptx-fb", {iree_codegen.target_info = #iree_gpu.target<arch = "sm_80", features = "+ptx76", wgp = <compute = fp64|fp32|fp16|int64|int32|int16|int8, storage = b64|b32|b16|b8, subgroup = shuffle|arithmetic, dot = dp4xi8toi32, mma = [<NV_MMA_SYNC_F32_16x8x16_F16>, <NV_MMA_SYNC_F16_16x8x16_F16>, <NV_MMA_SYNC_F32_16x8x16_BF16>, <NV_WMMA_F32_16x16x16_F16>, <NV_WMMA_F16_16x16x16_F16>], subgroup_size_choices = [32], max_workgroup_sizes = [1024, 1024, 1024], max_thread_count_per_workgroup = 1024, max_workgroup_memory_bytes = 166912, max_workgroup_counts = [2147483647, 65535, 65535]>>}>) {
      hal.executable.export public @softmax_256_softmax_3x256x256xf32_generic ordinal(0) layout(#hal.pipeline.layout<bindings = [#hal.pipeline.binding<storage_buffer, "ReadOnly|Indirect">, #hal.pipeline.binding<storage_buffer, Indirect>], flags = Indirect>) count(%arg0: !hal.device) -> (index, index, index) {
        %x, %y, %z = iree_tensor_ext.dispatch.workgroup_count_from_slice()
        hal.return %x, %y, %z : index, index, index
      }
      builtin.module {
        func.func @softmax_256_softmax_3x256x256xf32_generic() attributes {translation_info = #iree_codegen.translation_info<pipeline = #iree_gpu.pipeline<VectorDistribute> workgroup_size = [32, 1, 1] subgroup_size = 32, {gpu_pipeline_options = #iree_gpu.pipeline_options<no_reduce_shared_memory_bank_conflicts = false, use_igemm_convolution = false>}>} {
          %cst = arith.constant 0.000000e+00 : f32
          %cst_0 = arith.constant 0xFFC00000 : f32
          %c0 = arith.constant 0 : index
          %0 = hal.interface.binding.subspan layout(<bindings = [#hal.pipeline.binding<storage_buffer, "ReadOnly|Indirect">, #hal.pipeline.binding<storage_buffer, Indirect>], flags = Indirect>) binding(0) alignment(64) offset(%c0) flags("ReadOnly|Indirect") : memref<3x256x256xf16, #hal.descriptor_type<storage_buffer>>
          %1 = hal.interface.binding.subspan layout(<bindings = [#hal.pipeline.binding<storage_buffer, "ReadOnly|Indirect">, #hal.pipeline.binding<storage_buffer, Indirect>], flags = Indirect>) binding(1) alignment(64) offset(%c0) flags(Indirect) : memref<3x256x256xf16, #hal.descriptor_type<storage_buffer>>
          %2 = iree_codegen.load_from_buffer %0 : memref<3x256x256xf16, #hal.descriptor_type<storage_buffer>> -> tensor<3x256x256xf16>
          %3 = tensor.empty() : tensor<3x256x256xf16>
          %4 = tensor.empty() : tensor<3x256xf32>
          %5 = linalg.fill ins(%cst_0 : f32) outs(%4 : tensor<3x256xf32>) -> tensor<3x256xf32>
          %6 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1)>], iterator_types = ["parallel", "parallel", "reduction"]} ins(%2 : tensor<3x256x256xf16>) outs(%5 : tensor<3x256xf32>) attrs =  {lowering_config = #iree_gpu.lowering_config<{lane_basis = [[1, 1, 32], [0, 1, 2]], partial_reduction = [0, 0, 256], subgroup_basis = [[1, 1, 1], [0, 1, 2]], thread = [0, 0, 8]}>} {
          ^bb0(%in: f16, %out: f32):
            %10 = arith.extf %in : f16 to f32
            %11 = arith.maxnumf %10, %out : f32
            linalg.yield %11 : f32
          } -> tensor<3x256xf32>
          %7 = linalg.fill ins(%cst : f32) outs(%4 : tensor<3x256xf32>) -> tensor<3x256xf32>
          %8 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1)>, affine_map<(d0, d1, d2) -> (d0, d1)>], iterator_types = ["parallel", "parallel", "reduction"]} ins(%2, %6 : tensor<3x256x256xf16>, tensor<3x256xf32>) outs(%7 : tensor<3x256xf32>) attrs =  {lowering_config = #iree_gpu.lowering_config<{lane_basis = [[1, 1, 32], [0, 1, 2]], partial_reduction = [0, 0, 256], subgroup_basis = [[1, 1, 1], [0, 1, 2]], thread = [0, 0, 8], workgroup = [1, 1, 0]}>} {
          ^bb0(%in: f16, %in_1: f32, %out: f32):
            %10 = arith.extf %in : f16 to f32
            %11 = arith.subf %10, %in_1 : f32
            %12 = math.exp %11 : f32
            %13 = arith.addf %12, %out : f32
            linalg.yield %13 : f32
          } -> tensor<3x256xf32>
          %9 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1)>, affine_map<(d0, d1, d2) -> (d0, d1)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%2, %6, %8 : tensor<3x256x256xf16>, tensor<3x256xf32>, tensor<3x256xf32>) outs(%3 : tensor<3x256x256xf16>) attrs =  {lowering_config = #iree_gpu.lowering_config<{lane_basis = [[1, 1, 32], [0, 1, 2]], serial = [0, 0, 256], subgroup_basis = [[1, 1, 1], [0, 1, 2]], thread = [0, 0, 8]}>} {
          ^bb0(%in: f16, %in_1: f32, %in_2: f32, %out: f16):
            %10 = arith.extf %in : f16 to f32
            %11 = arith.subf %10, %in_1 : f32
            %12 = math.exp %11 : f32
            %13 = arith.divf %12, %in_2 : f32
            %14 = arith.truncf %13 : f32 to f16
            linalg.yield %14 : f16
          } -> tensor<3x256x256xf16>
          iree_codegen.store_to_buffer %9, %1 : tensor<3x256x256xf16> into memref<3x256x256xf16, #hal.descriptor_type<storage_buffer>>
          return
        }
        iree_codegen.dispatch_config @softmax_256_softmax_3x256x256xf32_generic {
        ^bb0(%arg0: !hal.device):
          %x, %y, %z = iree_tensor_ext.dispatch.workgroup_count_from_slice()
          iree_codegen.yield %x, %y, %z : index, index, index
        }
      }
    }
  }
}
