"""The held-out suite: public architectures that schedc is never tuned on and whose kernels never
enter the built-in kernel database. Speed claims are judged on these as well as on the bench
suite (bench/models.py), whose kernels were measured into the database.

Each factory returns (model, example_inputs) with random weights (nothing is downloaded):
- squeezenet1_1: torchvision's SqueezeNet 1.1, written out here (torchvision's PyPI wheel for
  torch 2.13 needs CUDA torch); the module names and shapes are torchvision's, so its
  state_dict loads into `torchvision.models.squeezenet1_1()` (checked on the GPU machine).
- shufflenet_v2: torchvision's ShuffleNetV2 x0.5 (depthwise 3x3 stride 2, channel shuffle),
  likewise written out with torchvision's names.
- gpt2: Hugging Face's GPT2Model from a small GPT2Config (2 layers, width 256, 4 heads).
- bert: Hugging Face's BertModel from a small BertConfig (2 layers, width 256, 4 heads).
- hf_resnet18, hf_resnet50, hf_mobilenet_v2, convnext, vit, llama: Hugging Face's ResNetModel
  (resnet-18's config, and resnet-50's: bottleneck blocks), MobileNetV2Model (mobilenet_v2_1.0_224's), a narrow ConvNextModel, a ViT-Tiny-sized ViTModel
  and a small LlamaModel (GQA, rotary, SwiGLU), built from their configs. (The hf_ prefix
  keeps them apart from bench/models.py's smaller resnet18 and mobilenet_v2.)
"""

from __future__ import annotations

import sys
from pathlib import Path

import torch
from torch import nn


class Fire(nn.Module):
    def __init__(self, inplanes: int, squeeze: int, expand1x1: int, expand3x3: int):
        super().__init__()
        self.squeeze = nn.Conv2d(inplanes, squeeze, kernel_size=1)
        self.squeeze_activation = nn.ReLU(inplace=True)
        self.expand1x1 = nn.Conv2d(squeeze, expand1x1, kernel_size=1)
        self.expand1x1_activation = nn.ReLU(inplace=True)
        self.expand3x3 = nn.Conv2d(squeeze, expand3x3, kernel_size=3, padding=1)
        self.expand3x3_activation = nn.ReLU(inplace=True)

    def forward(self, x):
        x = self.squeeze_activation(self.squeeze(x))
        return torch.cat([self.expand1x1_activation(self.expand1x1(x)), self.expand3x3_activation(self.expand3x3(x))], 1)


class SqueezeNet(nn.Module):
    """torchvision.models.squeezenet1_1 (version 1.1)."""

    def __init__(self, num_classes: int = 1000):
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(3, 64, kernel_size=3, stride=2), nn.ReLU(inplace=True),
            nn.MaxPool2d(kernel_size=3, stride=2, ceil_mode=True),
            Fire(64, 16, 64, 64), Fire(128, 16, 64, 64),
            nn.MaxPool2d(kernel_size=3, stride=2, ceil_mode=True),
            Fire(128, 32, 128, 128), Fire(256, 32, 128, 128),
            nn.MaxPool2d(kernel_size=3, stride=2, ceil_mode=True),
            Fire(256, 48, 192, 192), Fire(384, 48, 192, 192), Fire(384, 64, 256, 256), Fire(512, 64, 256, 256),
        )
        self.classifier = nn.Sequential(
            nn.Dropout(p=0.5), nn.Conv2d(512, num_classes, kernel_size=1), nn.ReLU(inplace=True), nn.AdaptiveAvgPool2d((1, 1)),
        )

    def forward(self, x):
        return torch.flatten(self.classifier(self.features(x)), 1)


