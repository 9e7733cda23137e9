"""schedc's CPU kernels: built from C once, into the cache, by the host's compiler."""

from __future__ import annotations

import pytest

from schedc.kernels import CONV_SYMBOL, MATMUL_SYMBOL, KernelUnavailable, available, object_path


def test_the_object_is_built_once_into_the_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("SCHEDC_CACHE_DIR", str(tmp_path))
    built = object_path()
    assert built.parent == tmp_path / "kernels" and built.name.startswith("gemm_x86_64-")
    data = built.read_bytes()
    assert data[:4] == b"\x7fELF" and MATMUL_SYMBOL.encode() in data and CONV_SYMBOL.encode() in data
    stamp = built.stat().st_mtime_ns
    assert object_path() == built and built.stat().st_mtime_ns == stamp  # reused, not rebuilt
    assert [p.name for p in (tmp_path / "kernels").iterdir()] == [built.name]  # no partial file left


def test_a_compiler_that_fails_says_why(tmp_path, monkeypatch):
    failing = tmp_path / "cc"
    failing.write_text("#!/bin/sh\nif [ \"$1\" = --version ]; then echo fake 1.0; exit 0; fi\necho 'no such target' >&2\nexit 1\n")
    failing.chmod(0o755)
    monkeypatch.setenv("CC", str(failing))
    monkeypatch.setenv("SCHEDC_CACHE_DIR", str(tmp_path / "cache"))
    with pytest.raises(KernelUnavailable, match="could not build gemm_x86_64.c: no such target"):
        object_path()
    assert "could not build" in available()
    assert not list((tmp_path / "cache" / "kernels").iterdir())


def test_the_kernels_run_only_for_x86_64_targets_with_avx2():
    from schedc.passes.cpu_config import kernels_unavailable

    assert kernels_unavailable("x86_64-avx2", "host") is None and kernels_unavailable("x86_64-avx512", "x86-64-v3") is None
    assert "not aarch64-neon" in kernels_unavailable("aarch64-neon", "host")
    assert "target CPU 'x86-64-v2' may lack" in kernels_unavailable("x86_64-avx2", "x86-64-v2")
