"""Text generation through a generation module, on the CPU: greedy tokens equal to Hugging
Face's `generate(do_sample=False)`, prompts in several buckets, the KV cache updated in place,
clear errors for what cannot run."""

from __future__ import annotations

import importlib.util
import re
import subprocess
import sys

import numpy as np
import pytest
import torch

import schedc
from schedc.torch.generation import import_generation
from conftest import ROOT

BUCKETS, MAX_SEQ, NEW = (8, 16), 64, 40

EXAMPLE = ROOT / "examples" / "lm.py"
_spec = importlib.util.spec_from_file_location("schedc_example_lm", EXAMPLE)
_example = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_example)


def tiny_gpt2():
    return _example.tiny_gpt2()[0]


def generation_module(built_once, name: str, model, batches=()):
    """(model, loaded module, its MLIR): the model's generation module for the host CPU,
    imported and compiled once for the whole run (`built_once`), loaded by each worker."""
    def make(folder):
        mlir = import_generation(model, BUCKETS, MAX_SEQ, params=str(folder / "lm.irpa"), batches=batches)
        (folder / "lm.mlir").write_text(mlir)
        (folder / "lm.vmfb").write_bytes(schedc.compile(mlir, target="llvm-cpu"))

    folder = built_once(f"generation-{name}", make)
    return model, schedc.load(str(folder / "lm.vmfb"), params=str(folder / "lm.irpa")), (folder / "lm.mlir").read_text()


@pytest.fixture(scope="session")
def lm(built_once):
    return generation_module(built_once, "gpt2", tiny_gpt2())


def reference(model, prompt, new):
    with torch.no_grad():
        ids = torch.tensor([prompt])
        out = model.generate(ids, max_new_tokens=new, do_sample=False, pad_token_id=0, attention_mask=torch.ones_like(ids))
    return out[0, len(prompt):].tolist()


@pytest.mark.parametrize("length", [3, 8, 13])
def test_greedy_tokens_equal_hugging_faces(lm, length):
    model, module, _ = lm
    prompt = np.random.default_rng(length).integers(1, 500, length).tolist()
    expected = reference(model, prompt, NEW)
    assert len(set(expected)) > 10  # the model does not repeat one token
    assert module.generate(prompt, NEW) == expected
    assert list(module.generate_iter(prompt, 5)) == expected[:5]  # a new prompt starts over


def test_generation_stops_at_the_end_of_sequence_token(lm):
    _, module, _ = lm
    full = module.generate([5, 17, 300], 20)
    stop = full[6]
    assert module.generate([5, 17, 300], 20, eos_token_id=stop) == full[: full.index(stop) + 1]


@pytest.mark.parametrize("prompt, new, message", [
    ([], 5, "the prompt is empty"),
    (list(range(1, 18)), 5, "longer than the largest sequence bucket (16)"),
    ([1, 2, 3], 70, "the module's cache holds 64"),
    ([1, 900], 5, "token id 900 is outside the model's vocabulary"),
    ([[1, 2], [3, 4]], 5, "one sequence"),
    ([1, 2], 0, "max_new_tokens must be a positive integer"),
])
def test_what_cannot_run_is_a_clear_error(lm, prompt, new, message):
    _, module, _ = lm
    with pytest.raises(schedc.SchedcError, match=re.escape(message)):
        module.generate(prompt, new)


def test_the_cache_is_updated_in_place(lm):
    """The decode step's stream-phase IR: the caches are variable resources (IREE packs them
    into one) that the step writes in place: it loads their handle, stores no resource back,
    and copies nothing the size of a layer's cache."""
    _, _, mlir = lm
    stream = schedc.compile(mlir, target="llvm-cpu", emit="stream")
    decode = stream[stream.index("util.func public @decode$async"):]
    decode = decode[: decode.index("\n  }")]
    cache_bytes = 1 * 4 * MAX_SEQ * 16 * 4  # batch, heads, positions, head size, f32
    state_loads = re.findall(r"util\.global\.load (?:immutable )?@__state_\w+ : (\S+)", decode)
    assert "!stream.resource<variable>" in state_loads and set(state_loads) <= {"!stream.resource<variable>", "!stream.timepoint"}
    assert all(kind == "!stream.timepoint" for kind in re.findall(r"util\.global\.store [^:]*: (\S+)", decode))
    copies = [int(n) for n in re.findall(r"stream\.cmd\.copy [^\n]*?, %c(\d+) ", decode)]
    assert all(n < cache_bytes for n in copies), copies


