// RUN: schedc-opt %s --split-input-file --passes="triton-conv" | filecheck %s
// RUN: schedc-opt %s --split-input-file --passes="triton-conv{layout=nchw}" | filecheck %s --check-prefix=NCHW
// RUN: not schedc-opt %s --passes="triton-conv{arch=75}" 2>&1 | filecheck %s --check-prefix=BAD

// An f16 convolution whose padding nothing else reads, cast to f16 right after: one dispatch of
// schedc's kernel reads the unpadded image and writes f16; the pad and the cast are gone. By
// default (the rule's CHANNELS_LAST) it reads the image as NHWC and the filter as RSCF, through
// transposes IREE fuses into their producers; with layout=nchw, as torch lays them out.

// Its bindings are indirect, as IREE's own dispatches' are (static-replay records them once).
//       CHECK: #pipeline_layout = #hal.pipeline.layout<bindings = [#hal.pipeline.binding<storage_buffer, "ReadOnly|Indirect">, #hal.pipeline.binding<storage_buffer, "ReadOnly|Indirect">, #hal.pipeline.binding<storage_buffer, Indirect>], flags = Indirect>
// CHECK-LABEL: util.func public @padded
//   CHECK-NOT:   tensor.pad
//       CHECK:   %[[X:.+]] = linalg.transpose ins(%arg0 : tensor<1x64x14x14xf16>) outs(%{{.+}} : tensor<1x14x14x64xf16>) permutation = [0, 2, 3, 1]
//       CHECK:   %[[W:.+]] = linalg.transpose ins(%arg1 : tensor<64x64x3x3xf16>) outs(%{{.+}} : tensor<3x3x64x64xf16>) permutation = [2, 3, 1, 0]
//       CHECK:   %[[Y:.+]] = flow.dispatch @[[EXE:schedc_conv_[0-9a-f]+]]::@conv2d(%[[X]], %[[W]]) : (tensor<1x14x14x64xf16>, tensor<3x3x64x64xf16>) -> tensor<1x64x14x14xf16>
//  CHECK-NEXT:   util.return %[[Y]]
//       CHECK:   hal.executable.source private @[[EXE]]
//       CHECK:     hal.executable.export public @conv2d ordinal(0) layout(#pipeline_layout)
//       CHECK:       %[[TILES:.+]] = arith.constant 14 : index
//       CHECK:       hal.return %[[TILES]]
//       CHECK:     <workgroup_size = [256 : index, 1 : index, 1 : index], workgroup_local_memory = {{[0-9]+}}>
// NCHW-LABEL: util.func public @padded
//   NCHW-NOT:   linalg.transpose
//       NCHW:   %[[Y:.+]] = flow.dispatch @{{schedc_conv_[0-9a-f]+}}::@conv2d(%arg0, %arg1) : (tensor<1x64x14x14xf16>, tensor<64x64x3x3xf16>) -> tensor<1x64x14x14xf16>
//  NCHW-NEXT:   util.return %[[Y]]
util.func public @padded(%x: tensor<1x64x14x14xf16>, %w: tensor<64x64x3x3xf16>) -> tensor<1x64x14x14xf16> {
  %zero = arith.constant 0.0 : f16
  %fzero = arith.constant 0.0 : f32
  %p = tensor.pad %x low[0, 0, 1, 1] high[0, 0, 1, 1] {
  ^bb0(%i: index, %j: index, %k: index, %l: index):
    tensor.yield %zero : f16
  } : tensor<1x64x14x14xf16> to tensor<1x64x16x16xf16>
  %e = tensor.empty() : tensor<1x64x14x14xf32>
  %f = linalg.fill ins(%fzero : f32) outs(%e : tensor<1x64x14x14xf32>) -> tensor<1x64x14x14xf32>
  %c = linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>} ins(%p, %w : tensor<1x64x16x16xf16>, tensor<64x64x3x3xf16>) outs(%f : tensor<1x64x14x14xf32>) -> tensor<1x64x14x14xf32>
  %h = tensor.empty() : tensor<1x64x14x14xf16>
  %t = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%c : tensor<1x64x14x14xf32>) outs(%h : tensor<1x64x14x14xf16>) {
  ^bb0(%in: f32, %out: f16):
    %n = arith.truncf %in : f32 to f16
    linalg.yield %n : f16
  } -> tensor<1x64x14x14xf16>
  util.return %t : tensor<1x64x14x14xf16>
}

// -----

// A deep one with few outputs into a bias: parts of its channels in f32, added into the bias.

