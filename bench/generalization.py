"""Speed on models nobody tuned for: the held-out suite (bench/heldout.py), f32 and f16.

    python bench/generalization.py coverage [--models a,b] [--dtypes f32,f16]
    python bench/generalization.py prepare DIR [--models a,b] [--dtypes f32,f16] [--constants "N=V;..."] [--copies] [--triton [--triton-arch 90] [--triton-tf32] [--triton-channels-last]] [--tf32] [--kernel-db DB.json]   # here
    python bench/generalization.py run DIR [--repeats 200] [--warm-jobs 4] [--models a,b] [--no-inductor]   # CUDA machine
    python bench/generalization.py import DIR [--models a,b] [--dtypes f32]      # MLIR for tune prepare
    python bench/generalization.py dispatches TUNE_DIR...   # after schedc tune prepare + bench
    python bench/generalization.py profile DIR [--models a,b] [--dtypes f16] [--no-reference]      # CUDA machine, with ncu

`coverage` compiles each model for cuda and prints, per model and dtype, the share of its
contraction work (the iterations of every matmul's and convolution's root op) whose config came
from the kernel database, from schedc's heuristic, from schedc's Triton kernel (triton-conv's
convolutions) and from IREE's default, and the number of such dispatches. The held-out models'
kernels are never in the database, so its column should read 0%.

`prepare` compiles, per model and dtype, three CUDA modules with the weights outside them
(a parameter archive): `iree` (IREE's own kernel configs, replayed), `schedc-streams` and
`schedc-graphs` (schedc's default pipeline and kernel configs, stream execution and replay);
with `--unsplit` also the replayed module without split-k, with `--fused` also the replayed one
with IREE's aggressive fusion and generic matmuls (FUSION_FLAGS), the same with mma-operands
swapping nothing, and IREE's own module with them, and with `--constants "NAME=VALUE;..."` the
replayed one compiled with those kernel_config, split_k or triton_conv constants (a cost
model's before a fit), and
with `--copies` the replayed one with IREE's padding copies (padded-producers off), and with
`--kernel-db DB.json` the replayed one with a tuned database's configs (`schedc tune merge` on
held-out models, for what tuning gives a whole model), and with `--triton` the replayed and the
streams modules with schedc's Triton kernel on every f16 convolution (`triton-conv{every=true}`;
the default takes the rule's choice) and the replayed one with none, each its own column, and
with `--tf32`, for f32 models, the replayed one compiled with `--tf32` (every f32 convolution in
the kernel in TF32, as torch's own and reduce-overhead's run; column `tf32`), and with
`--iree-flag FLAG` (repeatable) the replayed one compiled with those flags for iree-compile too
(column `flags`).
`run`, on a machine with a CUDA GPU and iree-base-runtime (no compiler), rebuilds each model
from bench/heldout.py (random weights), writes its weights as the modules' archive, and times
at batch 1, in one process per execution mode (IREE reads the CUDA mode once per process):
torch eager, torch.compile (Inductor, default and mode="reduce-overhead"), and the three
modules; each median of `--repeats` calls, with the host synchronised. torch runs f32
convolutions in TF32 by default; f32 references are timed that way and eager and
reduce-overhead again with TF32 off (`RO fp32`: the arithmetic schedc's modules do), and every output is checked against eager
in true f32 on the same GPU, and against the model in f64 (`error64`, printed under each row:
whether a module loses more than eager in the same dtype does). `--no-inductor` leaves out
torch.compile (a numerics check in seconds). It prints a table and writes DIR/results.json.

`dispatches` reads folders that `schedc tune prepare` (here, on held-out models: `import`
writes them as MLIR) and `schedc tune bench` (on the GPU) filled, and prints per dispatch the
measured time of IREE's own config, of the config schedc chooses now and of the fastest that
matched; then the share of dispatches within 1.25x of it, overall and per element type, with
each type's summed times (the fastest configs', the choices', IREE's own: what tuning leaves to
gain). Tuning results of held-out models never go into the built-in database; `prepare
--kernel-db` times a database of their own (`schedc tune merge` into a new file).

`profile`, on the CUDA machine after `prepare`, runs each model's schedc module and
torch.compile(mode="reduce-overhead") (TF32 as torch's default) under Nsight Compute and prints
per call the number of kernels, their summed time and the kernels that take most of it, for
both: where schedc's replay loses to reduce-overhead. schedc's kernels are those of its stream
module (the replayed module compiles the same dispatches; ncu crashed on IREE's graph launches).
Each run's kernels are written to DIR/NAME.DTYPE.profile.json.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent
sys.path.insert(0, str(ROOT))
from layers import add_triton_options, split_by_marker, with_triton_options  # noqa: E402
from timing import interleaved_median_ms, marked_calls, median_ms, ncu_kernel_times  # noqa: E402

TILED = ("matmul", "batch_matmul", "matmul_like", "conv", "depthwise_conv")
VARIANTS = {  # module name -> (schedc.compile keywords, execution at run time)
    "iree": ({"tuning": False, "execution": "graphs"}, "graphs"),
    "schedc-streams": ({"execution": "streams"}, "streams"),
    "schedc-graphs": ({"execution": "graphs"}, "graphs"),
}
# `prepare --unsplit`: the replayed module without split-k's splits too (its parts forced to 1),
# to time what split-k gives in the same process.
UNSPLIT = {"schedc-graphs-unsplit": ({"execution": "graphs", "passes": "split-k{parts=1},memory-order,arena-plan"}, "graphs")}
# `prepare --fused`: the replayed module with IREE's aggressive fusion and generic matmuls
# (a layer norm's normalisation fused into the projection after it, a reduction's two passes
# into one dispatch), to time them beside the default in the same process.
from schedc.targets import GENERATION_FUSION as FUSION_FLAGS  # noqa: E402  (the flags an f16 generation module takes)
# IREE's own configs with the same flags too, and schedc's with mma-operands swapping nothing:
# whether a wrong result (f16 on CUDA, tenth session) is IREE's code, schedc's configs for the
# fused dispatches, or the operands' swap.
FUSED = {"schedc-graphs-fused": ({"execution": "graphs", "iree_flags": FUSION_FLAGS}, "graphs"),
         "schedc-graphs-fused-noswap": ({"execution": "graphs", "iree_flags": FUSION_FLAGS,
                                         "passes": "mma-operands{swap=false},memory-order,arena-plan"}, "graphs"),
         "iree-fused": ({"tuning": False, "execution": "graphs", "iree_flags": FUSION_FLAGS}, "graphs")}


# `prepare --constants "NAME=VALUE;..."`: the replayed module compiled with these kernel_config or
# split_k constants (e.g. a cost model's before a fit), beside the default in the same process.
CONSTANTS = {"schedc-graphs-constants": ({"execution": "graphs"}, "graphs")}
# `prepare --copies`: the replayed module with IREE's padding copies (padded-producers off), to
# time what writing the padded buffers in their producers gives in the same process.
# `profile` times the kernels of its stream-execution twin (Nsight Compute fails on IREE's graph launches).
_NO_PADDED_PRODUCERS = "padded-producers{enabled=false},memory-order,arena-plan"
COPIES = {"schedc-graphs-copies": ({"execution": "graphs", "passes": _NO_PADDED_PRODUCERS}, "graphs"),
          "schedc-streams-copies": ({"execution": "streams", "passes": _NO_PADDED_PRODUCERS}, "streams")}


# `prepare --kernel-db DB`: the replayed module with the configs of a kernel database that
# `schedc tune` measured on held-out models (never the built-in one), beside the model's own
# choices in the same process: what tuning gives a whole model.
TUNED = {"schedc-graphs-tuned": ({"execution": "graphs"}, "graphs")}


# `prepare --triton`: the modules with schedc's Triton kernel on every f16 and bf16 convolution
# (triton-conv{every=true}) and the replayed one with none (IREE's kernels), beside the default
# (the rule's choice) in the same process; `profile` times the streams one's kernels too.
_TRITON = "triton-conv{%s},memory-order,arena-plan"
TRITON = {"schedc-graphs-triton": ({"execution": "graphs", "passes": _TRITON % "every=true"}, "graphs"),
          "schedc-streams-triton": ({"execution": "streams", "passes": _TRITON % "every=true"}, "streams"),
          "schedc-graphs-iree-conv": ({"execution": "graphs", "passes": _TRITON % "enabled=false"}, "graphs")}


# `prepare --tf32`: for f32 models, the replayed module compiled with `--tf32` (every f32
# convolution in schedc's Triton kernel, TF32 products: torch's cuDNN default, and the
# torch.compile backend's), the precision reduce-overhead's convolutions run in.
TF32 = {"schedc-graphs-tf32": ({"execution": "graphs", "tf32": True}, "graphs")}
# `prepare --iree-flag F` (repeatable): the replayed module compiled with these flags for
# iree-compile too, to time a flag of IREE's beside the default in the same process.
FLAGS = "schedc-graphs-flags"


def _flags_variant(flags) -> dict:
    return {FLAGS: ({"execution": "graphs", "iree_flags": tuple(flags)}, "graphs")} if flags else {}


def _extra_variants(unsplit: bool, fused: bool, constants: bool = False, copies: bool = False, tuned: bool = False,
                    triton: bool = False, tf32: bool = False) -> dict:
    return {**(UNSPLIT if unsplit else {}), **(FUSED if fused else {}), **(CONSTANTS if constants else {}), **(COPIES if copies else {}),
            **(TUNED if tuned else {}), **(TRITON if triton else {}), **(TF32 if tf32 else {})}


def _variants(folder: Path) -> dict:
    manifest = json.loads((folder / "manifest.json").read_text())
    return {**VARIANTS, **_extra_variants(*(any(e.get(k) for e in manifest) for k in ("unsplit", "fused", "constants", "copies", "kernel_db", "triton", "tf32"))),
            **_flags_variant(next((e["iree_flags"] for e in manifest if e.get("iree_flags")), ()))}


def _constants(text: str) -> dict:
    """`NAME=VALUE;...` as kernel_config's, split_k's or triton_conv's constants (each one it has; VALUE a
    Python literal of the constant's type, e.g. `MMA_CONSTANTS={"matmul": (256, 320, 1048576, 0)}`)."""
    import ast

    from sweep import constants_module

    values = {}
    for item in filter(None, text.split(";")):
        name, _, value = item.partition("=")
        name = name.strip()
        try:
            parsed = ast.literal_eval(value.strip())
        except (ValueError, SyntaxError):
            raise SystemExit(f"--constants: {value.strip()!r} is not a Python literal")
        current = getattr(constants_module(name), name, None)
        if not name.isupper() or current is None or type(parsed) is not type(current):
            raise SystemExit(f"--constants: kernel_config, its sums, split_k and triton_conv have no constant {name!r} of type {type(parsed).__name__}")
        values[name] = {**current, **parsed} if isinstance(current, dict) else parsed
    return values


