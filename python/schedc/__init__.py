"""schedc: scheduling passes for ML models compiled with IREE.

    mlir = schedc.import_torch(model, x)                 # torch-dialect MLIR (torch-mlir)
    vmfb = schedc.compile(mlir, target="llvm-cpu")      # IREE + schedc's passes
    module = schedc.load("model.vmfb", device="local-task")
    y = module.forward(x)
"""

from .driver import compile
from .errors import CompileError, RuntimeLoadError, SchedcError
from .frontend import import_torch, load_factory
from .runtime import load
from .targets import TARGET_NAMES, resolve_target

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
]
__version__ = "0.1.0"
