"""Text generation through a generation module (schedc import --generate) against Hugging Face.

    python bench/generate.py prepare DIR [--dtype f16] [--no-tuning] [--model llama] [--iree-flag F]   (here: imports and compiles, no GPU)
    python bench/generate.py run DIR [--dtype f16] [--graphs]          (on the GPU machine: runtime, torch, transformers)
    python bench/generate.py profile DIR [--dtype f16] [--prefill]     (on the GPU machine, with ncu: the decode step's kernels, or the prompt's)
    python bench/generate.py memory DIR [--dtype f16]                  (on the GPU machine: device memory after each bucket)
    python bench/generate.py batch DIR [--dtype f16] --batch 4 [--graphs]   (on the GPU machine, after prepare --batch-buckets 4)

Every step takes `--model`: `gpt2` (the default) or `llama`, a Llama architecture of GPT-2
small's size (grouped-query attention, 12 query and 4 key-value heads).

`prepare` imports GPT-2 small's architecture (GPT2Config's defaults, 124M parameters, random
weights from seed 0), in f32 or f16, as a generation module (prefill buckets 32, 64, 128; a 512-position
cache; weights in an archive, not in the module) and compiles it for cuda twice: IREE's stream
execution, and replay (--execution=graphs). `run` writes the archive there from seed 0
(`schedc params save`), generates 256 tokens after a 100-token prompt with each module, and
times the same with Hugging Face: `generate(do_sample=False)` with its static cache, eager.
(HF's generate with a forward under `torch.compile(mode="reduce-overhead")` failed on the H200
machine's torch 2.11: its CUDA graphs overwrote the static cache's length tensor.) It prints the prefill time, the decode time per
token (median), tokens/s, and how many greedy tokens agree with HF's (f16:
a near tie can flip a token, and the rest follows from it). `memory` prints the replayed
module's device memory after loading and after each bucket has run. `run --reduce-overhead` also
times each bucket's prefill against HF's forward under reduce-overhead at the same length (where
that crashes, under reduce-overhead with no cache at all, a forward that writes no cache; then
under Inductor's default mode: each says so).

`prepare --batch-buckets 4` also compiles decode and prefill for 4 prompts at once; `batch
--batch 4` then generates NEW tokens after 4 prompts of 100, 90, 80 and 70 tokens together
(`generate_batch`), one after another (`generate`), and with Hugging Face's batched static-cache
`generate` (eager, the prompts padded on the left), and prints each one's tokens/s and how many
of each row's greedy tokens agree with HF's.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from layers import split_by_marker
from timing import marked_calls, ncu_kernel_times

BUCKETS, MAX_SEQ, PROMPT, NEW = (32, 64, 128), 512, 100, 256


def gpt2_small_lm():
    """GPT-2 small's architecture with a language-model head, random weights from seed 0."""
    import torch
    from transformers import GPT2Config, GPT2LMHeadModel

    torch.manual_seed(0)
    model = GPT2LMHeadModel(GPT2Config(attn_implementation="eager")).eval()
    return model, torch.zeros(1, 8, dtype=torch.long)


def llama_lm():
    """A Llama-architecture decoder of GPT-2 small's size (12 layers, width 768, 12 query and 4
    key-value heads, 32,000 tokens: 125M parameters), random weights from seed 0."""
    import torch
    from transformers import LlamaConfig, LlamaForCausalLM

    torch.manual_seed(0)
    config = LlamaConfig(hidden_size=768, intermediate_size=2048, num_hidden_layers=12, num_attention_heads=12, num_key_value_heads=4,
                         vocab_size=32000, max_position_embeddings=1024, attn_implementation="eager")
    return LlamaForCausalLM(config).eval(), torch.zeros(1, 8, dtype=torch.long)


# --model: the factory of each generation model (held out: never tuned on).
MODELS = {"gpt2": gpt2_small_lm, "llama": llama_lm}
VOCAB = {"gpt2": 50257, "llama": 32000}


def prompt_ids(name: str) -> list[int]:
    """The 100-token prompt: seeded ids of the model's vocabulary."""
    import numpy as np

    return np.random.default_rng(1).integers(0, VOCAB[name], PROMPT).tolist()


