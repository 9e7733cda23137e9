"""GPU targets compile on a machine with no GPU, and the module holds their executables."""

from __future__ import annotations

import pytest

import schedc
from schedc.iree_tools import executable_formats
from schedc.targets import resolve_target


SPIRV_MAGIC = (0x07230203).to_bytes(4, "little")


@pytest.mark.parametrize(
    "target, expected_format, code_marker",
    [
        ("cuda", "cuda-nvptx-fb", b".target sm_80"),  # PTX for the default arch
        ("rocm", "rocm-hsaco-fb", b"amdhsa.kernels"),  # an HSA code object (ELF note)
        ("vulkan", "vulkan-spirv-fb", SPIRV_MAGIC),  # a SPIR-V module
        ("llvm-cpu", "embedded-elf-x86_64", b"\x7fELF"),  # a shared object for the host
    ],
)
def test_module_holds_executables_of_the_target(target, expected_format, code_marker, imported, tmp_path):
    _, _, mlir = imported("mlp")
    path = tmp_path / f"mlp-{target}.vmfb"
    schedc.compile(mlir, target=target, output=str(path))
    formats = executable_formats(str(path))
    assert formats and all(f == expected_format for f in formats), formats
    assert code_marker in path.read_bytes()


def test_default_target_is_the_host_cpu():
    target = resolve_target(None)
    assert target.name == "llvm-cpu" and target.arch == "host"
    assert "--iree-llvmcpu-target-cpu=host" in target.iree_flags()


def test_default_chips():
    assert resolve_target("cuda").arch == "sm_80"
    assert resolve_target("rocm").arch == "gfx942"
    assert resolve_target("hip").name == "rocm"


def test_unknown_target_and_arch_list_the_valid_ones():
    with pytest.raises(schedc.CompileError, match="valid targets: llvm-cpu, cuda, rocm, vulkan"):
        resolve_target("tpu")
    with pytest.raises(schedc.CompileError, match="sm_80 .*|valid: .*sm_80"):
        resolve_target("cuda", cuda_arch="sm_90")
