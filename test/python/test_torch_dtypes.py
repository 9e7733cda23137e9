"""The torch contract at the runtime boundary: a model imported with `schedc.import_torch`
gives back what torch gives, on every dtype and result kind that IREE's ABI loses.

Each case failed before the signature (issue 30): f64 arguments and results failed in
`hal.buffer_view.create`, uint8 came back as int8, a Python number as a 0-d array (or a
traceback in the torch path), an in-place write to an argument as one more result, and a
model whose result IREE writes into an argument's buffer failed with PERMISSION_DENIED."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import schedc
from schedc.runtime.signature import Signature
from schedc.torch.importer import export_program
from schedc.torch.signature import torch_signature


class Mixed(torch.nn.Module):
    """f64 in and out, a bool and a uint8 result, a Python number, an in-place write."""

    def forward(self, x, z):
        x[0] += 1
        return x * 2.0, x > 1.5, z.max(dim=1).values, x.sum().item() > 0


class SliceScatter(torch.nn.Module):
    """IREE 3.13 writes this result into x's buffer in place (iree-org/iree#16168)."""

    def forward(self, x, y):
        return torch.slice_scatter(x, y, dim=0, start=3, end=-1)


def _inputs():
    generator = torch.Generator().manual_seed(0)
    x = torch.rand(3, 4, dtype=torch.float64, generator=generator)
    z = torch.randint(100, 255, (3, 4), dtype=torch.uint8, generator=generator)
    return x, z


@pytest.fixture(scope="session")
def mixed(tmp_path_factory):
    x, z = _inputs()
    path = tmp_path_factory.mktemp("dtypes") / "mixed.vmfb"
    path.write_bytes(schedc.compile(schedc.import_torch(Mixed(), x.clone(), z), target="llvm-cpu"))
    return schedc.load(str(path))


def test_signature_of_an_exported_program():
    import warnings

    x, z = _inputs()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        program = export_program(Mixed(), (x.clone(), z))
    assert not [w for w in caught if "LeafSpec" in str(w.message)], "torch's known deprecation is filtered at schedc's boundary"
    assert torch_signature(program) == {
        "args": ["float64", "uint8"],
        "results": ["mutates:0", "float64", "bool", "uint8", "bool:number"],
    }


def test_torch_tensors_come_back_as_eager_gives_them(mixed):
    x, z = _inputs()
    eager_x = x.clone()
    expected = Mixed()(eager_x, z)
    got = mixed.forward(x, z)
    assert len(got) == len(expected) == 4
    for want, have in zip(expected[:3], got[:3]):
        assert have.dtype == want.dtype and have.shape == want.shape
        assert torch.allclose(have.double(), want.double())
    assert got[3] is True and expected[3] is True
    assert torch.equal(x, eager_x), "the in-place write reaches the caller's tensor"


def test_numpy_arrays_come_back_as_eager_gives_them(mixed):
    x, z = _inputs()
    eager_x = x.clone()
    expected = Mixed()(eager_x, z)
    array = x.numpy().copy()
    got = mixed.forward(array, z.numpy())
    assert [g.dtype for g in got[:3]] == [np.float64, np.bool_, np.uint8]
    assert np.array_equal(got[2], expected[2].numpy())
    assert np.allclose(array, eager_x.numpy()), "the in-place write reaches the caller's array"


def test_an_argument_written_in_place_must_be_writable(mixed):
    x, z = _inputs()
    frozen = x.numpy().copy()
    frozen.setflags(write=False)
    with pytest.raises(schedc.SchedcError, match="writes argument 0 in place, and a read-only numpy array cannot be written back"):
        mixed.forward(frozen, z.numpy())


def test_a_result_iree_writes_into_an_argument(tmp_path):
    x, y = torch.rand(6, 8), torch.rand(2, 8)
    path = tmp_path / "scatter.vmfb"
    path.write_bytes(schedc.compile(schedc.import_torch(SliceScatter(), x, y), target="llvm-cpu"))
    module = schedc.load(str(path))
    before = x.clone()
    for _ in range(2):  # the second call goes straight to the copies
        assert torch.equal(module.forward(x, y), SliceScatter()(x, y))
        assert torch.equal(x, before), "the caller's tensor stays as it was"


def test_mending_is_free_where_nothing_needs_it():
    assert Signature.parse('{"args":["float32"],"results":["float32","int64"]}', "forward") is None
    assert Signature.parse("not json", "forward") is None
    mend = Signature.parse('{"args":[],"results":["uint8","int:number"]}', "forward")
    got = mend.mend((), (np.array([-1, 2], np.int8), np.array(7, np.int64)))
    assert got[0].dtype == np.uint8 and got[0].tolist() == [255, 2]
    assert got[1] == 7 and type(got[1]) is int


def test_python_arithmetic_on_a_tensor_value_names_the_op_and_the_line():
    class FloatOfTensor(torch.nn.Module):
        def forward(self, a, b):
            return float(a) + int(b)

    with pytest.raises(schedc.SchedcError) as error:
        schedc.import_torch(FloatOfTensor(), torch.tensor(1.5), torch.tensor(2))
    message = str(error.value)
    assert "test_torch_dtypes.py:" in message and "torch-mlir cannot import `sym_float`" in message
    assert "return float(a) + int(b)" in message