def prepare(folder: Path, dtype: str, tuning: bool, name: str, iree_flags: list[str] = (), passes: str | None = None,
            batches: str = "1", target: str = "cuda") -> None:
    folder.mkdir(parents=True, exist_ok=True)
    schedc = [sys.executable, "-m", "schedc.tools.schedc"]
    mlir, archive = folder / f"{name}.{dtype}.mlir", folder / f"{name}.{dtype}.irpa"
    started = time.perf_counter()
    subprocess.run([*schedc, "import", f"{__file__}:{MODELS[name].__name__}", "--generate", f"--dtype={dtype}",
                    f"--seq-buckets={','.join(map(str, BUCKETS))}", f"--max-seq={MAX_SEQ}", f"--batch-buckets={batches}",
                    f"--params={archive}", "-o", str(mlir)], check=True)
    print(f"imported in {time.perf_counter() - started:.0f} s", flush=True)
    archive.unlink()  # the GPU machine writes its own, from the seed
    for execution in ("streams", "graphs") if target == "cuda" else ("streams",):
        started = time.perf_counter()
        subprocess.run([*schedc, str(mlir), f"--target={target}", f"--execution={execution}", *([] if tuning else ["--no-tuning"]),
                        *(f"--iree-flag={flag}" for flag in iree_flags), *([f"--passes={passes}"] if passes else []),
                        "-o", str(folder / f"{name}.{dtype}.{execution}.vmfb")], check=True)
        print(f"compiled {execution} in {time.perf_counter() - started:.0f} s", flush=True)
    mlir.unlink()


def batch_run(folder: Path, dtype: str, execution: str, name: str, batch: int, device: str = "cuda") -> None:
    import numpy as np
    import torch

    on = "cuda" if device == "cuda" else "cpu"  # where torch runs the reference
    sync = torch.cuda.synchronize if on == "cuda" else (lambda: None)
    import schedc

    archive = seed_archive(folder, dtype, name)
    rng = np.random.default_rng(1)
    prompts = [rng.integers(0, VOCAB[name], PROMPT - 10 * i).tolist() for i in range(batch)]
    module = schedc.load(str(folder / f"{name}.{dtype}.{execution}.vmfb"), device=device, params=str(archive))
    rows = module.generate_batch(prompts, NEW)  # warm-up
    started = time.perf_counter()
    rows = module.generate_batch(prompts, NEW)
    together = time.perf_counter() - started
    module.generate(prompts[0], NEW)  # warm-up
    started = time.perf_counter()
    for prompt in prompts:
        module.generate(prompt, NEW)
    apart = time.perf_counter() - started
    model, _ = MODELS[name]()
    model = (model.half() if dtype == "f16" else model).to(on)
    length = max(len(p) for p in prompts)
    ids = torch.zeros(batch, length, dtype=torch.long)
    mask = torch.zeros_like(ids)
    for i, prompt in enumerate(prompts):
        ids[i, length - len(prompt):], mask[i, length - len(prompt):] = torch.tensor(prompt), 1
    ids, mask = ids.to(on), mask.to(on)
    with torch.no_grad():
        for _ in range(2):  # a warm-up, then the measured one
            sync()
            started = time.perf_counter()
            out = model.generate(ids, attention_mask=mask, max_new_tokens=NEW, min_new_tokens=NEW, do_sample=False,
                                 cache_implementation="static", pad_token_id=0)
            sync()
            hf = time.perf_counter() - started
    reference = out[:, length:].tolist()
    tokens = batch * NEW
    print(f"schedc {dtype} {execution} on {device}, {batch} prompts of {', '.join(str(len(p)) for p in prompts)} tokens, {NEW} new each: "
          f"together {together * 1e3:.0f} ms ({tokens / together:.0f} tokens/s), one after another {apart * 1e3:.0f} ms "
          f"({tokens / apart:.0f} tokens/s, {apart / together:.2f}x the time)")
    print(f"HF batched generate, static cache, eager: {hf * 1e3:.0f} ms ({tokens / hf:.0f} tokens/s); schedc together / HF {together / hf:.3f}")
    print("greedy tokens equal to HF's batched ones: " + "; ".join(agreement(r, e) for r, e in zip(rows, reference)))


def seed_archive(folder: Path, dtype: str, name: str) -> Path:
    """The modules' weights from seed 0, written on this machine the first time."""
    archive = folder / f"{name}.{dtype}.seed0.irpa"
    if not archive.exists():
        subprocess.run([sys.executable, "-m", "schedc.tools.schedc", "params", "save", f"{__file__}:{MODELS[name].__name__}", "--seed", "0",
                        "--dtype", dtype, "-o", str(archive)], check=True)
    return archive


