"""The fitting set: synthetic convolutions that schedc's kernel rules are fitted on, so that the
held-out models (bench/heldout.py) stay a judge nobody tuned on. No shape here is a held-out
model's layer (test/python/test_bench_layers.py checks it): they span what CNNs have (a
3-channel stem, 1x1 squeezes and expansions, 3x3 and 5x5 windows, stride 2, from 80x80 down to
5x5 pixels, 16 to 1200 channels) in sizes none of those models use.

    python bench/layers.py prepare DIR --models fitting_convs --dtypes f16 --triton

`fitting_convs()` is a model in bench/heldout.py's form (a module and its inputs) whose forward
runs every convolution, with a batch norm and ReLU after it as a CNN's, on its own slice of
one image, so bench/layers.py finds each as a layer.
"""

from __future__ import annotations

import torch
from torch import nn

# (channels, height, width, filters, window, stride, padding), batch 1
CONVS = [
    (3, 192, 192, 48, 7, 2, 3),
    (3, 160, 160, 32, 3, 2, 1),
    (32, 80, 80, 64, 3, 1, 1),
    (48, 40, 40, 96, 3, 1, 1),
    (96, 40, 40, 192, 3, 2, 1),
    (96, 20, 20, 96, 3, 1, 1),
    (96, 24, 24, 192, 1, 1, 0),
    (64, 30, 30, 128, 5, 1, 2),
    (192, 10, 10, 192, 3, 1, 1),
    (160, 12, 12, 320, 3, 2, 1),
    (384, 5, 5, 384, 3, 1, 1),
    (320, 9, 9, 640, 3, 1, 1),
    (128, 16, 16, 384, 1, 1, 0),
    (256, 10, 10, 256, 3, 1, 1),
    (24, 48, 48, 96, 1, 1, 0),
    (24, 48, 48, 96, 3, 1, 1),
    (96, 48, 48, 24, 1, 1, 0),
    (40, 24, 24, 160, 3, 1, 1),
    (160, 24, 24, 40, 1, 1, 0),
    (320, 12, 12, 40, 1, 1, 0),
    (40, 12, 12, 320, 3, 1, 1),
    (480, 12, 12, 1000, 1, 1, 0),
    (20, 64, 64, 120, 1, 1, 0),
    (120, 64, 64, 20, 1, 1, 0),
    (288, 32, 32, 48, 1, 1, 0),
    (72, 16, 16, 432, 1, 1, 0),
    (1200, 8, 8, 200, 1, 1, 0),
    (400, 8, 8, 1280, 1, 1, 0),
]


class Convs(nn.Module):
    def __init__(self, convs=CONVS):
        super().__init__()
        self.sizes = [(c, h, w) for c, h, w, *_ in convs]
        self.layers = nn.ModuleList(nn.Sequential(nn.Conv2d(c, f, k, stride=s, padding=p, bias=False), nn.BatchNorm2d(f), nn.ReLU())
                                    for c, _, _, f, k, s, p in convs)

    def forward(self, image):
        return [layer(image[:, :c, :h, :w].contiguous()) for layer, (c, h, w) in zip(self.layers, self.sizes)]


def fitting_convs():
    import heldout  # bench/heldout.py: its initialisation (weights, batch-norm statistics)

    channels, height, width = (max(size[i] for size in CONVS) for i in range(3))
    torch.manual_seed(1)
    return heldout._init(Convs()), (torch.randn(1, channels, height, width),)


FITTING = {"fitting_convs": fitting_convs}
