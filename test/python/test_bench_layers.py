"""bench/layers.py's CPU side: a model's layers as IREE fuses them (a convolution with the
ReLU that reads its output), one of each, the same on every run (the GPU machine finds them by
running the model itself), and its reading of Nsight Compute's kernels between markers."""

from __future__ import annotations

import importlib.util
import sys

import torch
from torch import nn

from conftest import ROOT

sys.path.insert(0, str(ROOT / "bench"))
_spec = importlib.util.spec_from_file_location("bench_layers", ROOT / "bench" / "layers.py")
layers = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(layers)


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.a = nn.Conv2d(3, 8, 3, padding=1)
        self.act = nn.ReLU(inplace=True)
        self.b = nn.Conv2d(8, 8, 3, padding=1)
        self.c = nn.Conv2d(8, 8, 3, padding=1)
        self.pool = nn.MaxPool2d(2)
        self.drop = nn.Dropout()

    def forward(self, x):
        x = self.act(self.a(x))
        x = self.act(self.b(x))
        y = self.c(x)  # the same shapes as b, no ReLU after it: a layer of its own
        return self.drop(self.pool(y + x))


def test_layers_fuse_what_iree_fuses_and_come_once():
    torch.manual_seed(0)
    found = layers.distinct_layers(Net().eval(), (torch.randn(1, 3, 8, 8),))
    assert [[type(m).__name__ for m in entry["module"]] for entry in found] == [["Conv2d", "ReLU"], ["Conv2d", "ReLU"], ["Conv2d"], ["MaxPool2d"]]
    assert not any(getattr(m, "inplace", False) for entry in found for m in entry["module"])


def test_seeded_weights_are_the_same_on_every_run():
    torch.manual_seed(0)
    first = layers.distinct_layers(Net().eval(), (torch.randn(1, 3, 8, 8),))
    a = layers.seeded(first[0]["module"], layers.seed_of(first[0]["key"]), torch.float16)
    b = layers.seeded(first[0]["module"], layers.seed_of(first[0]["key"]), torch.float16)
    assert a[0].weight.dtype == torch.float16 and torch.equal(a[0].weight, b[0].weight)
    assert float(a[0].weight.detach().float().std()) < 0.5  # 1/sqrt(fan in), not N(0, 1)


def test_kernels_between_markers():
    from timing import ncu_kernel_times

    csv = ('==PROF== Connected\n"ID","Kernel Name","Metric Name","Metric Unit","Metric Value"\n'
           '"0","spin_kernel(long)","gpu__time_duration.sum","usecond","1.00"\n'
           '"1","cudnn_conv","gpu__time_duration.sum","nsecond","2,500"\n'
           '"2","spin_kernel(long)","gpu__time_duration.sum","usecond","1.00"\n'
           '"3","forward$async_dispatch_0","gpu__time_duration.sum","usecond","3.5"\n'
           '"4","forward$async_dispatch_1","gpu__time_duration.sum","usecond","0.5"\n')
    runs = layers.split_by_marker(ncu_kernel_times(csv))
    assert runs == [[("cudnn_conv", 2.5)], [("forward$async_dispatch_0", 3.5), ("forward$async_dispatch_1", 0.5)]]