def run(folder: Path, dtype: str, execution: str, name: str) -> None:
    import schedc

    archive = seed_archive(folder, dtype, name)
    prompt = prompt_ids(name)
    module = schedc.load(str(folder / f"{name}.{dtype}.{execution}.vmfb"), device="cuda", params=str(archive))
    times = []
    for _ in range(3):
        tokens, prefill, decode = timed(module.generate_iter(prompt, NEW))
        times.append((prefill, decode))
    prefill, decode = min(times)
    print(f"schedc {dtype} {execution}: prefill {prefill:.2f} ms, decode {decode:.3f} ms/token (median), {1e3 / decode:.0f} tokens/s", flush=True)
    model, _ = MODELS[name]()
    model = (model.half() if dtype == "f16" else model).cuda()
    reference, hf = hf_generate(model, prompt)
    print(f"HF eager, static cache: prefill {hf['prefill']:.2f} ms, decode {hf['decode']:.3f} ms/token, {1e3 / hf['decode']:.0f} tokens/s")
    print(f"greedy tokens equal to HF's: {agreement(tokens, reference)}; schedc/HF decode time {decode / hf['decode']:.3f}")
    if "--reduce-overhead" in sys.argv:
        compiled_tokens, ro = hf_reduce_overhead(model, prompt)
        print(f"HF static cache, decode under torch.compile(mode='reduce-overhead'): {ro:.3f} ms/token; "
              f"schedc/reduce-overhead {decode / ro:.3f}; its tokens equal to HF eager's: {agreement(compiled_tokens, reference)}")
        ours = schedc_prefill_times(module, name)
        # reduce-overhead's prefill, else (it crashed on the H200 machine's torch: a segmentation
        # fault recording the first prefill graph) Inductor's default mode, without CUDA graphs
        for mode in PREFILL_MODES:
            done = subprocess.run([sys.executable, __file__, "prefill-reference", str(folder), "--dtype", dtype, "--model", name,
                                   "--prefill-mode", mode], capture_output=True, text=True)
            if not done.returncode:
                break
            print(f"{mode}'s prefill failed in its own process (exit {done.returncode}): {done.stderr.strip()[-300:]}", flush=True)
        theirs = {} if done.returncode else {int(k): v for k, v in json.loads(done.stdout.strip().splitlines()[-1]).items()}
        for length, time_ms in ours.items():
            reference = f"{mode} {theirs[length]:.3f} ms, schedc/{mode} {time_ms / theirs[length]:.3f}" if length in theirs else "no reference"
            print(f"prefill of {length} tokens (bucket {bucket_of(length)}): schedc {time_ms:.3f} ms, {reference} (medians of {PREFILLS})", flush=True)


PREFILLS = 7
# The prefill references, in the order tried: reduce-overhead over HF's static cache, then over no
# cache at all (`use_cache=False`: the prompt's forward without writing a cache, less work than a
# prefill; a time the reference's prefill cannot beat), then Inductor's default mode over the
# static cache. Over the static cache both modes failed on the GPU machines' torch 2.11
# (twenty-sixth session: a segmentation fault in CUDA-graph trees at the cache's
# `cumulative_length.add_`, and a CUDA error under the default mode).
PREFILL_MODES = ("reduce-overhead", "reduce-overhead-no-cache", "default")


def bucket_of(length: int) -> int:
    return next(b for b in BUCKETS if b >= length)


def prefill_lengths() -> list[int]:
    return sorted({*BUCKETS, PROMPT})


def prefill_prompt(name: str, length: int) -> list[int]:
    import numpy as np

    return np.random.default_rng(2).integers(0, VOCAB[name], BUCKETS[-1]).tolist()[:length]


def schedc_prefill_times(module, name: str) -> dict[int, float]:
    """Per prompt length (each bucket full, and the bench's 100-token prompt): the median time to
    the first token of schedc's prefill (its bucket's function, then the token read back), of
    PREFILLS calls after three warm-up calls."""
    times = {}
    for length in prefill_lengths():
        prompt, ours = prefill_prompt(name, length), []
        for _ in range(3 + PREFILLS):
            started = time.perf_counter()
            next(module.generate_iter(prompt, 1))
            ours.append((time.perf_counter() - started) * 1e3)
        times[length] = statistics.median(ours[3:])
    return times


