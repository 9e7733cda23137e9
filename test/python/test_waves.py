"""memory-order's serialization on llvm-cpu: kept where IREE's concurrent waves would need
more transient bytes than the serial order's peak, given back where they need no more
(schedc.compiler.waves)."""

from __future__ import annotations

import numpy as np
import torch
from torch import nn

import schedc
from schedc.compiler.driver import compile_with_options
from schedc.options import CompileOptions


class Fan(nn.Module):
    """Four branches that each widen the image 16x and sum it back down: one at a time a
    single wide tensor is alive; in IREE's waves the four widenings run together."""

    def __init__(self):
        super().__init__()
        self.wide = nn.ModuleList(nn.Conv2d(4, 64, 3, padding=1) for _ in range(4))

    def forward(self, x):
        return sum(w(x).sum(1, keepdim=True) for w in self.wide)


class Pair(nn.Module):
    """Two small independent layers added together: in waves or one at a time, the same
    tensors are alive."""

    def __init__(self):
        super().__init__()
        self.a, self.b = nn.Linear(32, 32), nn.Linear(32, 32)

    def forward(self, x):
        return torch.tanh(self.a(x)) + torch.relu(self.b(x))


def _order_record(model, x):
    result = compile_with_options(schedc.import_torch(model.eval(), x), CompileOptions(target="llvm-cpu", emit="stream"))
    (record,) = result.records["memory-order"].values()
    return record, result.output


def test_waves_that_would_raise_the_peak_stay_serialized():
    record, stream = _order_record(Fan(), torch.randn(1, 4, 16, 16))
    assert record["serialize"] and record["waves_load_bytes"] > record["peak_bytes"]
    assert '#stream.partitioning_config<"debug">' in stream


def test_waves_that_cost_no_memory_are_given_back():
    record, stream = _order_record(Pair(), torch.randn(8, 32))
    assert not record["serialize"] and record["waves_load_bytes"] <= record["peak_bytes"]
    assert '#stream.partitioning_config<"debug">' not in stream


def test_a_function_given_its_waves_back_computes_the_same_and_the_report_says_why(tmp_path):
    model, x = Pair().eval(), torch.randn(8, 32)
    path, report = tmp_path / "pair.vmfb", tmp_path / "pair.html"
    schedc.compile(schedc.import_torch(model, x), target="llvm-cpu", output=str(path), report=str(report))
    np.testing.assert_allclose(schedc.load(str(path)).forward(x).numpy(), model(x).detach().numpy(), rtol=1e-5, atol=1e-5)
    assert "so they stay: no barrier between every two kernels" in report.read_text()
