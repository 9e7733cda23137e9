"""Training steps (`import_torch(..., train=True)`, `schedc import --train`): the imported step
compiled for the host CPU, with and without remat, gives PyTorch's loss, gradients and
batch-norm statistics; what cannot be a training step is a clear error."""

from __future__ import annotations

import copy
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch
from torch import nn

import schedc
from schedc.torch.training import import_train_step

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "examples"))
import models as examples  # noqa: E402

REMAT = "memory-order,remat{memory-budget=0.6},arena-plan"


class Embedder(nn.Module):
    """Embedding, layer norm and attention through F.scaled_dot_product_attention: their
    backward passes need torch-mlir's decompositions and PyTorch's math attention."""

    def __init__(self, vocab=50, d=32, heads=4):
        super().__init__()
        self.embed = nn.Embedding(vocab, d)
        self.norm = nn.LayerNorm(d)
        self.qkv = nn.Linear(d, 3 * d)
        self.out = nn.Linear(d, vocab)
        self.heads = heads

    def forward(self, tokens):
        x = self.norm(self.embed(tokens))
        b, s, d = x.shape
        q, k, v = (t.reshape(b, s, self.heads, d // self.heads).transpose(1, 2) for t in self.qkv(x).chunk(3, dim=-1))
        att = nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True)
        return self.out(x + att.transpose(1, 2).reshape(b, s, d)).reshape(b * s, -1)


def cases():
    torch.manual_seed(0)
    mlp = nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 32), nn.ReLU(), nn.Linear(32, 4))
    yield "mlp", mlp, (torch.randn(8, 16),), (torch.randn(8, 4),), nn.MSELoss()
    model, x, y, loss = examples.convnet_train()
    yield "convnet_bn", model, (x,), (y,), loss
    tokens = torch.randint(0, 50, (2, 8))
    yield "embedder", Embedder(), (tokens,), (torch.randint(0, 50, (16,)),), nn.CrossEntropyLoss()


CASES = {name: rest for name, *rest in cases()}
# max |diff| / max |ref| per result. Batch norm's weight and bias gradients are sums of 1,024
# products that cancel: IREE's llvm-cpu code adds them one by one in f32, 8.5e-5 away from a
# float64 PyTorch (PyTorch's own f32 is 1.1e-6 away); the bench's larger CNN stays under 1e-5.
TOLERANCE = {"mlp": 1e-5, "embedder": 1e-5, "convnet_bn": 2e-4}


def eager_step(model, inputs, targets, loss):
    """PyTorch's (updated buffers, loss, gradients) for one step, on a copy of the model."""
    model = copy.deepcopy(model).train()
    value = loss(model(*inputs), *targets)
    value.backward()
    return [b.detach().numpy() for b in model.buffers()] + [value.detach().numpy()] + [p.grad.numpy() for p in model.parameters()]


def step_arguments(model, inputs, targets):
    return [p.detach().numpy() for p in model.parameters()] + [b.numpy().copy() for b in model.buffers()] + [t.numpy() for t in inputs + targets]


def worst_error(actual, expected) -> float:
    """The worst, over the results, of max |diff| / max |expected|."""
    worst = 0.0
    for got, ref in zip(actual, expected, strict=True):
        got, ref = np.asarray(got, np.float64), np.asarray(ref, np.float64)
        assert got.shape == ref.shape
        worst = max(worst, float(np.abs(got - ref).max() / max(np.abs(ref).max(), 1e-30)))
    return worst


@pytest.mark.parametrize("passes", [None, REMAT], ids=["default", "remat"])
@pytest.mark.parametrize("name", list(CASES))
def test_a_compiled_step_matches_pytorch(name, passes, tmp_path):
    model, inputs, targets, loss = CASES[name]
    mlir = schedc.import_torch(model, *inputs, train=True, targets=targets, loss=loss)
    path = tmp_path / f"{name}.vmfb"
    report = tmp_path / "report.json"
    schedc.compile(mlir, target="llvm-cpu", output=str(path), passes=passes, report=str(report))
    module = schedc.load(str(path))
    actual = module.train_step(*step_arguments(model, inputs, targets))
    assert worst_error(actual, eager_step(model, inputs, targets, loss)) <= TOLERANCE[name]


