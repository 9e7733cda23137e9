"""A seeded fuzzer of what a user hands schedc, besides MLIR (test_fuzz.py mutates that):
command lines, the JSON files schedc reads back (reports, tuning manifests and results,
kernel and CPU databases) and the arguments of a loaded module's calls.

    python test/python/fuzz_inputs.py SEED COUNT FOLDER

Every case runs in this process against a sandbox in FOLDER (inputs made once: MLIR files,
modules, an archive, a report, a tuning folder, databases) and is classified:
- ok / error: it worked, or said what was wrong (a SchedcError; exit 1 with "error:");
- traceback: any other exception, or "Traceback" printed;
- exit: an exit code other than 0 and 1;
- changed: a file of the sandbox changed, or one appeared that the case did not name.
Relative paths resolve in FOLDER/cwd, which is checked as the sandbox is. A signal kills the
process: FOLDER/progress names the case it was on. Each case's outcome is a
line of FOLDER/results.jsonl; FOLDER/progress ends with "done".
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import json
import os
import random
import shutil
import sys
import traceback
import warnings
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]

ADD = """func.func @forward(%a: tensor<4xf32>) -> tensor<4xf32> {
  %0 = arith.addf %a, %a : tensor<4xf32>
  return %0 : tensor<4xf32>
}
"""
def matmul_mlir(n: int) -> str:
    """An n x n matmul as linalg on tensors: the module threads and fuzz cases call."""
    t = f"tensor<{n}x{n}xf32>"
    return f"""func.func @forward(%a: {t}, %b: {t}) -> {t} {{
  %c0 = arith.constant 0.0 : f32
  %e = tensor.empty() : {t}
  %z = linalg.fill ins(%c0 : f32) outs(%e : {t}) -> {t}
  %0 = linalg.matmul ins(%a, %b : {t}, {t}) outs(%z : {t}) -> {t}
  return %0 : {t}
}}
"""


MATMUL = matmul_mlir(16)


def call_in_threads(module, threads: int, calls: int, kind: str) -> int:
    """`threads` threads each make `calls` calls of `module` (a 64 x 64 matmul) with inputs
    of their own (numpy, torch or the async API); returns how many results were wrong."""
    import threading

    import torch

    wrong = []

    def worker(seed: int):
        rng = np.random.default_rng(seed)
        for _ in range(calls):
            a, b = rng.standard_normal((2, 64, 64), dtype=np.float32)
            if kind == "numpy":
                got = module.forward(a, b)
            elif kind == "torch":
                got = module.forward(torch.from_numpy(a), torch.from_numpy(b), copy=True).numpy()
            else:
                got = module.forward.async_(a, b).wait()
            if not np.allclose(got, a @ b, rtol=1e-4, atol=1e-3):
                wrong.append(seed)

    pool = [threading.Thread(target=worker, args=(seed,)) for seed in range(threads)]
    for t in pool:
        t.start()
    for t in pool:
        t.join()
    return len(wrong)


DYNAMIC = ADD.replace("4xf32", "?x8xf32")


# -- the sandbox -------------------------------------------------------------------------------


def make_sandbox(folder: Path) -> dict:
    """The inputs every case reads: made once, never to change."""
    import schedc
    from schedc.tools.schedc import main

    box = folder / "box"
    box.mkdir(parents=True)
    (box / "add.mlir").write_text(ADD)
    (box / "mm.mlir").write_text(MATMUL)
    (box / "dyn.mlir").write_text(DYNAMIC)
    (box / "notes.txt").write_text("not mlir\n")
    (box / "empty.mlir").write_text("")
    (box / "dir").mkdir()
    shutil.copy(ROOT / "examples" / "models.py", box / "models.py")
    schedc.compile(ADD, output=str(box / "add.vmfb"), report=str(box / "report.json"))
    schedc.compile(MATMUL, output=str(box / "mm.graphs.vmfb"), execution="graphs")
    schedc.compile(DYNAMIC, output=str(box / "dyn.vmfb"), batch_buckets=(1, 4))
    import torch

    model = torch.nn.Linear(4, 3).eval()
    mlir = schedc.import_torch(model, torch.ones(2, 4), params=str(box / "w.irpa"))
    schedc.compile(mlir, output=str(box / "lin.vmfb"))
    with contextlib.redirect_stderr(io.StringIO()):
        assert main(["tune", "prepare", str(box / "mm.mlir"), "-o", str(box / "tune"), "--candidates=1"]) == 0
    (box / "tune" / "results.json").write_text(json.dumps({"device": "cuda", "calls": 1, "seconds": 0, "kernels": {}}))
    shutil.copy(ROOT / "python" / "schedc" / "kernel_db" / "cuda-h200-sm_80.json", box / "db.json")
    shutil.copy(ROOT / "python" / "schedc" / "kernel_db" / "cpu-x86_64-avx512.json", box / "cpudb.json")
    (folder / "out").mkdir()
    return {"box": box, "out": folder / "out", "modules": _modules(box)}


def _modules(box: Path) -> dict:
    import schedc

    return {
        "add": schedc.load(str(box / "add.vmfb")),
        "mm": schedc.load(str(box / "mm.graphs.vmfb")),
        "dyn": schedc.load(str(box / "dyn.vmfb")),
        "lin": schedc.load(str(box / "lin.vmfb"), params=str(box / "w.irpa")),
    }


def snapshot(box: Path) -> dict[str, str]:
    return {str(p.relative_to(box)): hashlib.sha256(p.read_bytes()).hexdigest() if p.is_file() else "dir"
            for p in sorted(box.rglob("*"))}


# -- generators --------------------------------------------------------------------------------

WEIRD = ["", "-", "--", "x" * 300, "\u00e9\u4e2d", "../../etc/passwd", "%s%n", "0", "-1", "1e309", "nan", "None", "{}", "[]",
         "a,b", "1,,2", " ", "\t", "=", "@", "@@", "99999999999999999999"]


def _path(rng: random.Random, sandbox: dict, output: bool = False) -> str:
    box, out = sandbox["box"], sandbox["out"]
    inputs = ["add.mlir", "mm.mlir", "dyn.mlir", "notes.txt", "empty.mlir", "dir", "models.py", "add.vmfb", "report.json",
              "db.json", "cpudb.json", "w.irpa", "lin.vmfb", "tune", "nope.mlir"]
    if output:
        choices = [str(out / rng.choice(["o.vmfb", "o.mlir", "o.json", "o.html", "o.irpa", "o.npy", "sub/o.vmfb", "o"])),
                   os.devnull, "/etc/passwd/x", "/nonexistent/dir/o", str(box / rng.choice(inputs)), str(out), "-"]
        return rng.choice(choices)
    return rng.choice([str(box / rng.choice(inputs)), rng.choice(WEIRD), "/etc/passwd", os.devnull, "/nonexistent/x.mlir"])


def _value(rng: random.Random) -> str:
    return rng.choice([*WEIRD, str(rng.randint(-5, 5)), str(2 ** rng.randint(0, 70)), "cuda", "llvm-cpu", "rocm", "vulkan",
                       "tpu", "sm_80", "gfx942", "host", "graphs", "streams", "flow", "hal", "vmfb", "executables", "f16",
                       "local-task", "local-sync", "forward", "1,2,4", "4xf32=1", "4xbf16=2", "2x2xi1=1", "99999x99999xf32=1",
                       "memory-order", "arena-plan{alignment=3}", "memory-order{max-states=-1}", "remat{memory-budget=2}",
                       "split-concat,memory-order", "no-such-pass", "print-kernel-graph", "cpu-config{mode=nope}"])


COMPILE_FLAGS = ["--target", "--passes", "--emit", "--dump-phases", "--cuda-arch", "--rocm-arch", "--vulkan-target", "--cpu",
                 "--report", "--summary", "--timing", "--verify-plan", "--execution", "--batch-buckets", "--no-tuning",
                 "--kernel-db", "--iree-flag", "--no-schedc-passes", "--bogus"]
BARE = {"--summary", "--timing", "--verify-plan", "--no-tuning", "--no-schedc-passes"}


def cli_case(rng: random.Random, sandbox: dict) -> dict:
    """A command line: a subcommand and a few options, most of them wrong."""
    kind = rng.choices(["compile", "run", "report", "params", "tune", "import", "opt"], [10, 30, 15, 15, 15, 3, 12])[0]
    outputs = []

    def out():
        path = _path(rng, sandbox, output=True)
        outputs.append(path)
        return path

    if kind == "compile":
        argv = [_path(rng, sandbox)]
        for flag in rng.sample(COMPILE_FLAGS, rng.randint(1, 4)):
            argv += [flag] if flag in BARE else [f"{flag}={out() if flag in ('--report', '--dump-phases') else _value(rng)}"]
        argv += ["-o", out()]
        # a compile that would run IREE on a valid input is slow: most are refused before
        if rng.random() < 0.7 and not any(a.startswith("--bogus") for a in argv):
            argv.append("--target=" + rng.choice(["tpu", "", "cuda --x"]))
    elif kind == "run":
        argv = ["run", _path(rng, sandbox)] + [f"--input={rng.choice(['@' + _path(rng, sandbox), _value(rng)])}" for _ in range(rng.randint(0, 3))]
        argv += rng.choice([[], [f"--output=@{out()}"], [f"--device={_value(rng)}"], [f"--params={_path(rng, sandbox)}"],
                            [f"--function={_value(rng)}"], [f"--execution={_value(rng)}"]])
    elif kind == "report":
        argv = ["report", _path(rng, sandbox)] + rng.choice([["-o", out()], [], ["-o"]])
    elif kind == "params":
        argv = rng.choice([["params", "show", _path(rng, sandbox)],
                           ["params", "save", _path(rng, sandbox), "-o", out()] + rng.choice([[], ["--seed", _value(rng)], ["--dtype", _value(rng)]]),
                           ["params", rng.choice(WEIRD)]])
    elif kind == "tune":
        argv = rng.choice([["tune", "prepare", _path(rng, sandbox), "-o", out(), f"--candidates={rng.choice(['-1', '0', 'x'])}"],
                           ["tune", "merge", _path(rng, sandbox), "--database", out()],
                           ["tune", "bench", _path(rng, sandbox), f"--device={_value(rng)}", f"--calls={rng.choice(['0', '-3', 'x'])}"],
                           ["tune", rng.choice(WEIRD)]])
    elif kind == "import":
        argv = ["import", rng.choice([f"{_path(rng, sandbox)}:{rng.choice(['mlp', 'nope', ''])}", _value(rng)]), "-o", out()]
        argv += rng.choice([[], ["--save-inputs"], [f"--dtype={_value(rng)}"], [f"--params={out()}"], ["--train"]])
    else:
        argv = ["--opt", _path(rng, sandbox), f"--passes={_value(rng)}", "-o", out()] + rng.choice([[], ["--split-input-file"]])
    return {"kind": "cli", "argv": argv, "outputs": outputs}


def _mutate(rng: random.Random, value, depth: int = 0):
    """One random change somewhere in a JSON value."""
    if isinstance(value, dict) and value and rng.random() < 0.7:
        key = rng.choice(list(value))
        action = rng.random()
        if action < 0.25:
            del value[key]
        elif action < 0.5 or depth > 6:
            value[key] = rng.choice([None, -1, 1e308, "x", [], {}, [1, "a"], True, 2 ** 70])
        else:
            value[key] = _mutate(rng, value[key], depth + 1)
        return value
    if isinstance(value, list) and value and rng.random() < 0.7:
        i = rng.randrange(len(value))
        if rng.random() < 0.3:
            value.pop(i)
        else:
            value[i] = _mutate(rng, value[i], depth + 1)
        return value
    return rng.choice([None, -1, 0, 1e308, "x", [], {}, [None], True, 2 ** 70, -0.5])


def json_case(rng: random.Random, sandbox: dict) -> dict:
    """A JSON file schedc reads back, changed, and the command that reads it."""
    box = sandbox["box"]
    kind = rng.choice(["report", "manifest", "results", "kernel-db", "cpu-db"])
    source = {"report": box / "report.json", "manifest": box / "tune" / "manifest.json", "results": box / "tune" / "results.json",
              "kernel-db": box / "db.json", "cpu-db": box / "cpudb.json"}[kind]
    document = json.loads(source.read_text())
    for _ in range(rng.randint(1, 3)):
        document = _mutate(rng, document)
    text = json.dumps(document) if rng.random() < 0.9 else json.dumps(document)[: rng.randint(0, 50)]
    return {"kind": "json", "what": kind, "text": text, "outputs": []}


def _argument(rng: random.Random, shape: tuple, dtype=np.float32):
    import torch

    choice = rng.randrange(14)
    if choice == 0:
        return np.ones(shape, dtype)
    if choice == 1:
        return np.ones(tuple(reversed(shape)) + (1,), dtype)
    if choice == 2:
        return np.ones(shape, rng.choice([np.float64, np.int32, np.int64, np.bool_, np.float16, np.uint8]))
    if choice == 3:
        return rng.choice([1.5, 3, True, -0.0, 2 ** 70])
    if choice == 4:
        return rng.choice([None, "x", b"x", {}, [1, 2], [[1.0] * 4], object()])
    if choice == 5:
        return torch.ones(shape)
    if choice == 6:
        return torch.ones((shape[0] + 1,) + shape[1:])[1:]  # an unaligned view
    if choice == 7:
        return torch.ones(tuple(reversed(shape))).T if len(shape) == 2 else torch.ones(shape[0] * 2)[::2]  # strided
    if choice == 8:
        return torch.ones(shape, dtype=rng.choice([torch.float64, torch.int64, torch.bfloat16, torch.float16]))
    if choice == 9:
        return torch.ones(shape, requires_grad=True)
    if choice == 10:
        return np.ones((0,) + shape[1:], dtype)
    if choice == 11:
        return np.ones(shape, dtype)[..., ::-1] if shape else np.float32(1)
    if choice == 12:
        return np.asfortranarray(np.ones(shape, dtype))
    return np.full(shape, np.nan, dtype)


def runtime_case(rng: random.Random, sandbox: dict) -> dict:
    """A call of a loaded module with arguments of any kind, or a load with odd options."""
    name = rng.choice(["add", "mm", "dyn", "lin", "load"])
    if name == "load":
        return {"kind": "load", "path": _path(rng, sandbox), "device": rng.choice(["local-task", "local-sync", None, 5, "cuda", "x", ""]),
                "params": rng.choice([None, str(sandbox["box"] / "w.irpa"), _path(rng, sandbox), ["x"], {"model": 5}, 3]),
                "execution": rng.choice([None, "graphs", "streams", "x", 1]), "wait": rng.choice([None, "spin", "block", "x"]), "outputs": []}
    shapes = {"add": [(4,)], "mm": [(16, 16), (16, 16)], "dyn": [(rng.choice([1, 3, 4, 5, 0]), 8)], "lin": [(2, 4)]}[name]
    count = len(shapes) + rng.choice([0, 0, 0, -1, 1])
    seed = rng.randrange(2 ** 31)
    return {"kind": "call", "module": name, "shapes": shapes, "count": max(count, 0), "seed": seed,
            "how": rng.choice(["call", "call", "copy", "async"]), "outputs": []}


# -- running a case ----------------------------------------------------------------------------


def run_case(case: dict, sandbox: dict) -> tuple[str, str]:
    """(outcome, message) of one case."""
    from schedc.errors import SchedcError

    stdout, stderr = io.TextIOWrapper(io.BytesIO(), encoding="utf-8"), io.StringIO()
    try:
        with contextlib.redirect_stdout(stdout), contextlib.redirect_stderr(stderr), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            code = _execute(case, sandbox)
    except SchedcError as e:
        return "error", str(e)[:300]
    except SystemExit as e:
        code = e.code if isinstance(e.code, int) else 1
    except KeyboardInterrupt:
        raise
    except BaseException:  # everything else is a finding
        return "traceback", traceback.format_exc()[-2000:]
    text = stderr.getvalue()
    if "Traceback" in text:
        return "traceback", text[-2000:]
    if code not in (0, 1, None):
        return "exit", f"exit code {code}: {text[-500:]}"
    return ("ok" if not code else "error"), text[-300:]


def _execute(case: dict, sandbox: dict):
    if case["kind"] == "cli":
        argv = case["argv"]
        if argv[0] == "--opt":
            from schedc.tools.schedc_opt import main as opt_main

            return opt_main(argv[1:])
        from schedc.tools.schedc import main

        return main(argv)
    if case["kind"] == "json":
        return _read_back(case, sandbox)
    if case["kind"] == "load":
        import schedc

        schedc.load(case["path"], device=case["device"], params=case["params"], execution=case["execution"], wait=case["wait"])
        return 0
    return _call(case, sandbox)


def _read_back(case: dict, sandbox: dict):
    """Writes the changed document into a copy of its place and runs what reads it."""
    from schedc.tools.schedc import main

    out = sandbox["out"]
    what = case["what"]
    if what in ("manifest", "results"):
        folder = out / "tune"
        shutil.copytree(sandbox["box"] / "tune", folder)
        (folder / f"{what}.json").write_text(case["text"])
        case["outputs"] = [str(out / "db.json")]
        return main(["tune", "merge", str(folder), "--database", str(out / "db.json")])
    path = out / f"{what}.json"
    path.write_text(case["text"])
    if what == "report":
        return main(["report", str(path), "-o", str(out / "r.html")])
    if what == "kernel-db":
        from schedc.decisions.kernel_config import KernelDatabase

        KernelDatabase.load(path).check_for("cuda", "sm_80")
        return 0
    from schedc.decisions.cpu_config import CpuDatabase

    CpuDatabase.load(str(path))
    return 0


def _call(case: dict, sandbox: dict):
    module = sandbox["modules"][case["module"]]
    rng = random.Random(case["seed"])
    shapes = case["shapes"]
    args = [_argument(rng, shapes[min(i, len(shapes) - 1)]) for i in range(case["count"])]
    function = module.forward
    if case["how"] == "async":
        result = function.async_(*args).wait()
    else:
        result = function(*args, copy=case["how"] == "copy")
    _check_result(case, args, result)
    return 0


def _check_result(case: dict, args: list, result) -> None:
    """A call that returns must return the right numbers, for the inputs it was given."""
    values = [np.asarray(a.detach().float() if hasattr(a, "detach") else a, dtype=np.float64) for a in args]
    got = np.asarray(result.detach().float() if hasattr(result, "detach") else result, dtype=np.float64)
    name = case["module"]
    if name in ("add", "dyn"):
        expected = values[0] * 2
    elif name == "mm":
        expected = values[0] @ values[1]
    else:
        return  # lin: its weights are random; the call's success is what is checked
    if got.shape != expected.shape or not np.allclose(got, expected, rtol=1e-2, atol=1e-2, equal_nan=True):
        raise AssertionError(f"wrong result for {case}: got {got.ravel()[:4]} expected {expected.ravel()[:4]}")


def generate(rng: random.Random, sandbox: dict) -> dict:
    kind = rng.choices(["cli", "json", "runtime"], [40, 25, 35])[0]
    return {"cli": cli_case, "json": json_case, "runtime": runtime_case}[kind](rng, sandbox)


def clean_outputs(out: Path) -> None:
    for path in out.iterdir():
        shutil.rmtree(path) if path.is_dir() and not path.is_symlink() else path.unlink()


def main(seed: int, count: int, folder: Path) -> int:
    folder = folder.resolve()
    scratch = folder / "cwd"  # relative outputs (`-o o.vmfb`, a folder named "-") land here
    scratch.mkdir()
    os.chdir(scratch)
    sandbox = make_sandbox(folder)
    box, out = sandbox["box"], sandbox["out"]
    pristine = folder / "pristine"
    shutil.copytree(box, pristine)
    before = snapshot(box)
    progress, results = folder / "progress", (folder / "results.jsonl").open("w")
    rng = random.Random(seed)
    for number in range(count):
        case = generate(rng, sandbox)
        progress.write_text(json.dumps({"number": number, "case": _printable(case)}) + "\n")
        outcome, message = run_case(case, sandbox)
        after = snapshot(box)
        if after != before:  # a named output may be a sandbox file: anything else is a finding
            changed = sorted({path for path, _ in set(after.items()) ^ set(before.items())})
            unnamed = [p for p in changed if not _named_in(box / p, case)]
            if unnamed:
                outcome, message = "changed", f"files of the sandbox the case did not name changed: {unnamed[:4]}"
            shutil.rmtree(box)
            shutil.copytree(pristine, box)
        stray = [p for p in [*out.rglob("*"), *scratch.rglob("*")] if p.is_file() and not _named_in(p, case)]
        if stray and outcome != "changed":
            outcome, message = "changed", f"files the case did not name: {[str(p) for p in stray[:3]]}"
        results.write(json.dumps({"number": number, "outcome": outcome, "case": _printable(case), "message": message}) + "\n")
        results.flush()
        clean_outputs(out)
        clean_outputs(scratch)
    progress.write_text("done\n")
    return 0


def _named_in(path: Path, case: dict) -> bool:
    """Files a case may make besides its outputs: the copies `_read_back` writes, the inputs
    and report beside a named output (--save-inputs, a report's page)."""
    if case["kind"] == "json":
        return True  # its files are its own copies in out/
    named = [Path(o).absolute() for o in case["outputs"] if o != os.devnull]
    return any(path == n or n in path.parents or (path.parent == n.parent and path.name.startswith(n.stem)) for n in named)


def _printable(case: dict) -> dict:
    return {k: (v if isinstance(v, (str, int, float, list, type(None))) else repr(v)) for k, v in case.items()}


if __name__ == "__main__":
    sys.exit(main(int(sys.argv[1]), int(sys.argv[2]), Path(sys.argv[3])))
