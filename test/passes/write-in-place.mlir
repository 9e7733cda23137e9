// RUN: schedc-opt %s --split-input-file --passes=write-in-place | filecheck %s

// A batch norm and ReLU after another kernel, the only reader of its input: the result is
// written over the input (tied), and the entry reads and writes the input's binding.

// CHECK-LABEL: flow.executable private @bn
//       CHECK:   func.func @bn(%[[X:.+]]: !iree_tensor_ext.dispatch.tensor<readwrite:tensor<4x8xf32>>, %{{.+}}: !iree_tensor_ext.dispatch.tensor<readonly:tensor<4xf32>>)
//       CHECK:     iree_tensor_ext.dispatch.tensor.load %[[X]]
//       CHECK:     iree_tensor_ext.dispatch.tensor.store %{{.+}}, %[[X]]
// CHECK-LABEL: util.func public @single
//       CHECK:   %[[Y:.+]] = flow.dispatch @producer::@producer(%arg0)
//       CHECK:   flow.dispatch @bn::@bn(%[[Y]], %arg1) : (tensor<4x8xf32>, tensor<4xf32>) -> %[[Y]]
#map = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>
module {
  flow.executable private @producer {
    flow.executable.export public @producer workgroups() -> (index, index, index) {
      %x, %y, %z = iree_tensor_ext.dispatch.workgroup_count_from_slice()
      flow.return %x, %y, %z : index, index, index
    }
    builtin.module {
      func.func @producer(%arg0: !iree_tensor_ext.dispatch.tensor<readonly:tensor<4x8xf32>>, %arg1: !iree_tensor_ext.dispatch.tensor<writeonly:tensor<4x8xf32>>) {
        %0 = iree_tensor_ext.dispatch.tensor.load %arg0, offsets = [0, 0], sizes = [4, 8], strides = [1, 1] : !iree_tensor_ext.dispatch.tensor<readonly:tensor<4x8xf32>> -> tensor<4x8xf32>
        %1 = tensor.empty() : tensor<4x8xf32>
        %2 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel"]} ins(%0 : tensor<4x8xf32>) outs(%1 : tensor<4x8xf32>) {
        ^bb0(%in: f32, %out: f32):
          %3 = arith.mulf %in, %in : f32
          linalg.yield %3 : f32
        } -> tensor<4x8xf32>
        iree_tensor_ext.dispatch.tensor.store %2, %arg1, offsets = [0, 0], sizes = [4, 8], strides = [1, 1] : tensor<4x8xf32> -> !iree_tensor_ext.dispatch.tensor<writeonly:tensor<4x8xf32>>
        return
      }
    }
  }
  flow.executable private @bn {
    flow.executable.export public @bn workgroups() -> (index, index, index) {
      %x, %y, %z = iree_tensor_ext.dispatch.workgroup_count_from_slice()
      flow.return %x, %y, %z : index, index, index
    }
    builtin.module {
      func.func @bn(%arg0: !iree_tensor_ext.dispatch.tensor<readonly:tensor<4x8xf32>>, %arg1: !iree_tensor_ext.dispatch.tensor<readonly:tensor<4xf32>>, %arg2: !iree_tensor_ext.dispatch.tensor<writeonly:tensor<4x8xf32>>) {
        %cst = arith.constant 0.000000e+00 : f32
        %0 = iree_tensor_ext.dispatch.tensor.load %arg0, offsets = [0, 0], sizes = [4, 8], strides = [1, 1] : !iree_tensor_ext.dispatch.tensor<readonly:tensor<4x8xf32>> -> tensor<4x8xf32>
        %1 = iree_tensor_ext.dispatch.tensor.load %arg1, offsets = [0], sizes = [4], strides = [1] : !iree_tensor_ext.dispatch.tensor<readonly:tensor<4xf32>> -> tensor<4xf32>
        %2 = tensor.empty() : tensor<4x8xf32>
        %3 = linalg.generic {indexing_maps = [#map, #row, #map], iterator_types = ["parallel", "parallel"]} ins(%0, %1 : tensor<4x8xf32>, tensor<4xf32>) outs(%2 : tensor<4x8xf32>) {
        ^bb0(%in: f32, %b: f32, %out: f32):
          %4 = arith.addf %in, %b : f32
          %5 = arith.maximumf %4, %cst : f32
          linalg.yield %5 : f32
        } -> tensor<4x8xf32>
        iree_tensor_ext.dispatch.tensor.store %3, %arg2, offsets = [0, 0], sizes = [4, 8], strides = [1, 1] : tensor<4x8xf32> -> !iree_tensor_ext.dispatch.tensor<writeonly:tensor<4x8xf32>>
        return
      }
    }
  }
  util.func public @single(%arg0: tensor<4x8xf32>, %arg1: tensor<4xf32>) -> tensor<4x8xf32> {
    %y = flow.dispatch @producer::@producer(%arg0) : (tensor<4x8xf32>) -> tensor<4x8xf32>
    %z = flow.dispatch @bn::@bn(%y, %arg1) : (tensor<4x8xf32>, tensor<4xf32>) -> tensor<4x8xf32>
    util.return %z : tensor<4x8xf32>
  }
}

