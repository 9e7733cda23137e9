"""The runtime API: devices, errors that name the drivers, and calls with numpy or torch."""

from __future__ import annotations

import numpy as np
import pytest

import schedc
from schedc.runtime import available_drivers, has_device, summarize

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


@pytest.fixture(scope="module")
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


def test_summary_reads_like_iree_run_module():
    assert summarize(np.full((2, 3), 2.0, np.float32)).startswith("2x3xfloat32 min=2 max=2 mean=2")
