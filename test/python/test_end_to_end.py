"""Import, compile for the host CPU and run: results match torch eager."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import schedc

MODELS = ["mlp", "transformer_block", "branchy_convnet"]


def relative_error(actual, expected) -> float:
    actual, expected = np.asarray(actual, np.float64), np.asarray(expected, np.float64)
    return float(np.linalg.norm(actual - expected) / max(np.linalg.norm(expected), 1e-30))


@pytest.mark.parametrize("name", MODELS)
def test_cpu_matches_torch(name, imported, tmp_path):
    model, args, mlir = imported(name)
    assert "torch.aten" in mlir or "torch.vtensor" in mlir  # torch dialect, not yet lowered
    path = tmp_path / f"{name}.vmfb"
    vmfb = schedc.compile(mlir, target="llvm-cpu", output=str(path), passes="print-kernel-graph")
    assert path.read_bytes() == vmfb
    module = schedc.load(path)
    with torch.no_grad():
        expected = model(*args)
    actual = module.forward(*[a.numpy() for a in args])
    assert isinstance(actual, np.ndarray)
    assert actual.shape == tuple(expected.shape)
    assert relative_error(actual, expected.numpy()) <= 1e-4


def test_torch_tensors_in_torch_tensors_out(imported, tmp_path):
    model, args, mlir = imported("mlp")
    path = tmp_path / "mlp.vmfb"
    schedc.compile(mlir, output=str(path))
    result = schedc.load(str(path), device="local-sync").forward(*args)
    assert isinstance(result, torch.Tensor)
    with torch.no_grad():
        assert relative_error(result.numpy(), model(*args).numpy()) <= 1e-4


def test_without_schedc_passes_gives_the_same_numbers(imported, tmp_path):
    # The scheduling passes change no number; cpu-config's layouts change the order of the sums.
    _, args, mlir = imported("branchy_convnet")
    outputs = []
    for keywords in ({"tuning": False}, {"schedc_passes": False}, {}):
        path = tmp_path / "m.vmfb"
        schedc.compile(mlir, output=str(path), **keywords)
        outputs.append(schedc.load(path).forward(args[0].numpy()))
    np.testing.assert_array_equal(outputs[0], outputs[1])
    np.testing.assert_allclose(outputs[2], outputs[1], rtol=1e-5, atol=1e-6)


def test_emit_phases(imported):
    _, _, mlir = imported("mlp")
    flow = schedc.compile(mlir, emit="flow")
    stream = schedc.compile(mlir, emit="stream")
    assert "flow.dispatch" in flow and "stream.cmd.execute" not in flow
    assert "stream.cmd.execute" in stream or "stream.async.execute" in stream


def test_import_rejects_non_modules():
    with pytest.raises(schedc.SchedcError, match="expects a torch.nn.Module"):
        schedc.import_torch(lambda x: x, torch.ones(2))
