module {
  func.func @forward(%arg0: !torch.vtensor<[1,2,10,16],f32>) -> !torch.vtensor<[1,2,7,13],f32> {
    %int2 = torch.constant.int 2
    %int0 = torch.constant.int 0
    %int1 = torch.constant.int 1
    %false = torch.constant.bool false
    torch.runtime.assert %false, "unimplemented: only support cases with fixed stride size."
    torch.runtime.assert %false, "unimplemented: only support cases with fixed kernel size."
    torch.runtime.assert %false, "unimplemented: only support cases with fixed stride size."
    torch.runtime.assert %false, "unimplemented: only support cases with fixed kernel size."
    %0 = torch.prim.ListConstruct %int2, %int2 : (!torch.int, !torch.int) -> !torch.list<int>
    %1 = torch.prim.ListConstruct %int1, %int1 : (!torch.int, !torch.int) -> !torch.list<int>
    %2 = torch.prim.ListConstruct %int0, %int0 : (!torch.int, !torch.int) -> !torch.list<int>
    %3 = torch.prim.ListConstruct %int1, %int1 : (!torch.int, !torch.int) -> !torch.list<int>
    %4 = torch.aten.max_pool2d %arg0, %0, %1, %2, %3, %false : !torch.vtensor<[1,2,10,16],f32>, !torch.list<int>, !torch.list<int>, !torch.list<int>, !torch.list<int>, !torch.bool -> !torch.vtensor<[1,2,7,13],f32>
    return %4 : !torch.vtensor<[1,2,7,13],f32>
  }
}