// -----

// The input has a second reader (the sum), or is the function's argument: no call of the
// shared executable is tied, and its bindings stay as they were.

// CHECK-LABEL: flow.executable private @bn
//       CHECK:   func.func @bn(%{{.+}}: !iree_tensor_ext.dispatch.tensor<readonly:tensor<4x8xf32>>, %{{.+}}: !iree_tensor_ext.dispatch.tensor<readonly:tensor<4xf32>>, %{{.+}}: !iree_tensor_ext.dispatch.tensor<writeonly:tensor<4x8xf32>>)
// CHECK-LABEL: util.func public @shared_reader
//       CHECK:   flow.dispatch @bn::@bn(%{{.+}}, %arg1) : (tensor<4x8xf32>, tensor<4xf32>) -> tensor<4x8xf32>
//       CHECK:   flow.dispatch @bn::@bn(%arg0, %arg1) : (tensor<4x8xf32>, tensor<4xf32>) -> tensor<4x8xf32>
#map = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>
module {
  flow.executable private @producer {
    flow.executable.export public @producer workgroups() -> (index, index, index) {
      %x, %y, %z = iree_tensor_ext.dispatch.workgroup_count_from_slice()
      flow.return %x, %y, %z : index, index, index
    }
    builtin.module {
      func.func @producer(%arg0: !iree_tensor_ext.dispatch.tensor<readonly:tensor<4x8xf32>>, %arg1: !iree_tensor_ext.dispatch.tensor<writeonly:tensor<4x8xf32>>) {
        %0 = iree_tensor_ext.dispatch.tensor.load %arg0, offsets = [0, 0], sizes = [4, 8], strides = [1, 1] : !iree_tensor_ext.dispatch.tensor<readonly:tensor<4x8xf32>> -> tensor<4x8xf32>
        %1 = tensor.empty() : tensor<4x8xf32>
        %2 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel"]} ins(%0 : tensor<4x8xf32>) outs(%1 : tensor<4x8xf32>) {
        ^bb0(%in: f32, %out: f32):
          %3 = arith.mulf %in, %in : f32
          linalg.yield %3 : f32
        } -> tensor<4x8xf32>
        iree_tensor_ext.dispatch.tensor.store %2, %arg1, offsets = [0, 0], sizes = [4, 8], strides = [1, 1] : tensor<4x8xf32> -> !iree_tensor_ext.dispatch.tensor<writeonly:tensor<4x8xf32>>
        return
      }
    }
  }
  flow.executable private @bn {
    flow.executable.export public @bn workgroups() -> (index, index, index) {
      %x, %y, %z = iree_tensor_ext.dispatch.workgroup_count_from_slice()
      flow.return %x, %y, %z : index, index, index
    }
    builtin.module {
      func.func @bn(%arg0: !iree_tensor_ext.dispatch.tensor<readonly:tensor<4x8xf32>>, %arg1: !iree_tensor_ext.dispatch.tensor<readonly:tensor<4xf32>>, %arg2: !iree_tensor_ext.dispatch.tensor<writeonly:tensor<4x8xf32>>) {
        %cst = arith.constant 0.000000e+00 : f32
        %0 = iree_tensor_ext.dispatch.tensor.load %arg0, offsets = [0, 0], sizes = [4, 8], strides = [1, 1] : !iree_tensor_ext.dispatch.tensor<readonly:tensor<4x8xf32>> -> tensor<4x8xf32>
        %1 = iree_tensor_ext.dispatch.tensor.load %arg1, offsets = [0], sizes = [4], strides = [1] : !iree_tensor_ext.dispatch.tensor<readonly:tensor<4xf32>> -> tensor<4xf32>
        %2 = tensor.empty() : tensor<4x8xf32>
        %3 = linalg.generic {indexing_maps = [#map, #row, #map], iterator_types = ["parallel", "parallel"]} ins(%0, %1 : tensor<4x8xf32>, tensor<4xf32>) outs(%2 : tensor<4x8xf32>) {
        ^bb0(%in: f32, %b: f32, %out: f32):
          %4 = arith.addf %in, %b : f32
          %5 = arith.maximumf %4, %cst : f32
          linalg.yield %5 : f32
        } -> tensor<4x8xf32>
        iree_tensor_ext.dispatch.tensor.store %3, %arg2, offsets = [0, 0], sizes = [4, 8], strides = [1, 1] : tensor<4x8xf32> -> !iree_tensor_ext.dispatch.tensor<writeonly:tensor<4x8xf32>>
        return
      }
    }
  }
  util.func public @shared_reader(%arg0: tensor<4x8xf32>, %arg1: tensor<4xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
    %y = flow.dispatch @producer::@producer(%arg0) : (tensor<4x8xf32>) -> tensor<4x8xf32>
    %z = flow.dispatch @bn::@bn(%y, %arg1) : (tensor<4x8xf32>, tensor<4xf32>) -> tensor<4x8xf32>
    %s = flow.tensor.reshape %y : tensor<4x8xf32> -> tensor<32xf32>
    %w = flow.dispatch @bn::@bn(%arg0, %arg1) : (tensor<4x8xf32>, tensor<4xf32>) -> tensor<4x8xf32>
    %r = flow.tensor.reshape %s : tensor<32xf32> -> tensor<4x8xf32>
    util.return %z, %r : tensor<4x8xf32>, tensor<4x8xf32>
  }
}