def test_remat_lowers_the_allocation_and_its_estimate_is_iree_s(tmp_path):
    """The convnet's step under remat: fewer transient bytes than memory-order alone, and the
    estimate after remat is the most bytes IREE's own pack keeps alive at once (up to the
    alignment of a few small slices)."""
    import json

    model, inputs, targets, loss = CASES["convnet_bn"]
    mlir = schedc.import_torch(model, *inputs, train=True, targets=targets, loss=loss)
    reports = {}
    for label, passes in (("order", "memory-order,arena-plan"), ("remat", REMAT)):
        schedc.compile(mlir, target="llvm-cpu", passes=passes, emit="stream", output=str(tmp_path / f"{label}.mlir"), report=str(tmp_path / f"{label}.json"))
        (entry,) = [e for e in json.loads((tmp_path / f"{label}.json").read_text())["functions"].values() if "arena-plan" in e]
        reports[label] = entry
    remat = reports["remat"]["remat"]
    assert remat["copies"] > 0 and remat["extra_flops"] > 0
    assert remat["peak_bytes_after"] < remat["peak_bytes_before"] == reports["order"]["memory-order"]["peak_bytes"]
    # IREE's LOAD counts each slice rounded up to its 64-byte alignment; the estimate does not.
    load = max(a["load_bytes"] for a in reports["remat"]["arena-plan"])
    assert 0 <= load - remat["peak_bytes_after"] < 64 * 4
    assert reports["remat"]["iree_transient_bytes"]["with_schedc"] < reports["order"]["iree_transient_bytes"]["with_schedc"]


def test_the_signature_names_every_argument_and_result():
    model, inputs, targets, loss = CASES["convnet_bn"]
    _, names = import_train_step(model, inputs, targets, loss)
    assert names.parameters == tuple(n for n, _ in model.named_parameters())
    assert names.buffers == tuple(n for n, _ in model.named_buffers())
    assert names.updated_buffers == names.buffers  # batch norm updates all its buffers
    assert names.gradients == names.parameters
    assert (names.inputs, names.targets) == (1, 1)


def test_frozen_parameters_get_no_gradient():
    model, inputs, targets, loss = CASES["mlp"]
    frozen = copy.deepcopy(model)
    frozen[0].weight.requires_grad_(False)
    _, names = import_train_step(frozen, inputs, targets, loss)
    assert "0.weight" in names.parameters and "0.weight" not in names.gradients


@pytest.mark.parametrize("loss,message", [
    (nn.MSELoss(reduction="none"), "the loss must be a scalar tensor"),
    ("mse", "the loss must be callable"),
    (lambda out, y: torch.tensor(1.0), "the loss does not depend on any parameter"),
])
def test_a_bad_loss_is_a_clear_error(loss, message):
    model, inputs, targets, _ = CASES["mlp"]
    with pytest.raises(schedc.SchedcError, match=message):
        schedc.import_torch(model, *inputs, train=True, targets=targets, loss=loss)


def test_what_cannot_train_is_refused():
    _, inputs, targets, loss = CASES["mlp"]
    with pytest.raises(schedc.SchedcError, match="no parameter that requires grad"):
        schedc.import_torch(nn.ReLU(), *inputs, train=True, targets=targets, loss=loss)
    with pytest.raises(schedc.SchedcError, match="needs a loss"):
        schedc.import_torch(CASES["mlp"][0], *inputs, train=True, targets=targets)
    with pytest.raises(schedc.SchedcError, match="static shapes"):
        schedc.import_torch(CASES["mlp"][0], *inputs, train=True, targets=targets, loss=loss, dynamic_batch=True)