def test_a_prefill_attends_to_its_prompt_alone(lm):
    """A prefill starts a sequence: its scores are bucket x bucket (4 heads), not bucket x the
    cache's 64 positions; the decode step still attends over the whole cache."""
    _, _, mlir = lm
    for bucket in BUCKETS:
        prefill = mlir[mlir.index(f"func.func @prefill_{bucket}("):]
        prefill = prefill[: prefill.index("\n  }")]
        assert f"!torch.vtensor<[1,4,{bucket},{bucket}],f32>" in prefill
        assert f"[1,4,{bucket},{MAX_SEQ}]" not in prefill
    decode = mlir[mlir.index("func.func @decode("):]
    decode = decode[: decode.index("\n  }")]
    assert f"!torch.vtensor<[1,4,1,{MAX_SEQ}],f32>" in decode


def test_a_prefill_layer_writes_its_positions_and_hands_its_own_states_on():
    """prefill_layer on Hugging Face's static cache layers: a full layer writes positions 0..n-1
    and returns the states as given, with masks as long as the prompt; a sliding-window layer
    keeps its own update; turned off, both are the class's own again."""
    from transformers.cache_utils import StaticLayer, StaticSlidingWindowLayer

    from schedc.torch.generation import prefill_layer

    full, sliding = StaticLayer(max_cache_len=16), StaticSlidingWindowLayer(max_cache_len=16, sliding_window=4)
    states = torch.randn(2, 3, 5, 8)
    for layer in (full, sliding):
        layer.lazy_initialization(states, states)
        prefill_layer(layer, True)
    keys, values = full.update(states, states + 1)
    assert keys is states and torch.equal(full.keys[:, :, :5], states) and torch.equal(full.values[:, :, :5], states + 1)
    assert not full.keys[:, :, 5:].any() and full.get_mask_sizes(5) == (5, 0)
    assert "update" not in vars(sliding) and "get_mask_sizes" not in vars(sliding)
    prefill_layer(full, False)
    assert "update" not in vars(full) and full.get_mask_sizes(5) == (16, 0)


def test_cli_import_and_generate(tmp_path, capsys):
    from schedc.tools.schedc import main as schedc_main

    factory = EXAMPLE

    def schedc_cli(*args):
        return subprocess.run([sys.executable, "-m", "schedc.tools.schedc", *map(str, args)], capture_output=True, text=True)

    result = schedc_cli("import", f"{factory}:tiny_gpt2", "--generate", "--seq-buckets=8,16", "--max-seq=64", "--batch-buckets=2",
                        "-o", tmp_path / "lm.mlir")
    assert result.returncode == 0, result.stderr
    assert schedc_cli(tmp_path / "lm.mlir", "-o", tmp_path / "lm.vmfb").returncode == 0
    result = schedc_cli("generate", tmp_path / "lm.vmfb", "--prompt-ids", "5,17,300", "--max-new-tokens", "12")
    assert result.returncode == 0, result.stderr
    assert [int(t) for t in result.stdout.split()] == reference(tiny_gpt2(), [5, 17, 300], 12)
    # two prompts together: one line of tokens each
    result = schedc_cli("generate", tmp_path / "lm.vmfb", "--prompt-ids", "5,17,300", "--prompt-ids", "9", "--max-new-tokens", "6")
    assert result.returncode == 0, result.stderr
    assert [[int(t) for t in line.split()] for line in result.stdout.splitlines()] == hf_batched(tiny_gpt2(), [[5, 17, 300], [9]], 6)
    result = schedc_cli("generate", tmp_path / "lm.vmfb", "--prompt-ids", "5,17,300", "--max-new-tokens", "100")
    assert result.returncode == 1 and "the module's cache holds 64" in result.stderr
    # the import's checks of its options, through the same entry point in this process
    for options, message in ((["--batch-buckets=2,x"], "--batch-buckets=2,x: expected positive integers"),
                             (["--seq-buckets=8,128", "--max-seq=64"], "--seq-buckets must be from 1 to --max-seq")):
        assert schedc_main(["import", f"{factory}:tiny_gpt2", "--generate", *options, "-o", str(tmp_path / "x.mlir")]) == 1
        assert message in capsys.readouterr().err and not (tmp_path / "x.mlir").exists()