def heldout():
    import heldout as models  # noqa: E402  (bench/heldout.py)

    return models.HELDOUT


def _selected(names: str | None, dtypes: str) -> list[tuple[str, str]]:
    chosen = names.split(",") if names else list(heldout())
    return [(name, dtype) for name in chosen for dtype in dtypes.split(",")]


def import_model(name: str, dtype: str, params: str | None = None):
    import schedc

    model, args = build_model(name, dtype)
    return model, args, schedc.import_torch(model, *args, params=params)


def weightless_mlir(name: str, dtype: str) -> str:
    """The held-out model as torch-dialect MLIR whose weights live in a parameter archive (one
    written to a scratch folder and dropped: the modules need only the parameters' names)."""
    import tempfile

    with tempfile.TemporaryDirectory() as scratch:
        return import_model(name, dtype, params=str(Path(scratch) / "weights.irpa"))[2]


def build_model(name: str, dtype: str):
    """The held-out model and its example inputs, in `dtype`."""
    from schedc.torch.importer import convert_precision

    model, args = heldout()[name]()
    if dtype != "f32":
        model, args = convert_precision(model, args, dtype)
    return model, args


def coverage_row(records: dict) -> dict:
    """Each source's share of the module's contraction work (multiply-adds): kernel-config's
    database, its heuristic, IREE's default config, and schedc's Triton kernel (triton-conv)."""
    kernels = [k for k in records["kernel-config"]["module"]["kernels"] if k["kind"] in TILED]
    convolutions = [c for function, record in records.get("triton-conv", {}).items() if function != "unavailable"
                    for c in record["convolutions"]]
    triton = sum(c["work"] for c in convolutions)
    total = (sum(k["work"] for k in kernels) + triton) or 1
    shares = {source: sum(k["work"] for k in kernels if k["source"] == source) / total for source in ("database", "heuristic", "iree")}
    return {"dispatches": len(kernels) + len(convolutions), **shares, "triton": triton / total,
            "iree_dispatches": [k["dispatch"] for k in kernels if k["source"] == "iree"]}


