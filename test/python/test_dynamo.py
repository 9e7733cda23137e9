"""torch.compile(model, backend="schedc"): outputs equal eager's, the disk cache serves a second
process, new shapes recompile, weights are frozen, failures fall back with one warning."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
import textwrap
import warnings

import pytest
import torch
from torch import nn

from conftest import ROOT
from schedc.torch.dynamo import BackendOptions, FallbackWarning, failing_op
from schedc.errors import SchedcError

_spec = importlib.util.spec_from_file_location("bench_models", ROOT / "bench" / "models.py")
bench_models = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(bench_models)


@pytest.fixture(autouse=True)
def fresh_dynamo(tmp_path, monkeypatch):
    """Each test starts with dynamo's compiled code forgotten and an empty cache of its own."""
    monkeypatch.setenv("SCHEDC_CACHE_DIR", str(tmp_path / "cache"))
    torch._dynamo.reset()
    yield
    torch._dynamo.reset()


def cached_modules(tmp_path) -> list:
    return sorted((tmp_path / "cache" / "dynamo").glob("*.vmfb"))


def relative_error(actual, expected) -> float:
    return ((actual.double() - expected.double()).norm() / expected.double().norm()).item()


class SmallNet(nn.Module):
    """A parameter, a buffer and batch norm: the weights dynamo lifts to graph inputs."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(8, 16)
        self.norm = nn.BatchNorm1d(16)
        self.register_buffer("scale", torch.linspace(0.5, 1.5, 16))

    def forward(self, x):
        return (self.norm(self.fc(x)) * self.scale).relu()


def small_net():
    torch.manual_seed(0)
    net = SmallNet().eval()
    net.norm.running_mean.normal_(0, 0.1)
    return net


def compile_and_compare(model, args, **options):
    compiled = torch.compile(model, backend="schedc", options={"fallback": False, **options})
    with torch.no_grad():
        actual, expected = compiled(*args), model(*args)
    return actual, expected


@pytest.mark.parametrize("name", ["plain_cnn", "transformer"])
def test_bench_models_match_eager(name):
    model, args = bench_models.SUITE[name]()
    actual, expected = compile_and_compare(model, args)
    assert relative_error(actual, expected) <= 1e-4


def test_huggingface_gpt2_matches_eager():
    from transformers import GPT2Config, GPT2Model

    torch.manual_seed(0)
    config = GPT2Config(n_layer=2, n_embd=64, n_head=2, vocab_size=128, n_positions=32, bos_token_id=0, eos_token_id=0)
    model = GPT2Model(config).eval()
    tokens = torch.randint(0, 128, (1, 16))
    compiled = torch.compile(model, backend="schedc", options={"fallback": False})
    with torch.no_grad():
        actual, expected = compiled(tokens).last_hidden_state, model(tokens).last_hidden_state
    assert relative_error(actual, expected) <= 1e-4


def test_huggingface_resnet_matches_eager():
    from transformers import ResNetConfig, ResNetModel

    torch.manual_seed(0)
    config = ResNetConfig(embedding_size=16, hidden_sizes=[16, 32], depths=[1, 1], layer_type="basic")
    model = ResNetModel(config).eval()
    image = torch.randn(1, 3, 32, 32)
    compiled = torch.compile(model, backend="schedc", options={"fallback": False})
    with torch.no_grad():
        actual, expected = compiled(image).pooler_output, model(image).pooler_output
    assert relative_error(actual, expected) <= 1e-4


def test_new_shape_recompiles_and_same_shape_reuses(tmp_path):
    model = small_net()
    compiled = torch.compile(model, backend="schedc", options={"fallback": False})
    with torch.no_grad():
        for batch in (2, 2, 5, 5):
            x = torch.randn(batch, 8)
            assert relative_error(compiled(x), model(x)) <= 1e-4
    assert len(cached_modules(tmp_path)) == 2  # one module per shape, none for a repeat


def test_weights_are_frozen_at_compile_time(tmp_path):
    model = small_net()
    x = torch.randn(2, 8)
    compiled = torch.compile(model, backend="schedc", options={"fallback": False})
    with torch.no_grad():
        before = compiled(x)
        model.fc.bias.add_(1.0)
        assert torch.equal(compiled(x), before)  # the module holds the weights it was compiled with
        torch._dynamo.reset()
        recompiled = torch.compile(model, backend="schedc", options={"fallback": False})
        assert relative_error(recompiled(x), model(x)) <= 1e-4
    assert len(cached_modules(tmp_path)) == 2  # the new weights' bytes are a new cache key


def test_unfrozen_weights_are_seen_when_they_change_and_stay_out_of_the_cache_key(tmp_path):
    """freeze_weights=False: the weights are the module's inputs, passed at each call."""
    model = small_net()
    x = torch.randn(2, 8)
    options = {"fallback": False, "freeze_weights": False}
    compiled = torch.compile(model, backend="schedc", options=options)
    with torch.no_grad():
        assert relative_error(compiled(x), model(x)) <= 1e-4
        model.fc.bias.add_(1.0)  # in place: the same tensor, new values
        model.scale.mul_(2.0)
        assert relative_error(compiled(x), model(x)) <= 1e-4
    assert len(cached_modules(tmp_path)) == 1
    # another model of the same architecture with other weights: the same cache entry
    torch._dynamo.reset()
    other = small_net()
    with torch.no_grad():
        for p in other.parameters():
            p.mul_(-1.0)
        assert relative_error(torch.compile(other, backend="schedc", options=options)(x), other(x)) <= 1e-4
    assert len(cached_modules(tmp_path)) == 1


