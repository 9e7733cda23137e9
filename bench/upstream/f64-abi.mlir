module {
  func.func @forward(%arg0: !torch.vtensor<[4],f64>) -> !torch.vtensor<[4],f64> {
    %float1.000000e00 = torch.constant.float 1.000000e+00
    %int1 = torch.constant.int 1
    %0 = torch.aten.add.Scalar %arg0, %float1.000000e00, %int1 : !torch.vtensor<[4],f64>, !torch.float, !torch.int -> !torch.vtensor<[4],f64>
    return %0 : !torch.vtensor<[4],f64>
  }
}