def test_an_f16_generation_module_compiles_for_cuda_replayed_with_kernel_configs(tmp_path):
    """Prefill's f16 matmuls take tensor-core configs and the one-row ones (decode's, and the LM
    head on the prompt's last token) matvec configs (IREE's VectorDistribute pipeline, lanes
    along the contiguous dimension); the cache updates take one update per thread; IREE
    compiles every one for cuda (kernel-config's f16 configs once failed its code generation
    on GPT-2 small: unrealized_conversion_cast)."""
    from schedc.compiler.driver import _half_generation, compile_with_options
    from schedc.options import CompileOptions
    from schedc.targets import GENERATION_FUSION

    model = tiny_gpt2().half()
    mlir = import_generation(model, BUCKETS[:1], MAX_SEQ, params=str(tmp_path / "lm.irpa"))  # one prefill bucket: compile time
    (tmp_path / "lm.mlir").write_text(mlir)
    (tmp_path / "plain.mlir").write_text("func.func @f(%x: tensor<2xf16>) -> tensor<2xf16> {\n  return %x : tensor<2xf16>\n}\n")
    # an f16 generation module: on cuda, IREE's aggressive fusion (targets.GENERATION_FUSION)
    assert _half_generation(tmp_path / "lm.mlir") and not _half_generation(tmp_path / "plain.mlir")
    result = compile_with_options(mlir, CompileOptions(target="cuda", execution="graphs"))
    assert result.output[:2] == b"PK" and b"module.fb" in result.output[:64]  # a .vmfb
    assert result.records["input"]["module"]["iree_flags"] == list(GENERATION_FUSION)
    kernels = result.records["kernel-config"]["module"]["kernels"]
    # (with aggressive fusion each product is a generic, IREE's `matmul_like`/`matvec_like`)
    products = [k for k in kernels if k["kind"] in ("matmul", "batch_matmul", "matmul_like")]
    # prefill's LM head runs on the last prompt token alone (a matvec, IREE's own at this vocabulary)
    prefill = [k for k in products if k["dispatch"].startswith("prefill") and "matvec" not in k["dispatch"]]
    # decode's projections (one row: N x K); the attention's per-head products stay IREE's
    decode = [k for k in products if k["dispatch"].startswith("decode") and k["signature"].split()[-2].count("x") == 1]
    assert prefill and all(k["source"] == "heuristic" and "NV_MMA_SYNC" in k["config"] for k in prefill), prefill
    assert decode and all(k["source"] == "heuristic" and k["config"].startswith("vector ") for k in decode), decode
    scatters = [k for k in kernels if k["kind"] == "scatter"]
    assert scatters and all(k["source"] == "heuristic" and k["config"].endswith("th 1") for k in scatters if k["dispatch"].startswith("decode"))


def test_replayed_buckets_share_one_pool_and_generate_hugging_faces_tokens(tmp_path):
    """Replayed (--execution=graphs, on the CPU as on the GPU), the prefill buckets and the
    decode step keep their transients in one shared pool, the largest function's, and the
    tokens stay Hugging Face's with prompts of either bucket in turn."""
    from schedc.compiler.driver import compile_with_options
    from schedc.options import CompileOptions

    model = tiny_gpt2()
    mlir = import_generation(model, BUCKETS, MAX_SEQ, params=str(tmp_path / "lm.irpa"))
    result = compile_with_options(mlir, CompileOptions(target="llvm-cpu", execution="graphs"))
    pool = result.records["static-replay-pool"]["module"]
    shared = [n for n in pool["functions"].values() if n]
    assert len(shared) == len(BUCKETS) + 1  # every prefill bucket and the decode step
    assert max(shared) <= pool["pool_bytes"] < max(shared) + 4096
    assert pool["static_bytes"] == pool["static_bytes_unshared"] - sum(shared) + pool["pool_bytes"]
    # Each step's token ids and positions live in host memory the device reads and writes
    # (static-replay's host buffers): a prefill's ids, positions, last index and next token; the
    # decode step's token, position and next token (its `last` argument binds nothing).
    host = {name: r["host_buffers"] for name, r in result.records["static-replay"].items()}
    assert host == {"prefill_8$async": 4, "prefill_16$async": 4, "decode$async": 3}
    module = schedc.load(result.output, params=str(tmp_path / "lm.irpa"))
    for length in (13, 3, 13):  # 16, then 8, then 16 again: each overwrites the other's transients
        prompt = np.random.default_rng(length).integers(1, 500, length).tolist()
        assert module.generate(prompt, 12) == reference(model, prompt, 12)
    # ... which the runtime writes and reads where they are: no pinned buffer of its own for them.
    assert not {("in", 0), ("in", 1), ("out", 0)} & set(module["decode"]._staging._slots)
    # static-replay{host-buffers=false} keeps them in device memory, copied in and out.
    off = compile_with_options(mlir, CompileOptions(target="llvm-cpu", execution="graphs",
                                                    passes="memory-order,arena-plan,static-replay{host-buffers=false}"))
    assert {r["host_buffers"] for r in off.records["static-replay"].values()} == {0}


