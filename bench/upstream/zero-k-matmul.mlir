module {
  func.func @forward(%arg0: !torch.vtensor<[3,0],f32>, %arg1: !torch.vtensor<[0,4],f32>) -> !torch.vtensor<[3,4],f32> {
    %0 = torch.aten.mm %arg0, %arg1 : !torch.vtensor<[3,0],f32>, !torch.vtensor<[0,4],f32> -> !torch.vtensor<[3,4],f32>
    return %0 : !torch.vtensor<[3,4],f32>
  }
}