// CHECK-LABEL: util.func public @deep
//       CHECK:   %[[PARTS:.+]] = flow.dispatch @{{schedc_conv_[0-9a-f]+}}::@conv2d(%{{.+}}, %{{.+}}) : (tensor<1x9x9x512xf16>, tensor<3x3x512x512xf16>) -> tensor<8x1x512x7x7xf32>
//       CHECK:   %[[SUM:.+]] = linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%[[PARTS]] : tensor<8x1x512x7x7xf32>) outs(%arg2 : tensor<1x512x7x7xf32>)
//       CHECK:   util.return %[[SUM]]
util.func public @deep(%x: tensor<1x512x9x9xf16>, %w: tensor<512x512x3x3xf16>, %bias: tensor<1x512x7x7xf32>) -> tensor<1x512x7x7xf32> {
  %c = linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>} ins(%x, %w : tensor<1x512x9x9xf16>, tensor<512x512x3x3xf16>) outs(%bias : tensor<1x512x7x7xf32>) -> tensor<1x512x7x7xf32>
  util.return %c : tensor<1x512x7x7xf32>
}

// -----

// The same deep one whose bias is a broadcast vector with a ReLU after it: the kernel sums its 8
// parts itself (counters zeroed before it, tied to it; the partial sums a result of their own) and
// runs the bias and the ReLU before its store; the broadcast and the ReLU's generic are gone.

// CHECK-LABEL: util.func public @deep_relu
//   CHECK-NOT:   linalg.broadcast
//       CHECK:   %[[ZERO:.+]] = linalg.fill ins(%{{.+}} : i32) outs(%{{.+}} : tensor<16xi32>)
//       CHECK:   %[[Y:.+]]:3 = flow.dispatch @{{schedc_conv_[0-9a-f]+}}::@conv2d(%{{.+}}, %{{.+}}, %arg2, %[[ZERO]]) : (tensor<1x9x9x512xf16>, tensor<3x3x512x512xf16>, tensor<512xf32>, tensor<16xi32>) -> (tensor<8x1x512x7x7xf32>, tensor<1x512x7x7xf32>, %[[ZERO]])
//   CHECK-NOT:   linalg.generic
//       CHECK:   util.return %[[Y]]#1
util.func public @deep_relu(%x: tensor<1x512x9x9xf16>, %w: tensor<512x512x3x3xf16>, %bias: tensor<512xf32>) -> tensor<1x512x7x7xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x512x7x7xf32>
  %b = linalg.broadcast ins(%bias : tensor<512xf32>) outs(%e : tensor<1x512x7x7xf32>) dimensions = [0, 2, 3]
  %c = linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>} ins(%x, %w : tensor<1x512x9x9xf16>, tensor<512x512x3x3xf16>) outs(%b : tensor<1x512x7x7xf32>) -> tensor<1x512x7x7xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%c : tensor<1x512x7x7xf32>) outs(%e : tensor<1x512x7x7xf32>) {
  ^bb0(%in: f32, %out: f32):
    %gt = arith.cmpf ugt, %in, %zero : f32
    %s = arith.select %gt, %in, %zero : f32
    linalg.yield %s : f32
  } -> tensor<1x512x7x7xf32>
  util.return %r : tensor<1x512x7x7xf32>
}

// -----

// f32 and grouped convolutions stay IREE's, and so do 1x1 ones (the rule's choice).

// CHECK-LABEL: util.func public @one_by_one
//       CHECK:   linalg.conv_2d_nchw_fchw
util.func public @one_by_one(%x: tensor<1x64x7x7xf16>, %w: tensor<128x64x1x1xf16>, %init: tensor<1x128x7x7xf32>) -> tensor<1x128x7x7xf32> {
  %c = linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>} ins(%x, %w : tensor<1x64x7x7xf16>, tensor<128x64x1x1xf16>) outs(%init : tensor<1x128x7x7xf32>) -> tensor<1x128x7x7xf32>
  util.return %c : tensor<1x128x7x7xf32>
}

// CHECK-LABEL: util.func public @f32
//       CHECK:   linalg.conv_2d_nchw_fchw
util.func public @f32(%x: tensor<1x64x9x9xf32>, %w: tensor<64x64x3x3xf32>, %init: tensor<1x64x7x7xf32>) -> tensor<1x64x7x7xf32> {
  %c = linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>} ins(%x, %w : tensor<1x64x9x9xf32>, tensor<64x64x3x3xf32>) outs(%init : tensor<1x64x7x7xf32>) -> tensor<1x64x7x7xf32>
  util.return %c : tensor<1x64x7x7xf32>
}

// BAD: arch must be 0 (the compile's --cuda-arch), 80, 86, 89 or 90, not 75
