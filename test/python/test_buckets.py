"""Batch buckets: one static function per bucket, padding and slicing in the runtime."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import schedc
from schedc.compiler.buckets import parse_buckets
from schedc.runtime.module import choose_bucket


@pytest.fixture(scope="session")
def bucketed_mlp(examples, tmp_path_factory):
    model, (x,) = examples.FACTORIES["mlp"]()
    mlir = schedc.import_torch(model, x, dynamic_batch=True)
    path = tmp_path_factory.mktemp("buckets") / "mlp.buckets.vmfb"
    schedc.compile(mlir, output=str(path), execution="graphs", batch_buckets=(1, 2, 4))
    return model, x, path


def reference(model, x):
    with torch.no_grad():
        return model(torch.as_tensor(x)).numpy()


def test_smallest_bucket_that_holds_the_batch():
    assert [choose_bucket(b, (1, 2, 4, 8)) for b in (1, 2, 3, 5, 8, 9)] == [1, 2, 4, 8, 8, None]


def test_bucket_lists_parse_or_say_why():
    assert parse_buckets("8,1,4,2,4") == (1, 2, 4, 8)
    with pytest.raises(schedc.CompileError, match="expected positive integers"):
        parse_buckets("1,two")
    with pytest.raises(schedc.CompileError, match="must be positive"):
        parse_buckets("0,4")


def test_each_batch_runs_padded_in_its_bucket_and_is_sliced(bucketed_mlp):
    model, x, path = bucketed_mlp
    module = schedc.load(path)
    assert module.forward.buckets.keys() == {1, 2, 4}
    generator = np.random.default_rng(2)
    for batch in (1, 2, 3, 4):
        value = generator.standard_normal((batch, *x.shape[1:])).astype(np.float32)
        result = module.forward(value)
        assert result.shape[0] == batch
        np.testing.assert_allclose(result, reference(model, value), rtol=1e-5, atol=1e-5)
    tensor = torch.randn(3, *x.shape[1:])
    np.testing.assert_allclose(module.forward(tensor, copy=True).numpy(), reference(model, tensor), rtol=1e-5, atol=1e-5)


def test_a_batch_above_the_largest_bucket_is_an_error(bucketed_mlp):
    _, x, path = bucketed_mlp
    with pytest.raises(schedc.SchedcError, match="batch 5 is above the largest bucket 4; compiled buckets: 1, 2, 4"):
        schedc.load(path).forward(np.zeros((5, *x.shape[1:]), np.float32))


def test_buckets_need_a_dynamic_batch(imported, tmp_path):
    _, _, mlir = imported("mlp")  # imported with its example's fixed batch
    output = tmp_path / "static.vmfb"
    with pytest.raises(schedc.CompileError, match="needs a function whose inputs have a dynamic batch.*--dynamic-batch"):
        schedc.compile(mlir, output=str(output), batch_buckets=(1, 2))
    assert not output.exists()


def test_numpy_results_outlive_their_module(examples, tmp_path):
    """numpy results are the caller's own: a result kept after its module is gone, and other
    modules have been loaded and called since, keeps its values (IREE's mapped result buffer
    was reused: a RandWire-sized result read other values, bench/params.py equal)."""
    import gc

    model, (x,) = examples.FACTORIES["mlp"]()
    path = str(tmp_path / "mlp.vmfb")
    schedc.compile(schedc.import_torch(model, x, dynamic_batch=True), output=path, batch_buckets=(1, 4))
    x = np.random.default_rng(0).standard_normal((3, 64)).astype(np.float32)
    kept = schedc.load(path).forward(x)
    expected = kept.copy()
    assert kept.flags.owndata or kept.base is not None and kept.base.flags.owndata
    gc.collect()
    for _ in range(3):
        schedc.load(path).forward(x * 2)
    assert np.array_equal(kept, expected)
