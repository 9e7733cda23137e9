"""Weights outside the module: parameter archives written, named in the MLIR, checked and
loaded, on small models compiled for the CPU."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest
import torch

import schedc
from schedc.errors import RuntimeLoadError, SchedcError
from schedc.runtime.parameters import read_archive, write_archive
from conftest import ROOT

EXAMPLES = ROOT / "examples" / "models.py"


def cli(*args, cwd=None):
    return subprocess.run([sys.executable, "-m", "schedc.tools.schedc", *map(str, args)], capture_output=True, text=True, cwd=cwd)


@pytest.fixture(scope="session")
def mlp_external(tmp_path_factory, examples):
    """The example MLP imported with its weights in an archive, compiled; and inlined, compiled."""
    folder = tmp_path_factory.mktemp("params")
    model, (x,) = examples.mlp()
    archive = folder / "mlp.irpa"
    external = schedc.import_torch(model, x, params=str(archive))
    inline = schedc.import_torch(model, x)
    return {
        "model": model, "x": x, "archive": archive, "folder": folder, "mlir": external,
        "vmfb": schedc.compile(external, target="llvm-cpu"), "inline_vmfb": schedc.compile(inline, target="llvm-cpu"),
    }


def test_archive_round_trip_keeps_types_and_shapes(tmp_path):
    import ml_dtypes

    arrays = {
        "w": np.arange(12, dtype=np.float32).reshape(3, 4), "h": np.ones((2, 2), np.float16),
        "b": np.array([1.5, -2], dtype=ml_dtypes.bfloat16), "steps": np.array(7, np.int64), "empty": np.zeros((0, 3), np.float32),
    }
    write_archive(arrays, str(tmp_path / "w.irpa"))
    back = read_archive(str(tmp_path / "w.irpa"))
    assert list(back) == list(arrays)
    for key, array in arrays.items():
        assert back[key].dtype == array.dtype and back[key].shape == array.shape, key
        assert back[key].tobytes() == array.tobytes(), key


def test_external_module_holds_no_weights_and_matches_inline_bit_for_bit(mlp_external):
    m = mlp_external
    assert "dense_resource" not in m["mlir"]
    assert '#stream.parameter.named<"model"::"fc1.weight">' in m["mlir"]
    weight = m["model"].fc1.weight.detach().numpy().tobytes()
    assert weight[:256] in m["inline_vmfb"] and weight[:256] not in m["vmfb"]
    assert len(m["vmfb"]) < len(m["inline_vmfb"]) / 4
    x = m["x"].numpy()
    external = schedc.load(m["vmfb"], params=str(m["archive"])).forward(x)
    inline = schedc.load(m["inline_vmfb"]).forward(x)
    assert external.tobytes() == inline.tobytes()


def test_another_checkpoint_changes_the_outputs_without_a_compile(mlp_external, examples):
    m = mlp_external
    other, _ = examples.mlp()
    with torch.no_grad():
        for p in other.parameters():
            p.mul_(-0.5)
    archive = m["folder"] / "other.irpa"
    assert schedc.save_params(other, str(archive)) == 6
    x = m["x"]
    module = schedc.load(m["vmfb"], params=str(archive))
    with torch.no_grad():
        expected = other(x).numpy()
    got = module.forward(x.numpy())
    np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-5)
    assert not np.allclose(got, schedc.load(m["vmfb"], params=str(m["archive"])).forward(x.numpy()))


def _state(mlp_external) -> dict:
    return {k: v.detach().numpy() for k, v in mlp_external["model"].state_dict().items()}


@pytest.mark.parametrize("case, expected", [
    ("missing", "parameter .fc3.bias. .f32 16. that the module needs is not in"),
    ("shape", "parameter 'fc2.weight' in .* is f32 128x64; the module needs f32 128x128"),
    ("dtype", "parameter 'fc1.bias' in .* is f16 128; the module needs f32 128"),
    ("bytes", "is damaged: its bytes do not match the checksum"),
    ("truncated", "damaged or not a parameter archive"),
    ("not_an_archive", "damaged or not a parameter archive"),
    ("absent", "no such parameter archive"),
])
def test_bad_archives_are_errors_naming_the_parameter(mlp_external, tmp_path, case, expected):
    state = _state(mlp_external)
    path = tmp_path / "bad.irpa"
    if case == "missing":
        del state["fc3.bias"]
    elif case == "shape":
        state["fc2.weight"] = state["fc2.weight"][:, :64].copy()
    elif case == "dtype":
        state["fc1.bias"] = np.concatenate([state["fc1.bias"]] * 2).astype(np.float16)[:128]
    if case in ("missing", "shape", "dtype", "bytes", "truncated"):
        write_archive(state, str(path))
    if case == "bytes":  # one byte of fc2.weight's data flipped
        data = bytearray(path.read_bytes())
        offset = data.find(state["fc2.weight"].tobytes()[:64])
        data[offset + 100] ^= 0xFF
        path.write_bytes(bytes(data))
    elif case == "truncated":
        path.write_bytes(path.read_bytes()[: path.stat().st_size // 2])
    elif case == "not_an_archive":
        path.write_bytes(b"\x00" * 4096)
    with pytest.raises(RuntimeLoadError, match=expected):
        schedc.load(mlp_external["vmfb"], params=str(path))


def test_an_archive_of_another_writer_is_checked_by_length(mlp_external, tmp_path):
    """An archive without schedc's metadata (IREE's own writer): a wrong byte length is named."""
    import iree.runtime as rt

    index = rt.ParameterIndex()
    for key, array in _state(mlp_external).items():
        data = array.tobytes() if key != "fc3.weight" else array.tobytes() + b"\x00" * 64
        index.add_buffer(key, data)
    index.create_archive_file(str(tmp_path / "plain.irpa"))
    with pytest.raises(RuntimeLoadError, match="parameter 'fc3.weight' in .* holds 8256 bytes; the module needs f32 16x128 .8192 bytes."):
        schedc.load(mlp_external["vmfb"], params=str(tmp_path / "plain.irpa"))


def test_archives_given_or_missing_where_they_do_not_belong(mlp_external, tmp_path):
    m = mlp_external
    with pytest.raises(RuntimeLoadError, match="keeps its weights in a parameter archive: load it with params="):
        schedc.load(m["vmfb"])
    with pytest.raises(RuntimeLoadError, match="reads no parameters .its weights are in the module.: load it without params"):
        schedc.load(m["inline_vmfb"], params=str(m["archive"]))
    with pytest.raises(RuntimeLoadError, match="needs parameters of scope 'model' .* scopes given: lora"):
        schedc.load(m["vmfb"], params={"lora": str(m["archive"])})
    state = _state(m)
    write_archive({k: state[k] for k in ("fc1.weight", "fc1.bias")}, str(tmp_path / "a.irpa"))
    write_archive({k: state[k] for k in state if k != "fc2.weight"}, str(tmp_path / "b.irpa"))
    with pytest.raises(RuntimeLoadError, match="parameter 'fc1.weight' of scope 'model' is in both"):
        schedc.load(m["vmfb"], params=[str(tmp_path / "a.irpa"), str(tmp_path / "b.irpa")])
    # one scope split across two archives loads
    write_archive({k: state[k] for k in state if k.startswith("fc1")}, str(tmp_path / "c.irpa"))
    write_archive({k: state[k] for k in state if not k.startswith("fc1")}, str(tmp_path / "d.irpa"))
    got = schedc.load(m["vmfb"], params=[str(tmp_path / "c.irpa"), str(tmp_path / "d.irpa")]).forward(m["x"].numpy())
    assert got.tobytes() == schedc.load(m["vmfb"], params=str(m["archive"])).forward(m["x"].numpy()).tobytes()


def test_tied_weights_are_one_entry(tmp_path):
    class Tied(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.embed = torch.nn.Embedding(20, 8)
            self.head = torch.nn.Linear(8, 20, bias=False)
            self.head.weight = self.embed.weight

        def forward(self, ids):
            return self.head(self.embed(ids))

    torch.manual_seed(0)
    model, ids = Tied().eval(), torch.tensor([[1, 5, 7]])
    mlir = schedc.import_torch(model, ids, params=str(tmp_path / "t.irpa"))
    assert list(read_archive(str(tmp_path / "t.irpa"))) == ["embed.weight"]
    assert "head.weight" not in mlir
    got = schedc.load(schedc.compile(mlir, target="llvm-cpu"), params=str(tmp_path / "t.irpa")).forward(ids.numpy())
    with torch.no_grad():
        np.testing.assert_allclose(got, model(ids).numpy(), rtol=1e-5, atol=1e-5)


UNSEEDED = """
import torch