def coverage(args) -> None:
    from schedc.compiler.driver import compile_with_options
    from schedc.options import CompileOptions

    print(f"{'model':<16} {'dtype':<5} {'dispatches':>10} {'database':>9} {'heuristic':>10} {'Triton':>7} {'IREE':>7}")
    for name, dtype in _selected(args.models, args.dtypes):
        mlir = weightless_mlir(name, dtype)
        result = compile_with_options(mlir, CompileOptions(target="cuda", emit="flow"))
        row = coverage_row(result.records)
        print(f"{name:<16} {dtype:<5} {row['dispatches']:>10} {row['database']:>9.1%} {row['heuristic']:>10.1%} {row['triton']:>7.1%} {row['iree']:>7.1%}")
        for dispatch in row["iree_dispatches"]:
            print(f"    IREE's default: {dispatch}")


def prepare(args) -> None:
    import schedc
    from sweep import _with_constants

    folder = Path(args.folder)
    folder.mkdir(parents=True, exist_ok=True)
    manifest = []
    for name, dtype in _selected(args.models, args.dtypes):
        # The weights stay outside the modules: `run` writes the archive of the model it
        # rebuilds on the GPU machine, so no call carries them there.
        mlir = weightless_mlir(name, dtype)
        stem = f"{name}.{dtype}"
        constants = _constants(args.constants)
        for variant, (keywords, _) in {**VARIANTS, **_extra_variants(args.unsplit, args.fused, bool(constants), args.copies,
                                                                       bool(args.kernel_db), args.triton, args.tf32),
                                      **_flags_variant(args.iree_flag)}.items():
            if variant in TF32 and dtype != "f32":
                continue  # TF32 is for f32 convolutions: an f16 model's module would be its default's
            started = time.perf_counter()
            chosen = constants if variant in CONSTANTS else {}
            if variant in TUNED:
                keywords = {**keywords, "kernel_db": args.kernel_db}
            if variant in TRITON:
                keywords = {**keywords, "passes": with_triton_options(keywords["passes"], args)}
            _with_constants(tuple(chosen), tuple(chosen.values()), lambda: schedc.compile(
                mlir, target="cuda", output=str(folder / f"{stem}.{variant}.vmfb"), **keywords))
            print(f"{stem}.{variant}: compiled in {time.perf_counter() - started:.1f} s", flush=True)
        manifest.append({"model": name, "dtype": dtype, "unsplit": args.unsplit, "fused": args.fused, "constants": args.constants,
                         "copies": args.copies, "kernel_db": args.kernel_db, "triton": args.triton, "tf32": args.tf32,
                         "triton_arch": args.triton_arch, "triton_tf32": args.triton_tf32, "triton_channels_last": args.triton_channels_last, "iree_flags": args.iree_flag})
    (folder / "manifest.json").write_text(json.dumps(manifest, indent=1) + "\n")


