"""Runs the example models on a CUDA GPU through schedc and compares them with torch eager.

IREE's compiler does not need the GPU, and the GPU machine need not have the compiler:

    python bench/cuda_check.py prepare build/cuda     # here: import, compile for cuda (sm_80)
    python bench/cuda_check.py run build/cuda         # on the GPU machine: run, compare, time

`run` prints, per model, the max abs and relative error against torch eager on the same GPU and
the median latency of 100 calls after 10 warm-ups (schedc's includes the copies to and from the
host; torch's is the eager forward with a device synchronize).
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from timing import median_ms  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
MODELS = ("mlp", "transformer_block", "branchy_convnet")


def examples():
    spec = importlib.util.spec_from_file_location("schedc_examples", ROOT / "examples" / "models.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def prepare(folder: Path, cuda_arch: str = "sm_80") -> None:
    import torch

    import schedc

    folder.mkdir(parents=True, exist_ok=True)
    for name in MODELS:
        model, args = examples().FACTORIES[name]()
        schedc.compile(schedc.import_torch(model, *args), target="cuda", cuda_arch=cuda_arch, output=str(folder / f"{name}.vmfb"))
        torch.save(model.state_dict(), folder / f"{name}.pt")
        np.save(folder / f"{name}.input.npy", args[0].numpy())


def run(folder: Path) -> list[dict]:
    import torch

    import schedc

    # Compare against true f32: cuDNN would otherwise run convolutions in TF32.
    torch.backends.cudnn.allow_tf32 = False
    torch.backends.cuda.matmul.allow_tf32 = False
    rows = []
    for name in MODELS:
        model, _ = examples().FACTORIES[name]()
        model.load_state_dict(torch.load(folder / f"{name}.pt"))
        model = model.cuda().eval()
        x = np.load(folder / f"{name}.input.npy")
        module = schedc.load(folder / f"{name}.vmfb", device="cuda")
        actual = module.forward(x)
        x_gpu = torch.from_numpy(x).cuda()
        with torch.no_grad():
            expected = model(x_gpu).cpu().numpy()

            def eager():
                model(x_gpu)
                torch.cuda.synchronize()

            torch_ms = median_ms(eager)
        schedc_ms = median_ms(lambda: module.forward(x))
        error = np.abs(actual.astype(np.float64) - expected)
        rows.append(
            {
                "model": name,
                "max_abs_error": float(error.max()),
                "relative_error": float(np.linalg.norm(error) / np.linalg.norm(expected)),
                "schedc_cuda_ms": round(schedc_ms, 4),
                "torch_eager_ms": round(torch_ms, 4),
            }
        )
    return rows


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("step", choices=("prepare", "run"))
    parser.add_argument("folder", type=Path)
    args = parser.parse_args()
    if args.step == "prepare":
        prepare(args.folder)
        return 0
    import torch

    rows = run(args.folder)
    print(f"device: {torch.cuda.get_device_name()}  (IREE cuda driver, PTX for sm_80)")
    print(f"{'model':<20}{'max abs err':>14}{'rel err':>12}{'schedc ms':>12}{'torch eager ms':>16}")
    for r in rows:
        print(f"{r['model']:<20}{r['max_abs_error']:>14.3g}{r['relative_error']:>12.3g}{r['schedc_cuda_ms']:>12.3f}{r['torch_eager_ms']:>16.3f}")
    (args.folder / "results.json").write_text(json.dumps(rows, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
