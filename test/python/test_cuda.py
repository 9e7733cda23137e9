"""Runs the example models on a CUDA device; skipped where there is none.

Where IREE's compiler is installed the test compiles the modules itself; on a GPU machine with
only the runtime, point SCHEDC_CUDA_ARTIFACTS at the output of `bench/cuda_check.py prepare`.
"""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path

import pytest

from conftest import ROOT
from schedc.runtime.module import available_drivers, has_device

pytestmark = [
    pytest.mark.cuda,
    pytest.mark.skipif("cuda" not in available_drivers() or not has_device("cuda"), reason="no CUDA device"),
]


def _cuda_check():
    spec = importlib.util.spec_from_file_location("cuda_check", ROOT / "bench" / "cuda_check.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_models_match_torch_on_cuda(tmp_path):
    check = _cuda_check()
    folder = Path(os.environ.get("SCHEDC_CUDA_ARTIFACTS", tmp_path))
    if "SCHEDC_CUDA_ARTIFACTS" not in os.environ:
        check.prepare(folder)
    rows = check.run(folder)
    assert [r["model"] for r in rows] == list(check.MODELS)
    for row in rows:
        assert row["relative_error"] <= 1e-3, row  # TF32-free f32 on both sides; 1e-3 allows reduction order