def hf_batched(model, prompts, new):
    """Hugging Face's batched greedy `generate`: the prompts padded on the left, masked there."""
    length = max(len(p) for p in prompts)
    ids = torch.zeros(len(prompts), length, dtype=torch.long)
    mask = torch.zeros_like(ids)
    for i, prompt in enumerate(prompts):
        ids[i, length - len(prompt):] = torch.tensor(prompt)
        mask[i, length - len(prompt):] = 1
    with torch.no_grad():
        out = model.generate(ids, attention_mask=mask, max_new_tokens=new, do_sample=False, pad_token_id=0)
    return out[:, length:].tolist()


def tiny_llama():
    from transformers import LlamaConfig, LlamaForCausalLM

    torch.manual_seed(0)
    config = LlamaConfig(hidden_size=64, intermediate_size=128, num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2,
                         vocab_size=500, max_position_embeddings=256, attn_implementation="eager", initializer_range=0.3)
    return LlamaForCausalLM(config).eval()


@pytest.fixture(scope="session")
def batched_gpt2(built_once):
    return generation_module(built_once, "gpt2-x4", tiny_gpt2(), batches=(4,))


@pytest.fixture(scope="session")
def batched_llama(built_once):
    return generation_module(built_once, "llama-x4", tiny_llama(), batches=(4,))


# Session-scoped fixtures, one per model: a parametrized one was set up again each time
# pytest-xdist's scheduling brought the other parameter's tests in between, and a module-scoped
# one each time a worker's next test came from another file.
@pytest.fixture(params=["gpt2", "llama"])
def batched_lm(request):
    return request.getfixturevalue(f"batched_{request.param}")


def test_batched_prompts_give_hugging_faces_batched_tokens(batched_lm):
    """Three prompts of 3, 10 and 1 tokens in the batch bucket of 4 (GPT-2's learned positions,
    Llama's rotary ones): each row's tokens are those of Hugging Face's batched generate, and
    those of the prompt generated alone."""
    model, module, _ = batched_lm
    prompts = [np.random.default_rng(n).integers(1, 500, n).tolist() for n in (3, 10, 1)]
    rows = module.generate_batch(prompts, NEW)
    assert rows == hf_batched(model, prompts, NEW)
    assert rows == [module.generate(p, NEW) for p in prompts]
    assert all(len(set(row)) > 5 for row in rows)


def test_a_batched_row_stops_at_its_end_of_sequence_token_and_the_others_go_on(batched_lm):
    _, module, _ = batched_lm
    prompts = [[5, 17, 300], [7, 8]]
    full = module.generate_batch(prompts, 20)
    stop = full[0][4]
    rows = module.generate_batch(prompts, 20, eos_token_id=stop)
    for row, whole in zip(rows, full):
        assert row == (whole[: whole.index(stop) + 1] if stop in whole else whole)


@pytest.mark.parametrize("prompts, message", [
    ([[1, 2]] * 5, "5 prompts at once: the module's batch buckets are [1, 4]"),
    ([[1, 2], list(range(1, 18))], "longer than the largest sequence bucket (16)"),
    ([1, 2, 3], "a list of prompts, each a list of token ids"),
])
def test_what_cannot_run_batched_is_a_clear_error(batched_lm, prompts, message):
    _, module, _ = batched_lm
    with pytest.raises(schedc.SchedcError, match=re.escape(message)):
        module.generate_batch(prompts, 5)


def test_each_batch_bucket_updates_its_cache_in_place(batched_lm):
    """decode_x4's stream-phase IR, as the batch-1 step's: the caches are loaded as variable
    resources and nothing the size of a layer's cache is copied."""
    _, _, mlir = batched_lm
    stream = schedc.compile(mlir, target="llvm-cpu", emit="stream")
    decode = stream[stream.index("util.func public @decode_x4$async"):]
    decode = decode[: decode.index("\n  }")]
    cache_bytes = 4 * 2 * MAX_SEQ * 16 * 4  # batch, heads (Llama's 2 key-value heads), positions, head size, f32
    assert "!stream.resource<variable>" in re.findall(r"util\.global\.load (?:immutable )?@__state_\w+ : (\S+)", decode)
    assert all(kind == "!stream.timepoint" for kind in re.findall(r"util\.global\.store [^:]*: (\S+)", decode))
    copies = [int(n) for n in re.findall(r"stream\.cmd\.copy [^\n]*?, %c(\d+) ", decode)]
    assert all(n < cache_bytes for n in copies), copies