@pytest.mark.parametrize("dims,shape,out", [(1, (2, 3, 10), (7,)), (2, (1, 4, 10, 16), (7, 13)), (2, (3, 9, 5), (4, 5)), (3, (1, 2, 5, 7, 9), (3, 4, 2))])
def test_adaptive_max_pool_decomposition_is_torchs(dims, shape, out):
    from schedc.torch.decompositions import adaptive_max_pool

    x = torch.randn(shape, generator=torch.Generator().manual_seed(1))
    pool = {1: torch.nn.functional.adaptive_max_pool1d, 2: torch.nn.functional.adaptive_max_pool2d, 3: torch.nn.functional.adaptive_max_pool3d}[dims]
    values, indices = pool(x, out, return_indices=True)
    got_values, got_indices = adaptive_max_pool(x, out, dims)
    assert torch.equal(got_values, values) and torch.equal(got_indices, indices)


def test_adaptive_max_pool_of_an_uneven_size_compiles_and_runs(tmp_path):
    class Pool(torch.nn.Module):
        def forward(self, x):
            return torch.nn.functional.adaptive_max_pool2d(x, (7, 13), return_indices=True)

    x = torch.randn(1, 8, 10, 16)
    path = tmp_path / "pool.vmfb"
    path.write_bytes(schedc.compile(schedc.import_torch(Pool(), x), target="llvm-cpu"))
    values, indices = schedc.load(str(path)).forward(x)
    expected = Pool()(x)
    assert torch.equal(values, expected[0]) and torch.equal(indices, expected[1])


def test_decompositions_give_torchs_results():
    from schedc.torch import decompositions as d

    generator = torch.Generator().manual_seed(2)
    a, b = torch.rand(3, 0, generator=generator), torch.rand(0, 4, generator=generator)
    assert torch.equal(d._zero_k(a, b), torch.mm(a, b))
    assert d._zero_k(torch.rand(3, 2), torch.rand(2, 4)) is NotImplemented
    x = torch.randperm(2 * 6 * 3, generator=generator).reshape(2, 6, 3)
    for keepdim in (False, True):
        want, got = torch.kthvalue(x, 4, 1, keepdim), d._kthvalue(x, 4, 1, keepdim)
        assert torch.equal(got[0], want.values) and torch.equal(got[1], want.indices)
    x, mask = torch.rand(5, 5, generator=generator), torch.tensor([True, False, True, True, False])
    rows, one = torch.rand(3, 5, generator=generator), torch.rand(1, 5, generator=generator)
    for values in (rows, one):
        for accumulate in (False, True):
            want = torch.ops.aten.index_put(x, (mask,), values, accumulate=accumulate)
            assert torch.equal(d._index_put_bool_mask(x, [mask], values, accumulate), want)
    element_mask = torch.rand(2, 3, 4, generator=generator) > 0.5
    values = torch.rand(int(element_mask.sum()), generator=generator)
    x = torch.rand(2, 3, 4, generator=generator)
    assert torch.equal(d._index_put_bool_mask(x, [element_mask], values), torch.ops.aten.index_put(x, (element_mask,), values))
    assert d._index_put_bool_mask(x, [torch.tensor([0, 1])], values) is NotImplemented
    x = torch.tensor([1.0, float("inf"), -float("inf"), float("nan")])
    assert torch.equal(d._isfinite(x), torch.isfinite(x))


def test_uint8_promotions_are_unsigned(tmp_path):
    class Promotes(torch.nn.Module):
        def forward(self, z):
            return z.sum(), z * 0.5, z.cumsum(0), z + torch.arange(4), z > 100

    z = torch.tensor([200, 100, 5, 255], dtype=torch.uint8)
    path = tmp_path / "u8.vmfb"
    path.write_bytes(schedc.compile(schedc.import_torch(Promotes(), z), target="llvm-cpu"))
    for got, want in zip(schedc.load(str(path)).forward(z), Promotes()(z)):
        assert got.dtype == want.dtype and torch.equal(got, want)


def test_f16_and_bf16_sums_and_means_add_up_in_f32_as_torch_does(tmp_path):
    # torch-mlir adds in the tensor's own type: the mean of 49 f16 3000s overflowed to inf
    # before its division (a ShuffleNetV2's global mean gave NaN), and 300 bf16 ones summed to 256.
    class Reductions(torch.nn.Module):
        def forward(self, x, y):
            return (x.mean([2, 3]), x.mean(), torch.nn.functional.adaptive_avg_pool2d(x, 1), torch.nn.functional.avg_pool2d(x, 7),
                    y.sum(-1), y.sum(), y.mean(-1, keepdim=True))

    x = torch.full((1, 4, 7, 7), 3000.0, dtype=torch.float16)
    y = torch.ones(2, 300, dtype=torch.bfloat16)
    path = tmp_path / "sums.vmfb"
    path.write_bytes(schedc.compile(schedc.import_torch(Reductions(), x, y), target="llvm-cpu"))
    for got, want in zip(schedc.load(str(path)).forward(x, y), Reductions()(x, y)):
        assert got.dtype == want.dtype and torch.equal(got, want), (got, want)