def test_a_model_that_fails_names_the_user_s_line():
    class Broken(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(4, 4)

        def forward(self, x):
            return self.fc(x) @ torch.ones(5, 5)  # shapes do not match

    with pytest.raises(schedc.SchedcError, match=r"test_training.py:\d+: the training step failed to run"):
        schedc.import_torch(Broken(), torch.randn(2, 4), train=True, targets=(torch.randn(2, 5),), loss=nn.MSELoss())


def schedc_cli(*args, cwd):
    return subprocess.run([sys.executable, "-m", "schedc.tools.schedc", *map(str, args)], capture_output=True, text=True, cwd=cwd)


def test_the_command_line_imports_and_runs_a_step(tmp_path):
    factory = f"{ROOT / 'examples' / 'models.py'}:convnet_train"
    done = schedc_cli("import", factory, "--train", "-o", "step.mlir", "--save-inputs", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    model, x, y, loss = examples.convnet_train()
    saved = sorted(tmp_path.glob("step.arg*.npy"), key=lambda p: int(p.stem.split("arg")[1]))
    assert len(saved) == len(list(model.parameters())) + len(list(model.buffers())) + 2
    done = schedc_cli("step.mlir", "--passes", REMAT, "--summary", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "remat" in done.stdout and (tmp_path / "step.vmfb").exists()
    arguments = [np.load(p) for p in saved]
    actual = schedc.load(str(tmp_path / "step.vmfb")).train_step(*arguments)
    assert worst_error(actual, eager_step(model, (x,), (y,), loss)) <= TOLERANCE["convnet_bn"]


def test_the_command_line_says_when_a_factory_is_not_a_training_step(tmp_path):
    factory = f"{ROOT / 'examples' / 'models.py'}:mlp"
    done = schedc_cli("import", factory, "--train", "-o", "step.mlir", cwd=tmp_path)
    assert done.returncode == 1 and "with --train the factory must return (model, inputs, targets, loss)" in done.stderr
    assert "Traceback" not in done.stderr and not (tmp_path / "step.mlir").exists()
    done = schedc_cli("import", f"{ROOT / 'examples' / 'models.py'}:convnet_train", "-o", "step.mlir", cwd=tmp_path)
    assert done.returncode == 1 and "add --train" in done.stderr


def test_a_cnn_step_compiles_for_cuda_with_its_backward_convolutions_configured():
    """Forward, input-gradient and weight-gradient convolutions of the convnet's step each get a
    config IREE compiles for cuda (a weight gradient once got an implicit-GEMM config whose
    shared memory IREE refused)."""
    from schedc.compiler.driver import compile_with_options
    from schedc.options import CompileOptions

    torch.manual_seed(0)
    model = nn.Sequential(nn.Conv2d(3, 64, 3, padding=1), nn.BatchNorm2d(64), nn.ReLU(), nn.Conv2d(64, 64, 3, padding=1), nn.ReLU(),
                          nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(64, 10))
    mlir = schedc.import_torch(model, torch.randn(4, 3, 16, 16), train=True, targets=(torch.randint(0, 10, (4,)),), loss=nn.CrossEntropyLoss())
    result = compile_with_options(mlir, CompileOptions(target="cuda", passes="kernel-config", emit="hal"))
    assert "hal.executable.binary" in result.output
    kernels = result.records["kernel-config"]["module"]["kernels"]
    convs = [k for k in kernels if "3x3" in k["signature"]]
    assert sum(k["source"] == "heuristic" and k["config"].startswith("igemm") for k in convs) >= 2, convs


def test_max_pooling_s_backward_is_dense_and_matches_pytorch(tmp_path):
    """Overlapping, padded and ceil-mode max pools: their backward is no scatter (IREE ran the
    scatter as a serial loop, 17 of the CNN step's 18.7 ms on an H200), and the step's
    gradients are PyTorch's."""
    torch.manual_seed(0)
    model = nn.Sequential(nn.Conv2d(3, 8, 3), nn.MaxPool2d(3, 2, ceil_mode=True), nn.ReLU(), nn.Conv2d(8, 8, 3, padding=1),
                          nn.MaxPool2d(3, 2, padding=1), nn.Flatten(), nn.Linear(8 * 4 * 4, 5))
    inputs, targets, loss = (torch.randn(2, 3, 17, 17),), (torch.randint(0, 5, (2,)),), nn.CrossEntropyLoss()
    mlir = schedc.import_torch(model, *inputs, train=True, targets=targets, loss=loss)
    assert "max_pool2d_with_indices_backward" not in mlir
    assert mlir.count("torch.aten.scatter") <= 1  # the loss's one-hot, 2x5
    path = tmp_path / "pool.vmfb"
    schedc.compile(mlir, target="llvm-cpu", output=str(path))
    actual = schedc.load(str(path)).train_step(*step_arguments(model, inputs, targets))
    assert worst_error(actual, eager_step(model, inputs, targets, loss)) <= 1e-5
