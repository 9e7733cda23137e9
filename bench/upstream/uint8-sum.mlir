module {
  func.func @forward(%arg0: !torch.vtensor<[4],ui8>) -> !torch.vtensor<[],si64> {
    %none = torch.constant.none
    %false = torch.constant.bool false
    %0 = torch.prim.ListConstruct  : () -> !torch.list<int>
    %1 = torch.aten.sum.dim_IntList %arg0, %0, %false, %none : !torch.vtensor<[4],ui8>, !torch.list<int>, !torch.bool, !torch.none -> !torch.vtensor<[],si64>
    return %1 : !torch.vtensor<[],si64>
  }
}
