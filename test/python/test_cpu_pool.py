"""Max pools of stride 1 in schedc's CPU kernel (cpu-config): the kernel reads the image
unpadded, so no padded copy of it is made, and computes what torch does, NaN and -inf included."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from torch import nn

import schedc
from schedc.compiler.driver import compile_with_options
from schedc.decisions.cpu_config import POOL_RING, PoolShape, pool_kernel, pool_tiles
from schedc.options import CompileOptions


class Pooled(nn.Module):
    """A kernel's result (an elementwise op) pooled, as a model's max pool reads its input."""

    def __init__(self, window: int, stride: int, padding: int):
        super().__init__()
        self.pool = nn.MaxPool2d(window, stride, padding)

    def forward(self, x):
        return self.pool(x * 2.0)


def compiled(model, x, tmp_path, **options):
    """The loaded module of `model` compiled for the host CPU, cpu-config's record, and the flow IR."""
    mlir = schedc.import_torch(model, x)
    result = compile_with_options(mlir, CompileOptions(target="llvm-cpu", **options))
    flow = compile_with_options(mlir, CompileOptions(target="llvm-cpu", emit="flow", **options)).output
    path = tmp_path / "module.vmfb"
    path.write_bytes(result.output)
    return schedc.load(str(path)), result.records["cpu-config"]["module"], flow


@pytest.mark.parametrize("window, padding, size", [
    # the image is size x (size + 3)
    (3, 1, 32),  # Inception's branch pool: whole vectors of columns
    (5, 2, 13),  # a vector, the last one overlapping it
    (3, 0, 9),  # no padding: the edge columns' windows inside the image too
    (2, 1, 6),  # padding on one side only of the last window
    (3, 1, 4),  # 7 columns: all one by one, in both passes
])
def test_a_stride_one_pool_runs_in_schedcs_kernel_with_no_padded_copy(window, padding, size, tmp_path):
    model = Pooled(window, 1, padding)
    x = torch.randn(2, 5, size, size + 3)
    module, record, flow = compiled(model, x, tmp_path)
    assert record["max_pools_in_kernel"] == 1
    assert "@schedc_gemm::@maxpool" in flow and "slow_memcpy" not in flow
    with torch.no_grad():
        expected = model(x).numpy()
    assert np.array_equal(np.asarray(module.forward(x.numpy())), expected)  # a maximum is exact


def test_nans_and_minus_infinity_pool_as_in_torch(tmp_path):
    model = Pooled(3, 1, 1)
    x = torch.randn(1, 3, 12, 20)
    x[0, 0, 5, 7] = float("nan")  # in the vector columns
    x[0, 1, 0, 0] = float("nan")  # in a corner, at an edge column
    x[0, 2] = float("-inf")  # a whole plane: -inf, not the padding's value or anything else
    module, record, _ = compiled(model, x, tmp_path)
    assert record["max_pools_in_kernel"] == 1
    with torch.no_grad():
        expected = model(x).numpy()
    actual = np.asarray(module.forward(x.numpy()))
    assert np.isnan(actual[0, 0, 4:7, 6:9]).all() and np.isnan(actual[0, 1, :2, :2]).all()
    assert np.array_equal(actual, expected, equal_nan=True)


def test_a_strided_pool_and_a_pool_left_to_iree_when_asked(tmp_path):
    x = torch.randn(1, 4, 16, 16)
    for model, options in ((Pooled(3, 2, 1), {}), (Pooled(3, 1, 1), {"passes": "cpu-config{pools=false},memory-order,arena-plan"})):
        module, record, flow = compiled(model, x, tmp_path, **options)
        assert record["max_pools_in_kernel"] == 0 and "@schedc_gemm::@maxpool" not in flow
        with torch.no_grad():
            assert np.array_equal(np.asarray(module.forward(x.numpy())), model(x).numpy())


def shape(**changes) -> PoolShape:
    fields = dict(element="f32", strides=(1, 1), dilations=(1, 1), padding=(1, 1, 1, 1), window=(3, 3), out_width=32)
    return PoolShape(**(fields | changes))


def test_which_pools_the_kernel_takes():
    assert pool_kernel(shape())
    assert pool_kernel(shape(padding=(0, 0, 0, 0), window=(2, 2)))
    assert not pool_kernel(shape(strides=(2, 2)))  # a window's columns are not one contiguous row
    assert not pool_kernel(shape(dilations=(2, 2)))
    assert not pool_kernel(shape(element="f16"))
    assert not pool_kernel(shape(padding=(3, 3, 1, 1)))  # an output row that sees only padding
    assert not pool_kernel(shape(window=(17, 3)))  # past the kernel's window
    assert not pool_kernel(shape(out_width=POOL_RING // 3 + 1))  # its ring of rows would not fit
    assert pool_kernel(shape(out_width=POOL_RING // 3))


def test_a_pool_is_cut_into_whole_channels_for_sixteen_workgroups_at_most():
    assert pool_tiles(128) == 8 and pool_tiles(130) == 9 and pool_tiles(5) == 1 and pool_tiles(1) == 1
