"""schedc's own kernels: CPU ones, which IREE's llvm-cpu executables link in as objects, and a
CUDA convolution in Triton compiled to PTX (`triton_conv`, run by the triton-conv pass).

IREE 3.13's llvm-cpu matmuls run at a third to a half of torch's speed on an AVX2 host, its
NCHW convolutions slower still (bench/README.md, "CPU"). `gemm_x86_64.c` holds a plain
6 x 16 register-tile matmul in AVX2/FMA intrinsics (6 x 32 in AVX-512 where the target has
it: `kernel_isa`), and a direct NCHW convolution vectorised
along its output channels (its filter packed at compile time), each also with an epilogue (a
bias along the output channels, then ReLU or GELU), and a stride-1 max pool and depthwise
convolution that read their image unpadded (no padded copy beside it); a dispatch calls them through
IREE's custom-dispatch path (an executable whose objects IREE's embedded linker links:
schedc.ir.cpu_ops). They run at 0.7-1.1x torch's time in AVX2; the AVX-512 object took the
held-out ResNet-50 from 1.30x torch eager's time to 0.67x.

IREE links `.o` objects from a path only (3.13 drops an object's embedded data), and this
package ships C, not binaries: `object_path` builds the object for an ISA with the host's C
compiler (`$CC`, else cc, gcc or clang) once, into a cache named by the source's, the flags'
and the compiler's digest, so the same toolchain always links the same bytes. Where none is found, or the build
fails, `KernelUnavailable` says why, and cpu-config leaves those ops to IREE.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
from pathlib import Path

from schedc.errors import SchedcError

GEMM = "gemm_x86_64"
# The symbols a dispatch calls (the C file's entry points).
MATMUL_SYMBOL = "schedc_sgemm_workgroup"
CONV_SYMBOL = "schedc_sconv_workgroup"
# The same with an epilogue: a bias vector added, then an activation (ACTIVATIONS' codes).
MATMUL_BIAS_SYMBOL = "schedc_sgemm_bias_workgroup"
CONV_BIAS_SYMBOL = "schedc_sconv_bias_workgroup"
# The convolution on NHWC images into NHWC outputs (channels-last modules), and with the epilogue.
CONV_NHWC_SYMBOL = "schedc_sconv_nhwc_workgroup"
CONV_NHWC_BIAS_SYMBOL = "schedc_sconv_nhwc_bias_workgroup"
# Max pooling of stride 1, reading the image unpadded.
MAXPOOL_SYMBOL = "schedc_smaxpool_workgroup"
# Depthwise convolution of stride 1, reading the image unpadded.
DEPTHWISE_SYMBOL = "schedc_sdepthwise_workgroup"
ACTIVATIONS = {"none": 0, "relu": 1, "gelu": 2}
# Freestanding code for IREE's embedded ELF loader: no libc, position-independent, hidden.
FLAGS = ("-O3", "-std=c17", "-ffreestanding", "-fPIC", "-fno-stack-protector", "-fvisibility=hidden",
         "-fno-plt", "-fno-asynchronous-unwind-tables", "-fno-exceptions")
# The vector extensions an object is built for, by the ISA name schedc.kernels.kernel_isa gives.
ISA_FLAGS = {"avx2": ("-mavx2", "-mfma"), "avx512": ("-mavx2", "-mfma", "-mavx512f")}
CACHE_VARIABLE = "SCHEDC_CACHE_DIR"
# Target CPUs (`--cpu`) whose code may use AVX-512F, besides the host where it reports it.
AVX512_CPUS = ("x86-64-v4",)


class KernelUnavailable(SchedcError):
    """schedc's kernel cannot be built on this machine (no C compiler, or it failed)."""


def kernel_isa(cpu: str = "", host_features: set[str] | None = None) -> str:
    """The vector extension schedc's kernels use in modules for target CPU `cpu` ("" or "host":
    this machine, whose flags are `host_features`, read where not given): "avx512" where the
    target has AVX-512F, else "avx2". The host's choice matches its `--iree-llvmcpu-target-cpu`
    (schedc.targets.host_cpu: "host" exactly where Linux reports avx512f)."""
    if cpu in AVX512_CPUS:
        return "avx512"
    if cpu not in ("", "host"):
        return "avx2"
    if host_features is None:
        from schedc.targets import host_cpu_features

        host_features = host_cpu_features()
    return "avx512" if "avx512f" in host_features else "avx2"


def source_path(name: str) -> Path:
    return Path(__file__).resolve().parent / f"{name}.c"


def _compiler() -> str:
    named = os.environ.get("CC", "")
    for candidate in ([named] if named else ["cc", "gcc", "clang"]):
        found = shutil.which(candidate)
        if found:
            return found
    raise KernelUnavailable(f"no C compiler to build schedc's CPU kernels ({'$CC=' + named if named else 'cc, gcc or clang'} not found)")


def cache_folder() -> Path:
    named = os.environ.get(CACHE_VARIABLE) or os.environ.get("XDG_CACHE_HOME")
    base = Path(named) if named else Path.home() / ".cache"
    return (base if os.environ.get(CACHE_VARIABLE) else base / "schedc") / "kernels"


def write_cached(path: Path, text: str) -> None:
    """Writes a cache entry whole: a concurrent compile writing the same entry renames over it."""
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_suffix(f".{os.getpid()}.tmp")
    partial.write_text(text)
    os.replace(partial, path)


def object_path(name: str = GEMM, isa: str = "avx2") -> Path:
    """The object file of kernel `name` for `isa` (ISA_FLAGS), built on first use."""
    flags = FLAGS + ISA_FLAGS[isa]
    compiler = _compiler()
    try:
        version = subprocess.run([compiler, "--version"], capture_output=True, text=True, check=True).stdout
    except (OSError, subprocess.CalledProcessError) as e:
        raise KernelUnavailable(f"the C compiler {compiler} does not run: {e}") from None
    source = source_path(name)
    digest = hashlib.sha256(source.read_bytes() + version.encode() + " ".join(flags).encode()).hexdigest()[:16]
    target = cache_folder() / f"{name}-{isa}-{digest}.o"
    if target.exists():
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    partial = target.with_suffix(f".{os.getpid()}.tmp")
    built = subprocess.run([compiler, *flags, "-c", str(source), "-o", str(partial)], capture_output=True, text=True)
    if built.returncode != 0:
        partial.unlink(missing_ok=True)
        raise KernelUnavailable(f"{compiler} could not build {source.name}: {built.stderr.strip()[:500]}")
    os.replace(partial, target)  # atomic: a concurrent build writes the same bytes
    return target


def available(name: str = GEMM, isa: str = "avx2") -> str | None:
    """None where kernel `name` can be built here for `isa`, else why not."""
    try:
        object_path(name, isa)
    except (KernelUnavailable, OSError) as e:
        return str(e)
    return None
