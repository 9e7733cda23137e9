"""`schedc tune bench`: time the candidate modules of `schedc tune prepare` on a GPU.

Needs only IREE's runtime and numpy (the GPU machine may have no compiler). Per kernel: one
process-wide device, the module loaded once, seeded random inputs copied to the device once;
per candidate function: one call whose outputs are compared with IREE's own config (`c0`),
warm-up calls, then the median wall time of `calls` calls divided by the dispatches each call
repeats. The call overhead (tens of microseconds) is spread over those repeats, so the figure
is the kernel's time plus its share of launch overhead; it ranks candidates of one kernel.
"""

from __future__ import annotations

import json
import statistics
import sys
import time
from pathlib import Path

import numpy as np

from schedc.errors import SchedcError
from schedc.outputs import write_output

_NUMPY = {"f16": np.float16, "f32": np.float32, "f64": np.float64}


def parse_tensor_type(text: str) -> tuple[tuple[int, ...], type]:
    """`tensor<32x128xf32>` -> ((32, 128), np.float32)."""
    inner = text.removeprefix("tensor<").removesuffix(">")
    *dims, element = inner.split("x")
    if element not in _NUMPY:
        raise SchedcError(f"cannot make inputs of type {text}")
    return tuple(int(d) for d in dims), _NUMPY[element]


def relative_error(value: np.ndarray, reference: np.ndarray) -> float:
    """max |value - reference| / max |reference| (inf on shape mismatch or non-finite values)."""
    value, reference = np.asarray(value, np.float64), np.asarray(reference, np.float64)
    if value.shape != reference.shape or not np.all(np.isfinite(value)):
        return float("inf")
    scale = max(float(np.max(np.abs(reference))) if reference.size else 0.0, 1e-30)
    return float(np.max(np.abs(value - reference))) / scale if value.size else 0.0


def open_device(device: str, folder: str):
    """IREE's config for `device`; where this machine has none, one error that says where the
    step runs instead (IREE's own words end in a colon: "Exception for last tried follows.")."""
    import iree.runtime as rt

    try:
        return rt.Config(device)
    except (RuntimeError, ValueError):
        raise SchedcError(
            f"this machine has no '{device}' device: run 'schedc tune bench {folder}' on the machine with it "
            f"(it needs only iree-base-runtime and numpy), then 'schedc tune merge {folder}' here"
        ) from None


def bench(folder: str, device: str = "cuda", calls: int = 20, warmup: int = 3, progress=None) -> dict:
    """Times every candidate in `folder`; writes and returns results.json's contents."""
    import iree.runtime as rt

    from schedc.tune.prepare import RESULTS, read_manifest

    out = Path(folder)
    manifest = read_manifest(folder)
    config = open_device(device, folder)
    repeat = manifest["repeat"]
    results: dict[str, list] = {}
    started = time.perf_counter()
    for number, kernel in enumerate(manifest["kernels"]):
        results[kernel["name"]] = _bench_kernel(rt, config, out / kernel["module"], kernel, repeat, calls, warmup)
        if progress is not None:
            progress(number + 1, len(manifest["kernels"]), kernel["signature"]["name"])
    document = {"device": device, "calls": calls, "seconds": round(time.perf_counter() - started, 1), "kernels": results}
    write_output(str(out / RESULTS), json.dumps(document, indent=1) + "\n")
    return document


def _bench_kernel(rt, config, path: Path, kernel: dict, repeat: int, calls: int, warmup: int) -> list[dict]:
    vm_module = rt.VmModule.mmap(config.vm_instance, str(path))
    context = rt.SystemContext(vm_modules=[vm_module], config=config)
    functions = context.modules[vm_module.name]
    rng = np.random.default_rng(int(kernel["name"][1:]) + 1)
    host_inputs = []
    for type_text in kernel["operands"]:
        shape, dtype = parse_tensor_type(type_text)
        host_inputs.append(rng.standard_normal(shape).astype(dtype))
    inputs = [rt.asdevicearray(config.device, a) for a in host_inputs]
    measured, reference = [], None
    for name in kernel["functions"]:
        function = functions[name]
        try:
            outputs = _host(function(*inputs))
            if reference is None:
                reference = outputs  # c0, IREE's own config, comes first
            error = max((relative_error(o, r) for o, r in zip(outputs, reference)), default=0.0)
            for _ in range(warmup):
                function(*inputs)
            times = []
            for _ in range(calls):
                start = time.perf_counter()
                function(*inputs)
                times.append(time.perf_counter() - start)
            measured.append({"function": name, "time_us": statistics.median(times) / repeat * 1e6, "error": error})
        except (RuntimeError, ValueError) as e:
            measured.append({"function": name, "time_us": None, "error": None, "failure": str(e).splitlines()[0][:300]})
    return measured


def _host(results) -> list[np.ndarray]:
    results = results if isinstance(results, (tuple, list)) else [results]
    return [np.asarray(r.to_host() if hasattr(r, "to_host") else r) for r in results]


def print_progress(done: int, total: int, name: str) -> None:
    if sys.stderr.isatty():
        sys.stderr.write(f"\rbenchmarking [{done}/{total}] {name[:50]:<50}")
        if done == total:
            sys.stderr.write("\n")
        sys.stderr.flush()
