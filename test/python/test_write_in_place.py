"""write-in-place: an elementwise kernel writes its result over an input that nothing else reads
(decision code: schedc.decisions.write_in_place), compiled and run against torch."""

from __future__ import annotations

import numpy as np
import torch
from torch import nn

import schedc
from schedc.compiler.driver import compile_with_options
from schedc.decisions.write_in_place import InPlaceSite, saved_bytes, shared_ties, ties
from schedc.options import CompileOptions
from schedc.targets import resolve_target

F32 = "tensor<32x1024xf32>"


def test_each_result_takes_the_first_unused_input_of_its_type():
    # three results over five same-typed inputs that die here (RandWire's node sum), one
    # result that may not be written in place, and a per-channel input of another type
    site = InPlaceSite(results=(F32, None, F32, F32), candidates=((1, F32), (2, F32), (4, "tensor<32xf32>"), (5, F32)))
    assert ties(site) == (1, -1, 2, 5)
    assert saved_bytes((131072, 131072, 131072, 131072), ties(site)) == 3 * 131072


def test_a_result_with_no_input_of_its_type_is_not_tied():
    assert ties(InPlaceSite(results=("tensor<4xf16>",), candidates=((0, "tensor<4xf32>"),))) == (-1,)
    assert ties(InPlaceSite(results=(F32, F32), candidates=((3, F32),))) == (3, -1)


def test_calls_of_one_kernel_are_tied_alike_or_not_at_all():
    first = InPlaceSite(results=(F32, F32), candidates=((0, F32), (1, F32)))
    second = InPlaceSite(results=(F32, F32), candidates=((0, F32),))  # input 1 read again later
    assert shared_ties([first, first]) == (0, 1)
    assert shared_ties([first, second]) == (0, -1)


class Scans(nn.Module):
    """Elementwise ops between two scans (cumulative sums), which IREE does not fuse into a
    scan's kernel: each reads, through a reshape, a scan's result that nothing else reads."""

    def forward(self, x):
        y = torch.tanh(torch.cumsum(x, dim=-1)) * 0.5
        return torch.cumsum(torch.sigmoid(y) + y * y, dim=-1)


def test_an_elementwise_kernel_writes_over_a_scan_s_result_and_computes_the_same(tmp_path):
    x = torch.randn(64, 256, generator=torch.Generator().manual_seed(0))
    expected = Scans()(x).numpy()
    text = schedc.import_torch(Scans(), x)
    entries = {}
    for passes in ("write-in-place,memory-order,arena-plan", "memory-order,arena-plan"):
        compiled = compile_with_options(text, CompileOptions.for_target(resolve_target("llvm-cpu"), passes=passes, report=True))
        (entries[passes],) = compiled.report["functions"].values()
        path = tmp_path / "m.vmfb"
        path.write_bytes(compiled.output)
        np.testing.assert_allclose(np.asarray(schedc.load(str(path)).forward(x.numpy())), expected, rtol=1e-5, atol=1e-5)
    tied, kept = entries["write-in-place,memory-order,arena-plan"], entries["memory-order,arena-plan"]
    assert tied["write-in-place"] == {"results": 1, "bytes": 64 * 256 * 4} and "write-in-place" not in kept
    # the elementwise result's bytes are the first scan's: one 64 KiB buffer where there were two
    assert tied["iree_transient_bytes"]["with_schedc"] == 64 * 256 * 4
    assert kept["iree_transient_bytes"]["with_schedc"] == 2 * 64 * 256 * 4
