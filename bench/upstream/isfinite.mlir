module {
  func.func @forward(%arg0: !torch.vtensor<[6],f32>) -> !torch.vtensor<[6],i1> {
    %0 = torch.aten.isfinite %arg0 : !torch.vtensor<[6],f32> -> !torch.vtensor<[6],i1>
    return %0 : !torch.vtensor<[6],i1>
  }
}
