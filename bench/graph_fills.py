"""What a fill (a memset node) costs in a replayed CUDA graph: waiting for the kernel before it,
or beside it. The question behind overlap-fills (passes/overlap_fills.py).

    python bench/graph_fills.py                 # on the GPU machine (torch with CUDA)
    python bench/graph_fills.py build/replay    # also the bench models, made by bench/replay.py prepare

Three graphs, captured with torch.cuda.graph, each of FILLS steps: a small kernel, then a
kernel that reads the step's buffer. `in line`: a memset of the buffer between the two kernels
(as IREE records a fill in a serial execution region); `beside`: the memset on a side stream
that starts after the kernels before the step and joins before the reader, so it runs beside
the step's first kernel (what a fill in one `stream.cmd.concurrent` with the command before it
becomes); `none`: no memset. Per replay: the median of 1000 replays, each synchronized, timed
in turn; per fill: the difference to `none` over FILLS.

With a folder of bench/replay.py's modules: per bench model with fills, its `replay-serial`,
`replay-fills` and `replay-pinned` modules (the same kernels; the fills in line, beside the
kernel before them, or run once when the module loads) in one process, device arrays in and
out, timed in turn (blocks of 20 calls, median of 500 each), and their max relative error
against torch eager on the same GPU.
"""

from __future__ import annotations

import ctypes
import statistics
import sys
import time
from pathlib import Path

FILLS, ELEMENTS = 13, 16 * 34 * 34  # inception's 13 fills per call; a 16x34x34 f32 padded input


def _cudart():
    """The CUDA runtime torch loaded (for cudaMemsetAsync, which torch does not expose)."""
    for line in open("/proc/self/maps"):
        if "libcudart.so" in line:
            library = ctypes.CDLL(line.split()[-1])
            library.cudaMemsetAsync.argtypes = [ctypes.c_void_p, ctypes.c_int, ctypes.c_size_t, ctypes.c_void_p]
            return library
    raise SystemExit("torch has not loaded a CUDA runtime (libcudart): run this on the GPU machine")


def main() -> None:
    import torch

    cudart = _cudart()
    x = torch.zeros(4096, device="cuda")
    buffers = [torch.empty(ELEMENTS, device="cuda") for _ in range(FILLS)]

    def memset(buffer, stream):
        assert cudart.cudaMemsetAsync(buffer.data_ptr(), 0, buffer.numel() * 4, ctypes.c_void_p(stream.cuda_stream)) == 0

    def none():
        for b in buffers:
            x.add_(1.0)
            x.add_(b[:4096])

    def in_line():
        for b in buffers:
            x.add_(1.0)
            memset(b, torch.cuda.current_stream())
            x.add_(b[:4096])

    side = torch.cuda.Stream()

    def beside():
        main = torch.cuda.current_stream()
        for b in buffers:
            side.wait_stream(main)
            with torch.cuda.stream(side):
                memset(b, side)
            x.add_(1.0)
            main.wait_stream(side)
            x.add_(b[:4096])

    graphs = {}
    for name, body in (("none", none), ("in line", in_line), ("beside", beside)):
        warm = torch.cuda.Stream()
        with torch.cuda.stream(warm):
            body()
        torch.cuda.synchronize()
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            body()
        graphs[name] = graph
    times = {name: [] for name in graphs}
    for _ in range(10):
        for name, graph in graphs.items():
            for _ in range(100):
                torch.cuda.synchronize()
                start = time.perf_counter()
                graph.replay()
                torch.cuda.synchronize()
                times[name].append((time.perf_counter() - start) * 1e6)
    medians = {name: statistics.median(t) for name, t in times.items()}
    print(f"{torch.cuda.get_device_name()}: {FILLS} steps of two kernels, {ELEMENTS * 4} B per fill")
    for name, us in medians.items():
        print(f"  {name:8s} {us:8.2f} us per replay, {(us - medians['none']) / FILLS:5.2f} us per fill")


def models(folder: Path) -> None:
    """replay-serial against replay-fills and replay-pinned, per bench model, in this one process."""
    import iree.runtime as rt
    import numpy as np
    import torch

    import schedc

    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from timing import load_model

    torch.backends.cudnn.allow_tf32 = False
    for name in ("inception", "randwire"):
        model, x = load_model(folder, name)
        with torch.no_grad():
            expected = model(torch.from_numpy(x).cuda()).cpu().numpy()
        variants = [v for v in ("replay-serial", "replay-fills", "replay-pinned") if (folder / f"{name}.{v}.vmfb").exists()]
        modules = {v: schedc.load(folder / f"{name}.{v}.vmfb", device="cuda") for v in variants}
        arrays = {v: rt.asdevicearray(m.device, x) for v, m in modules.items()}
        errors = {v: float(np.abs(np.asarray(m.forward(x)) - expected).max() / np.abs(expected).max()) for v, m in modules.items()}
        times = {v: [] for v in modules}
        for v, module in modules.items():
            for _ in range(50):
                module.forward(arrays[v])
        for _ in range(25):
            for v, module in modules.items():
                for _ in range(20):
                    start = time.perf_counter()
                    module.forward(arrays[v])
                    times[v].append((time.perf_counter() - start) * 1e6)
        medians = {v: statistics.median(times[v]) for v in modules}
        serial = medians["replay-serial"]
        print(f"  {name}: " + "; ".join(
            f"{v} {us:.1f} us per call ({serial / us:.3f}x of serial's speed), rel err {errors[v]:.1e}" for v, us in medians.items()
        ))


if __name__ == "__main__":
    main()
    if len(sys.argv) > 1:
        models(Path(sys.argv[1]))
