"""The command-line tools as a user meets them: import, compile, run, and their errors."""

from __future__ import annotations

import subprocess
import sys

import pytest

from conftest import ROOT


def schedc(*args, cwd=None):
    return subprocess.run([sys.executable, "-m", "schedc.tools.schedc", *map(str, args)], capture_output=True, text=True, cwd=cwd)


def test_import_compile_run(tmp_path):
    mlir = tmp_path / "mlp.mlir"
    result = schedc("import", ROOT / "examples" / "models.py:mlp", "-o", mlir, "--save-inputs")
    assert result.returncode == 0, result.stderr
    assert "torch.vtensor" in mlir.read_text()
    assert (tmp_path / "mlp.arg0.npy").exists()
    assert result.stderr.strip().endswith(f"wrote {mlir} and {tmp_path / 'mlp.arg0.npy'}"), "every file written is named"
    result = schedc(mlir, "-o", tmp_path / "mlp.vmfb")
    assert result.returncode == 0, result.stderr
    result = schedc("run", tmp_path / "mlp.vmfb", "--function=forward", f"--input=@{tmp_path / 'mlp.arg0.npy'}")
    assert result.returncode == 0, result.stderr
    assert "result[0]: 8x16xfloat32" in result.stdout


def test_wrote_names_a_numbered_run_by_its_ends():
    from schedc.tools.schedc import _wrote

    args = [f"step.arg{i}.npy" for i in range(40)]
    assert _wrote(["step.mlir", *args]) == "wrote step.mlir and step.arg0.npy .. step.arg39.npy (40 files)"
    assert _wrote(["m.mlir", "m.arg0.npy", "m.arg1.npy"]) == "wrote m.mlir, m.arg0.npy and m.arg1.npy"
    assert _wrote(["a1.npy", "a2.npy", "a4.npy"]) == "wrote a1.npy, a2.npy and a4.npy"  # not in a row
    assert _wrote(["r9/x.bin"]) == "wrote r9/x.bin"


def test_default_output_name_is_the_input_stem(tmp_path):
    (tmp_path / "tiny.mlir").write_text((ROOT / "test" / "cli" / "Inputs" / "bad-op.mlir").read_text())
    result = schedc("tiny.mlir", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert (tmp_path / "tiny.vmfb").stat().st_size > 0


@pytest.mark.parametrize(
    "factory_source, expected",
    [
        ("def make():\n    return 1 / 0\n", "factory.py:2: error: ZeroDivisionError"),
        ("def make(:\n", "factory.py:1:"),
        ("def other():\n    pass\n", "has no function 'make'"),
        ("def make():\n    return 3\n", "must return (model, example_inputs)"),
    ],
)
def test_import_errors_point_at_the_users_file(tmp_path, factory_source, expected):
    (tmp_path / "factory.py").write_text(factory_source)
    out = tmp_path / "out.mlir"
    result = schedc("import", f"{tmp_path / 'factory.py'}:make", "-o", out)
    assert result.returncode == 1
    assert expected in result.stderr
    assert "Traceback" not in result.stderr
    assert not out.exists()


def test_import_needs_a_factory_name(tmp_path):
    result = schedc("import", "models.py", "-o", tmp_path / "x.mlir")
    assert result.returncode == 1 and "expected path/to/file.py:factory" in result.stderr


def test_tune_prepare_database_needs_new_only(tmp_path):
    source = tmp_path / "m.mlir"
    source.write_text("func.func @f(%a: tensor<4xf32>) -> tensor<4xf32> {\n  return %a : tensor<4xf32>\n}\n")
    done = schedc("tune", "prepare", source, "--database", tmp_path / "db.json", "-o", tmp_path / "tune")
    assert done.returncode == 1 and "--database is for --new-only" in done.stderr and "Traceback" not in done.stderr
    assert not (tmp_path / "tune").exists()
    done = schedc("tune", "prepare", source, "--new-only", "--database", tmp_path / "db.json", "-o", tmp_path / "tune")
    assert done.returncode == 1 and "db.json: no such kernel database" in done.stderr


def test_tune_help_shows_the_one_step_forms_options():
    result = schedc("tune", "--help")
    assert result.returncode == 0
    one_step = result.stdout.split("the one-step form", 1)[1]
    for option in ("--candidates", "--target", "--database", "--new-only", "models"):
        assert option in one_step


def test_messages_and_the_report_name_functions_as_the_user_wrote_them(tmp_path):
    """IREE's ABI renames `forward`'s body `forward$async`: schedc's words keep `forward`."""
    mlir = tmp_path / "mlp.mlir"
    assert schedc("import", ROOT / "examples" / "models.py:mlp", "-o", mlir).returncode == 0
    result = schedc(mlir, "--passes=memory-order,remat{memory-budget=0.1},arena-plan", "--report", tmp_path / "r.json", "-o", tmp_path / "m.vmfb")
    assert result.returncode == 0, result.stderr
    assert "remat: @forward cannot get under the budget" in result.stderr and "$async" not in result.stderr
    import json

    assert list(json.loads((tmp_path / "r.json").read_text())["functions"]) == ["forward"]
