"""The benchmark suite, built from code (no downloads): irregularly wired and branchy networks
where the order of kernels matters for memory, and plain ones where it should not.

Each factory returns (model, example_inputs) at batch 1, small enough to compile in seconds.
"""

from __future__ import annotations

import importlib.util
import random
import sys
from pathlib import Path

import torch
from torch import nn

_spec = importlib.util.spec_from_file_location("schedc_examples", Path(__file__).resolve().parents[1] / "examples" / "models.py")
_examples = importlib.util.module_from_spec(_spec)
sys.modules.setdefault("schedc_examples", _examples)  # torch.compile re-imports model modules by name
_spec.loader.exec_module(_examples)


def _conv_bn_relu(cin, cout, k=3, stride=1, groups=1):
    return nn.Sequential(nn.Conv2d(cin, cout, k, stride, k // 2, groups=groups, bias=False), nn.BatchNorm2d(cout), nn.ReLU())


# -- RandWire-WS (Xie et al. 2019) -----------------------------------------------------------


def watts_strogatz_dag(nodes: int, k: int, p: float, seed: int) -> list[list[int]]:
    """WS(N, K, P) as in the paper: a ring lattice with each edge rewired with probability P,
    oriented from lower to higher node index. Returns each node's input nodes."""
    rng = random.Random(seed)
    edges = {tuple(sorted((i, (i + j) % nodes))) for i in range(nodes) for j in range(1, k // 2 + 1)}
    for i in range(nodes):
        for j in range(1, k // 2 + 1):
            edge = tuple(sorted((i, (i + j) % nodes)))
            if edge in edges and rng.random() < p:
                choices = [t for t in range(nodes) if t != i and tuple(sorted((i, t))) not in edges]
                if choices:
                    edges.discard(edge)
                    edges.add(tuple(sorted((i, rng.choice(choices)))))
    inputs = [[] for _ in range(nodes)]
    for a, b in sorted(edges):
        inputs[b].append(a)
    return inputs


class RandWireNode(nn.Module):
    """Weighted sum of inputs (sigmoid weights), then ReLU - separable conv - BN."""

    def __init__(self, fan_in, channels, stride=1):
        super().__init__()
        self.weights = nn.Parameter(torch.zeros(max(fan_in, 1)))
        self.op = nn.Sequential(
            nn.ReLU(),
            nn.Conv2d(channels, channels, 3, stride, 1, groups=channels, bias=False),
            nn.Conv2d(channels, channels, 1, bias=False),
            nn.BatchNorm2d(channels),
        )

    def forward(self, inputs):
        w = torch.sigmoid(self.weights)
        x = sum(w[i] * t for i, t in enumerate(inputs))
        return self.op(x)


class RandWireStage(nn.Module):
    def __init__(self, channels, nodes=16, k=4, p=0.75, seed=0):
        super().__init__()
        self.inputs = watts_strogatz_dag(nodes, k, p, seed)
        self.nodes = nn.ModuleList(RandWireNode(len(ins), channels) for ins in self.inputs)
        consumed = {a for ins in self.inputs for a in ins}
        self.outputs = [i for i in range(nodes) if i not in consumed]

    def forward(self, x):
        results = []
        for node, ins in zip(self.nodes, self.inputs):
            results.append(node([results[i] for i in ins] if ins else [x]))
        return sum(results[i] for i in self.outputs) / len(self.outputs)


class RandWire(nn.Module):
    def __init__(self, channels=32, nodes=16, stages=2, classes=10, seed=0):
        super().__init__()
        self.stem = _conv_bn_relu(3, channels, 3, 2)
        self.stages = nn.ModuleList(RandWireStage(channels, nodes, seed=seed + s) for s in range(stages))
        self.head = nn.Linear(channels, classes)

    def forward(self, x):
        x = self.stem(x)
        for stage in self.stages:
            x = stage(x)
        return self.head(x.mean(dim=(2, 3)))


# -- DARTS-like cells ------------------------------------------------------------------------


class SepConv(nn.Module):
    def __init__(self, c, k, dilation=1):
        super().__init__()
        pad = dilation * (k // 2)
        self.op = nn.Sequential(
            nn.ReLU(), nn.Conv2d(c, c, k, 1, pad, dilation=dilation, groups=c, bias=False),
            nn.Conv2d(c, c, 1, bias=False), nn.BatchNorm2d(c),
        )

    def forward(self, x):
        return self.op(x)


class DartsCell(nn.Module):
    """DARTS (V2) normal cell: four nodes, each the sum of two ops on earlier states; the cell
    outputs the concatenation of the four, reduced back by a 1x1 conv."""

    GENOTYPE = [("sep3", 0), ("sep3", 1), ("sep3", 0), ("sep3", 1), ("sep3", 1), ("skip", 0), ("skip", 0), ("dil3", 2)]

    def __init__(self, c):
        super().__init__()
        self.pre0, self.pre1 = nn.Conv2d(c, c, 1), nn.Conv2d(c, c, 1)
        ops = {"sep3": lambda: SepConv(c, 3), "dil3": lambda: SepConv(c, 3, 2), "sep5": lambda: SepConv(c, 5), "skip": nn.Identity}
        self.ops = nn.ModuleList(ops[name]() for name, _ in self.GENOTYPE)
        self.reduce = nn.Conv2d(4 * c, c, 1)

    def forward(self, s0, s1):
        states = [self.pre0(s0), self.pre1(s1)]
        for i in range(4):
            (_, a), (_, b) = self.GENOTYPE[2 * i], self.GENOTYPE[2 * i + 1]
            states.append(self.ops[2 * i](states[a]) + self.ops[2 * i + 1](states[b]))
        return self.reduce(torch.cat(states[2:], dim=1))


class DartsNet(nn.Module):
    def __init__(self, c=32, cells=3, classes=10):
        super().__init__()
        self.stem = _conv_bn_relu(3, c, 3, 2)
        self.cells = nn.ModuleList(DartsCell(c) for _ in range(cells))
        self.head = nn.Linear(c, classes)

    def forward(self, x):
        s0 = s1 = self.stem(x)
        for cell in self.cells:
            s0, s1 = s1, cell(s0, s1)
        return self.head(s1.mean(dim=(2, 3)))


# -- Inception-like, U-Net, plain CNN, transformer --------------------------------------------


class InceptionBlock(nn.Module):
    def __init__(self, cin, c):
        super().__init__()
        self.b1 = _conv_bn_relu(cin, c, 1)
        self.b2 = nn.Sequential(_conv_bn_relu(cin, c // 2, 1), _conv_bn_relu(c // 2, c, 3))
        self.b3 = nn.Sequential(_conv_bn_relu(cin, c // 4, 1), _conv_bn_relu(c // 4, c // 2, 3), _conv_bn_relu(c // 2, c, 3))
        self.b4 = nn.Sequential(nn.MaxPool2d(3, 1, 1), _conv_bn_relu(cin, c, 1))

    def forward(self, x):
        return torch.cat([self.b1(x), self.b2(x), self.b3(x), self.b4(x)], dim=1)


class InceptionNet(nn.Module):
    def __init__(self, c=32, blocks=3, classes=10):
        super().__init__()
        self.stem = _conv_bn_relu(3, c, 3, 2)
        self.blocks = nn.Sequential(*[InceptionBlock(c if i == 0 else 4 * c, c) for i in range(blocks)])
        self.head = nn.Linear(4 * c, classes)

    def forward(self, x):
        return self.head(self.blocks(self.stem(x)).mean(dim=(2, 3)))


class UNet(nn.Module):
    def __init__(self, c=16, depth=3):
        super().__init__()
        self.downs = nn.ModuleList()
        self.ups = nn.ModuleList()
        channels = [c * 2**i for i in range(depth + 1)]
        self.inc = nn.Sequential(_conv_bn_relu(3, c), _conv_bn_relu(c, c))
        for i in range(depth):
            self.downs.append(nn.Sequential(nn.MaxPool2d(2), _conv_bn_relu(channels[i], channels[i + 1]), _conv_bn_relu(channels[i + 1], channels[i + 1])))
        for i in reversed(range(depth)):
            self.ups.append(nn.ModuleDict({
                "up": nn.ConvTranspose2d(channels[i + 1], channels[i], 2, 2),
                "conv": nn.Sequential(_conv_bn_relu(2 * channels[i], channels[i]), _conv_bn_relu(channels[i], channels[i])),
            }))
        self.out = nn.Conv2d(c, 2, 1)

    def forward(self, x):
        skips = [self.inc(x)]
        for down in self.downs:
            skips.append(down(skips[-1]))
        x = skips.pop()
        for up in self.ups:
            x = up["conv"](torch.cat([skips.pop(), up["up"](x)], dim=1))
        return self.out(x)


class PlainCNN(nn.Module):
    def __init__(self, c=32, classes=10):
        super().__init__()
        self.features = nn.Sequential(
            _conv_bn_relu(3, c), _conv_bn_relu(c, c), nn.MaxPool2d(2),
            _conv_bn_relu(c, 2 * c), _conv_bn_relu(2 * c, 2 * c), nn.MaxPool2d(2),
            _conv_bn_relu(2 * c, 4 * c), _conv_bn_relu(4 * c, 4 * c),
        )
        self.head = nn.Linear(4 * c, classes)

    def forward(self, x):
        return self.head(self.features(x).mean(dim=(2, 3)))


class Transformer(nn.Module):
    def __init__(self, layers=2, d_model=128, heads=4, d_ff=256):
        super().__init__()
        self.blocks = nn.Sequential(*[_examples.TransformerBlock(d_model, heads, d_ff) for _ in range(layers)])

    def forward(self, x):
        return self.blocks(x)


# -- standard architectures, small --------------------------------------------------------


class BasicBlock(nn.Module):
    def __init__(self, cin, cout, stride):
        super().__init__()
        self.body = nn.Sequential(_conv_bn_relu(cin, cout, 3, stride), nn.Conv2d(cout, cout, 3, 1, 1, bias=False), nn.BatchNorm2d(cout))
        self.skip = nn.Identity() if stride == 1 and cin == cout else nn.Sequential(nn.Conv2d(cin, cout, 1, stride, bias=False), nn.BatchNorm2d(cout))

    def forward(self, x):
        return torch.relu(self.body(x) + self.skip(x))


class ResNet18(nn.Module):
    """ResNet-18's layout (2-2-2-2 basic blocks) at a quarter of its width."""

    def __init__(self, width=16, classes=10):
        super().__init__()
        self.stem = nn.Sequential(_conv_bn_relu(3, width, 7, 2), nn.MaxPool2d(3, 2, 1))
        blocks, cin = [], width
        for i, cout in enumerate([width, 2 * width, 4 * width, 8 * width]):
            blocks += [BasicBlock(cin, cout, 1 if i == 0 else 2), BasicBlock(cout, cout, 1)]
            cin = cout
        self.blocks = nn.Sequential(*blocks)
        self.head = nn.Linear(cin, classes)

    def forward(self, x):
        return self.head(self.blocks(self.stem(x)).mean(dim=(2, 3)))


class InvertedResidual(nn.Module):
    def __init__(self, cin, cout, stride, expand):
        super().__init__()
        hidden = cin * expand
        layers = [_conv_bn_relu(cin, hidden, 1)] if expand != 1 else []
        layers += [_conv_bn_relu(hidden, hidden, 3, stride, groups=hidden), nn.Conv2d(hidden, cout, 1, bias=False), nn.BatchNorm2d(cout)]
        self.body = nn.Sequential(*layers)
        self.residual = stride == 1 and cin == cout

    def forward(self, x):
        return x + self.body(x) if self.residual else self.body(x)


class MobileNetV2(nn.Module):
    """MobileNetV2's inverted-residual stages at half width."""

    SETTINGS = [(1, 16, 1, 1), (6, 24, 2, 2), (6, 32, 3, 2), (6, 64, 4, 2), (6, 96, 3, 1), (6, 160, 3, 2), (6, 320, 1, 1)]

    def __init__(self, width=0.5, classes=10):
        super().__init__()
        cin = int(32 * width)
        layers = [_conv_bn_relu(3, cin, 3, 2)]
        for expand, c, repeats, stride in self.SETTINGS:
            cout = max(8, int(c * width))
            for i in range(repeats):
                layers.append(InvertedResidual(cin, cout, stride if i == 0 else 1, expand))
                cin = cout
        layers.append(_conv_bn_relu(cin, 640, 1))
        self.features = nn.Sequential(*layers)
        self.head = nn.Linear(640, classes)

    def forward(self, x):
        return self.head(self.features(x).mean(dim=(2, 3)))


class DenseNet(nn.Module):
    """DenseNet-BC's layout: dense blocks whose layers read the concatenation of all earlier
    outputs, with 1x1-conv transitions."""

    def __init__(self, growth=12, blocks=(4, 4, 4), classes=10):
        super().__init__()
        c = 2 * growth
        self.stem = nn.Conv2d(3, c, 3, 1, 1, bias=False)
        self.blocks = nn.ModuleList()
        self.transitions = nn.ModuleList()
        for b, layers in enumerate(blocks):
            block = nn.ModuleList()
            for _ in range(layers):
                block.append(nn.Sequential(nn.BatchNorm2d(c), nn.ReLU(), nn.Conv2d(c, 4 * growth, 1, bias=False),
                                           nn.BatchNorm2d(4 * growth), nn.ReLU(), nn.Conv2d(4 * growth, growth, 3, 1, 1, bias=False)))
                c += growth
            self.blocks.append(block)
            if b != len(blocks) - 1:
                self.transitions.append(nn.Sequential(nn.BatchNorm2d(c), nn.ReLU(), nn.Conv2d(c, c // 2, 1, bias=False), nn.AvgPool2d(2)))
                c //= 2
        self.head = nn.Linear(c, classes)

    def forward(self, x):
        x = self.stem(x)
        for b, block in enumerate(self.blocks):
            features = [x]
            for layer in block:
                features.append(layer(torch.cat(features, dim=1)))
            x = torch.cat(features, dim=1)
            if b < len(self.transitions):
                x = self.transitions[b](x)
        return self.head(x.mean(dim=(2, 3)))


def _init(model, bias_std: float = 0.1):
    torch.manual_seed(0)
    for name, p in model.named_parameters():
        if p.dim() > 1:
            nn.init.kaiming_normal_(p, nonlinearity="relu")
        elif "weight" in name:
            nn.init.uniform_(p, 0.5, 1.5)
        else:
            nn.init.normal_(p, std=bias_std)
    for m in model.modules():
        if isinstance(m, nn.BatchNorm2d):
            m.running_mean.normal_(0, 0.1)
            m.running_var.uniform_(0.5, 1.5)
    return model.eval()


def _image(size=64):
    torch.manual_seed(1)
    return (torch.randn(1, 3, size, size),)


def randwire():
    return _init(RandWire()), _image()


def darts():
    return _init(DartsNet()), _image()


def inception():
    return _init(InceptionNet()), _image()


def unet():
    return _init(UNet()), _image()


def plain_cnn():
    return _init(PlainCNN()), _image()


def transformer():
    torch.manual_seed(1)
    return _init(Transformer()), (torch.randn(1, 32, 128),)


def resnet18():
    return _init(ResNet18()), _image()


def mobilenet_v2():
    return _init(MobileNetV2()), _image()


def densenet():
    return _init(DenseNet()), _image(32)


SUITE = {
    "randwire": randwire, "darts": darts, "inception": inception, "unet": unet, "transformer": transformer,
    "plain_cnn": plain_cnn, "resnet18": resnet18, "mobilenet_v2": mobilenet_v2, "densenet": densenet,
}


# -- training steps (schedc import --train): (model, inputs, targets, loss) ---------------------


class MLP(nn.Module):
    def __init__(self, features=256, hidden=512, layers=4, classes=10):
        super().__init__()
        sizes = [features] + [hidden] * (layers - 1)
        self.body = nn.Sequential(*[m for a, b in zip(sizes, sizes[1:]) for m in (nn.Linear(a, b), nn.ReLU())])
        self.head = nn.Linear(sizes[-1], classes)

    def forward(self, x):
        return self.head(self.body(x))


class TransformerRegressor(nn.Module):
    """The bench transformer with a linear head, for a loss against targets."""

    def __init__(self):
        super().__init__()
        self.body = Transformer()
        self.head = nn.Linear(128, 128)

    def forward(self, x):
        return self.head(self.body(x))


def mlp_train():
    torch.manual_seed(2)
    model = _init(MLP()).train()
    return model, (torch.randn(32, 256),), (torch.randint(0, 10, (32,)),), nn.CrossEntropyLoss()


def cnn_train():
    """The bench CNN at batch 4 (batch norm trains on the batch's statistics)."""
    torch.manual_seed(2)
    model = _init(PlainCNN()).train()
    return model, (torch.randn(4, 3, 32, 32),), (torch.randint(0, 10, (4,)),), nn.CrossEntropyLoss()


def transformer_train():
    torch.manual_seed(2)
    model = _init(TransformerRegressor()).train()
    return model, (torch.randn(4, 32, 128),), (torch.randn(4, 32, 128),), nn.MSELoss()


TRAIN_SUITE = {"mlp": mlp_train, "cnn": cnn_train, "transformer": transformer_train}
