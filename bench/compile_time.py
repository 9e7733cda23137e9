"""schedc's llvm-cpu compile time against `--no-tuning`'s (issue 28's goal: at most 1.5x), the
two compiles alternating in one process, per held-out model.

    python bench/compile_time.py [--models vit,hf_resnet18] [--rounds 5]

Each round compiles the model (bench/heldout.py, f32, weights inlined) with `schedc.compile`
for the host CPU, once with schedc's default pipeline (cpu-config included) and once with
`tuning=False` (schedc before cpu-config); it prints each one's median and their ratio.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--models", default="vit,hf_resnet18,squeezenet1_1,convnext")
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()

    import schedc
    from generalization import import_model

    for name in args.models.split(","):
        mlir = import_model(name, "f32")[2]
        times = {"default": [], "no-tuning": []}
        for _ in range(args.rounds):
            for label in times:
                started = time.perf_counter()
                schedc.compile(mlir, target="llvm-cpu", tuning=label == "default")
                times[label].append(time.perf_counter() - started)
        default, reference = (statistics.median(times[label]) for label in times)
        print(f"{name}: default {default:.2f} s, --no-tuning {reference:.2f} s, {default / reference:.2f}x "
              f"(medians of {args.rounds})", flush=True)


if __name__ == "__main__":
    main()
