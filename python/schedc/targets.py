"""Compilation targets: each is a small frozen description whose IREE flags are returned as data.

The chip lists are the ones IREE 3.13 accepts (each checked by compiling a kernel with it);
IREE rejects the rest, so schedc rejects them first with the list a user can choose from.
"""

from __future__ import annotations

import platform
from dataclasses import dataclass
from pathlib import Path

from schedc.errors import CompileError

CUDA_ARCHS = ("sm_60", "sm_70", "sm_75", "sm_80", "sm_86", "sm_87", "sm_89", "a100", "rtx4090")
ROCM_ARCHS = (
    "gfx908", "gfx90a", "gfx942", "gfx950", "gfx1100", "gfx1101", "gfx1200", "gfx1201",
    "mi250x", "mi300a", "mi300x", "mi325x", "mi355x", "rx7900xtx",
)
VULKAN_TARGETS = (
    "ampere", "ada", "turing", "pascal", "rdna2", "rdna3", "rdna4", "cdna3", "valhall",
    "valhall4", "adreno",
)
_HOPPER_HINT = (
    "IREE 3.13 has no sm_90/sm_100 target; compile for sm_80, whose PTX the driver "
    "JIT-compiles for Hopper and Blackwell"
)


@dataclass(frozen=True)
class Target:
    """A device kind and the chip to generate code for."""

    name: str  # schedc's name: llvm-cpu, cuda, rocm, vulkan
    device: str  # IREE's HAL target device
    arch: str

    def iree_flags(self) -> list[str]:
        flags = [f"--iree-hal-target-device={self.device}"]
        if self.name == "llvm-cpu":
            flags += [
                "--iree-hal-local-target-device-backends=llvm-cpu",
                f"--iree-llvmcpu-target-cpu={host_cpu() if self.arch == 'host' else self.arch}",
            ]
        elif self.name == "cuda":
            flags.append(f"--iree-cuda-target={self.arch}")
        elif self.name == "rocm":
            flags.append(f"--iree-rocm-target={self.arch}")
        elif self.name == "vulkan":
            flags.append(f"--iree-vulkan-target={self.arch}")
        return flags


# IREE 3.13 flags measured to give wrong results on a target: a compile that passes one warns.
KNOWN_MISCOMPILES = {
    ("cuda", "--iree-dispatch-creation-enable-fuse-padding-into-linalg-producer-ops"): (
        "IREE 3.13's pad fusion gave wrong results on an H200 for every conv net of bench/models.py "
        "(relative error 0.1-0.8, NaN on resnet18), with IREE's own kernel configs as with schedc's"
    ),
    ("cuda", "--iree-dispatch-creation-enable-fuse-padding-into-linalg-consumer-ops"): (
        "IREE 3.13's pad fusion gave wrong results on an H100 for bench/models.py's inception (relative "
        "error 2.2e-2) and the held-out ShuffleNetV2 f16 (6.0e-2) with IREE's own kernel configs too, and with "
        "schedc's configs even where only dense convolutions read the fused pads (unet 0.92, plain_cnn 9.5e-2, "
        "resnet18 NaN)"
    ),
}


# IREE 3.13 demotes f64 to f32 inside a module (--iree-input-demote-f64-to-f32, on by
# default), and its ABI stubs keep f64 at the boundary over f32 storage: a call with an f64
# argument or result fails in hal.buffer_view.create ("buffer view byte length 2N exceeds backing
# buffer byte length N"). Every target schedc compiles for takes f64 (llvm-cpu, cuda, rocm and
# vulkan compile it), so an input whose functions take or return f64 tensors keeps f64, as
# torch computes it.
KEEP_F64 = "--iree-input-demote-f64-to-f32=false"


# IREE 3.13's aggressive fusion and generic matmuls: a decode step's layer norms fuse into the
# projections after them (GPT-2 small's step: 249 dispatches -> 143), which kernel-config's
# matvec configs then take. On cuda an f16 generation module's decode step ran 0.88x and 0.86x
# the time with them (GPT-2 small 0.755 -> 0.665 ms a token, a Llama of its size 0.863 ->
# 0.742; H100, one call), the greedy tokens the same, its prefill 1.18x and 1.04x (1.81 -> 2.14,
# 1.84 -> 1.92 ms), a decode step running once per token after one prefill. On the held-out
# models' forward passes they gained nothing (f16 Llama, BERT, ViT, ConvNeXt: 0.95-1.17x the
# time; ViT f32 2.5x; bench/README.md, "IREE's aggressive fusion, right"), so only f16 and bf16
# generation modules on cuda take them. An f32 generation module with them does not compile in
# IREE 3.13, with its own configs as with schedc's: the prefill's fused layer-norm reduction
# (`reduction_32x768_f32`, GPT-2 small) "failed to distribute" in VectorDistribute.
GENERATION_FUSION = ("--iree-dispatch-creation-enable-aggressive-fusion", "--iree-opt-generalize-matmul")