def _synchronised(call):
    """`call`, then a wait for the GPU."""
    import torch

    def synchronised():
        call()
        torch.cuda.synchronize()

    return synchronised


def _median_ms(call, repeats: int) -> float:
    """bench/timing.py's median, of a call that ends with the GPU synchronised."""
    return median_ms(_synchronised(call), repeats)


def _load(folder: Path, name: str, dtype: str):
    """The model rebuilt here (random weights), its weights written as the modules' archive,
    and its example input, on the GPU."""
    import schedc

    model, args = build_model(name, dtype)
    archive = folder / f"{name}.{dtype}.irpa"
    schedc.save_params(model, str(archive))
    return model.cuda().eval(), args[0].cuda(), str(archive)


def _error(result, reference) -> float:
    result, reference = result.float(), reference.float()
    return float((result - reference).abs().max() / max(reference.abs().max(), 1e-6))


def run_one(folder: Path, name: str, dtype: str, execution: str, repeats: int, inductor: bool = True) -> dict:
    """In a fresh process: torch's references (streams process) and the modules of `execution`.
    torch runs f32 convolutions in TF32 by default (cuDNN); the references are timed that way
    and again in true f32 (`-fp32`), as schedc's modules compute; outputs are checked against
    eager in the model's dtype with true f32 (`error`), and against the model in f64
    (`error64`: whether a module loses more than eager in the same dtype does, on a model whose
    f32 and f16 outputs differ much)."""
    import copy

    import torch

    import schedc

    torch.backends.cudnn.allow_tf32 = False
    torch.backends.cuda.matmul.allow_tf32 = False
    model, x, archive = _load(folder, name, dtype)
    rows = {}
    with torch.no_grad():
        reference = model(x)
        exact = copy.deepcopy(model).double()(x.double() if x.is_floating_point() else x)
        if execution == "streams":
            rows["eager-f64"] = {"error": _error(exact, reference), "error64": 0.0}
        if execution in ("streams", "warm"):
            if execution == "warm":  # compile only, to fill Inductor's caches on disk
                repeats = 1
            for tf32, suffix in ((True, ""), (False, "-fp32")) if dtype == "f32" else ((False, ""),):
                torch.backends.cudnn.allow_tf32 = tf32
                rows[f"eager{suffix}"] = {"ms": _median_ms(lambda: model(x), repeats), "error": _error(model(x), reference), "error64": _error(model(x), exact)}
                for mode in (("default", "reduce-overhead") if tf32 or dtype != "f32" else ("reduce-overhead",)) if inductor else ():
                    torch._dynamo.reset()
                    compiled = torch.compile(model, mode=None if mode == "default" else mode)
                    try:
                        compiled(x)
                        rows[f"inductor-{mode}{suffix}"] = {"ms": _median_ms(lambda: compiled(x), repeats), "error": _error(compiled(x), reference),
                                                            "error64": _error(compiled(x), exact)}
                    except Exception as e:  # a reference that fails is reported, not fatal
                        rows[f"inductor-{mode}{suffix}"] = {"failed": str(e).splitlines()[0][:200]}
            torch.backends.cudnn.allow_tf32 = False
        # The modules of this execution mode are timed interleaved, a call of each in turn:
        # two identical modules timed one after the other differed by 18% (llama f16, H100).
        calls = {}
        for variant, (_, mode) in _variants(folder).items():
            if mode != execution or (variant in TF32 and dtype != "f32"):
                continue
            module = schedc.load(str(folder / f"{name}.{dtype}.{variant}.vmfb"), device="cuda", execution=mode, params=archive)
            output = module.forward(x, copy=True)
            rows[variant] = {"error": _error(output, reference), "error64": _error(output, exact)}
            calls[variant] = _synchronised(lambda module=module: module.forward(x))
        for variant, ms in interleaved_median_ms(calls, repeats).items():
            rows[variant]["ms"] = ms
    return rows


