"""Shared fixtures: the example models, imported and compiled once per test session."""

from __future__ import annotations

import importlib.util
import os
import shutil
import sys
from pathlib import Path

import pytest
from filelock import FileLock

ROOT = Path(__file__).resolve().parents[2]

# cpu-config plans from the host ISA's database, and the AVX2 and AVX-512 ones plan some models
# differently; the figures the tests and the examples' comments quote are the AVX-512 plans'.
# Every test, and every process a test starts, plans from that one on any host.
os.environ.setdefault("SCHEDC_CPU_ISA", "x86_64-avx512")


def _load_examples():
    spec = importlib.util.spec_from_file_location("schedc_examples", ROOT / "examples" / "models.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules["schedc_examples"] = module
    spec.loader.exec_module(module)
    return module


EXAMPLES = _load_examples()


@pytest.fixture(scope="session")
def examples():
    return EXAMPLES


@pytest.fixture(scope="session")
def imported(examples):
    """name -> (model, example_args, torch-dialect MLIR text), imported once."""
    import schedc

    cache = {}

    def get(name):
        if name not in cache:
            model, args = examples.FACTORIES[name]()
            cache[name] = (model, args, schedc.import_torch(model, *args))
        return cache[name]

    return get


@pytest.fixture(scope="session")
def built_once(tmp_path_factory):
    """(key, make) -> a folder that `make(folder)` filled once for the whole run. pytest-xdist's
    workers share it: the first to ask builds it under a file lock, the others wait and read it,
    so a module several workers' tests load is compiled once, not once per worker."""
    root = tmp_path_factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):
        root = root.parent  # the run's base folder, each worker's own folder in it

    def get(key: str, make) -> Path:
        folder = root / f"built-{key}"
        with FileLock(f"{folder}.lock"):
            if not (folder / "done").exists():
                shutil.rmtree(folder, ignore_errors=True)
                folder.mkdir()
                make(folder)
                (folder / "done").touch()
        return folder

    return get
