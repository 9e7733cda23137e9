"""What a GPU machine without IREE's compiler needs to run the benches' modules: IREE's runtime
(the cp312 `iree-base-runtime` wheel of the version pyproject.toml pins, unzipped without its
Tracy build, about 16 MB) and a `setup.sh` that puts it and schedc from the working tree on the
paths.

    python bench/device_package.py [--out .devpkg] [--wheels .whl] [--python 3.12]

then, on the GPU machine, in the repository's root (the folder travels with the working tree):

    source .devpkg/setup.sh; python bench/generalization.py run build/gz ...

The wheel is taken from `--wheels` if it is there, else downloaded into it with pip (for
manylinux_2_28 x86_64). `setup.sh` copies schedc's packages into `.devpkg/pkg` laid out as
pyproject.toml installs them (`schedc.passes` from passes/, `schedc.tools` from tools/,
`schedc.dialects` from dialects/), so the benches' subprocesses (`python -m
schedc.tools.schedc ...`) find them as in an installed checkout.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import re
import shutil
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PLATFORM = "manylinux_2_28_x86_64"
LEFT_OUT = "iree/_runtime_libs_tracy/"  # the runtime built with Tracy: 4x the size, never used here
PACKAGES = {"passes": "passes", "tools": "tools", "dialects": "dialects"}  # schedc.<name> <- folder

SETUP = """\
# sourced on the GPU machine in the repository's root (bench/device_package.py wrote it):
# IREE's runtime (no compiler) and schedc from the working tree, laid out as pyproject.toml
# installs it
rm -rf {out}/pkg && mkdir -p {out}/pkg && cp -r python/schedc {out}/pkg/schedc
{copies}
export PYTHONPATH="$PWD/{out}/site:$PWD/{out}/pkg:$PWD/bench:${{PYTHONPATH:-}}"
export PATH="$PWD/{out}/site/iree/_runtime_libs:$PATH"
"""


def pinned_runtime(pyproject: Path = ROOT / "pyproject.toml") -> str:
    """The iree-base-runtime version pyproject.toml pins."""
    found = re.search(r'"iree-base-runtime==([^"]+)"', pyproject.read_text())
    if found is None:
        raise SystemExit("pyproject.toml pins no iree-base-runtime version")
    return found.group(1)


def find_wheel(wheels: Path, version: str, python: str) -> Path | None:
    tag = "cp" + python.replace(".", "")
    found = sorted(wheels.glob(f"iree_base_runtime-{version}-{tag}-*{PLATFORM}*.whl"))
    return found[0] if found else None


def download_wheel(wheels: Path, version: str, python: str) -> Path:
    wheels.mkdir(parents=True, exist_ok=True)
    command = [sys.executable, "-m", "pip", "download", f"iree-base-runtime=={version}", "--no-deps", "--only-binary=:all:",
               "--platform", PLATFORM, "--python-version", python, "-d", str(wheels)]
    done = subprocess.run(command, capture_output=True, text=True)
    wheel = find_wheel(wheels, version, python)
    if done.returncode or wheel is None:
        raise SystemExit(f"pip could not download iree-base-runtime=={version} for Python {python}: "
                         f"{(done.stderr.strip().splitlines() or ['no wheel for this platform'])[-1]}")
    return wheel


def unpack(wheel: Path, site: Path) -> int:
    """The wheel's files under `site`, the Tracy build left out; their total bytes."""
    total = 0
    with zipfile.ZipFile(wheel) as archive:
        for info in archive.infolist():
            if info.filename.startswith(LEFT_OUT) or info.is_dir():
                continue
            target = site / info.filename
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(archive.read(info))
            if info.external_attr >> 16 & 0o111:  # the runtime's tools (iree-run-module, ...)
                target.chmod(0o755)
            total += info.file_size
    return total


def setup_script(out: str) -> str:
    copies = "\n".join(f"cp -r {folder} {out}/pkg/schedc/{name}" for name, folder in PACKAGES.items())
    return SETUP.format(out=out, copies=copies)


def build(out: Path, wheels: Path, python: str) -> tuple[Path, int]:
    version = pinned_runtime()
    wheel = find_wheel(wheels, version, python) or download_wheel(wheels, version, python)
    site = out / "site"
    if site.exists():
        shutil.rmtree(site)
    size = unpack(wheel, site)
    relative = out.resolve().relative_to(ROOT) if out.resolve().is_relative_to(ROOT) else out
    (out / "setup.sh").write_text(setup_script(str(relative)))
    return wheel, size


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", default=str(ROOT / ".devpkg"), help="the folder to write (default: .devpkg)")
    parser.add_argument("--wheels", default=str(ROOT / ".whl"), help="where the wheel is, or is downloaded to")
    parser.add_argument("--python", default="3.12", help="the GPU machine's Python (default: 3.12)")
    args = parser.parse_args()
    wheel, size = build(Path(args.out), Path(args.wheels), args.python)
    print(f"wrote {args.out}/site ({size / 2**20:.1f} MiB from {wheel.name}) and {args.out}/setup.sh")
    return 0


if __name__ == "__main__":
    sys.exit(main())