def test_another_cpu_database_is_another_cache_entry(tmp_path, monkeypatch):
    """cpu-config plans from $SCHEDC_CPU_ISA's database: a module planned from another is not
    served from the cache."""
    model = small_net()
    x = torch.randn(2, 8)
    with torch.no_grad():
        for isa in ("x86_64-avx512", "x86_64-avx2", "x86_64-avx512"):
            monkeypatch.setenv("SCHEDC_CPU_ISA", isa)
            torch._dynamo.reset()
            assert relative_error(torch.compile(model, backend="schedc", options={"fallback": False})(x), model(x)) <= 1e-4
    assert len(cached_modules(tmp_path)) == 2


def test_a_new_measurement_in_the_cpu_database_is_another_cache_key(tmp_path, monkeypatch):
    """The key holds the database's contents: a database measured again plans anew."""
    import schedc.decisions.cpu_config as cpu_config
    from schedc.torch.dynamo import host_inputs

    database = tmp_path / "cpu.json"
    monkeypatch.setattr(cpu_config, "default_database_path", lambda isa: database)
    database.write_text('{"entries": []}')
    before = host_inputs("llvm-cpu")
    database.write_text('{"entries": [1]}')
    assert host_inputs("llvm-cpu") != before and host_inputs("cuda") == ()


_SECOND_PROCESS = """
import sys, torch
sys.path.insert(0, {test_dir!r})
from test_dynamo import small_net
import schedc.compiler.driver, schedc.torch.dynamo
if {forbid_compile}:
    def no_compile(*args, **kwargs):
        raise AssertionError("compiled although the cache holds the module")
    schedc.compiler.driver.compile_with_options = schedc.torch.dynamo.import_graph = no_compile
model = small_net()
compiled = torch.compile(model, backend="schedc", options={{"fallback": False, "cache_dir": {cache!r}}})
x = torch.arange(16, dtype=torch.float32).reshape(2, 8)
with torch.no_grad():
    y = compiled(x)  # kept to the end: results must not outlive the module's memory at exit
    error = ((y - model(x)).norm() / model(x).norm()).item()
assert error <= 1e-4, error
print("ok")
"""


def test_a_second_process_loads_the_module_from_the_cache(tmp_path):
    cache = str(tmp_path / "shared-cache")
    for forbid_compile in (False, True):
        script = _SECOND_PROCESS.format(test_dir=str(ROOT / "test" / "python"), forbid_compile=forbid_compile, cache=cache)
        run = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, cwd=tmp_path)
        assert run.returncode == 0 and run.stdout.strip() == "ok", run.stderr[-3000:]
    assert len(list((tmp_path / "shared-cache" / "dynamo").glob("*.vmfb"))) == 1


def spectrum(x):
    return torch.fft.rfft(x).abs()  # IREE 3.13 cannot lower abs of a complex tensor


def test_graph_iree_cannot_compile_runs_eagerly_with_one_warning():
    compiled = torch.compile(spectrum, backend="schedc")
    x = torch.randn(4, 8)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        first, second = compiled(x), compiled(x)
    fallbacks = [w for w in caught if issubclass(w.category, FallbackWarning)]
    assert len(fallbacks) == 1
    assert "torch.aten.abs" in str(fallbacks[0].message)
    assert torch.equal(first, spectrum(x)) and torch.equal(second, spectrum(x))


