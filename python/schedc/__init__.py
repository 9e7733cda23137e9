"""schedc: scheduling passes for ML models compiled with IREE.

    mlir = schedc.import_torch(model, x)                 # torch-dialect MLIR (torch-mlir)
    vmfb = schedc.compile(mlir, target="llvm-cpu")      # IREE + schedc's passes
    module = schedc.load("model.vmfb", device="local-task")
    (with import_torch(..., params="w.irpa"), the weights stay outside the module:
     schedc.load("model.vmfb", params="w.irpa"); schedc.save_params(model, "w.irpa") writes
     another checkpoint of the same architecture)
    y = module.forward(x)

The compiler half (`compile`, `import_torch`) loads IREE's compiler and torch-mlir on first use,
so a machine with only iree-base-runtime can still `load` and run modules.
"""

from schedc.errors import CompileError, RuntimeLoadError, SchedcError
from schedc.runtime.module import load
from schedc.targets import TARGET_NAMES, resolve_target
from schedc.version import __version__

_LAZY = {"compile": "compiler.driver", "import_torch": "torch.importer", "load_factory": "torch.importer", "save_params": "torch.parameters"}


def __getattr__(name: str):
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(f".{_LAZY[name]}", __name__), name)
    raise AttributeError(f"module 'schedc' has no attribute '{name}'")


__all__ = [
    "CompileError",
    "RuntimeLoadError",
    "SchedcError",
    "TARGET_NAMES",
    "compile",
    "import_torch",
    "load",
    "load_factory",
    "resolve_target",
    "save_params",
    "__version__",
]