def run(args) -> None:
    folder = Path(args.folder)
    manifest = json.loads((folder / "manifest.json").read_text())
    if args.models:
        manifest = [e for e in manifest if e["model"] in args.models.split(",")]
    results_path = folder / "results.json"
    results = json.loads(results_path.read_text()) if results_path.exists() else {}
    if args.warm_jobs and not args.no_inductor:
        # torch.compile takes most of a run's time: compile every reference once in parallel
        # processes first; the timed processes (one at a time) then find Inductor's code in
        # its on-disk caches.
        from concurrent.futures import ThreadPoolExecutor

        def warm(entry):
            command = [sys.executable, __file__, "one", str(folder), entry["model"], entry["dtype"], "warm", "1"]
            return subprocess.run(command, capture_output=True, text=True).returncode

        started = time.perf_counter()
        with ThreadPoolExecutor(args.warm_jobs) as pool:
            codes = list(pool.map(warm, manifest))
        print(f"compiled torch's references in {time.perf_counter() - started:.0f} s ({codes.count(0)} of {len(codes)} processes ok)", flush=True)
    print(f"{'model':<22} " + " ".join(f"{h:>8}" for h in HEADER) + f" {'gr/RO':>8} {'gr/ROf32':>8} {'max err':>9}")
    for entry in manifest:
        name, dtype = entry["model"], entry["dtype"]
        rows = {}
        for execution in ("streams", "graphs"):
            command = [sys.executable, __file__, "one", str(folder), name, dtype, execution, str(args.repeats)] + (["--no-inductor"] if args.no_inductor else [])
            done = subprocess.run(command, capture_output=True, text=True)
            if done.returncode:
                rows[f"{execution}-process"] = {"failed": (done.stderr.strip().splitlines() or ["?"])[-1][:300]}
                continue
            rows.update(json.loads(done.stdout.strip().splitlines()[-1]))
        results[f"{name}.{dtype}"] = rows
        print(_table_row(f"{name}.{dtype}", rows), flush=True)
        print("    error against the model in f64: " + ", ".join(f"{k} {r['error64']:.1e}" for k, r in rows.items() if "error64" in r), flush=True)
        results_path.write_text(json.dumps(results, indent=1) + "\n")  # row by row: a cut-off run keeps what it measured
    print(f"wrote {results_path}")