def input_flags(target: "Target", has_f64: bool, half_generation: bool, user_flags) -> list[str]:
    """Flags the input itself asks for, unless the user set them: f64 kept where its functions
    take or return f64 tensors; on cuda, GENERATION_FUSION for a generation module in f16 or
    bf16 (`half_generation`)."""
    named = {f.split("=", 1)[0] for f in user_flags}
    wanted = [KEEP_F64] if has_f64 else []
    if half_generation and target.name == "cuda":
        wanted += GENERATION_FUSION
    return [flag for flag in wanted if flag.split("=", 1)[0] not in named]


def miscompile_warnings(target: "Target", flags) -> list[str]:
    """A warning for each flag in `flags` (not set to false) that KNOWN_MISCOMPILES lists for
    the target."""
    warnings = []
    for flag in flags:
        name, _, value = flag.partition("=")
        reason = KNOWN_MISCOMPILES.get((target.name, name))
        if reason is not None and value.lower() not in ("false", "0"):
            warnings.append(f"{name} on {target.name}: {reason}")
    return warnings


TARGET_NAMES = ("llvm-cpu", "cuda", "rocm", "vulkan")
_ALIASES = {"cpu": "llvm-cpu", "host": "llvm-cpu", "hip": "rocm"}


def resolve_target(
    name: str | None = None,
    *,
    cuda_arch: str | None = None,
    rocm_arch: str | None = None,
    vulkan_target: str | None = None,
    cpu: str | None = None,
) -> Target:
    """Returns the target for a user's choice; an unknown name or chip lists the valid ones."""
    name = "llvm-cpu" if name is None else _ALIASES.get(name, name)  # "" is a mistake, not the default
    if name not in TARGET_NAMES:
        raise CompileError(
            f"unknown target '{name}'; valid targets: {', '.join(TARGET_NAMES)}"
        )
    for flag, chip in (("--cuda-arch", cuda_arch), ("--rocm-arch", rocm_arch), ("--vulkan-target", vulkan_target), ("--cpu", cpu)):
        if chip is not None and not chip.strip():
            raise CompileError(f"{flag} is empty; leave it out for the default")
    if name == "llvm-cpu":
        # IREE validates CPU names itself and lists the accepted ones for the host triple.
        return Target(name, "local", cpu or "host")
    if name == "cuda":
        arch = _check_arch("--cuda-arch", cuda_arch or "sm_80", CUDA_ARCHS)
        return Target(name, "cuda", arch)
    if name == "rocm":
        arch = _check_arch("--rocm-arch", rocm_arch or "gfx942", ROCM_ARCHS)
        return Target(name, "hip", arch)
    arch = _check_arch("--vulkan-target", vulkan_target or "ampere", VULKAN_TARGETS)
    return Target(name, "vulkan", arch)


def host_cpu_features() -> set[str]:
    """The host CPU's feature flags as Linux lists them (avx512f, asimd, ...); empty elsewhere."""
    try:
        text = Path("/proc/cpuinfo").read_text()
    except OSError:
        return set()
    for line in text.splitlines():
        if line.startswith(("flags", "Features")):
            return set(line.partition(":")[2].split())
    return set()


# What the x86-64 micro-architecture levels need, in Linux's flag names.
X86_64_V3 = {"avx", "avx2", "bmi1", "bmi2", "f16c", "fma", "abm", "movbe", "xsave"}
X86_64_V2 = {"cx16", "lahf_lm", "popcnt", "sse4_1", "sse4_2", "ssse3"}


def host_cpu(features: set[str] | None = None, machine: str | None = None) -> str:
    """The CPU `--iree-llvmcpu-target-cpu` names for this machine: "host", except on an x86 CPU
    whose operating system reports no AVX-512. There IREE 3.13's "host" took the model's
    AVX-512 features along with the host's own (+avx512f and -avx512f in one list, on an AMD
    EPYC virtual machine whose hypervisor hides AVX-512), and LLVM aborted on data-tiled code
    ("Do not know how to split the result of this operator"); the x86-64 level the reported
    flags reach stands for it."""
    machine = platform.machine() if machine is None else machine
    features = host_cpu_features() if features is None else features
    if machine.lower() not in ("x86_64", "amd64") or not features or "avx512f" in features:
        return "host"
    if X86_64_V3 <= features and X86_64_V2 <= features:
        return "x86-64-v3"
    return "x86-64-v2" if X86_64_V2 <= features else "x86-64"


def _check_arch(option: str, arch: str, valid: tuple[str, ...]) -> str:
    if arch in valid:
        return arch
    hint = f" ({_HOPPER_HINT})" if arch.startswith(("sm_9", "sm_10", "sm_12", "h100", "h200")) else ""
    raise CompileError(f"unknown {option} '{arch}'{hint}; valid: {', '.join(valid)}")
