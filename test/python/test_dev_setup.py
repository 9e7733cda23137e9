"""./dev's set-up installs only when pyproject.toml changed since the last install (the stamp
in the virtual environment), so a re-run of `./dev demo` or `./dev test` starts at once."""

from __future__ import annotations

import hashlib
import os
import subprocess

from conftest import ROOT


def _fake_venv(tmp_path, stamp: str | None):
    """A virtual environment whose python only logs what it is asked to do."""
    venv = tmp_path / "venv"
    (venv / "bin").mkdir(parents=True)
    log = tmp_path / "calls"
    python = venv / "bin" / "python"
    python.write_text(f'#!/bin/sh\necho "$@" >> {log}\n')
    python.chmod(0o755)
    if stamp is not None:
        (venv / ".schedc-installed").write_text(stamp + "\n")
    return venv, log


def _setup(venv):
    return subprocess.run([str(ROOT / "dev"), "setup"], env={**os.environ, "SCHEDC_VENV": str(venv)}, capture_output=True, text=True, timeout=60)


def test_nothing_is_installed_when_pyproject_is_unchanged(tmp_path):
    current = hashlib.sha256((ROOT / "pyproject.toml").read_bytes()).hexdigest()
    venv, log = _fake_venv(tmp_path, current)
    assert _setup(venv).returncode == 0
    assert not log.exists(), "pip ran although nothing it installs changed"


def test_a_changed_pyproject_installs_and_stamps(tmp_path):
    venv, log = _fake_venv(tmp_path, "0" * 64)
    assert _setup(venv).returncode == 0
    assert "-m pip install" in log.read_text() and '-e .[test]' in log.read_text()
    current = hashlib.sha256((ROOT / "pyproject.toml").read_bytes()).hexdigest()
    assert (venv / ".schedc-installed").read_text().strip() == current


def test_the_install_prints_no_packaging_warning(tmp_path):
    """./dev's own install line, with the real pip and setuptools (build isolation, as on a
    fresh machine): schedc's packaging adds no warning. The venv's python forwards to this
    one, installing schedc alone (no dependencies) under a prefix in tmp_path. Lines that the
    machine's pip configuration prints (an index folder it cannot find) are not schedc's."""
    import sys

    venv = tmp_path / "venv"
    (venv / "bin").mkdir(parents=True)
    python = venv / "bin" / "python"
    prefix = tmp_path / "prefix"
    python.write_text(
        "#!/bin/sh\n"
        'case "$*" in *"-e .[test]"*) ;; *) exit 0 ;; esac\n'  # only the install of schedc itself
        f'exec {sys.executable} "$@" --no-deps --ignore-installed --prefix {prefix}\n')
    python.chmod(0o755)
    done = _setup(venv)
    assert done.returncode == 0, done.stderr[-3000:]
    assert list(prefix.glob("lib/python*/site-packages/__editable__*schedc*")), "schedc was not installed"
    printed = [line for line in (done.stdout + done.stderr).splitlines()
               if line.strip() and not ("Location '" in line and "is ignored" in line)]
    assert printed == [], "\n".join(printed)
