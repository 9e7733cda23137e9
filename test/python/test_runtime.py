"""The runtime API: devices, errors that name the drivers, and calls with numpy or torch."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import schedc
from schedc.runtime.module import available_drivers, has_device, summarize

ADD = """
func.func @add(%a: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<4xf32> {
  %0 = arith.addf %a, %b : tensor<4xf32>
  return %0 : tensor<4xf32>
}
func.func @two(%a: tensor<2xi32>) -> (tensor<2xi32>, tensor<2xi32>) {
  %0 = arith.addi %a, %a : tensor<2xi32>
  return %a, %0 : tensor<2xi32>, tensor<2xi32>
}
"""


@pytest.fixture(scope="session")
def add_module(tmp_path_factory):
    path = tmp_path_factory.mktemp("rt") / "add.vmfb"
    schedc.compile(ADD, output=str(path))
    return path


def test_numpy_in_numpy_out(add_module):
    module = schedc.load(add_module)
    result = module.add(np.arange(4, dtype=np.float32), np.ones(4, np.float32))
    np.testing.assert_array_equal(result, [1, 2, 3, 4])
    assert sorted(module.function_names) == ["add", "two"]


def test_several_results_come_back_as_a_tuple(add_module):
    first, second = schedc.load(add_module, device="local-sync").two(np.array([3, 4], np.int32))
    np.testing.assert_array_equal(first, [3, 4])
    np.testing.assert_array_equal(second, [6, 8])


def test_unknown_device_names_the_drivers(add_module):
    with pytest.raises(schedc.RuntimeLoadError) as info:
        schedc.load(add_module, device="tpu")
    for driver in ("cuda", "hip", "local-task", "vulkan"):
        assert driver in str(info.value)


@pytest.mark.skipif("cuda" not in available_drivers(), reason="runtime built without cuda")
def test_missing_gpu_is_a_clear_error(add_module):
    if has_device("cuda"):
        pytest.skip("this machine has a CUDA device")
    with pytest.raises(schedc.RuntimeLoadError, match="no 'cuda' device could be created.*local-task"):
        schedc.load(add_module, device="cuda")


def test_unknown_function_lists_the_exports(add_module):
    module = schedc.load(add_module)
    with pytest.raises(AttributeError, match="it exports: add, two"):
        module.nope
    with pytest.raises(schedc.RuntimeLoadError, match="it exports: add, two"):
        module["nope"]


def test_missing_module_file(tmp_path):
    with pytest.raises(schedc.RuntimeLoadError, match="no such file"):
        schedc.load(tmp_path / "none.vmfb")


def test_a_module_loads_from_the_bytes_compile_returned(add_module):
    module = schedc.load(add_module.read_bytes())
    np.testing.assert_array_equal(module.add(np.arange(4, dtype=np.float32), np.ones(4, np.float32)), [1, 2, 3, 4])
    with pytest.raises(schedc.RuntimeLoadError, match="^the module's bytes: damaged IREE module"):
        schedc.load(add_module.read_bytes()[:100])
    with pytest.raises(schedc.RuntimeLoadError, match="a .vmfb path or a compiled module's bytes, not int"):
        schedc.load(3)


def test_summary_reads_like_iree_run_module():
    assert summarize(np.full((2, 3), 2.0, np.float32)).startswith("2x3xfloat32 min=2 max=2 mean=2")
    assert summarize(np.array(7, np.int64)).startswith("scalar int64"), "a 0-d result is a scalar, not 'scalarxint64'"


def test_async_call_returns_before_waiting(add_module):
    module = schedc.load(add_module)
    pending = module.add.async_(np.arange(4, dtype=np.float32), np.ones(4, np.float32))
    np.testing.assert_array_equal(pending.wait(), [1, 2, 3, 4])
    assert pending.done()


class _Slow(torch.nn.Module):
    """Forty 256x1024 @ 1024x1024 matmuls in a chain: about 20 GFLOP, far longer than a call
    takes to be queued."""

    def __init__(self):
        super().__init__()
        self.w = torch.nn.Parameter(torch.randn(1024, 1024) / 32)

    def forward(self, x):
        for _ in range(40):
            x = torch.tanh(x @ self.w)
        return x


def test_async_call_returns_before_the_work_is_done(tmp_path):
    model, x = _Slow().eval(), torch.randn(256, 1024)
    path = tmp_path / "slow.vmfb"
    schedc.compile(schedc.import_torch(model, x), output=str(path))
    module = schedc.load(path)
    module.forward(x)  # the first call also loads the executables
    pending = module.forward.async_(x)
    assert not pending.done()  # queued: the device is still at work
    result = pending.wait()
    assert pending.done()
    with torch.no_grad():
        np.testing.assert_allclose(result.numpy(), model(x).numpy(), rtol=1e-3, atol=1e-4)


def test_async_call_keeps_torch_in_torch_out(imported, tmp_path):
    import torch

    model, args, mlir = imported("mlp")
    path = tmp_path / "mlp.vmfb"
    schedc.compile(mlir, output=str(path))
    result = schedc.load(path).forward.async_(*args).wait()
    assert isinstance(result, torch.Tensor)
    with torch.no_grad():
        np.testing.assert_allclose(result.numpy(), model(*args).numpy(), rtol=1e-4, atol=1e-5)


def test_graph_execution_needs_a_module_built_for_it(add_module, tmp_path):
    with pytest.raises(schedc.RuntimeLoadError, match="compiled for streams execution.*execution='graphs'"):
        schedc.load(add_module, device="cuda", execution="graphs")
    graphs = tmp_path / "add.graphs.vmfb"
    schedc.compile(ADD, output=str(graphs), target="cuda", execution="graphs")
    from schedc.runtime.module import _module_execution

    assert _module_execution(str(graphs)) == "graphs"
    with pytest.raises(schedc.RuntimeLoadError, match="execution='graphs' is for the cuda and hip drivers"):
        schedc.load(graphs, device="local-task", execution="graphs")
    with pytest.raises(schedc.RuntimeLoadError, match="unknown execution 'fast'"):
        schedc.load(add_module, execution="fast")
