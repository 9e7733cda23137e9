// IREE 3.13, cuda (sm_80 PTX, run on an H200): this f16 1x1 convolution computes wrong values
// (relative max error about 1.0 against torch), with IREE's own kernel config. After IREE's
// preprocessing the contraction reads ins(input[k, n], filter[m, k]) -> out[m, n]; with its two
// inputs swapped (schedc's mma-operands pass) it is right. Compile with
//   iree-compile f16-conv1x1.mlir --iree-hal-target-device=cuda --iree-cuda-target=sm_80 -o m.vmfb
// and compare `forward` on a CUDA GPU with a 1x1 convolution in numpy (bench/layers.py measured
// it on every f16 1x1 convolution of SqueezeNet, ShuffleNetV2, ResNet-18 and MobileNetV2).
func.func @forward(%x: tensor<1x64x55x55xf16>, %w: tensor<16x64x1x1xf16>) -> tensor<1x16x55x55xf16> {
  %z = arith.constant 0.0 : f16
  %e = tensor.empty() : tensor<1x16x55x55xf16>
  %f = linalg.fill ins(%z : f16) outs(%e : tensor<1x16x55x55xf16>) -> tensor<1x16x55x55xf16>
  %y = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
    ins(%x, %w : tensor<1x64x55x55xf16>, tensor<16x64x1x1xf16>) outs(%f : tensor<1x16x55x55xf16>) -> tensor<1x16x55x55xf16>
  return %y : tensor<1x16x55x55xf16>
}