// -----

// A transposing kernel reads its input at another element's position: writing over it would
// overwrite elements not yet read. Nothing is tied.

// CHECK-LABEL: util.func public @transposed
//       CHECK:   flow.dispatch @transpose::@transpose(%{{.+}}) : (tensor<8x8xf32>) -> tensor<8x8xf32>
#map = affine_map<(d0, d1) -> (d0, d1)>
#swap = affine_map<(d0, d1) -> (d1, d0)>
module {
  flow.executable private @producer {
    flow.executable.export public @producer workgroups() -> (index, index, index) {
      %x, %y, %z = iree_tensor_ext.dispatch.workgroup_count_from_slice()
      flow.return %x, %y, %z : index, index, index
    }
    builtin.module {
      func.func @producer(%arg0: !iree_tensor_ext.dispatch.tensor<readonly:tensor<8x8xf32>>, %arg1: !iree_tensor_ext.dispatch.tensor<writeonly:tensor<8x8xf32>>) {
        %0 = iree_tensor_ext.dispatch.tensor.load %arg0, offsets = [0, 0], sizes = [8, 8], strides = [1, 1] : !iree_tensor_ext.dispatch.tensor<readonly:tensor<8x8xf32>> -> tensor<8x8xf32>
        %1 = tensor.empty() : tensor<8x8xf32>
        %2 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel"]} ins(%0 : tensor<8x8xf32>) outs(%1 : tensor<8x8xf32>) {
        ^bb0(%in: f32, %out: f32):
          %3 = arith.mulf %in, %in : f32
          linalg.yield %3 : f32
        } -> tensor<8x8xf32>
        iree_tensor_ext.dispatch.tensor.store %2, %arg1, offsets = [0, 0], sizes = [8, 8], strides = [1, 1] : tensor<8x8xf32> -> !iree_tensor_ext.dispatch.tensor<writeonly:tensor<8x8xf32>>
        return
      }
    }
  }
  flow.executable private @transpose {
    flow.executable.export public @transpose workgroups() -> (index, index, index) {
      %x, %y, %z = iree_tensor_ext.dispatch.workgroup_count_from_slice()
      flow.return %x, %y, %z : index, index, index
    }
    builtin.module {
      func.func @transpose(%arg0: !iree_tensor_ext.dispatch.tensor<readonly:tensor<8x8xf32>>, %arg1: !iree_tensor_ext.dispatch.tensor<writeonly:tensor<8x8xf32>>) {
        %0 = iree_tensor_ext.dispatch.tensor.load %arg0, offsets = [0, 0], sizes = [8, 8], strides = [1, 1] : !iree_tensor_ext.dispatch.tensor<readonly:tensor<8x8xf32>> -> tensor<8x8xf32>
        %1 = tensor.empty() : tensor<8x8xf32>
        %2 = linalg.generic {indexing_maps = [#swap, #map], iterator_types = ["parallel", "parallel"]} ins(%0 : tensor<8x8xf32>) outs(%1 : tensor<8x8xf32>) {
        ^bb0(%in: f32, %out: f32):
          linalg.yield %in : f32
        } -> tensor<8x8xf32>
        iree_tensor_ext.dispatch.tensor.store %2, %arg1, offsets = [0, 0], sizes = [8, 8], strides = [1, 1] : tensor<8x8xf32> -> !iree_tensor_ext.dispatch.tensor<writeonly:tensor<8x8xf32>>
        return
      }
    }
  }
  util.func public @transposed(%arg0: tensor<8x8xf32>) -> tensor<8x8xf32> {
    %y = flow.dispatch @producer::@producer(%arg0) : (tensor<8x8xf32>) -> tensor<8x8xf32>
    %t = flow.dispatch @transpose::@transpose(%y) : (tensor<8x8xf32>) -> tensor<8x8xf32>
    util.return %t : tensor<8x8xf32>
  }
}