COLUMNS = ("eager", "inductor-default", "inductor-reduce-overhead", "inductor-reduce-overhead-fp32", "iree", "iree-fused", "schedc-streams",
           "schedc-graphs-unsplit", "schedc-graphs-fused", "schedc-graphs-fused-noswap", "schedc-graphs-constants",
           "schedc-graphs-copies", "schedc-graphs-tuned", "schedc-graphs-iree-conv", "schedc-graphs-triton", "schedc-graphs-tf32", FLAGS, "schedc-graphs")
HEADER = ("eager", "Inductor", "RO", "RO fp32", "iree", "iree fus", "streams", "unsplit", "fused", "fus nosw", "constant", "copies", "tuned",
          "no triton", "triton", "tf32", "flags", "graphs")


def _table_row(label: str, rows: dict) -> str:
    cells = []
    for column in COLUMNS:
        row = rows.get(column, {})
        cells.append(f"{row['ms']:.3f}" if "ms" in row else "failed" if "failed" in row else "-")
    graphs = rows.get("schedc-graphs", {}).get("ms")
    ratios = []
    for column in ("inductor-reduce-overhead", "inductor-reduce-overhead-fp32"):
        ro = rows.get(column, {}).get("ms")
        ratios.append(f"{graphs / ro:.2f}x" if ro and graphs else "-")
    errors = max((r.get("error", 0.0) for k, r in rows.items() if k.startswith(("iree", "schedc"))), default=0.0)
    return f"{label:<22} " + " ".join(f"{c:>8}" for c in cells) + " " + " ".join(f"{r:>8}" for r in ratios) + f" {errors:>9.1e}"


def dispatches(args) -> None:
    """Per dispatch of the tune folders (held-out models'), the measured time of IREE's own
    config, of the config schedc chooses now (its heuristic: held-out kernels are never in the
    database) and of the fastest measured; then the share within 1.25x of the fastest."""
    from schedc.decisions.kernel_config import KernelSignature, choose_config
    from schedc.tune.prepare import matched_candidates

    signatures, times = {}, {}
    for folder in map(Path, args.folders):
        manifest = json.loads((folder / "manifest.json").read_text())
        results = json.loads((folder / "results.json").read_text())["kernels"]
        for kernel in manifest["kernels"]:
            sig = KernelSignature.from_json(kernel["signature"])
            signatures[sig.key] = sig
            for _, config, time_us in matched_candidates(kernel, results.get(kernel["name"], [])):
                known = times.setdefault(sig.key, {})
                known[config] = min(time_us, known.get(config, time_us))
    print(f"{'dispatch':<50} {'IREE us':>9} {'schedc us':>9} {'best us':>9} {'ratio':>6}")
    ratios, unmeasured, by_type = [], [], {}
    for key, sig in signatures.items():
        measured = times.get(key, {})
        if None not in measured or len(measured) < 2:
            continue
        chosen = choose_config(sig, None).config
        name = sig.name.split("_dispatch_")[-1][:50]
        if chosen not in measured:
            unmeasured.append(name)
            continue
        best = min(measured.values())
        ratios.append(measured[chosen] / best)
        by_type.setdefault(sig.element_type, []).append((ratios[-1], best, measured[chosen], measured[None]))
        print(f"{name:<50} {measured[None]:>9.2f} {measured[chosen]:>9.2f} {best:>9.2f} {ratios[-1]:>6.2f}")
    if ratios:
        within = sum(r <= 1.25 for r in ratios)
        print(f"schedc's choice within 1.25x of the fastest measured config (IREE's included): {within} of {len(ratios)} "
              f"dispatches ({within / len(ratios):.0%}), median ratio {statistics.median(ratios):.2f}; "
              f"{len(unmeasured)} whose choice was not measured")
        # what tuning leaves: each dispatch's fastest config against the choice and IREE's own
        for element, part in sorted(by_type.items()):
            within = sum(r <= 1.25 for r, *_ in part)
            fastest, chosen_us, iree_us = (sum(row[i] for row in part) for i in (1, 2, 3))
            print(f"  {element}: {within} of {len(part)} ({within / len(part):.0%}), median ratio "
                  f"{statistics.median(r for r, *_ in part):.2f}; summed, the fastest {fastest:.1f} us, the choices "
                  f"{chosen_us:.1f} ({chosen_us / fastest:.3f}x), IREE's own {iree_us:.1f} ({iree_us / chosen_us:.2f}x the choices)")


