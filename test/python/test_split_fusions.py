"""remat{split-fusions=true}: IREE keeps an op with several readers in a kernel of its own,
which lowers the allocation of a branchy net without adding FLOPs or changing its results."""

from __future__ import annotations

import numpy as np
import torch
from torch import nn

import schedc
from schedc.driver import CompileOptions, compile_with_options
from schedc.passes import REGISTRY
from schedc.targets import resolve_target


class Branchy(nn.Module):
    """A tensor read by three later branches, as in RandWire's nodes."""

    def __init__(self):
        super().__init__()
        self.a, self.b, self.c = (nn.Conv2d(8, 8, 3, padding=1) for _ in range(3))

    def forward(self, x):
        h = torch.relu(x)
        p = self.a(h)
        q = self.b(torch.relu(h + p))
        r = self.c(torch.relu(h + q))
        return p + q + r


def test_the_option_asks_iree_not_to_fuse_multi_use_ops():
    options = REGISTRY["remat"].options
    assert REGISTRY["remat"].flags_for(options()) == ()
    assert REGISTRY["remat"].flags_for(options(split_fusions=True)) == ("--iree-dispatch-creation-fuse-multi-use=false",)


def test_split_fusions_lower_the_allocation_at_the_same_flops_and_results(tmp_path):
    torch.manual_seed(0)
    model, x = Branchy().eval(), torch.randn(1, 8, 16, 16)
    text = schedc.import_torch(model, x)
    with torch.no_grad():
        expected = model(x).numpy()
    entries, results = {}, {}
    for split in (False, True):
        passes = f"memory-order,remat{{split-fusions={'true' if split else 'false'}}},arena-plan"
        compiled = compile_with_options(text, CompileOptions(resolve_target("llvm-cpu"), passes=passes, report=True))
        (entries[split],) = compiled.report["functions"].values()
        path = tmp_path / f"split-{split}.vmfb"
        path.write_bytes(compiled.output)
        results[split] = schedc.load(str(path)).forward(x.numpy())
    kept, split = entries[False], entries[True]
    assert split["remat"]["split_fusions"] and not kept["remat"]["split_fusions"]
    assert split["iree_transient_bytes"]["with_schedc"] < kept["iree_transient_bytes"]["with_schedc"]
    assert split["remat"]["function_flops"] == kept["remat"]["function_flops"]
    for result in results.values():
        np.testing.assert_allclose(result, expected, rtol=1e-5, atol=1e-5)
