"""Which upstream bugs of bench/upstream/README.md still reproduce with the installed IREE.

    python bench/upstream/check.py

Compiles each reproducer for llvm-cpu with IREE alone; the two that compile are run too
(f64-abi: the call fails; uint8-sum: 800 is right). Prints one line per file.
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
RUNS = {  # file -> (iree-run-module arguments, what a fixed IREE prints)
    "f64-abi.mlir": (["--input=4xf64=1,2,3,4"], "4xf64=2 3 4 5"),
    "uint8-sum.mlir": (["--input=4xui8=200,200,200,200"], "800"),
}


def first_error(text: str) -> str:
    needles = ("error", "stack dump", "out_of_range", "invalid_argument", "=")
    lines = [line.strip() for line in text.splitlines() if any(n in line.lower() for n in needles) and "EXEC @" not in line]
    return lines[0][:200] if lines else text.strip().splitlines()[-1][:200] if text.strip() else "(no output)"


def main() -> int:
    from iree.compiler.tools.binaries import find_tool
    import iree._runtime_libs

    compile_tool = find_tool("iree-compile")
    run_tool = Path(iree._runtime_libs.__file__).parent / "iree-run-module"
    flags = ["--iree-hal-target-device=local", "--iree-hal-local-target-device-backends=llvm-cpu", "--iree-llvmcpu-target-cpu=host"]
    with tempfile.TemporaryDirectory() as work:
        for path in sorted(HERE.glob("*.mlir")):
            module = Path(work) / f"{path.stem}.vmfb"
            compiled = subprocess.run([compile_tool, str(path), *flags, "-o", str(module)], capture_output=True, text=True)
            if compiled.returncode != 0:
                print(f"{path.name}: still fails to compile: {first_error(compiled.stderr)}")
                continue
            if path.name not in RUNS:
                print(f"{path.name}: compiles now (fixed upstream?)")
                continue
            arguments, fixed = RUNS[path.name]
            ran = subprocess.run([str(run_tool), f"--module={module}", "--function=forward", *arguments], capture_output=True, text=True)
            output = ran.stdout + ran.stderr
            print(f"{path.name}: " + ("fixed: " + fixed if ran.returncode == 0 and fixed in output else f"still wrong: {first_error(output)}"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