PROFILED_CALLS = 3


def kernel_family(name: str) -> str:
    """A kernel's name without what differs between instances of one kernel: IREE's dispatch
    number, Inductor's kernel number, a C++ kernel's parameter list."""
    import re

    name = re.sub(r"^[a-z_]+_dispatch_\d+_", "", name.removeprefix("void "))
    name = re.sub(r"_\d+$", "", name.split("(")[0])
    return name[:90]


def profile(args) -> None:
    """schedc's kernels per call against reduce-overhead's (and, where `prepare --copies` or
    `--triton` made them, the module with IREE's padding copies or with triton-conv), under
    Nsight Compute."""
    folder = Path(args.folder)
    chosen = set(_selected(args.models, args.dtypes))
    for entry in json.loads((folder / "manifest.json").read_text()):
        name, dtype = entry["model"], entry["dtype"]
        if (name, dtype) not in chosen:
            continue
        calls = {}
        whom = [("schedc", [])] + ([("schedc-copies", [])] if entry.get("copies") else []) + ([("schedc-triton", [])] if entry.get("triton") else [])
        whom += [] if args.no_reference else [("reduce-overhead", ["--profile-from-start", "off"])]
        for who, extra in whom:
            log = folder / f"{name}.{dtype}.{who}.ncu.csv"
            caches = ["--cache-control", "none"] if args.warm_caches else []
            command = ["ncu", "--clock-control", "none", *caches, "--metrics", "gpu__time_duration.sum", "--csv", *extra, "--log-file", str(log),
                       sys.executable, __file__, "profiled", str(folder), name, dtype, who]
            done = subprocess.run(command, capture_output=True, text=True)
            runs = split_by_marker(ncu_kernel_times(log.read_text())) if log.exists() else []
            if done.returncode or len(runs) != PROFILED_CALLS:
                print(f"{name}.{dtype} {who}: failed under ncu ({len(runs)} marked calls): {(done.stderr.strip().splitlines() or ['?'])[-1][:300]}")
                continue
            calls[who] = runs[len(runs) // 2]
            total = sum(us for _, us in calls[who])
            print(f"{name}.{dtype} {who}: {len(calls[who])} kernels, {total:.1f} us of kernels per call", flush=True)
            families: dict[str, list[float]] = {}
            for kernel, us in calls[who]:
                families.setdefault(kernel_family(kernel), []).append(us)
            for family, times in sorted(families.items(), key=lambda item: -sum(item[1]))[:args.top]:
                print(f"    {sum(times):8.1f} us  x{len(times):<3} {family}")
        (folder / f"{name}.{dtype}.profile.json").write_text(json.dumps(calls, indent=1) + "\n")


def profiled(folder: Path, name: str, dtype: str, who: str) -> None:
    """One process of `profile`: warm calls, then PROFILED_CALLS calls, a marker kernel before
    each (reduce-overhead's profiled from the first marker on: its compile launches thousands)."""
    import torch

    import schedc

    model, x, archive = _load(folder, name, dtype)
    with torch.no_grad():
        if who in ("schedc", "schedc-copies", "schedc-triton"):
            variant = {"schedc": "schedc-streams", "schedc-copies": "schedc-streams-copies", "schedc-triton": "schedc-streams-triton"}[who]
            module = schedc.load(str(folder / f"{name}.{dtype}.{variant}.vmfb"), device="cuda", execution="streams", params=archive)

            def call():
                return module.forward(x)
        else:
            compiled = torch.compile(model, mode="reduce-overhead")

            def call():
                return compiled(x)
        marked_calls(call, PROFILED_CALLS)


def write_models(args) -> None:
    """Each held-out model as torch-dialect MLIR, its weights outside it (for `schedc tune
    prepare`: the candidates' modules need no weights)."""
    folder = Path(args.folder)
    folder.mkdir(parents=True, exist_ok=True)
    for name, dtype in _selected(args.models, args.dtypes):
        mlir = weightless_mlir(name, dtype)
        (folder / f"{name}.{dtype}.mlir").write_text(mlir)
        print(f"wrote {folder / f'{name}.{dtype}.mlir'}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    for command in ("coverage", "prepare", "import"):
        p = sub.add_parser(command)
        if command != "coverage":
            p.add_argument("folder")
        p.add_argument("--models", help="comma-separated, from bench/heldout.py (default: all)")
        p.add_argument("--dtypes", default="f32,f16")
        if command == "prepare":
            p.add_argument("--unsplit", action="store_true", help="also the replayed module without split-k (its parts forced to 1)")
            p.add_argument("--fused", action="store_true", help="also the replayed module with IREE's aggressive fusion and generic matmuls")
            p.add_argument("--copies", action="store_true", help="also the replayed module with IREE's padding copies (padded-producers off)")
            p.add_argument("--triton", action="store_true",
                           help="also the modules with schedc's Triton kernel on every f16 convolution, and the replayed one with none")
            add_triton_options(p, arch=True)
            p.add_argument("--tf32", action="store_true", help="also, for f32 models, the replayed module compiled with --tf32")
            p.add_argument("--kernel-db", default="", metavar="DB.json",
                           help="also the replayed module with this tuned kernel database's configs (schedc tune merge)")
            p.add_argument("--constants", default="", metavar="NAME=VALUE;...",
                           help="also the replayed module compiled with these kernel_config, split_k or triton_conv constants (e.g. before a fit)")
            p.add_argument("--iree-flag", action="append", default=[], metavar="FLAG",
                           help="also the replayed module compiled with this flag for iree-compile (repeatable), e.g. "
                                "--iree-flag=--iree-opt-aggressively-propagate-transposes=true")
    r = sub.add_parser("run")
    r.add_argument("folder")
    r.add_argument("--repeats", type=int, default=200)
    r.add_argument("--models", help="comma-separated: only these of the folder's (results.json keeps the others' rows)")
    r.add_argument("--warm-jobs", type=int, default=4, help="parallel processes compiling torch's references first (0: none)")
    r.add_argument("--no-inductor", action="store_true", help="eager and the modules only (a numerics check takes seconds, not Inductor's minutes)")
    pr = sub.add_parser("profile")
    pr.add_argument("folder")
    pr.add_argument("--models", help="comma-separated (default: the folder's)")
    pr.add_argument("--dtypes", default="f32,f16")
    pr.add_argument("--top", type=int, default=12, help="kernel families listed per run")
    pr.add_argument("--no-reference", action="store_true", help="schedc's modules only (no reduce-overhead)")
    pr.add_argument("--warm-caches", action="store_true",
                    help="ncu leaves the caches as the last kernel left them (--cache-control none), as in a replay, where a small "
                         "model's weights stay in L2; by default ncu flushes them before each kernel")
    ps = sub.add_parser("profiled")  # one process of `profile`
    for name in ("folder", "name", "dtype", "who"):
        ps.add_argument(name)
    d = sub.add_parser("dispatches")
    d.add_argument("folders", nargs="+")
    one = sub.add_parser("one")  # one process of `run`
    for name in ("folder", "name", "dtype", "execution"):
        one.add_argument(name)
    one.add_argument("repeats", type=int)
    one.add_argument("--no-inductor", action="store_true")
    args = parser.parse_args()
    if args.command == "coverage":
        coverage(args)
    elif args.command == "prepare":
        prepare(args)
    elif args.command == "dispatches":
        dispatches(args)
    elif args.command == "import":
        write_models(args)
    elif args.command == "run":
        run(args)
    elif args.command == "profile":
        profile(args)
    elif args.command == "profiled":
        profiled(Path(args.folder), args.name, args.dtype, args.who)
    else:
        print(json.dumps(run_one(Path(args.folder), args.name, args.dtype, args.execution, args.repeats, not args.no_inductor)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
