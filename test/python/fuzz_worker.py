"""The fuzz test's worker, run in a subprocess so that a crash or a hang cannot take pytest down.

    python fuzz_worker.py passes SEED COUNT OUT_DIR    mutate the flow-phase lit inputs and run
                                                       schedc's passes on each mutant in process
    python fuzz_worker.py compile SEED COUNT OUT_DIR   mutate the CLI inputs and compile each

Each case writes `OUT_DIR/progress` before it starts (the case a crash happened in) and one JSON
line to `OUT_DIR/results.jsonl` when it ends: the mutation, "error" with the message, or "ok".
A Python exception that is not a SchedcError is a bug: it is recorded as "traceback".
"""

from __future__ import annotations

import io
import json
import random
import sys
import time
import traceback
from contextlib import redirect_stdout
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
# The flow- and stream-phase lit inputs, but the 700-kernel one (its passes take seconds).
PASS_INPUTS = sorted(p for p in (ROOT / "test" / "passes").glob("*.mlir") if not p.stem.endswith("-wide"))
COMPILE_INPUTS = [ROOT / "test" / "cli" / "Inputs" / "bad-op.mlir", ROOT / "test" / "cli" / "linalg-input.mlir"]

def passes_for(path: Path) -> str:
    """The pass a lit input was written for, from its name (case12-memory-order-error.mlir)."""
    from schedc.passes import REGISTRY

    stem = path.stem.split("-", 1)[1]
    return next(name for name in sorted(REGISTRY, key=len, reverse=True) if stem.startswith(name))


def mutate(text: str, rng: random.Random) -> tuple[str, str]:
    """One mutation of MLIR text: truncate, flip a byte, delete a line, or swap two op lines."""
    kind = rng.choice(["truncate", "flip", "delete-line", "swap-ops"])
    lines = text.splitlines(keepends=True)
    ops = [i for i, line in enumerate(lines) if "=" in line and not line.lstrip().startswith("//")]
    if kind == "truncate":
        return kind, text[: rng.randrange(len(text))]
    if kind == "flip":
        data = bytearray(text.encode())
        data[rng.randrange(len(data))] ^= 1 << rng.randrange(7)  # stays ASCII: text, not bytes
        return kind, data.decode()
    if kind == "delete-line" or len(ops) < 2:
        del lines[rng.randrange(len(lines))]
        return "delete-line", "".join(lines)
    a, b = rng.sample(ops, 2)
    lines[a], lines[b] = lines[b], lines[a]
    return kind, "".join(lines)


def run_passes(path: Path) -> None:
    """What schedc-opt does with one file: parse (with locations), run the passes, print."""
    from iree.compiler import ir

    from schedc.ir.mlirio import module_text, parse_module, split_chunks
    from schedc.passes import REGISTRY, PassContext
    from schedc.compiler.pipeline import parse_pipeline, run_pipeline

    invocations = parse_pipeline(passes_for(path), REGISTRY)
    for first_line, chunk in split_chunks(path.read_text()):
        module = parse_module(chunk, str(path), ir.Context(), first_line)
        run_pipeline(module, invocations, REGISTRY, PassContext(out=io.StringIO()))
        module_text(module)


def run_compile(path: Path, out: Path) -> None:
    """Compiles the mutant with schedc's passes and without; where both compile, the two
    modules must compute the same numbers."""
    import numpy as np

    import schedc

    schedc.compile(path, output=str(out / "schedc.vmfb"))
    schedc.compile(path, output=str(out / "iree.vmfb"), schedc_passes=False)
    with_schedc, iree_alone = schedc.load(out / "schedc.vmfb"), schedc.load(out / "iree.vmfb")
    for name in with_schedc.function_names:
        rng = np.random.default_rng(0)
        args = [rng.standard_normal(shape).astype(np.float32) for shape in _argument_shapes(path, name)]
        ours, theirs = with_schedc[name](*args), iree_alone[name](*args)
        ours, theirs = (ours if isinstance(ours, tuple) else (ours,)), (theirs if isinstance(theirs, tuple) else (theirs,))
        for a, b in zip(ours, theirs):
            if not np.array_equal(np.asarray(a), np.asarray(b)):
                raise AssertionError(f"@{name}: schedc's module computes other numbers than IREE's")


def _argument_shapes(path: Path, function: str) -> list[tuple[int, ...]]:
    """The static f32 tensor argument shapes of a func.func in the mutant (others: none)."""
    from iree.compiler import ir

    with ir.Context() as context:
        context.allow_unregistered_dialects = True
        module = ir.Module.parse(path.read_text())
        for op in module.body.operations:
            if "sym_name" in op.attributes and ir.StringAttr(op.attributes["sym_name"]).value == function:
                inputs = ir.FunctionType(ir.TypeAttr(op.attributes["function_type"]).value).inputs
                return [tuple(ir.RankedTensorType(t).shape) for t in inputs]
    return []


def main(mode: str, seed: int, count: int, out: Path) -> None:
    from schedc.errors import SchedcError

    rng = random.Random(seed)
    sources = PASS_INPUTS if mode == "passes" else COMPILE_INPUTS
    texts = {p: p.read_text() for p in sources}
    results = (out / "results.jsonl").open("w")
    for case in range(count):
        source = rng.choice(sources)
        kind, text = mutate(texts[source], rng)
        path = out / f"case{case}-{source.name}"  # keeps the input's name: it names the pass
        path.write_text(text)
        (out / "progress").write_text(f"{case} {kind} {source.name}\n")
        record = {"case": case, "mutation": kind, "source": source.name, "file": str(path)}
        started = time.perf_counter()
        try:
            with redirect_stdout(io.StringIO()):
                run_passes(path) if mode == "passes" else run_compile(path, out)
            record["outcome"] = "ok"
        except SchedcError as e:
            record["outcome"], record["message"] = "error", str(e)
        except Exception:
            record["outcome"], record["message"] = "traceback", traceback.format_exc()
        record["seconds"] = round(time.perf_counter() - started, 3)
        results.write(json.dumps(record) + "\n")
        results.flush()
        if record["outcome"] != "traceback":
            path.unlink()
    (out / "progress").write_text("done\n")


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), Path(sys.argv[4]))