def reference_prefill_times(dtype: str, name: str, mode: str = "reduce-overhead") -> None:
    """HF's forward over a static cache under torch.compile(mode=`mode`), one graph per length
    (dynamic=False), the next token's argmax read back; medians of PREFILLS calls after three
    warm-up calls, as JSON on the last line. In a process of its own, apart from schedc's module
    and the decode step's graphs. (Under reduce-overhead, the H200 machine's torch crashed both
    there and alone: a segmentation fault while its CUDA-graph trees recorded the first prefill;
    `run` then takes the next of PREFILL_MODES.)"""
    import torch
    from transformers import StaticCache

    model, _ = MODELS[name]()
    model = (model.half() if dtype == "f16" else model).cuda()
    cached = not mode.endswith("-no-cache")
    step = torch.compile(model.forward, mode=None if mode == "default" else mode.removesuffix("-no-cache"), fullgraph=True, dynamic=False)
    cache = StaticCache(config=model.config, max_cache_len=MAX_SEQ)
    times = {}
    with torch.no_grad():
        for length in prefill_lengths():
            tensor = torch.tensor([prefill_prompt(name, length)], device="cuda")
            position, theirs = torch.arange(length, device="cuda"), []
            for _ in range(3 + PREFILLS):
                started = time.perf_counter()
                if mode.startswith("reduce-overhead"):
                    torch.compiler.cudagraph_mark_step_begin()
                if cached:
                    logits = step(tensor, past_key_values=cache, use_cache=True, cache_position=position).logits
                else:
                    logits = step(tensor, use_cache=False).logits
                int(logits[:, -1:].argmax(-1))
                theirs.append((time.perf_counter() - started) * 1e3)
            times[length] = statistics.median(theirs[3:])
    print(json.dumps(times))


PROFILED_STEPS = 4


