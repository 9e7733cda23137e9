module {
  func.func @forward(%arg0: !torch.vtensor<[2,6],f32>) -> (!torch.vtensor<[2],f32>, !torch.vtensor<[2],si64>) {
    %int2 = torch.constant.int 2
    %int1 = torch.constant.int 1
    %false = torch.constant.bool false
    %values, %indices = torch.aten.kthvalue %arg0, %int2, %int1, %false : !torch.vtensor<[2,6],f32>, !torch.int, !torch.int, !torch.bool -> !torch.vtensor<[2],f32>, !torch.vtensor<[2],si64>
    return %values, %indices : !torch.vtensor<[2],f32>, !torch.vtensor<[2],si64>
  }
}
