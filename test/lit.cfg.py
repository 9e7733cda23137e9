"""lit configuration: FileCheck tests of schedc's passes and command-line tools."""

import os
import shutil

import lit.formats

config.name = "schedc"
config.test_format = lit.formats.ShTest()
config.suffixes = [".mlir"]
config.test_source_root = os.path.dirname(__file__)
config.excludes = ["python", "lit.cfg.py", "Inputs"]
config.environment["PATH"] = os.environ.get("PATH", "")
config.environment["PYTHONWARNINGS"] = "ignore"

for tool in ("schedc", "schedc-opt", "filecheck"):
    if shutil.which(tool) is None:
        lit_config.fatal(f"'{tool}' is not on PATH: install schedc with its test extras first (see README)")

# A CUDA device here (a GPU machine): the tests of what happens without one do not apply.
try:
    from schedc.runtime.module import has_device

    if has_device("cuda"):
        config.available_features.add("cuda-device")
except Exception:  # no runtime to ask: the tools' own check above reports a broken install
    pass
