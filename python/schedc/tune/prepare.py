"""`schedc tune`: measure code-generation configs per dispatch on the GPU, keep the fastest.

Tuning runs on two machines when the GPU machine has IREE's runtime but no compiler:

    schedc tune prepare MODEL.mlir... --target=cuda -o tune/   # here: compile candidates
    schedc tune bench tune/ --device=cuda                      # GPU machine: runtime only
    schedc tune merge tune/ --database=DB.json                 # here: winners into the database

`prepare` compiles each model to the flow phase, takes the distinct dispatches (by signature,
`schedc.ir.dispatches`), and for each one compiles a standalone module with one function per
candidate config (`schedc.decisions.kernel_config.candidate_configs`, the heuristic's pick, and IREE's own
choice as the reference), each dispatch repeated `repeat` times per call so kernel time
dominates the call overhead. A module that fails to compile is split: each candidate is
compiled alone and the ones IREE rejects are dropped with IREE's reason. `bench`
(`schedc.tune.bench`) times every function on device-resident inputs and checks its outputs
against IREE's config; `merge` keeps, per dispatch, the fastest config whose outputs matched.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from schedc.errors import CompileError, SchedcError
from schedc.decisions.kernel_config import CHIPS, POOLING_KINDS, TILED_KINDS, estimate, KernelConfig, KernelDatabase, KernelSignature, TunedEntry, candidate_configs, default_database, heuristic_config
from schedc.outputs import check_output_folder, write_output
from schedc.targets import Target

MANIFEST = "manifest.json"
RESULTS = "results.json"
# Relative error (max |candidate - reference| / max |reference|) a candidate may show.
TOLERANCE = {"f32": 1e-4, "f64": 1e-9, "f16": 2e-2, "bf16": 5e-2}


@dataclass(frozen=True)
class TuneOptions:
    target: Target
    candidates: int = 8  # configs measured per dispatch besides IREE's and the heuristic's
    kinds: tuple[str, ...] = TILED_KINDS + POOLING_KINDS  # op classes to tune (ELEMENTWISE_KINDS may be added)
    repeat: int = 50  # dispatches per call in the benchmark modules
    jobs: int = 0  # parallel compiles (0: the machine's cores)
    iree_flags: tuple[str, ...] = ()
    known: frozenset[str] = frozenset()  # signature keys to skip (already in a database)
    # More configs to measure per dispatch, after the candidates (bench/sweep.py measures the
    # picks of every cost-model constant its fit tries, so the fit's own pick is measured).
    extra: Callable[[KernelSignature], list[KernelConfig]] | None = None


class Progress:
    """`[done/total] what` on one terminal line; silent when stderr is not a terminal."""

    def __init__(self, total: int, what: str, stream=None):
        self.total, self.done, self.what = total, 0, what
        self.stream = stream or sys.stderr
        self.live = self.stream.isatty()

    def step(self, note: str = "") -> None:
        self.done += 1
        if self.live:
            width = 30
            filled = width * self.done // max(self.total, 1)
            self.stream.write(f"\r{self.what} [{'#' * filled}{'.' * (width - filled)}] {self.done}/{self.total} {note[:40]:<40}")
            self.stream.flush()

    def close(self) -> None:
        if self.live:
            self.stream.write("\n")
            self.stream.flush()


def shaping_passes(target: str) -> str:
    """The passes a default compile for `target` runs before dispatch formation (split-k's
    parts, padded-producers' padded buffers): they change which dispatches the model has and
    their bodies, so tuning measures the dispatches the model's compile makes. The passes that
    set configs (kernel-config, reduction-config) are left out, and mma-operands, a correction,
    runs with them as in every compile."""
    from schedc.options import Phase
    from schedc.passes import REGISTRY

    return ",".join(p.name for p in REGISTRY.values() if target in p.implicit_for and p.phase in (Phase.INPUT, Phase.PREPROCESSING))


def _flow_module(source: Path, options: TuneOptions):
    """The model at the flow phase, parsed: its dispatches as a default compile makes them (the
    passes of `shaping_passes`), before any config."""
    from iree.compiler import ir

    from schedc.options import CompileOptions
    from schedc.compiler.driver import compile_with_options
    from schedc.ir.mlirio import parse_module, printable

    shaping = shaping_passes(options.target.name)
    compile_options = CompileOptions.for_target(options.target, passes=shaping, tuning=False, emit="flow", iree_flags=options.iree_flags) \
        if shaping else CompileOptions.for_target(options.target, schedc_passes=False, emit="flow", iree_flags=options.iree_flags)
    result = compile_with_options(source, compile_options)
    return parse_module(printable(result.output), str(source), ir.Context())


def prepare(models: list[str], folder: str, options: TuneOptions) -> dict:
    """Compiles the candidate modules of every distinct dispatch of `models` into `folder`."""
    from schedc.ir.dispatches import benchmark_module, dispatch_sites, executables, signature

    if options.target.name not in CHIPS:
        raise SchedcError(f"tuning is for GPU targets ({', '.join(CHIPS)}) and llvm-cpu, not '{options.target.name}'")
    out = Path(folder)
    check_output_folder(folder, "tuning folder")
    out.mkdir(parents=True, exist_ok=True)
    jobs: dict[str, dict] = {}
    skipped: list[dict] = []
    for model in models:
        module = _flow_module(Path(model), options)
        sites = dispatch_sites(module)
        for executable in executables(module):
            found = signature(executable)
            if found is None:
                continue
            sig, _ = found
            if sig.key in jobs or sig.key in options.known or sig.kind not in options.kinds:
                continue
            configs = _configs_to_measure(sig, options)
            site = sites.get(executable.symbol)
            if len(configs) < 2:
                continue  # nothing to choose between: IREE's own config stands
            if site is None or not site.benchmarkable:
                skipped.append({"name": sig.name, "kind": sig.kind, "reason": "not reproducible standalone (dynamic shapes, workload operands or non-float tensors)"})
                continue
            name = f"k{len(jobs):03d}"
            jobs[sig.key] = {
                "name": name,
                "model": str(model),
                "signature": sig.to_json(),
                "operands": list(site.operand_types),
                "results": list(site.result_types),
                "configs": [c.to_json() if c else None for c in configs],
                "text": benchmark_module(executable, site, configs),
            }
    progress = Progress(len(jobs), "compiling candidates")
    workers = options.jobs or os.cpu_count() or 1
    with ThreadPoolExecutor(max_workers=workers) as pool:
        outcomes = list(pool.map(lambda job: _compile_job(job, out, options, progress), jobs.values()))
    progress.close()
    kernels = [k for k in outcomes if k is not None]
    manifest = {
        "target": options.target.name,
        "arch": options.target.arch,
        "chip": CHIPS[options.target.name].name,
        "repeat": options.repeat,
        "models": [str(m) for m in models],
        "kernels": kernels,
        "skipped": skipped,
    }
    write_output(str(out / MANIFEST), json.dumps(manifest, indent=1) + "\n")
    return manifest


def _configs_to_measure(sig: KernelSignature, options: TuneOptions) -> list[KernelConfig | None]:
    """IREE's own config first (the reference), then the heuristic's, then the candidates."""
    configs: list[KernelConfig | None] = [None]
    heuristic = heuristic_config(sig, CHIPS[options.target.name])
    if heuristic is not None:
        configs.append(heuristic)
    for config in candidate_configs(sig, options.candidates) + (options.extra(sig) if options.extra else []):
        if config not in configs:
            configs.append(config)
    return configs


def _compile_job(job: dict, out: Path, options: TuneOptions, progress: Progress) -> dict | None:
    """Compiles one dispatch's module; where IREE rejects it, each candidate alone, keeping
    the ones that compile in one module again. A module compiled by an earlier run of the
    same job (same signature and configs) is kept: an interrupted prepare resumes."""
    text = job.pop("text")
    record = out / f"{job['name']}.json"
    if record.exists():
        done = json.loads(record.read_text())
        if done.get("signature") == job["signature"] and done.get("candidates") == job["configs"] and done.get("repeat") == options.repeat:
            progress.step(job["signature"]["name"])
            return done["job"]
    candidates = list(job["configs"])
    result = _compile_fresh(job, text, out, options)
    # Whole or not at all: an interrupted prepare resumes from the records it finds.
    write_output(str(record), json.dumps({"signature": job["signature"], "candidates": candidates, "repeat": options.repeat, "job": result}))
    progress.step(job["signature"]["name"])
    return result


def _compile_fresh(job: dict, text: str, out: Path, options: TuneOptions) -> dict | None:
    from schedc.ir.dispatches import benchmark_module_from_text

    source = out / f"{job['name']}.mlir"
    source.write_text(text)
    failed = []
    try:
        _compile_candidates(source, out / f"{job['name']}.vmfb", options)
        kept = list(range(len(job["configs"])))
    except CompileError:
        kept = []
        for index in range(len(job["configs"])):
            single = out / f"{job['name']}.c{index}.mlir"
            single.write_text(benchmark_module_from_text(text, [index]))
            try:
                _compile_candidates(single, out / f"{job['name']}.c{index}.vmfb", options)
                kept.append(index)
            except CompileError as e:
                failed.append({"config": job["configs"][index], "reason": _first_error(str(e))})
            finally:
                single.unlink(missing_ok=True)
                (out / f"{job['name']}.c{index}.vmfb").unlink(missing_ok=True)
        if 0 not in kept:
            return None  # IREE's own config does not compile standalone: nothing to compare with
        source.write_text(benchmark_module_from_text(text, kept))
        _compile_candidates(source, out / f"{job['name']}.vmfb", options)
    source.unlink(missing_ok=True)
    job["module"] = f"{job['name']}.vmfb"
    job["functions"] = [f"c{i}" for i in kept]
    job["configs"] = [job["configs"][i] for i in kept]
    job["failed"] = failed
    return job


def _compile_candidates(source: Path, output: Path, options: TuneOptions) -> None:
    from schedc.compiler.iree_tools import run_iree_tool

    flags = options.target.iree_flags() + list(options.iree_flags)
    flags += [f"--iree-hal-benchmark-dispatch-repeat-count={options.repeat}", "--iree-hal-link-executables=false"]
    run_iree_tool("iree-compile", [str(source), *flags, "-o", str(output)], what=f"compiling {source.name}")


def _first_error(message: str) -> str:
    for line in message.splitlines():
        if "error:" in line:
            return line.split("error:", 1)[1].strip()[:300]
    return message.splitlines()[0][:300] if message else "unknown error"


# -- merge -----------------------------------------------------------------------------------


# Measured times within this factor of the fastest are a tie: below ~8 us a call's wall time is
# bound by IREE's per-dispatch launch cost, not by the kernel, so ties go to the estimate.
TIE = 1.10


def winners(manifest: dict, results: dict) -> list[TunedEntry]:
    """Per kernel, the fastest config whose outputs matched IREE's own, as database entries.

    A candidate that failed to run, or whose outputs differ from the reference by more than
    the element type's tolerance, is never chosen. Candidates within TIE of the fastest time
    are ranked by the analytic estimate (`kernel_configs.estimate`) instead; IREE's own config
    (config None) wins only when it beats every candidate by more than TIE, and a later compile
    then leaves that dispatch alone."""
    entries = []
    for kernel in manifest["kernels"]:
        measured = results.get(kernel["name"])
        if not measured:
            continue
        sig = KernelSignature.from_json(kernel["signature"])
        reference = {m["function"]: m for m in measured}.get("c0")
        if reference is None or reference.get("time_us") is None:
            continue
        valid = [(time_us, config) for _, config, time_us in matched_candidates(kernel, measured) if config is not None]
        fastest = min((t for t, _ in valid), default=None)
        if fastest is None or reference["time_us"] * TIE < fastest:
            entries.append(TunedEntry(sig, None, reference["time_us"], reference["time_us"], len(kernel["functions"])))
            continue
        tied = [(t, c) for t, c in valid if t <= fastest * TIE]
        time_us, config = min(tied, key=lambda tc: (estimate(sig, tc[1]), tc[0]))
        entries.append(TunedEntry(sig, config, time_us, reference["time_us"], len(kernel["functions"])))
    return entries


def matched_candidates(kernel: dict, measured: list[dict]) -> list[tuple[str, KernelConfig | None, float]]:
    """A manifest kernel's candidates that ran and whose outputs matched IREE's own within the
    element type's tolerance, as (function, config (None: IREE's own), time in us)."""
    sig = KernelSignature.from_json(kernel["signature"])
    tolerance = TOLERANCE.get(sig.element_type, 1e-4)
    timings = {m["function"]: m for m in measured}
    found = []
    for function, config in zip(kernel["functions"], kernel["configs"]):
        m = timings.get(function)
        if m is None or m.get("time_us") is None or m.get("error") is None or m["error"] > tolerance:
            continue
        found.append((function, KernelConfig.from_json(config) if config else None, m["time_us"]))
    return found


def read_manifest(folder: str) -> dict:
    """The manifest `prepare` wrote into `folder`; a clear error where there is none, or
    where it is not of the shape prepare writes."""
    try:
        manifest = json.loads((Path(folder) / MANIFEST).read_text())
    except FileNotFoundError:
        raise SchedcError(f"{folder}: no {MANIFEST}; run 'schedc tune prepare' first") from None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as e:
        raise SchedcError(f"{folder}/{MANIFEST}: not a tuning manifest ({e})") from None
    if not isinstance(manifest, dict) or not isinstance(manifest.get("kernels"), list) or not all(
            isinstance(k, dict) and isinstance(k.get("name"), str) for k in manifest["kernels"]):
        raise SchedcError(f"{folder}/{MANIFEST}: not a tuning manifest (no list of named kernels): run 'schedc tune prepare' again")
    return manifest


def read_results(folder: str, next_step: str) -> dict:
    """`bench`'s results in `folder`: kernel name -> its measurements, checked for the shape
    bench writes (a measured time is a number >= 0, or null where the candidate failed)."""
    path = Path(folder) / RESULTS
    try:
        document = json.loads(path.read_text())
    except FileNotFoundError:
        raise SchedcError(f"{folder}: no {RESULTS}; run {next_step} first") from None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as e:
        raise SchedcError(f"{path}: not the results of 'schedc tune bench' ({e})") from None
    kernels = document.get("kernels") if isinstance(document, dict) else None
    if not isinstance(kernels, dict):
        raise SchedcError(f"{path}: not the results of 'schedc tune bench' (no 'kernels' object)")
    for name, measured in kernels.items():
        records = measured if isinstance(measured, list) else list(measured.values()) if isinstance(measured, dict) else None
        if records is None or not all(isinstance(m, dict) for m in records):
            raise SchedcError(f"{path}: kernel '{name}': its measurements are not a list of objects")
        for m in records:
            for field_name in ("time_us", "error"):
                value = m.get(field_name)
                if value is not None and (not isinstance(value, (int, float)) or isinstance(value, bool) or value < 0):
                    raise SchedcError(f"{path}: kernel '{name}': {field_name} {value!r} is not a number >= 0")
    return kernels


def merge(folder: str, database_path: str | None, target: Target) -> tuple[KernelDatabase, list[TunedEntry], str]:
    """Adds the winners of a benched folder to a database (the built-in one by default)."""
    manifest = read_manifest(folder)
    results = {"kernels": read_results(folder, f"'schedc tune bench {folder}' on the GPU")}
    if not all(isinstance(manifest.get(k), str) for k in ("target", "arch", "chip")):
        raise SchedcError(f"{folder}/{MANIFEST}: not a GPU tuning manifest (no target, arch and chip)")
    if manifest["target"] != target.name or manifest["arch"] != target.arch:
        raise SchedcError(f"{folder} was prepared for {manifest['target']} {manifest['arch']}, not {target.name} {target.arch}")
    path = database_path or str(_builtin_path(manifest))
    if Path(path).exists():
        database = KernelDatabase.load(path)
        if (database.target, database.arch) != (manifest["target"], manifest["arch"]):
            raise SchedcError(f"{path} holds configs for {database.target} {database.arch}, not {manifest['target']} {manifest['arch']}")
    else:
        database = default_database(manifest["target"], manifest["arch"]) if database_path is None else None
        database = database or KernelDatabase(manifest["chip"], manifest["target"], manifest["arch"])
    kept = [entry for entry in winners(manifest, results["kernels"]) if database.merge(entry)]
    database.save(path)
    return database, kept, path


def _builtin_path(manifest: dict) -> Path:
    from schedc.decisions.kernel_config import BUILTIN_DATABASES

    return BUILTIN_DATABASES / f"{manifest['target']}-{manifest['chip']}-{manifest['arch']}.json"