def profile(folder: Path, dtype: str, name: str, reference: bool = True) -> None:
    """The replayed decode step's kernels (Nsight Compute) against its wall time, and the same for
    HF's decode step under reduce-overhead (unless not `reference`): what a step costs beyond its
    kernels. Three processes: the wall times without a profiler, then each one's marked steps
    under ncu (HF's with profiling started only around its steps: its compile and warm-up launch
    thousands of kernels). ncu keeps the caches warm (`--cache-control none`), as they are from
    one step's kernel to the next: flushed, the kernels of GPT-2 small's step summed past its
    wall time (827.0 us against 810.5)."""
    walls = folder / f"decode.{name}.{dtype}.walls.json"
    subprocess.run([sys.executable, __file__, "profiled", str(folder), "--dtype", dtype, "--who", "walls", "--model", name,
                    *(() if reference else ("--no-reference",))], check=True)
    walls = json.loads(walls.read_text())
    print(f"{dtype} decode step, ms (median of {NEW - 1}, no profiler): {json.dumps(walls)}", flush=True)
    for who, extra in (("schedc", []), ("reduce-overhead", ["--profile-from-start", "off"]))[:2 if reference else 1]:
        log = folder / f"decode.{name}.{dtype}.{who}.ncu.csv"
        command = ["ncu", "--clock-control", "none", "--cache-control", "none", "--metrics", "gpu__time_duration.sum", "--csv", *extra, "--log-file", str(log),
                   sys.executable, __file__, "profiled", str(folder), "--dtype", dtype, "--who", who, "--model", name]
        done = subprocess.run(command, check=False, capture_output=True, text=True)
        if done.returncode:
            ncu_log = log.read_text()[-3000:] if log.exists() else ""
            sys.exit(f"{who}'s profiled run failed under ncu:\n{done.stdout[-2000:]}\n{done.stderr[-3000:]}\n{ncu_log}")
        steps = split_by_marker(ncu_kernel_times(log.read_text()))
        if len(steps) != PROFILED_STEPS:
            sys.exit(f"ncu listed {len(steps)} marked steps of {who}, not {PROFILED_STEPS}: see {log}")
        kernel_us = statistics.median(sum(us for _, us in step) for step in steps)
        wall_us = walls[who] * 1e3
        print(f"{dtype} {who}: {len(steps[0])} kernels per decode step, {kernel_us:.1f} us of kernels (median of {PROFILED_STEPS} "
              f"steps); {wall_us:.1f} us per step (median of {NEW - 1}, no profiler); {wall_us - kernel_us:.1f} us beyond the kernels",
              flush=True)
        by_name: dict[str, list[float]] = {}
        for kernel, us in steps[len(steps) // 2]:
            by_name.setdefault(kernel[:100], []).append(us)
        for kernel, times in sorted(by_name.items(), key=lambda item: -sum(item[1]))[:20]:
            print(f"    {sum(times):8.1f} us  x{len(times):<3} {kernel}")


def profile_prefill(folder: Path, dtype: str, name: str, reference: bool = True) -> None:
    """The kernels of the bench prompt's prefill (PROMPT tokens, in its bucket) under Nsight
    Compute, with warm caches as in `profile`: schedc's stream module (its kernels are the
    replayed one's) and, unless not `reference`, HF's forward of the same tokens under
    reduce-overhead without a cache (the prefill reference `run` falls back to)."""
    for who in ("schedc-prefill", "reduce-overhead-prefill")[:2 if reference else 1]:
        log = folder / f"prefill.{name}.{dtype}.{who}.ncu.csv"
        extra = ["--profile-from-start", "off"] if who.startswith("reduce-overhead") else []
        command = ["ncu", "--clock-control", "none", "--cache-control", "none", "--metrics", "gpu__time_duration.sum", "--csv", *extra, "--log-file", str(log),
                   sys.executable, __file__, "profiled", str(folder), "--dtype", dtype, "--who", who, "--model", name]
        done = subprocess.run(command, check=False, capture_output=True, text=True)
        steps = split_by_marker(ncu_kernel_times(log.read_text())) if log.exists() else []
        if done.returncode or len(steps) != PROFILED_STEPS:
            print(f"{who}: failed under ncu ({len(steps)} marked prefills): {(done.stderr.strip().splitlines() or ['?'])[-1][:300]}", flush=True)
            continue
        kernel_us = statistics.median(sum(us for _, us in step) for step in steps)
        print(f"{dtype} {who}, {PROMPT} tokens (bucket {bucket_of(PROMPT)}): {len(steps[0])} kernels, {kernel_us:.1f} us of kernels "
              f"(median of {PROFILED_STEPS})", flush=True)
        by_name: dict[str, list[float]] = {}
        for kernel, us in steps[len(steps) // 2]:
            by_name.setdefault(kernel[:100], []).append(us)
        for kernel, times in sorted(by_name.items(), key=lambda item: -sum(item[1]))[:20]:
            print(f"    {sum(times):8.1f} us  x{len(times):<3} {kernel}")


def profiled_prefill(folder: Path, dtype: str, who: str, name: str) -> None:
    """One process of `profile_prefill`: warm prefills, then PROFILED_STEPS of them, a marker
    kernel before each."""
    import torch

    prompt = prefill_prompt(name, PROMPT)
    if who == "schedc-prefill":
        import schedc

        module = schedc.load(str(folder / f"{name}.{dtype}.streams.vmfb"), device="cuda", params=str(seed_archive(folder, dtype, name)))

        def call():
            next(module.generate_iter(prompt, 1))
    else:
        model, _ = MODELS[name]()
        model = (model.half() if dtype == "f16" else model).cuda()
        step = torch.compile(model.forward, mode="reduce-overhead", fullgraph=True, dynamic=False)
        tensor = torch.tensor([prompt], device="cuda")

        def call():
            torch.compiler.cudagraph_mark_step_begin()
            int(step(tensor, use_cache=False).logits[:, -1:].argmax(-1))
    with torch.no_grad():
        marked_calls(call, PROFILED_STEPS)


def profiled(folder: Path, dtype: str, who: str, name: str, reference: bool = True) -> None:
    """One process of `profile`: `walls` times full generations; `schedc` and `reduce-overhead`
    run PROFILED_STEPS decode steps, a marker kernel before each."""
    if who.endswith("-prefill"):
        return profiled_prefill(folder, dtype, who, name)
    import schedc
    import torch

    prompt = prompt_ids(name)
    walls = {}
    if who in ("walls", "schedc"):
        archive = seed_archive(folder, dtype, name)
        # Under ncu, the stream module: its kernels are the replayed one's (ncu failed with a
        # segmentation fault on IREE's graph launches on the H200 machine).
        execution = "graphs" if who == "walls" else "streams"
        module = schedc.load(str(folder / f"{name}.{dtype}.{execution}.vmfb"), device="cuda", params=str(archive))
        if who == "walls":
            walls["schedc"] = min(timed(module.generate_iter(prompt, NEW))[2] for _ in range(3))
        else:
            tokens = module.generate_iter(prompt, PROFILED_STEPS + 1)
            next(tokens)
            for _ in range(PROFILED_STEPS):
                torch.cuda._sleep(1000)
                torch.cuda.synchronize()
                next(tokens)
            return
    if not reference:
        (folder / f"decode.{name}.{dtype}.walls.json").write_text(json.dumps(walls))
        return
    model, _ = MODELS[name]()
    model = (model.half() if dtype == "f16" else model).cuda()
    _, walls["reduce-overhead"] = hf_reduce_overhead(model, prompt, marked_steps=PROFILED_STEPS if who != "walls" else 0)
    if who == "walls":
        (folder / f"decode.{name}.{dtype}.walls.json").write_text(json.dumps(walls))


def memory(folder: Path, dtype: str, name: str) -> None:
    """The replayed module's device memory beyond torch's context (the driver's free memory)
    and IREE's allocator statistics: after loading (weights, cache, static buffers), then
    after each prefill bucket and decode steps have run (a bucket's first call records its
    graph)."""
    import schedc
    import torch

    torch.zeros(1, device="cuda")
    free = torch.cuda.mem_get_info()[0]

    def used() -> str:
        torch.cuda.synchronize()
        return f"{(free - torch.cuda.mem_get_info()[0]) / 2**20:.1f} MiB"

    archive = seed_archive(folder, dtype, name)
    module = schedc.load(str(folder / f"{name}.{dtype}.graphs.vmfb"), device="cuda", params=str(archive))
    print(f"loaded: {used()}; {module.allocator_statistics()}", flush=True)
    for bucket in BUCKETS:
        list(module.generate_iter(prompt_ids(name)[:bucket], 3))
        print(f"after prefill_{bucket} and decode: {used()}; {module.allocator_statistics()}", flush=True)


def timed(tokens):
    """(tokens, first token's ms, median ms between the later ones) of a token iterator."""
    stamps, out = [time.perf_counter()], []
    for token in tokens:
        out.append(token)
        stamps.append(time.perf_counter())
    gaps = [(b - a) * 1e3 for a, b in zip(stamps[1:], stamps[2:])]
    return out, (stamps[1] - stamps[0]) * 1e3, statistics.median(gaps)


def hf_generate(model, prompt):
    """HF generate with its static cache, eager (a warm-up call, then the measured one)."""
    import torch

    ids = torch.tensor([prompt], device="cuda")
    streamer = Stamps()
    with torch.no_grad():
        for _ in range(2):
            streamer.reset()
            out = model.generate(ids, max_new_tokens=NEW, min_new_tokens=NEW, do_sample=False, cache_implementation="static",
                                 pad_token_id=0, attention_mask=torch.ones_like(ids), streamer=streamer)
    stamps = streamer.stamps
    gaps = [(b - a) * 1e3 for a, b in zip(stamps[2:], stamps[3:])]
    tokens = out[0, len(prompt):].tolist()
    return tokens, {"prefill": (stamps[1] - stamps[0]) * 1e3, "decode": statistics.median(gaps)}


def hf_reduce_overhead(model, prompt, marked_steps: int = 0):
    """HF's model on its StaticCache, the decode step under torch.compile(mode="reduce-overhead")
    (CUDA graphs), called step by step as HF's own static-cache recipe does; the median ms
    per decode step after two warm-up generations. Then `marked_steps` more steps, each after a
    marker kernel, for ncu."""
    import torch
    from transformers import StaticCache

    step = torch.compile(model.forward, mode="reduce-overhead", fullgraph=True)
    ids = torch.tensor([prompt], device="cuda")
    result = None
    with torch.no_grad():
        for _ in range(3):
            cache = StaticCache(config=model.config, max_cache_len=MAX_SEQ)
            logits = model(ids, past_key_values=cache, use_cache=True, cache_position=torch.arange(len(prompt), device="cuda")).logits
            token = logits[:, -1:].argmax(-1)
            tokens, stamps = [int(token)], [time.perf_counter()]
            for i in range(NEW - 1):
                torch.compiler.cudagraph_mark_step_begin()
                position = torch.tensor([len(prompt) + i], device="cuda")
                logits = step(token, past_key_values=cache, use_cache=True, cache_position=position).logits
                token = logits[:, -1:].argmax(-1).clone()
                tokens.append(int(token))
                stamps.append(time.perf_counter())
            result = (tokens, statistics.median((b - a) * 1e3 for a, b in zip(stamps, stamps[1:])))
        if marked_steps:
            torch.cuda.profiler.start()
        for i in range(marked_steps):
            torch.cuda._sleep(1000)
            torch.cuda.synchronize()
            torch.compiler.cudagraph_mark_step_begin()
            logits = step(token, past_key_values=cache, use_cache=True, cache_position=torch.tensor([len(prompt) + i], device="cuda")).logits
            token = logits[:, -1:].argmax(-1).clone()
            torch.cuda.synchronize()
        if marked_steps:
            torch.cuda.profiler.stop()
    return result


class Stamps:
    """A generate() streamer that notes when each token arrives (its first call is the prompt)."""

    def __init__(self):
        self.reset()

    def reset(self):
        self.stamps = []

    def put(self, value):
        import torch

        torch.cuda.synchronize()
        self.stamps.append(time.perf_counter())

    def end(self):
        pass


def agreement(tokens, reference) -> str:
    same = next((i for i, (a, b) in enumerate(zip(tokens, reference)) if a != b), min(len(tokens), len(reference)))
    return f"first {same} of {len(reference)}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("step", choices=("prepare", "run", "profile", "profiled", "memory", "prefill-reference", "batch"))
    parser.add_argument("folder")
    parser.add_argument("--dtype", default="f32", choices=("f32", "f16"))
    parser.add_argument("--no-tuning", action="store_true", help="prepare: IREE's own kernel configs")
    parser.add_argument("--iree-flag", action="append", default=[], help="prepare: a flag for iree-compile (repeatable), e.g. --iree-opt-level=O2")
    parser.add_argument("--passes", help="prepare: schedc's pass pipeline instead of the default, e.g. 'mma-operands{swap=false},memory-order,arena-plan'")
    parser.add_argument("--batch-buckets", default="1", help="prepare: the batch buckets (schedc import --batch-buckets)")
    parser.add_argument("--batch", type=int, default=4, help="batch: the prompts generated together")
    parser.add_argument("--device", default="cuda", help="batch: the IREE device (cuda; local-task for a module prepared with --target llvm-cpu)")
    parser.add_argument("--target", default="cuda", help="prepare: the compile target (cuda, llvm-cpu)")
    parser.add_argument("--graphs", action="store_true", help="run: the replayed module (a process runs one CUDA mode)")
    parser.add_argument("--reduce-overhead", action="store_true", help="run: also HF's decode step under torch.compile(mode='reduce-overhead')")
    parser.add_argument("--no-reference", action="store_true", help="profile: schedc's step alone, not HF's under reduce-overhead")
    parser.add_argument("--prefill", action="store_true", help="profile: the prompt's prefill, not the decode step")
    parser.add_argument("--model", default="gpt2", choices=sorted(MODELS), help="gpt2: GPT-2 small; llama: a Llama of its size")
    parser.add_argument("--prefill-mode", default="reduce-overhead", choices=PREFILL_MODES, help=argparse.SUPPRESS)
    parser.add_argument("--who", default="walls", choices=("walls", "schedc", "reduce-overhead", "schedc-prefill", "reduce-overhead-prefill"),
                        help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.step == "prepare":
        prepare(Path(args.folder), args.dtype, not args.no_tuning, args.model, args.iree_flag, args.passes, args.batch_buckets, args.target)
    elif args.step == "profile" and args.prefill:
        profile_prefill(Path(args.folder), args.dtype, args.model, not args.no_reference)
    elif args.step == "profile":
        profile(Path(args.folder), args.dtype, args.model, not args.no_reference)
    elif args.step == "memory":
        memory(Path(args.folder), args.dtype, args.model)
    elif args.step == "prefill-reference":
        reference_prefill_times(args.dtype, args.model, args.prefill_mode)
    elif args.step == "batch":
        batch_run(Path(args.folder), args.dtype, "graphs" if args.graphs else "streams", args.model, args.batch, args.device)
    elif args.step == "profiled":
        profiled(Path(args.folder), args.dtype, args.who, args.model, not args.no_reference)
    else:
        run(Path(args.folder), args.dtype, "graphs" if args.graphs else "streams", args.model)


if __name__ == "__main__":
    main()
