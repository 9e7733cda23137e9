"""GPU targets compile on a machine with no GPU, and the module holds their executables."""

from __future__ import annotations

import pytest

import schedc
from schedc.ir.iree import executables
from schedc.ir.mlirio import read_module
from schedc.targets import host_cpu, resolve_target


SPIRV_MAGIC = (0x07230203).to_bytes(4, "little")


@pytest.mark.parametrize(
    "target, expected_format, code_marker, code_suffix",
    [
        ("cuda", "cuda-nvptx-fb", b".target sm_80", ".ptx"),  # PTX for the default arch
        ("rocm", "rocm-hsaco-fb", b"amdhsa.kernels", ".hsaco"),  # an HSA code object (ELF note)
        ("vulkan", "vulkan-spirv-fb", SPIRV_MAGIC, ".spv"),  # a SPIR-V module
        ("llvm-cpu", "embedded-elf-x86_64", b"\x7fELF", ".so"),  # a shared object for the host
    ],
)
def test_module_holds_executables_of_the_target(target, expected_format, code_marker, code_suffix, imported, tmp_path):
    _, _, mlir = imported("mlp")
    path, phases = tmp_path / f"mlp-{target}.vmfb", tmp_path / "phases"
    schedc.compile(mlir, target=target, output=str(path), dump_phases=str(phases))
    (hal,) = phases.glob("*-hal.mlir")
    formats = [f for e in executables(read_module(hal)) for f in e.formats]
    assert formats and all(f == expected_format for f in formats), formats
    assert code_marker in path.read_bytes()
    (folder,) = phases.glob("*-executables")
    code = [p for p in folder.iterdir() if p.suffix == code_suffix]
    assert code and code_marker in code[0].read_bytes()  # what --emit=executables writes


def test_default_target_is_the_host_cpu():
    target = resolve_target(None)
    assert target.name == "llvm-cpu" and target.arch == "host"
    assert f"--iree-llvmcpu-target-cpu={host_cpu()}" in target.iree_flags()


def test_an_x86_host_without_avx512_is_named_by_its_x86_64_level():
    zen4_vm = {"avx", "avx2", "bmi1", "bmi2", "f16c", "fma", "abm", "movbe", "xsave", "cx16", "lahf_lm", "popcnt", "sse4_1",
               "sse4_2", "ssse3", "vaes"}
    assert host_cpu(zen4_vm, "x86_64") == "x86-64-v3"
    assert host_cpu(zen4_vm | {"avx512f"}, "x86_64") == "host"
    assert host_cpu({"cx16", "lahf_lm", "popcnt", "sse4_1", "sse4_2", "ssse3"}, "x86_64") == "x86-64-v2"
    assert host_cpu({"asimd", "fp"}, "aarch64") == "host"
    assert host_cpu(set(), "x86_64") == "host"  # nothing reported: IREE's own detection


def test_default_chips():
    assert resolve_target("cuda").arch == "sm_80"
    assert resolve_target("rocm").arch == "gfx942"
    assert resolve_target("hip").name == "rocm"


def test_unknown_target_and_arch_list_the_valid_ones():
    with pytest.raises(schedc.CompileError, match="valid targets: llvm-cpu, cuda, rocm, vulkan"):
        resolve_target("tpu")
    with pytest.raises(schedc.CompileError, match="sm_80 .*|valid: .*sm_80"):
        resolve_target("cuda", cuda_arch="sm_90")


def test_flags_known_to_miscompile_on_a_target_are_warned_about():
    from schedc.targets import miscompile_warnings

    cuda, cpu = resolve_target("cuda"), resolve_target("llvm-cpu")
    flag = "--iree-dispatch-creation-enable-fuse-padding-into-linalg-producer-ops"
    [warning] = miscompile_warnings(cuda, ["--iree-flow-inline-constants-max-byte-length=0", flag])
    assert warning.startswith(f"{flag} on cuda: IREE 3.13's pad fusion gave wrong results")
    assert miscompile_warnings(cuda, [f"{flag}=true"]) and not miscompile_warnings(cuda, [f"{flag}=false"])
    assert not miscompile_warnings(cpu, [flag])


def test_an_f16_generation_module_asks_cuda_for_aggressive_fusion():
    from schedc.targets import GENERATION_FUSION, KEEP_F64, input_flags

    cuda, cpu = resolve_target("cuda"), resolve_target("llvm-cpu")
    assert input_flags(cuda, False, True, []) == list(GENERATION_FUSION)
    assert input_flags(cpu, False, True, []) == [] and input_flags(cuda, False, False, []) == []
    # the user's own setting of a flag wins, either way
    off = f"{GENERATION_FUSION[0]}=false"
    assert input_flags(cuda, True, True, [off]) == [KEEP_F64, GENERATION_FUSION[1]]
