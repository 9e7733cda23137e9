"""The API as a hostile user meets it: wrong arguments, damaged modules, outputs that cannot be
written, signals. Each gets one clear SchedcError (or a clean exit), never a traceback, a crash
or a half-written file. The command line's cases are lit tests in test/cli."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import textwrap
import threading
import time

import numpy as np
import pytest
import torch

import schedc
from conftest import ROOT
from schedc.compiler import driver

ADD = """
func.func @f(%a: tensor<4xf32>) -> tensor<4xf32> {
  %0 = arith.addf %a, %a : tensor<4xf32>
  return %0 : tensor<4xf32>
}
"""

# torch-dialect input with scalar arguments: IREE gives it a `forward$async` twin.
SCALARS = """
func.func @forward(%x: !torch.vtensor<[4],f32>, %a: !torch.float, %n: !torch.int) -> !torch.vtensor<[4],f32> {
  %0 = torch.aten.mul.Scalar %x, %a : !torch.vtensor<[4],f32>, !torch.float -> !torch.vtensor<[4],f32>
  %1 = torch.aten.add.Scalar %0, %n, %n : !torch.vtensor<[4],f32>, !torch.int, !torch.int -> !torch.vtensor<[4],f32>
  return %1 : !torch.vtensor<[4],f32>
}
"""


@pytest.fixture(scope="session")
def add_module(tmp_path_factory):
    path = tmp_path_factory.mktemp("hostile") / "add.vmfb"
    schedc.compile(ADD, output=str(path))
    return path


# -- compile's arguments ----------------------------------------------------------------------


@pytest.mark.parametrize(
    "source, message",
    [
        (b"\xff\xfe\x00module", "bytes are read as MLIR bytecode, and these are not"),
        ("", "the input is empty"),
        ("   \n", "the input is empty"),
        ("module {}\n", "<input>: the input has no functions"),
    ],
)
def test_inputs_that_are_not_a_model(source, message):
    with pytest.raises(schedc.SchedcError, match=re.escape(message)):
        schedc.compile(source)


def test_one_iree_flag_as_a_string_is_one_flag():
    with pytest.raises(schedc.CompileError, match="--no-such-iree-flag"):
        schedc.compile(ADD, iree_flags="--no-such-iree-flag")


def test_output_equal_to_the_input_is_refused(tmp_path):
    source = tmp_path / "m.mlir"
    source.write_text(ADD)
    with pytest.raises(schedc.SchedcError, match="the output is the input file"):
        schedc.compile(source, output=str(source))
    assert source.read_text() == ADD


def test_an_unwritable_report_leaves_no_module(tmp_path):
    output = tmp_path / "m.vmfb"
    with pytest.raises(schedc.SchedcError, match="/proc/report.json: cannot write"):
        schedc.compile(ADD, output=str(output), report="/proc/report.json")
    assert not output.exists()
    assert [p.name for p in tmp_path.iterdir()] == []  # no staged temporary either


def test_a_fifo_is_written_in_place(tmp_path):
    fifo = tmp_path / "out.fifo"
    os.mkfifo(fifo)
    received = []
    reader = threading.Thread(target=lambda: received.append(fifo.read_bytes()))
    reader.start()
    schedc.compile(ADD, output=str(fifo))
    reader.join(timeout=60)
    assert fifo.is_fifo()
    assert received and received[0][:4] == b"PK\x03\x04"  # the module came through the pipe


def test_failed_compiles_keep_only_the_newest_work_folders(tmp_path):
    old = []
    for i in range(driver.KEPT_FOLDERS + 3):
        folder = tmp_path / f"schedc-old{i}"
        folder.mkdir()
        (folder / driver.KEPT_MARKER).touch()
        os.utime(folder / driver.KEPT_MARKER, (1000 + i, 1000 + i))
        old.append(folder)
    running = tmp_path / "schedc-running"  # a compile in progress: no marker, never removed
    running.mkdir()
    newest = tmp_path / "schedc-new"
    newest.mkdir()
    driver._keep(newest)
    kept = sorted(p.name for p in tmp_path.iterdir())
    assert "schedc-new" in kept and "schedc-running" in kept
    assert len(kept) == driver.KEPT_FOLDERS + 1
    assert not old[0].exists() and old[-1].exists()


def test_sigterm_removes_the_work_folder(tmp_path):
    """A compile stopped by SIGTERM exits like one stopped by Ctrl-C: nothing left behind."""
    work = tmp_path / "tmp"
    work.mkdir()
    source = ROOT / "test" / "cli" / "linalg-input.mlir"
    env = dict(os.environ, TMPDIR=str(work))
    process = subprocess.Popen([sys.executable, "-m", "schedc.tools.schedc", str(source), "-o", str(tmp_path / "m.vmfb")],
                               env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        for _ in range(600):  # until the compile has made its work folder
            if list(work.glob("schedc-*")) or process.poll() is not None:
                break
            time.sleep(0.1)
        assert process.poll() is None, "the compile ended before it could be stopped"
        process.send_signal(signal.SIGTERM)
        _, stderr = process.communicate(timeout=120)
    finally:
        process.kill()
    assert process.returncode == 128 + signal.SIGTERM
    assert b"Traceback" not in stderr
    assert list(work.iterdir()) == []
    assert not (tmp_path / "m.vmfb").exists()


# -- torch.export failures ----------------------------------------------------------------------


class DataDependentIf(torch.nn.Module):
    def forward(self, x):
        if x.sum() > 0:
            return x * 2
        return x - 1


class Cond(torch.nn.Module):
    def forward(self, x):
        return torch.cond(x.sum() > 0, lambda x: x * 2, lambda x: x - 1, (x,))


@pytest.mark.parametrize(
    "model, args, message",
    [
        (DataDependentIf(), (torch.randn(4),), r"test_hostile.py:\d+: torch.export could not export the model"),
        (Cond(), (torch.randn(4),), "Higher-order operation 'cond'"),
        (torch.nn.Linear(4, 3), (torch.randn(2, 5),), "torch.export could not export the model .RuntimeError.:\na and b must have same reduction dim"),
    ],
)
def test_models_torch_export_refuses(model, args, message, capfd):
    with pytest.raises(schedc.SchedcError, match=message):
        schedc.import_torch(model, *args)
    assert "Traceback" not in capfd.readouterr().err


# -- the runtime ----------------------------------------------------------------------------------


def test_bfloat16_tensors_go_in_and_come_back(tmp_path):
    class Double(torch.nn.Module):
        def forward(self, x):
            return x * 2

    x = torch.randn(8).to(torch.bfloat16)
    path = tmp_path / "bf16.vmfb"
    schedc.compile(schedc.import_torch(Double(), x), output=str(path))
    module = schedc.load(path)
    for result in (module.forward(x), module.forward.async_(x).wait()):
        assert result.dtype == torch.bfloat16
        torch.testing.assert_close(result, x * 2)


def test_async_calls_take_scalars_like_plain_calls(tmp_path):
    path = tmp_path / "scalars.vmfb"
    schedc.compile(SCALARS, output=str(path))
    module = schedc.load(path)
    assert module.function_names == ["forward"]  # forward$async is reached through async_
    x = np.arange(4, dtype=np.float32)
    expected = x * 2.0 + 3 * 3
    np.testing.assert_allclose(module.forward(x, 2.0, 3), expected)
    np.testing.assert_allclose(module.forward.async_(x, 2.0, 3).wait(), expected)


def test_an_argument_numpy_cannot_hold_is_one_error(add_module):
    module = schedc.load(add_module)
    with pytest.raises(schedc.SchedcError, match="argument 0 cannot be passed to IREE"):
        module.f(torch.ones(4, dtype=torch.float8_e4m3fn))


LOADER = textwrap.dedent(
    """
    import json, sys
    import numpy as np
    import schedc
    progress, results = sys.argv[1], sys.argv[2]
    for line in sys.stdin:
        case = json.loads(line)
        open(progress, "w").write(str(case["case"]))
        try:
            value = schedc.load(case["path"]).f(np.arange(4, dtype=np.float32))
            outcome = {"case": case["case"], "outcome": "loaded", "value": np.asarray(value).tolist()}
        except schedc.SchedcError as e:
            outcome = {"case": case["case"], "outcome": "error", "message": str(e)}
        with open(results, "a") as f:
            f.write(json.dumps(outcome) + "\\n")
    """
)


def test_damaged_modules_are_refused_before_iree_maps_them(add_module, tmp_path):
    """200 modules with one flipped bit each, loaded in a subprocess (a crash there cannot take
    pytest down): each is refused with a clear error or, where the bit is in bytes nothing reads,
    computes the right numbers."""
    data = add_module.read_bytes()
    rng = np.random.default_rng(11)
    cases = []
    for case in range(200):
        damaged = bytearray(data)
        position = int(rng.integers(len(data)))
        damaged[position] ^= 1 << int(rng.integers(8))
        path = tmp_path / f"damaged{case}.vmfb"
        path.write_bytes(damaged)
        cases.append({"case": case, "path": str(path), "position": position})
    progress, results = tmp_path / "progress", tmp_path / "results.jsonl"
    run = subprocess.run([sys.executable, "-c", LOADER, str(progress), str(results)],
                         input="".join(json.dumps(c) + "\n" for c in cases), capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, f"crashed ({run.returncode}) on case {progress.read_text()}: {run.stderr[-2000:]}"
    outcomes = [json.loads(line) for line in results.read_text().splitlines()]
    assert len(outcomes) == 200
    for outcome in outcomes:
        if outcome["outcome"] == "loaded":
            assert outcome["value"] == [0.0, 2.0, 4.0, 6.0], cases[outcome["case"]]
        else:
            assert "damaged IREE module" in outcome["message"] or "not an IREE module" in outcome["message"], outcome
    assert sum(o["outcome"] == "error" for o in outcomes) >= 150