def channel_shuffle(x, groups: int):
    batch, channels, height, width = x.size()
    x = x.view(batch, groups, channels // groups, height, width)
    return torch.transpose(x, 1, 2).contiguous().view(batch, channels, height, width)


class InvertedResidual(nn.Module):
    """torchvision's ShuffleNetV2 block."""

    def __init__(self, inp: int, oup: int, stride: int):
        super().__init__()
        self.stride = stride
        branch = oup // 2
        if stride > 1:
            self.branch1 = nn.Sequential(
                nn.Conv2d(inp, inp, 3, stride, 1, bias=False, groups=inp), nn.BatchNorm2d(inp),
                nn.Conv2d(inp, branch, 1, 1, 0, bias=False), nn.BatchNorm2d(branch), nn.ReLU(inplace=True),
            )
        else:
            self.branch1 = nn.Sequential()
        self.branch2 = nn.Sequential(
            nn.Conv2d(inp if stride > 1 else branch, branch, 1, 1, 0, bias=False), nn.BatchNorm2d(branch), nn.ReLU(inplace=True),
            nn.Conv2d(branch, branch, 3, stride, 1, bias=False, groups=branch), nn.BatchNorm2d(branch),
            nn.Conv2d(branch, branch, 1, 1, 0, bias=False), nn.BatchNorm2d(branch), nn.ReLU(inplace=True),
        )

    def forward(self, x):
        if self.stride == 1:
            x1, x2 = x.chunk(2, dim=1)
            out = torch.cat((x1, self.branch2(x2)), dim=1)
        else:
            out = torch.cat((self.branch1(x), self.branch2(x)), dim=1)
        return channel_shuffle(out, 2)


class ShuffleNetV2(nn.Module):
    """torchvision.models.shufflenet_v2_x0_5."""

    def __init__(self, stages_repeats=(4, 8, 4), stages_out_channels=(24, 48, 96, 192, 1024), num_classes: int = 1000):
        super().__init__()
        input_channels = stages_out_channels[0]
        self.conv1 = nn.Sequential(nn.Conv2d(3, input_channels, 3, 2, 1, bias=False), nn.BatchNorm2d(input_channels), nn.ReLU(inplace=True))
        self.maxpool = nn.MaxPool2d(kernel_size=3, stride=2, padding=1)
        for name, repeats, output_channels in zip(("stage2", "stage3", "stage4"), stages_repeats, stages_out_channels[1:]):
            blocks = [InvertedResidual(input_channels, output_channels, 2)]
            blocks += [InvertedResidual(output_channels, output_channels, 1) for _ in range(repeats - 1)]
            setattr(self, name, nn.Sequential(*blocks))
            input_channels = output_channels
        output_channels = stages_out_channels[-1]
        self.conv5 = nn.Sequential(nn.Conv2d(input_channels, output_channels, 1, 1, 0, bias=False), nn.BatchNorm2d(output_channels), nn.ReLU(inplace=True))
        self.fc = nn.Linear(output_channels, num_classes)

    def forward(self, x):
        x = self.maxpool(self.conv1(x))
        x = self.conv5(self.stage4(self.stage3(self.stage2(x))))
        return self.fc(x.mean([2, 3]))


def _init(model: nn.Module) -> nn.Module:
    """bench/models.py's initialisation (Kaiming weights, batch-norm statistics), biases of
    std 0.05, in eval mode. This file is also loaded by path (schedc import), so bench/ goes
    on the path for bench/timing.py's loader."""
    folder = str(Path(__file__).resolve().parent)
    if folder not in sys.path:
        sys.path.insert(0, folder)
    from timing import bench_models

    return bench_models()._init(model, bias_std=0.05)


def _image(size: int = 224):
    torch.manual_seed(1)
    return (torch.randn(1, 3, size, size),)


class _LastHidden(nn.Module):
    """A Hugging Face model's last hidden state, as a plain tensor result."""

    def __init__(self, model):
        super().__init__()
        self.model = model

    def forward(self, input_ids):
        return self.model(input_ids=input_ids).last_hidden_state


def _tokens(vocab: int, length: int = 64):
    torch.manual_seed(1)
    return (torch.randint(0, vocab, (1, length)),)


def squeezenet1_1():
    return _init(SqueezeNet()), _image()


def shufflenet_v2():
    return _init(ShuffleNetV2()), _image()


def gpt2():
    from transformers import GPT2Config, GPT2Model

    torch.manual_seed(0)
    config = GPT2Config(n_layer=2, n_embd=256, n_head=4, n_positions=128, vocab_size=1000, bos_token_id=0, eos_token_id=0,
                        attn_implementation="eager")
    return _LastHidden(GPT2Model(config)).eval(), _tokens(1000)


def bert():
    from transformers import BertConfig, BertModel

    torch.manual_seed(0)
    config = BertConfig(num_hidden_layers=2, hidden_size=256, num_attention_heads=4, intermediate_size=1024, vocab_size=1000,
                        max_position_embeddings=128, attn_implementation="eager")
    return _LastHidden(_plain_buffers(BertModel(config, add_pooling_layer=False))).eval(), _tokens(1000)


class _Pixels(nn.Module):
    """A Hugging Face vision model's last hidden state (or feature map) as a plain tensor."""

    def __init__(self, model):
        super().__init__()
        self.model = model

    def forward(self, pixel_values):
        return self.model(pixel_values=pixel_values).last_hidden_state


def _plain_buffers(model: nn.Module) -> nn.Module:
    # torch-mlir's FX importer finds no state for non-persistent buffers (position ids, rotary
    # frequencies): kept as ordinary buffers, they import (iree-notes: the workaround).
    for module in model.modules():
        module._non_persistent_buffers_set.clear()
    return model


def hf_resnet18():
    """Hugging Face's ResNetModel with microsoft/resnet-18's config (basic blocks, 2-2-2-2)."""
    from transformers import ResNetConfig, ResNetModel

    torch.manual_seed(0)
    config = ResNetConfig(layer_type="basic", depths=[2, 2, 2, 2], hidden_sizes=[64, 128, 256, 512], embedding_size=64)
    return _init(_Pixels(ResNetModel(config))), _image()


def hf_resnet50():
    """Hugging Face's ResNetModel with microsoft/resnet-50's config (bottleneck blocks, 3-4-6-3)."""
    from transformers import ResNetConfig, ResNetModel

    torch.manual_seed(0)
    config = ResNetConfig(layer_type="bottleneck", depths=[3, 4, 6, 3], hidden_sizes=[256, 512, 1024, 2048], embedding_size=64)
    return _init(_Pixels(ResNetModel(config))), _image()


def hf_mobilenet_v2():
    """Hugging Face's MobileNetV2Model (google/mobilenet_v2_1.0_224's config)."""
    from transformers import MobileNetV2Config, MobileNetV2Model

    torch.manual_seed(0)
    return _init(_Pixels(MobileNetV2Model(MobileNetV2Config(), add_pooling_layer=False))), _image()


def convnext():
    """Hugging Face's ConvNextModel, a narrow ConvNeXt (7x7 depthwise, layer norm, GELU MLPs)."""
    from transformers import ConvNextConfig, ConvNextModel

    torch.manual_seed(0)
    config = ConvNextConfig(depths=[2, 2, 2, 2], hidden_sizes=[48, 96, 192, 384])
    return _init(_Pixels(ConvNextModel(config))), _image()


def vit():
    """Hugging Face's ViTModel, ViT-Tiny-sized (patch 16, width 192, 3 heads, 4 layers)."""
    from transformers import ViTConfig, ViTModel

    torch.manual_seed(0)
    config = ViTConfig(hidden_size=192, num_hidden_layers=4, num_attention_heads=3, intermediate_size=768, attn_implementation="eager")
    return _Pixels(_plain_buffers(ViTModel(config, add_pooling_layer=False))).eval(), _image()


def llama():
    """Hugging Face's LlamaModel, small (2 layers, width 256, RMSNorm, rotary, SwiGLU, GQA)."""
    from transformers import LlamaConfig, LlamaModel

    torch.manual_seed(0)
    config = LlamaConfig(num_hidden_layers=2, hidden_size=256, intermediate_size=688, num_attention_heads=4, num_key_value_heads=2,
                         vocab_size=1000, max_position_embeddings=128, attn_implementation="eager")
    return _LastHidden(_plain_buffers(LlamaModel(config))).eval(), _tokens(1000)


HELDOUT = {
    "squeezenet1_1": squeezenet1_1, "shufflenet_v2": shufflenet_v2, "hf_resnet18": hf_resnet18, "hf_mobilenet_v2": hf_mobilenet_v2,
    "hf_resnet50": hf_resnet50, "convnext": convnext, "gpt2": gpt2, "bert": bert, "vit": vit, "llama": llama,
}