def net():  # its weights come from torch's random generator as it stands: --seed decides them
    return torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.ReLU(), torch.nn.Linear(16, 4)).eval(), torch.ones(2, 8)
"""


def test_cli_import_run_and_params_save(tmp_path):
    factory = tmp_path / "models.py"
    factory.write_text(UNSEEDED)
    mlir, archive = tmp_path / "net.mlir", tmp_path / "net.irpa"
    result = cli("import", f"{factory}:net", "-o", mlir, f"--params={archive}", "--save-inputs")
    assert result.returncode == 0, result.stderr
    assert "dense_resource" not in mlir.read_text() and archive.is_file()
    assert cli(mlir, "-o", tmp_path / "net.vmfb").returncode == 0
    run = ["run", tmp_path / "net.vmfb", f"--input=@{tmp_path / 'net.arg0.npy'}"]

    def outputs(params: str, name: str):
        result = cli(*run, f"--output=@{tmp_path / name}", f"--params={params}")
        assert result.returncode == 0, result.stderr
        return np.load(tmp_path / name)

    first = outputs(str(archive), "y.npy")
    # random weights from a seed, written without the compiler: the same seed, the same
    # outputs; another seed, others
    for seed, name in ((1, "a"), (1, "b"), (2, "c")):
        result = cli("params", "save", f"{factory}:net", "--seed", seed, "-o", tmp_path / f"{name}.irpa")
        assert result.returncode == 0, result.stderr
    a, b, c = (outputs(f"model={tmp_path / f'{name}.irpa'}", f"{name}.npy") for name in "abc")
    assert a.tobytes() == b.tobytes() and not np.array_equal(a, c) and not np.array_equal(a, first)
    # a torch checkpoint (a state_dict) of a model's weights gives that model's outputs
    torch.manual_seed(5)
    model = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.ReLU(), torch.nn.Linear(16, 4)).eval()
    torch.save(model.state_dict(), tmp_path / "net.pt")
    assert cli("params", "save", tmp_path / "net.pt", "-o", tmp_path / "pt.irpa").returncode == 0
    with torch.no_grad():
        np.testing.assert_allclose(outputs(str(tmp_path / "pt.irpa"), "pt.npy"), model(torch.ones(2, 8)).numpy(), rtol=1e-5, atol=1e-5)
    result = cli("params", "show", tmp_path / "pt.irpa")
    assert "0.weight: float32 16x8" in result.stdout


@pytest.mark.parametrize("args, expected", [
    (["run", "{vmfb}", "--input=8x64xf32=1"], "keeps its weights in a parameter archive"),
    (["params", "save", "{folder}/nope.pt", "-o", "{folder}/w.irpa"], "nope.pt: no such file"),
    (["params", "save", "{folder}/model.pkl", "-o", "{folder}/w.irpa"], "a pickled Python object, not a checkpoint of tensors; save the model's state_dict()"),
    (["params", "save", "{folder}/mlp.mlir", "-o", "{folder}/w.irpa"], "not a torch checkpoint of tensors"),
    (["params", "save", "{folder}/sd.pt", "--seed", "1", "-o", "{folder}/w.irpa"], "--seed makes random weights of a factory's model"),
    (["params", "save", "{folder}/sd.pt", "-o", "{folder}/sd.pt"], "the parameter archive is the input file"),
    (["import", f"{EXAMPLES}:mlp", "-o", "{folder}/x.mlir", "--params={folder}/x.mlir"], "must be two files"),
])
def test_cli_params_errors(mlp_external, tmp_path, args, expected):
    folder = mlp_external["folder"]
    (folder / "mlp.vmfb").write_bytes(mlp_external["vmfb"])
    (folder / "mlp.mlir").write_text(mlp_external["mlir"])
    torch.save(mlp_external["model"], folder / "model.pkl")
    torch.save(mlp_external["model"].state_dict(), folder / "sd.pt")
    before = (folder / "sd.pt").read_bytes()
    result = cli(*[a.format(folder=folder, vmfb=folder / "mlp.vmfb") for a in args])
    assert result.returncode == 1
    assert expected in result.stderr, result.stderr
    assert "Traceback" not in result.stderr
    assert (folder / "sd.pt").read_bytes() == before


def test_static_replay_and_buckets_compile_with_parameters(examples, tmp_path):
    """The CUDA replay pipeline (static-replay at the HAL phase) and batch buckets take a
    module whose weights are parameters, and record what it needs."""
    model, (x,) = examples.mlp()
    mlir = schedc.import_torch(model, x, params=str(tmp_path / "w.irpa"), dynamic_batch=True)
    vmfb = schedc.compile(mlir, target="llvm-cpu", batch_buckets=(1, 4))
    module = schedc.load(vmfb, params=str(tmp_path / "w.irpa"))
    with torch.no_grad():
        np.testing.assert_allclose(module.forward(x[:3].numpy()), model(x[:3]).numpy(), rtol=1e-5, atol=1e-5)
    external = schedc.import_torch(model, x, params=str(tmp_path / "w.irpa"))
    replayed = schedc.compile(external, target="cuda", execution="graphs")
    assert b"schedc.parameters" in replayed and model.fc1.weight.detach().numpy().tobytes()[:256] not in replayed
    # The weights' transforms run at load, one at a time: a CUDA graph takes only so many
    # concurrent nodes (an H200 refused RandWire's initializer)
    torch.manual_seed(0)
    convnet = torch.nn.Sequential(torch.nn.Conv2d(3, 8, 3), torch.nn.BatchNorm2d(8), torch.nn.ReLU(), torch.nn.Conv2d(8, 8, 3),
                                  torch.nn.BatchNorm2d(8)).eval()
    with_norms = schedc.import_torch(convnet, torch.randn(1, 3, 16, 16), params=str(tmp_path / "c.irpa"))
    stream = schedc.compile(with_norms, target="cuda", execution="graphs", emit="stream")
    initializer = stream[stream.index("util.initializer"):]
    initializer = initializer[: initializer.index("\n  }")]
    assert "stream.cmd.dispatch" in initializer and "stream.cmd.concurrent" not in initializer


def test_training_steps_refuse_an_archive(examples):
    model, x, y, loss = examples.convnet_train()
    with pytest.raises(SchedcError, match="a training step takes its weights as arguments"):
        schedc.import_torch(model, x, train=True, targets=(y,), loss=loss, params="w.irpa")


def test_a_unit_dimension_folded_by_iree_still_matches_its_entry(tmp_path):
    """IREE's global optimisation folds a [1] weight's unit dimension (a scalar global in the
    module); its archive entry, [1], holds the same bytes and loads, and a [2] one does not."""
    class Scaled(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = torch.nn.Linear(4, 4)
            self.gain = torch.nn.Parameter(torch.full((1,), 3.0))

        def forward(self, x):
            return self.fc(x) * self.gain

    torch.manual_seed(0)
    model, x = Scaled().eval(), torch.randn(2, 4)
    vmfb = schedc.compile(schedc.import_torch(model, x, params=str(tmp_path / "w.irpa")), target="llvm-cpu")
    got = schedc.load(vmfb, params=str(tmp_path / "w.irpa")).forward(x.numpy())
    with torch.no_grad():
        np.testing.assert_allclose(got, model(x).numpy(), rtol=1e-6)
        model.gain = torch.nn.Parameter(torch.ones(2))
    schedc.save_params(model, str(tmp_path / "wrong.irpa"))
    with pytest.raises(RuntimeLoadError, match="parameter 'gain' in .* is f32 2; the module needs f32 "):
        schedc.load(vmfb, params=str(tmp_path / "wrong.irpa"))
