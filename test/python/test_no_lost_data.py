"""What a careless or hostile user types never loses their data, never crashes, never prints a
traceback: the defects a hostile-input run found (issue 26's list, by number), each a test.

Each gets a clear error and a non-zero exit, or the right behaviour (serialised replay calls,
an aligned copy of an unaligned tensor, a damaged cache entry rebuilt)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import numpy as np
import pytest
import torch

import schedc
from conftest import ROOT
from fuzz_inputs import call_in_threads, matmul_mlir

ADD = """func.func @forward(%a: tensor<4xf32>) -> tensor<4xf32> {
  %0 = arith.addf %a, %a : tensor<4xf32>
  return %0 : tensor<4xf32>
}
"""
DYNAMIC = """func.func @forward(%a: tensor<?x8xf32>) -> tensor<?x8xf32> {
  %0 = arith.addf %a, %a : tensor<?x8xf32>
  return %0 : tensor<?x8xf32>
}
"""
MATMUL = matmul_mlir(64)


def cli(*args, cwd=None, stdin=None, tool="schedc"):
    module = "schedc.tools.schedc" if tool == "schedc" else "schedc.tools.schedc_opt"
    return subprocess.run([sys.executable, "-m", module, *map(str, args)], capture_output=True, cwd=cwd, input=stdin)


def error_of(result) -> str:
    """The stderr of a command that must have failed cleanly: exit 1, no traceback."""
    err = result.stderr.decode(errors="replace")
    assert result.returncode == 1, err
    assert "Traceback" not in err, err
    return err


def refused(result, message: str) -> None:
    err = error_of(result)
    assert message in err, err


@pytest.fixture(scope="session")
def folder(tmp_path_factory):
    path = tmp_path_factory.mktemp("lost")
    (path / "add.mlir").write_text(ADD)
    (path / "dyn.mlir").write_text(DYNAMIC)
    return path


# 1 --------------------------------------------------------------------------------------------


def test_1_module_and_report_on_one_path_are_refused(folder, tmp_path):
    out = tmp_path / "out" / "x.vmfb"
    refused(cli(folder / "add.mlir", "-o", out, "--report", out), "the output and the report are one file")
    assert not out.exists()
    with pytest.raises(schedc.SchedcError, match="the output and the report are one file"):
        schedc.compile(ADD, output=str(out), report=str(out))
    assert not out.exists()


# 2 --------------------------------------------------------------------------------------------


def test_2_no_command_writes_over_its_input(folder, tmp_path):
    factory = tmp_path / "models.py"
    factory.write_bytes((ROOT / "examples" / "models.py").read_bytes())
    before = factory.read_bytes()
    refused(cli("import", f"{factory}:mlp", "-o", factory), "the output is the input file")
    assert factory.read_bytes() == before
    page = tmp_path / "r.html"
    page.write_text("<html></html>")
    refused(cli("report", page, "-o", page), "the output is the input file")
    assert page.read_text() == "<html></html>"
    source = tmp_path / "f.mlir"
    source.write_text(ADD)
    refused(cli(source, "-o", source, tool="schedc-opt"), "the output is the input file")
    assert source.read_text() == ADD


# 3 --------------------------------------------------------------------------------------------


def test_3_stdout_carries_only_the_module(folder):
    reference = schedc.compile(ADD)
    result = cli(folder / "add.mlir", "-o", "-", "--passes=print-kernel-graph,memory-order,arena-plan", "--summary")
    assert result.returncode == 0, result.stderr.decode()
    assert result.stdout == reference
    assert b"kernel" in result.stderr  # the graph and the summary went to stderr


# 4 --------------------------------------------------------------------------------------------


@pytest.fixture(scope="session")
def matmuls(tmp_path_factory):
    folder = tmp_path_factory.mktemp("threads")
    for execution in ("graphs", "streams"):
        schedc.compile(MATMUL, output=str(folder / f"{execution}.vmfb"), execution=execution)
    return folder


@pytest.mark.parametrize("execution", ["graphs", "streams"])
@pytest.mark.parametrize("device", ["local-task", "local-sync"])
@pytest.mark.parametrize("kind", ["numpy", "torch", "async"])
def test_4_threads_on_one_module_get_their_own_results(matmuls, execution, device, kind):
    """8 threads on one module: a module one (its static buffers shared by every call)
    serialises them; a streams one runs them side by side."""
    module = schedc.load(str(matmuls / f"{execution}.vmfb"), device=device)
    assert module.replayed == (execution == "graphs")
    assert call_in_threads(module, threads=8, calls=40, kind=kind) == 0


# 5 --------------------------------------------------------------------------------------------


def test_5_unaligned_torch_tensors_are_passed(tmp_path):
    module = schedc.load(schedc.compile(ADD))
    base = torch.arange(5, dtype=torch.float32)
    view = base[1:]  # 4 bytes past a 64-byte boundary
    assert view.data_ptr() % 64 != 0
    assert torch.equal(module.forward(view), view * 2)


# 6, 11 ---------------------------------------------------------------------------------------


BUILTIN_DB = ROOT / "python" / "schedc" / "kernel_db" / "cuda-h200-sm_80.json"


def _database(tmp_path, change) -> Path:
    data = json.loads(BUILTIN_DB.read_text())
    change(data)
    path = tmp_path / "db.json"
    path.write_text(json.dumps(data))
    return path


def test_6_a_database_config_beyond_the_chip_or_for_another_chip_is_refused(tmp_path):
    (tmp_path / "mm.mlir").write_text(MATMUL)

    def huge(data):  # 128 x 128 threads of one index each: 16384 threads
        data["entries"][0]["config"].update(workgroup=[1, 128, 128, 0], thread=[1, 1, 1, 0])

    def rocm(data):
        data.update(target="rocm", arch="gfx942")

    refused(cli(tmp_path / "mm.mlir", "--target=cuda", f"--kernel-db={_database(tmp_path, huge)}", "-o", tmp_path / "m.vmfb"),
            "16384 threads")
    assert not (tmp_path / "m.vmfb").exists()
    refused(cli(tmp_path / "mm.mlir", "--target=cuda", f"--kernel-db={_database(tmp_path, rocm)}", "-o", tmp_path / "m.vmfb"),
            "was measured for rocm gfx942")


@pytest.mark.parametrize("change", [
    lambda data: data.update(entries={"a": 1}),
    lambda data: data["entries"][0]["signature"].update(key=[1, 2]),
    lambda data: data["entries"][0].update(config=[4]),
    lambda data: data.update(entries=[5]),
])
def test_11_a_database_of_the_wrong_shape_is_refused(folder, tmp_path, change):
    path = _database(tmp_path, change)
    err = error_of(cli(folder / "add.mlir", "--target=cuda", f"--kernel-db={path}", "-o", tmp_path / "m.vmfb"))
    assert f"{path}: malformed kernel database" in err, err
    assert not (tmp_path / "m.vmfb").exists()


# 7, 9 ----------------------------------------------------------------------------------------


def test_7_an_absurd_arena_alignment_is_refused(folder):
    err = error_of(cli(folder / "add.mlir", "--passes=arena-plan{alignment=1099511627776}", "-o", os.devnull))
    assert "alignment must be a power of two from 1 to 2097152 bytes, got 1099511627776" in err, err


@pytest.mark.parametrize("buckets", ["99999999999999999999", "1,2147483648", "0", "-1"])
def test_9_absurd_batch_buckets_are_refused(folder, buckets):
    err = error_of(cli(folder / "dyn.mlir", f"--batch-buckets={buckets}", "-o", os.devnull))
    assert "batch buckets must be positive integers up to 65536" in err, err


# 8 --------------------------------------------------------------------------------------------


def test_8_a_module_truncated_on_disk_after_loading_still_runs(tmp_path):
    path = tmp_path / "add.vmfb"
    schedc.compile(ADD, output=str(path))
    script = (
        "import numpy as np, schedc, sys\n"
        f"m = schedc.load({str(path)!r})\n"
        f"open({str(path)!r}, 'r+b').truncate(100)\n"
        "print(m.forward(np.ones(4, np.float32)).tolist())\n"
    )
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "[2.0, 2.0, 2.0, 2.0]"


# 10 -------------------------------------------------------------------------------------------


def test_10_run_inputs_and_outputs(folder, tmp_path):
    module = tmp_path / "add.vmfb"
    schedc.compile(ADD, output=str(module))
    refused(cli("run", module, "--input=99999999x99999999xf32=1"), "too large")
    refused(cli("run", module, "--input=4xf32=1", "--output=@/etc/passwd/o.npy"), "/etc/passwd")
    result = cli("run", module, "--input=4xf32=1", f"--output=@{os.devnull}")
    assert result.returncode == 0 and not Path(os.devnull + ".npy").exists()
    refused(cli("import", f"{ROOT / 'examples' / 'models.py'}:mlp", "-o", os.devnull, "--save-inputs"), "--save-inputs")
    assert not Path(os.devnull + ".arg0.npy").exists()


# 12 -------------------------------------------------------------------------------------------


@pytest.fixture(scope="session")
def tune_folder(tmp_path_factory):
    folder = tmp_path_factory.mktemp("tune")
    (folder / "mm.mlir").write_text(MATMUL)
    result = cli("tune", "prepare", folder / "mm.mlir", "-o", folder / "t", "--candidates=1")
    assert result.returncode == 0, result.stderr.decode()
    return folder / "t"


def test_12_tune_inputs_of_the_wrong_shape_are_refused(tune_folder, tmp_path):
    import shutil

    assert "/etc/passwd is not a directory" in error_of(cli("tune", "prepare", tune_folder.parent / "mm.mlir", "-o", "/etc/passwd/tune"))
    assert "bench them on --device=cuda" in error_of(cli("tune", "bench", tune_folder, "--device=local-task"))
    cases = {
        "corrupt": ("results.json", "{not json"),
        "schema": ("results.json", json.dumps({"results": 5})),
        "negative": ("results.json", json.dumps({"format": "schedc-tune-results/1", "results": [{"key": "k", "time_us": -1}]})),
        "manifest": ("manifest.json", "{}"),
    }
    for name, (file, text) in cases.items():
        copy = tmp_path / name
        shutil.copytree(tune_folder, copy)
        (copy / file).write_text(text)
        err = error_of(cli("tune", "merge", copy, "--database", tmp_path / "db.json"))
        assert str(copy) in err, (name, err)
        assert not (tmp_path / "db.json").exists(), name


# 13, 14 --------------------------------------------------------------------------------------


@pytest.mark.parametrize("report", [[], {"functions": 5}, {"functions": [{"name": 1}]}, {"functions": {"f": 5}}])
def test_13_a_report_of_the_wrong_shape_is_refused(tmp_path, report):
    path = tmp_path / "r.json"
    path.write_text(json.dumps(report))
    refused(cli("report", path, "-o", tmp_path / "r.html"), "not a schedc report")
    assert not (tmp_path / "r.html").exists()


@pytest.mark.parametrize("data", ["caf\xe9 func.func".encode("latin-1"), os.urandom(256), b"\xff\xfe\x00\x01"])
def test_14_schedc_opt_on_bytes_that_are_not_text(data):
    err = error_of(cli("-", tool="schedc-opt", stdin=data))
    assert "schedc-opt: error: <stdin>: not MLIR text (not UTF-8 at byte" in err, err


# 15 -------------------------------------------------------------------------------------------


@pytest.mark.parametrize("call, message", [
    (lambda: schedc.load(schedc.compile(ADD), device=None), "device must be a name"),
    (lambda: schedc.compile(DYNAMIC, batch_buckets="1,2"), "batch_buckets takes integers"),
    (lambda: schedc.compile(ADD, iree_flags=None), "iree_flags takes a list of flags"),
    (lambda: schedc.compile(ADD, passes=5), "passes takes a string"),
    (lambda: schedc.load(schedc.compile(ADD)).forward.async_(None), "argument 0 is NoneType"),
    (lambda: schedc.load(schedc.compile(ADD)).forward(1.5), "argument 0 is a Python number where the function takes a tensor"),
    (lambda: schedc.load(str(ROOT)), "is a directory"),
])
def test_15_wrong_types_in_the_api_are_schedc_errors(call, message):
    with pytest.raises(schedc.SchedcError, match=message):
        call()


# 16, 17 --------------------------------------------------------------------------------------


def test_16_17_devices_as_outputs(folder):
    result = subprocess.run(f"{sys.executable} -m schedc.tools.schedc {folder / 'add.mlir'} -o /dev/stdout | cat > {folder / 'piped.vmfb'}",
                            shell=True, capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    assert zipfile.is_zipfile(folder / "piped.vmfb")
    result = cli(folder / "add.mlir", "-o", os.devnull, "--report", os.devnull)
    assert result.returncode == 0, result.stderr.decode()


# 18 -------------------------------------------------------------------------------------------


def test_18_an_unregistered_op_is_a_located_error_in_the_users_file(tmp_path):
    source = tmp_path / "m.mlir"
    source.write_text('func.func @forward(%a: tensor<4xf32>) -> tensor<4xf32> {\n  "foo.bar"() : () -> ()\n  return %a : tensor<4xf32>\n}\n')
    for target in ("llvm-cpu", "cuda"):
        result = cli(source, f"--target={target}", "-o", tmp_path / "m.vmfb")
        refused(result, f"{source}:2:")
        assert "foo.bar" in result.stderr.decode() and "Stack dump" not in result.stderr.decode()


# 19, 20 --------------------------------------------------------------------------------------


def _linear():
    torch.manual_seed(0)
    return torch.nn.Linear(4, 3).eval(), torch.randn(2, 4)


def test_19_a_damaged_cached_module_is_rebuilt(tmp_path):
    model, x = _linear()
    torch._dynamo.reset()
    with torch.no_grad():
        torch.compile(model, backend="schedc", options={"cache_dir": str(tmp_path), "fallback": False})(x)
    (cached,) = (tmp_path / "dynamo").glob("*.vmfb")
    cached.write_bytes(cached.read_bytes()[:200])
    torch._dynamo.reset()
    with torch.no_grad():
        y = torch.compile(model, backend="schedc", options={"cache_dir": str(tmp_path), "fallback": False})(x)
        assert torch.allclose(y, model(x), atol=1e-5)
    assert zipfile.is_zipfile(cached)


def test_20_an_unwritable_cache_still_compiles_and_flags_are_not_characters(tmp_path):
    model, x = _linear()
    blocked = tmp_path / "file"
    blocked.write_text("not a folder")
    torch._dynamo.reset()
    with pytest.warns(UserWarning, match="cannot cache"), torch.no_grad():
        y = torch.compile(model, backend="schedc", options={"cache_dir": str(blocked), "fallback": False})(x)
    assert torch.allclose(y, model(x), atol=1e-5)
    from schedc.torch.dynamo import BackendOptions

    assert BackendOptions.from_dict({"iree_flags": "--iree-opt-level=O2"}).iree_flags == ("--iree-opt-level=O2",)


# 21, 22, 23 ------------------------------------------------------------------------------------


def test_21_an_output_under_a_file_is_refused_before_the_compile(folder, tmp_path):
    for args in ([folder / "add.mlir", "-o", "/etc/passwd/x.vmfb"], [folder / "add.mlir", "-o", tmp_path / "m.vmfb", "--report", "/etc/passwd/r.json"],
                 ["import", f"{ROOT / 'examples' / 'models.py'}:mlp", "-o", "/etc/passwd/m.mlir"]):
        refused(cli(*args), "/etc/passwd is not a directory")
    assert not (tmp_path / "m.vmfb").exists()


@pytest.mark.parametrize("args, message", [
    (["--cuda-arch=sm_80"], "--cuda-arch applies to --target=cuda"),
    (["--no-schedc-passes", "--passes=memory-order"], "--no-schedc-passes runs no schedc pass"),
    (["--target=cuda", "--kernel-db=/nonexistent/db.json"], "/nonexistent/db.json"),
    (["--kernel-db=/nonexistent/db.json"], "/nonexistent/db.json"),
])
def test_22_options_that_do_not_apply_are_errors(folder, args, message):
    err = error_of(cli(folder / "add.mlir", *args, "-o", os.devnull))
    assert message in err, err


def test_23_buckets_on_linalg_input_of_dynamic_batch(folder, tmp_path):
    module = schedc.load(schedc.compile(Path(folder / "dyn.mlir"), batch_buckets=(1, 4)))
    x = np.arange(24, dtype=np.float32).reshape(3, 8)
    np.testing.assert_array_equal(module.forward(x), x * 2)


# the smaller ones ----------------------------------------------------------------------------


def test_bf16_inputs_on_the_command_line(tmp_path):
    source = tmp_path / "b.mlir"
    source.write_text(ADD.replace("f32", "bf16"))
    schedc.compile(source, output=str(tmp_path / "b.vmfb"))
    result = cli("run", tmp_path / "b.vmfb", "--input=4xbf16=1.5")
    assert result.returncode == 0, result.stderr.decode()
    assert b"4xbfloat16" in result.stdout
