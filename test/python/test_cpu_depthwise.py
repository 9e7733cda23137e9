"""Depthwise convolutions of stride 1 and 2 in schedc's CPU kernel (cpu-config): the kernel reads
the image unpadded, so no padded copy of it is made, and computes what torch does."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from torch import nn

from schedc.decisions.cpu_config import DEPTHWISE_WINDOW, DepthwiseShape, depthwise_kernel, depthwise_tiles
from test_cpu_pool import compiled


class Depthwise(nn.Module):
    """A kernel's result (an elementwise op) through a depthwise convolution, as a separable
    convolution's reads its input."""

    def __init__(self, channels: int, window: tuple[int, int], stride: int, padding: tuple[int, int], bias: bool):
        super().__init__()
        self.conv = nn.Conv2d(channels, channels, window, stride, padding, groups=channels, bias=bias)

    def forward(self, x):
        return self.conv(torch.relu(x))


@pytest.mark.parametrize("window, stride, padding, size, bias", [
    # the image is size x (size + 3)
    ((3, 3), 1, (1, 1), 32, False),  # RandWire's and MobileNet's: whole vectors of columns
    ((3, 3), 1, (1, 1), 13, True),  # a bias: the initial value added after the kernel
    ((3, 3), 1, (0, 0), 9, False),  # no padding: every tap inside the image
    ((3, 5), 1, (1, 2), 4, True),  # 7 columns, fewer than a vector: one by one
    ((1, 3), 1, (0, 1), 6, False),  # one row, padding on the columns alone
    ((3, 3), 2, (1, 1), 40, False),  # stride 2: the even elements of two vectors, the row's end one by one
    ((5, 3), 2, (2, 1), 21, True),  # odd sizes: the last window's row and columns cut by the padding
])
def test_a_depthwise_convolution_runs_in_schedcs_kernel_with_no_padded_copy(window, stride, padding, size, bias, tmp_path):
    torch.manual_seed(0)
    model = Depthwise(5, window, stride, padding, bias).eval()
    x = torch.randn(2, 5, size, size + 3)
    module, record, flow = compiled(model, x, tmp_path)
    assert record["depthwise_in_kernel"] == 1
    assert "@schedc_gemm::@depthwise" in flow and "slow_memcpy" not in flow
    with torch.no_grad():
        expected = model(x).numpy()
    np.testing.assert_allclose(np.asarray(module.forward(x.numpy())), expected, rtol=1e-5, atol=1e-5)


def test_a_stride_three_depthwise_convolution_and_one_left_to_iree_when_asked(tmp_path):
    torch.manual_seed(0)
    x = torch.randn(1, 4, 16, 16)
    cases = ((Depthwise(4, (3, 3), 3, (1, 1), False), {}),
             (Depthwise(4, (3, 3), 1, (1, 1), False), {"passes": "cpu-config{depthwise=false},memory-order,arena-plan"}))
    for model, options in cases:
        module, record, flow = compiled(model.eval(), x, tmp_path, **options)
        assert record["depthwise_in_kernel"] == 0 and "@schedc_gemm::@depthwise" not in flow
        with torch.no_grad():
            np.testing.assert_allclose(np.asarray(module.forward(x.numpy())), model(x).numpy(), rtol=1e-5, atol=1e-5)


def shape(**changes) -> DepthwiseShape:
    fields = dict(element="f32", strides=(1, 1), dilations=(1, 1), padding=(1, 1, 1, 1), window=(3, 3), multiplier=1)
    return DepthwiseShape(**(fields | changes))


def test_which_depthwise_convolutions_the_kernel_takes():
    assert depthwise_kernel(shape())
    assert depthwise_kernel(shape(padding=(0, 0, 0, 0), window=(1, 3)))
    assert depthwise_kernel(shape(strides=(2, 2)))
    assert not depthwise_kernel(shape(strides=(3, 3)))  # neither a row nor its even elements
    assert not depthwise_kernel(shape(strides=(2, 1)))
    assert not depthwise_kernel(shape(dilations=(2, 2)))
    assert not depthwise_kernel(shape(element="f16"))
    assert not depthwise_kernel(shape(multiplier=2))  # two filters per input channel
    assert not depthwise_kernel(shape(padding=(3, 3, 1, 1)))  # an output row that sees only padding
    assert not depthwise_kernel(shape(window=(DEPTHWISE_WINDOW + 1, 3)))


def test_a_depthwise_convolution_is_cut_into_whole_channels_for_sixteen_workgroups_at_most():
    assert depthwise_tiles(960) == 60 and depthwise_tiles(130) == 9 and depthwise_tiles(5) == 1
