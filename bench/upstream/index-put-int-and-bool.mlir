module {
  func.func @forward(%arg0: !torch.vtensor<[5,5],f32>, %arg1: !torch.vtensor<[3],si64>, %arg2: !torch.vtensor<[5],i1>, %arg3: !torch.vtensor<[3],f32>) -> !torch.vtensor<[5,5],f32> {
    %0 = torch.vtensor.literal(dense<5> : tensor<1xsi64>) : !torch.vtensor<[1],si64>
    %int-1 = torch.constant.int -1
    %str = torch.constant.str "floor"
    %1 = torch.vtensor.literal(dense<1> : tensor<1x1xsi64>) : !torch.vtensor<[1,1],si64>
    %2 = torch.vtensor.literal(dense<0> : tensor<5xsi64>) : !torch.vtensor<[5],si64>
    %int5 = torch.constant.int 5
    %none = torch.constant.none
    %false = torch.constant.bool false
    %int4 = torch.constant.int 4
    %int0 = torch.constant.int 0
    %int1 = torch.constant.int 1
    %3 = torch.aten.ne.Scalar %arg2, %int0 : !torch.vtensor<[5],i1>, !torch.int -> !torch.vtensor<[5],i1>
    %4 = torch.aten.to.dtype %3, %int4, %false, %false, %none : !torch.vtensor<[5],i1>, !torch.int, !torch.bool, !torch.bool, !torch.none -> !torch.vtensor<[5],si64>
    %5 = torch.aten.cumsum %4, %int0, %none : !torch.vtensor<[5],si64>, !torch.int, !torch.none -> !torch.vtensor<[5],si64>
    %6 = torch.aten.sub.Scalar %5, %int1, %int1 : !torch.vtensor<[5],si64>, !torch.int, !torch.int -> !torch.vtensor<[5],si64>
    %7 = torch.aten.clamp %6, %int0, %none : !torch.vtensor<[5],si64>, !torch.int, !torch.none -> !torch.vtensor<[5],si64>
    %8 = torch.aten.arange.start_step %int0, %int5, %int1, %none, %none, %none, %none : !torch.int, !torch.int, !torch.int, !torch.none, !torch.none, !torch.none, !torch.none -> !torch.vtensor<[5],si64>
    %9 = torch.aten.mul.Tensor %8, %4 : !torch.vtensor<[5],si64>, !torch.vtensor<[5],si64> -> !torch.vtensor<[5],si64>
    %10 = torch.aten.scatter_add %2, %int0, %7, %9 : !torch.vtensor<[5],si64>, !torch.int, !torch.vtensor<[5],si64>, !torch.vtensor<[5],si64> -> !torch.vtensor<[5],si64>
    %11 = torch.aten.sum %4, %none : !torch.vtensor<[5],si64>, !torch.none -> !torch.vtensor<[],si64>
    %12 = torch.aten.Int.Tensor %11 : !torch.vtensor<[],si64> -> !torch.int
    %13 = torch.aten.slice.Tensor %10, %int0, %none, %12, %int1 : !torch.vtensor<[5],si64>, !torch.int, !torch.none, !torch.int, !torch.int -> !torch.vtensor<[?],si64>
    %14 = torch.prim.ListConstruct %int0 : (!torch.int) -> !torch.list<int>
    %15 = torch.aten.flip %0, %14 : !torch.vtensor<[1],si64>, !torch.list<int> -> !torch.vtensor<[1],si64>
    %16 = torch.aten.cumprod %15, %int0, %none : !torch.vtensor<[1],si64>, !torch.int, !torch.none -> !torch.vtensor<[1],si64>
    %17 = torch.prim.ListConstruct %int0 : (!torch.int) -> !torch.list<int>
    %18 = torch.aten.flip %16, %17 : !torch.vtensor<[1],si64>, !torch.list<int> -> !torch.vtensor<[1],si64>
    %19 = torch.aten.unsqueeze %13, %int1 : !torch.vtensor<[?],si64>, !torch.int -> !torch.vtensor<[?,1],si64>
    %20 = torch.aten.div.Tensor_mode %19, %1, %str : !torch.vtensor<[?,1],si64>, !torch.vtensor<[1,1],si64>, !torch.str -> !torch.vtensor<[?,1],si64>
    %21 = torch.aten.remainder.Tensor %20, %0 : !torch.vtensor<[?,1],si64>, !torch.vtensor<[1],si64> -> !torch.vtensor<[?,1],si64>
    %22 = torch.prim.ListConstruct %int-1 : (!torch.int) -> !torch.list<int>
    %23 = torch.aten.view %21, %22 : !torch.vtensor<[?,1],si64>, !torch.list<int> -> !torch.vtensor<[?],si64>
    %24 = torch.prim.ListConstruct %arg1, %23 : (!torch.vtensor<[3],si64>, !torch.vtensor<[?],si64>) -> !torch.list<vtensor>
    %25 = torch.aten.index_put.hacked_twin %arg0, %24, %arg3, %false : !torch.vtensor<[5,5],f32>, !torch.list<vtensor>, !torch.vtensor<[3],f32>, !torch.bool -> !torch.vtensor<[5,5],f32>
    return %25 : !torch.vtensor<[5,5],f32>
  }
}
