"""Small example models, each a factory returning (model, example_inputs) for `schedc import`.

    schedc import examples/models.py:staged_branches -o model.mlir
"""

from __future__ import annotations

import torch
from torch import nn


class MLP(nn.Module):
    def __init__(self, d_in=64, d_hidden=128, d_out=16):
        super().__init__()
        self.fc1 = nn.Linear(d_in, d_hidden)
        self.fc2 = nn.Linear(d_hidden, d_hidden)
        self.fc3 = nn.Linear(d_hidden, d_out)

    def forward(self, x):
        return self.fc3(torch.relu(self.fc2(torch.relu(self.fc1(x)))))


class TransformerBlock(nn.Module):
    """Pre-norm attention and an FFN, written out so the graph is plain matmuls and softmax."""

    def __init__(self, d_model=64, heads=4, d_ff=128):
        super().__init__()
        self.heads = heads
        self.norm1 = nn.LayerNorm(d_model)
        self.qkv = nn.Linear(d_model, 3 * d_model)
        self.proj = nn.Linear(d_model, d_model)
        self.norm2 = nn.LayerNorm(d_model)
        self.up = nn.Linear(d_model, d_ff)
        self.down = nn.Linear(d_ff, d_model)

    def forward(self, x):
        b, s, d = x.shape
        q, k, v = self.qkv(self.norm1(x)).chunk(3, dim=-1)
        q, k, v = (t.reshape(b, s, self.heads, d // self.heads).transpose(1, 2) for t in (q, k, v))
        att = torch.softmax(q @ k.transpose(-1, -2) / (d // self.heads) ** 0.5, dim=-1)
        x = x + self.proj((att @ v).transpose(1, 2).reshape(b, s, d))
        return x + self.down(torch.nn.functional.gelu(self.up(self.norm2(x))))


class BranchyConvNet(nn.Module):
    """A stem, an Inception-like block of four parallel branches, and a classifier."""

    def __init__(self, channels=16, classes=10):
        super().__init__()
        c = channels
        self.stem = nn.Conv2d(3, c, 3, padding=1)
        self.b1 = nn.Conv2d(c, c, 1)
        self.b2 = nn.Sequential(nn.Conv2d(c, c, 1), nn.ReLU(), nn.Conv2d(c, c, 3, padding=1))
        self.b3 = nn.Sequential(nn.Conv2d(c, c // 2, 1), nn.ReLU(), nn.Conv2d(c // 2, c, 5, padding=2))
        self.b4 = nn.Sequential(nn.MaxPool2d(3, stride=1, padding=1), nn.Conv2d(c, c, 1))
        self.head = nn.Linear(4 * c, classes)

    def forward(self, x):
        x = torch.relu(self.stem(x))
        y = torch.cat([torch.relu(self.b1(x)), torch.relu(self.b2(x)), torch.relu(self.b3(x)), torch.relu(self.b4(x))], dim=1)
        return self.head(y.mean(dim=(2, 3)))


class StagedBranches(nn.Module):
    """Three parallel branches, each widening 16 channels to 64 (1x1) and narrowing them back
    (1x1, 3x3 and 5x5 windows), written stage by stage as a loop over branches often is: all
    the widenings, then all the narrowings. Run in that order, the three wide tensors are alive
    at once; memory-order runs each branch to its end first, so only one is."""

    def __init__(self, channels=16, wide=64, classes=10, windows=(1, 3, 5)):
        super().__init__()
        self.stem = nn.Conv2d(3, channels, 3, padding=1)
        self.widen = nn.ModuleList(nn.Conv2d(channels, wide, 1) for _ in windows)
        self.narrow = nn.ModuleList(nn.Conv2d(wide, channels, k, padding=k // 2) for k in windows)
        self.head = nn.Linear(len(windows) * channels, classes)

    def forward(self, x):
        x = torch.relu(self.stem(x))
        wide = [torch.relu(widen(x)) for widen in self.widen]
        y = torch.cat([torch.relu(narrow(w)) for narrow, w in zip(self.narrow, wide)], dim=1)
        return self.head(y.mean(dim=(2, 3)))


def _seeded(model):
    torch.manual_seed(0)
    for p in model.parameters():
        torch.nn.init.normal_(p, std=0.1)
    return model.eval()


def mlp():
    torch.manual_seed(0)
    return _seeded(MLP()), (torch.randn(8, 64),)


def transformer_block():
    torch.manual_seed(0)
    return _seeded(TransformerBlock()), (torch.randn(2, 16, 64),)


def branchy_convnet():
    torch.manual_seed(0)
    return _seeded(BranchyConvNet()), (torch.randn(1, 3, 32, 32),)


def staged_branches():
    """The demo's model (examples/demo.sh)."""
    torch.manual_seed(0)
    return _seeded(StagedBranches()), (torch.randn(1, 3, 32, 32),)


FACTORIES = {"mlp": mlp, "transformer_block": transformer_block, "branchy_convnet": branchy_convnet, "staged_branches": staged_branches}


class ConvNetBN(nn.Module):
    """`depth` conv-batchnorm-ReLU layers and a linear head, for a training step."""

    def __init__(self, c=8, classes=10, depth=2):
        super().__init__()
        layers = []
        for i in range(depth):
            layers += [nn.Conv2d(3 if i == 0 else c, c, 3, padding=1, bias=False), nn.BatchNorm2d(c), nn.ReLU()]
        self.features = nn.Sequential(*layers)
        self.head = nn.Linear(c, classes)

    def forward(self, x):
        return self.head(self.features(x).mean(dim=(2, 3)))


def convnet_train():
    """A training step: (model, inputs, targets, loss) for `schedc import --train`."""
    torch.manual_seed(0)
    return ConvNetBN(), torch.randn(4, 3, 16, 16), torch.randint(0, 10, (4,)), nn.CrossEntropyLoss()


def deep_convnet_train():
    """The training step of the README's tour: six layers keep six layers' activations alive
    for the backward pass, which is what recomputation (remat) trades time for."""
    torch.manual_seed(0)
    return ConvNetBN(depth=6), torch.randn(4, 3, 16, 16), torch.randint(0, 10, (4,)), nn.CrossEntropyLoss()
