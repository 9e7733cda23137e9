"""bench/device_package.py: the runtime wheel unpacked without its Tracy build, and a setup.sh
that lays schedc out as pyproject.toml installs it."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
spec = importlib.util.spec_from_file_location("device_package", ROOT / "bench" / "device_package.py")
device_package = importlib.util.module_from_spec(spec)
spec.loader.exec_module(device_package)


def test_the_pinned_runtime_is_pyproject_s():
    assert device_package.pinned_runtime() == "3.13.0"


def test_the_wheel_is_unpacked_without_tracy_and_its_tools_stay_executable(tmp_path):
    wheel = tmp_path / "iree_base_runtime-3.13.0-cp312-abi3-manylinux_2_28_x86_64.whl"
    with zipfile.ZipFile(wheel, "w") as archive:
        archive.writestr("iree/runtime/__init__.py", "")
        tool = zipfile.ZipInfo("iree/_runtime_libs/iree-run-module")
        tool.external_attr = 0o755 << 16
        archive.writestr(tool, "#!/bin/sh\necho ran\n")
        archive.writestr("iree/_runtime_libs_tracy/iree-run-module", "tracy")
    assert device_package.find_wheel(tmp_path, "3.13.0", "3.12") == wheel
    assert device_package.find_wheel(tmp_path, "3.13.0", "3.11") is None
    site = tmp_path / "site"
    device_package.unpack(wheel, site)
    assert (site / "iree/runtime/__init__.py").exists() and not (site / "iree/_runtime_libs_tracy").exists()
    assert subprocess.run([str(site / "iree/_runtime_libs/iree-run-module")], capture_output=True, text=True).stdout == "ran\n"


def test_setup_sh_lays_schedc_out_as_installed(tmp_path):
    # The script run in a copy of the repository's layout: schedc.tools and schedc.passes import.
    for folder in ("python/schedc", "passes", "tools", "dialects"):
        (tmp_path / folder).mkdir(parents=True)
        (tmp_path / folder / "__init__.py").write_text("")
    (tmp_path / "tools" / "marker.py").write_text("WHERE = 'tools'\n")
    (tmp_path / ".devpkg").mkdir()
    (tmp_path / ".devpkg" / "setup.sh").write_text(device_package.setup_script(".devpkg"))
    done = subprocess.run(["bash", "-c", f"source .devpkg/setup.sh && {sys.executable} -c 'import schedc.tools.marker as m, schedc.passes; print(m.WHERE)'"],
                          cwd=tmp_path, capture_output=True, text=True)
    assert done.stdout.strip() == "tools", done.stderr