def test_fallback_false_makes_a_failing_graph_an_error():
    compiled = torch.compile(spectrum, backend="schedc", options={"fallback": False})
    with pytest.raises(Exception, match="torch.aten.abs"):
        compiled(torch.randn(4, 8))


def test_training_is_not_supported_yet():
    compiled = torch.compile(small_net(), backend="schedc")
    with pytest.raises(Exception, match="not supported yet"):
        compiled(torch.randn(2, 8))  # grad mode, parameters that require gradients


def test_unknown_option_lists_the_valid_ones():
    with pytest.raises(SchedcError, match="unknown schedc backend option.*'targte'.*valid: target, device, fallback"):
        BackendOptions.from_dict({"targte": "cuda"})


@pytest.mark.parametrize(
    "options, message",
    [
        ({"target": "tpu"}, "unknown target 'tpu'"),
        ({"target": "cuda", "cuda_arch": "sm_99"}, "sm_99"),
        ({"passes": "memory-ordre"}, "memory-ordre"),
    ],
)
def test_a_mistake_in_the_options_is_an_error_not_a_fallback(options, message):
    compiled = torch.compile(small_net(), backend="schedc", options=options)  # fallback on
    with torch.no_grad(), pytest.raises(Exception, match=message):
        compiled(torch.randn(2, 8))


def test_cache_folder_option_env_and_default(monkeypatch, tmp_path):
    assert BackendOptions(cache_dir=str(tmp_path)).cache_folder() == tmp_path
    monkeypatch.setenv("SCHEDC_CACHE_DIR", "/somewhere")
    assert str(BackendOptions().cache_folder()) == "/somewhere"
    monkeypatch.delenv("SCHEDC_CACHE_DIR")
    monkeypatch.setenv("HOME", str(tmp_path))
    assert BackendOptions().cache_folder() == tmp_path / ".cache" / "schedc"


@pytest.mark.parametrize(
    "message, op",
    [
        ("x.mlir:11:10: error: 'math.absf' op operand #0\n  %5 = torch.aten.abs %4 : ...", "op torch.aten.abs"),
        ("NotImplementedError: Higher-order operation 'with_effects' not implemented", "op with_effects"),
        ("no lowering for aten.histc.default", "op aten.histc.default"),
        ("error: 'stream.cmd.dispatch' op invalid", "op stream.cmd.dispatch"),
        ("Failure while executing pass pipeline", "an op the error does not name"),
    ],
)
def test_failing_op_names_the_op_the_error_names(message, op):
    assert failing_op(message) == op


def test_parameters_and_buffers_are_frozen_and_only_user_inputs_remain():
    """Dynamo lifts both to graph inputs; the module takes only the caller's tensors, also
    for a graph frozen after dynamo's backend call returned (bench/dynamo.py's prepare):
    torch 2.13 drops the placeholders' `grapharg` by then."""
    from schedc.torch.dynamo import FrozenGraph

    during, captured = [], []

    def capture(gm, example_inputs):
        during.append(FrozenGraph.build(gm, example_inputs))
        captured.append((gm, list(example_inputs)))
        return gm.forward

    model = small_net()
    with torch.no_grad():
        torch.compile(model, backend=capture)(torch.randn(2, 8))
    after = FrozenGraph.build(*captured[0])
    expected = [model.fc.weight, model.fc.bias, model.norm.weight, model.norm.bias,
                model.norm.running_mean, model.norm.running_var, model.scale]
    for graph in (during[0], after):
        weights = {id(w) for w in graph.weights.values()}
        assert all(id(w) in weights for w in expected)
        assert len(graph.input_positions) == 1


def test_a_buffer_changed_after_compile_is_not_seen(tmp_path):
    model = small_net()
    x = torch.randn(2, 8)
    compiled = torch.compile(model, backend="schedc", options={"fallback": False})
    with torch.no_grad():
        before = compiled(x)
        model.scale.mul_(2.0)
        assert torch.equal(compiled(x), before)


def test_execution_defaults_to_replay_on_cuda_only():
    options = BackendOptions()
    assert options.execution_for("cuda") == "graphs" and options.execution_for("llvm-cpu") == "streams"
    assert BackendOptions(execution="streams").execution_for("cuda") == "streams"
    assert options.compile_options("cuda") != options.compile_options("llvm-cpu")  # in the cache key
    with pytest.raises(SchedcError, match="unknown execution 'fast'"):
        BackendOptions(execution="fast").check("cuda")


