"""schedc.compile's inputs (no guessing: a Path or input_file= is a file, a str is text, bytes
are bytecode), its options (the same as the command line's), and every lowering it can emit."""

from __future__ import annotations

import inspect

import pytest
from iree.compiler import ir

import schedc
from schedc.compiler.driver import compile as compile_api
from schedc.options import Emit
from schedc.tools.schedc import compile_parser

ADD = """
func.func @add(%a: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<4xf32> {
  %0 = arith.addf %a, %b : tensor<4xf32>
  return %0 : tensor<4xf32>
}
"""


@pytest.fixture(scope="session")
def flow_of_text():
    return schedc.compile(ADD, emit="flow")


def test_a_str_is_mlir_text():
    assert "util.global private @__device_0" in schedc.compile("builtin.module {}", emit="flow")


def test_a_str_that_names_a_file_is_refused_with_the_way_to_pass_a_file(tmp_path):
    (tmp_path / "m.mlir").write_text(ADD)
    with pytest.raises(schedc.SchedcError, match=r"a str is MLIR text; to compile a file, pass pathlib.Path\('.*m.mlir'\) or input_file="):
        schedc.compile(str(tmp_path / "m.mlir"))


def test_a_path_and_input_file_are_files(tmp_path, flow_of_text):
    path = tmp_path / "add.mlir"
    path.write_text(ADD)
    assert schedc.compile(path, emit="flow") == flow_of_text
    assert schedc.compile(input_file=str(path), emit="flow") == flow_of_text
    with pytest.raises(schedc.SchedcError, match="no such file"):
        schedc.compile(input_file=tmp_path / "none.mlir")


def test_bytes_are_bytecode(tmp_path, flow_of_text):
    bytecode = tmp_path / "add.mlirbc"
    with ir.Context():
        module = ir.Module.parse(ADD)
        with open(bytecode, "wb") as f:
            module.operation.write_bytecode(f)
    assert schedc.compile(bytecode.read_bytes(), emit="flow") == flow_of_text
    assert schedc.compile(bytecode, emit="flow") == flow_of_text  # a bytecode file
    with pytest.raises(schedc.SchedcError, match="bytes are read as MLIR bytecode"):
        schedc.compile(ADD.encode())


def test_one_input_exactly(tmp_path):
    with pytest.raises(schedc.SchedcError, match="one input"):
        schedc.compile()
    with pytest.raises(schedc.SchedcError, match="one input"):
        schedc.compile(ADD, input_file=tmp_path / "x.mlir")


def test_the_command_line_has_the_options_of_the_api():
    cli = {action.dest for action in compile_parser()._actions} - {"help"}
    api = set(inspect.signature(compile_api).parameters) - {"source", "pass_output", "progress"}
    assert cli == api
    emit = next(a for a in compile_parser()._actions if a.dest == "emit")
    assert tuple(emit.choices) == Emit.names()


TWO_KERNELS = """
func.func @two(%w: tensor<8x4xf32>, %v: tensor<4x8xf32>, %x: tensor<4xf32>) -> tensor<4xf32> {
  %zero = arith.constant 0.0 : f32
  %e8 = tensor.empty() : tensor<8xf32>
  %a8 = linalg.fill ins(%zero : f32) outs(%e8 : tensor<8xf32>) -> tensor<8xf32>
  %y = linalg.matvec ins(%w, %x : tensor<8x4xf32>, tensor<4xf32>) outs(%a8 : tensor<8xf32>) -> tensor<8xf32>
  %e4 = tensor.empty() : tensor<4xf32>
  %a4 = linalg.fill ins(%zero : f32) outs(%e4 : tensor<4xf32>) -> tensor<4xf32>
  %z = linalg.matvec ins(%v, %y : tensor<4x8xf32>, tensor<8xf32>) outs(%a4 : tensor<4xf32>) -> tensor<4xf32>
  return %z : tensor<4xf32>
}
"""


def test_emit_hal_and_executables(tmp_path):
    hal = schedc.compile(ADD, target="cuda", emit="hal")
    assert "hal.executable" in hal and "hal.executable.binary" in hal
    files = schedc.compile(TWO_KERNELS, target="cuda", emit="executables", output=str(tmp_path / "ex"))
    ptx = sorted(name for name in files if name.endswith(".ptx"))
    assert len(ptx) == 2 and all(b".target sm_80" in files[name] for name in ptx)  # one per dispatch
    assert sum(name.endswith(".ll") for name in files) >= 2  # the NVVM IR before PTX
    assert sorted(p.name for p in (tmp_path / "ex").iterdir()) == sorted(files)


@pytest.mark.parametrize("target", ["llvm-cpu", "cuda"])
def test_emit_configurations_is_the_executables_with_their_codegen_configs(target):
    configured = schedc.compile(TWO_KERNELS, target=target, emit="configurations")
    assert configured.count("hal.executable.variant") == 2 and "translation_info" in configured
    assert "hal.executable.binary" not in configured


def test_report_and_summary_are_options_of_compile(tmp_path, capsys):
    schedc.compile(ADD, report=str(tmp_path / "r.json"), summary=True, verify_plan=True)
    assert '"memory-order": {' in (tmp_path / "r.json").read_text()
    first = capsys.readouterr().out.splitlines()[0]
    assert first.startswith("@add: 1 kernel, order 'program'")
    assert not first.endswith(";"), "a tiny model's summary line ends in its last figure"