def test_tf32_follows_torch_s_own_convolutions_on_cuda_only(monkeypatch):
    options = BackendOptions()
    monkeypatch.setattr(torch.backends.cudnn, "allow_tf32", True)  # torch's default
    assert options.compile_options("cuda")["tf32"] is True and options.compile_options("llvm-cpu")["tf32"] is False
    monkeypatch.setattr(torch.backends.cudnn, "allow_tf32", False)
    assert options.compile_options("cuda")["tf32"] is False  # and the cache key changes with it
    assert BackendOptions(tf32=True).compile_options("cuda")["tf32"] is True
    assert BackendOptions(tf32=False).tf32_for("cuda") is False
    monkeypatch.setattr(torch.backends.cudnn, "allow_tf32", True)
    assert BackendOptions(tuning=False).tf32_for("cuda") is False  # IREE's own kernels: no Triton kernel to take them


def test_replayed_graph_results_are_the_callers_own():
    """With replay (static output buffers), a result kept past the next call stays correct."""
    model = small_net()
    compiled = torch.compile(model, backend="schedc", options={"fallback": False, "execution": "graphs"})
    first_input, second_input = torch.randn(2, 8), torch.randn(2, 8)
    with torch.no_grad():
        first = compiled(first_input)
        second = compiled(second_input)
        assert relative_error(first, model(first_input)) <= 1e-4
        assert relative_error(second, model(second_input)) <= 1e-4


@pytest.mark.skipif(not hasattr(torch._dynamo.config, "enable_aot_compile"), reason="torch without dynamo's ahead-of-time compile")
def test_an_ahead_of_time_compiled_model_loads_without_tracing_or_compiling(tmp_path, monkeypatch):
    """torch's experimental ahead-of-time compile saves dynamo's result; the schedc backend's
    part of it is the cached module's path, so loading it compiles nothing."""
    import schedc.compiler.driver
    import schedc.torch.dynamo
    from torch._dynamo.aot_compile import ModelInput

    model, x = small_net(), torch.randn(2, 8)
    options = {"fallback": False, "cache_dir": str(tmp_path / "cache")}
    with torch._dynamo.config.patch(enable_aot_compile=True), torch.no_grad():
        compiled = torch.compile(model, fullgraph=True, backend="schedc", options=options)
        compiled._aot_compile([ModelInput((x,), {}, [torch.no_grad()])])
        saved = compiled._save_aot_compiled_module()
        torch._dynamo.reset()

        def no_compile(*args, **kwargs):
            raise AssertionError("compiled although dynamo's saved result names the module")

        monkeypatch.setattr(schedc.compiler.driver, "compile_with_options", no_compile)
        monkeypatch.setattr(schedc.torch.dynamo, "import_graph", no_compile)
        loaded = torch.compile(model, fullgraph=True, backend="schedc", options=options)
        loaded._load_aot_compiled_module(saved)
        other = torch.randn(2, 8)
        assert relative_error(loaded(other), model(other)) <= 1e-4


def test_uint8_and_f64_graphs_give_eagers_dtypes_and_values():
    """The backend imports through schedc's decompositions and signature, as import_torch does."""

    class Mixed(torch.nn.Module):
        def forward(self, z, x):
            return z.sum(), z.max(dim=1).values, x * 2.0

    z = torch.tensor([[200, 100, 5, 255]], dtype=torch.uint8)
    x = torch.rand(2, 3, dtype=torch.float64)
    compiled = torch.compile(Mixed(), backend="schedc", options={"fallback": False})
    for got, want in zip(compiled(z, x), Mixed()(z, x)):
        assert got.dtype == want.dtype and torch.allclose(got.double(), want.double())


def test_torchs_known_deprecation_warnings_are_not_shown():
    import warnings

    model = torch.nn.Sequential(torch.nn.Linear(4, 4), torch.nn.ReLU())
    compiled = torch.compile(model, backend="schedc", options={"fallback": False})
    with warnings.catch_warnings(record=True) as caught, torch.no_grad():
        warnings.simplefilter("always")
        compiled(torch.rand(2, 4))
    assert not [w for w in caught if "LeafSpec" in str(w.message)]
