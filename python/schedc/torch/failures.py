"""What a user reads when torch.export or torch-mlir cannot take their model: their own line
that was running, the error's first lines, and what usually helps."""

from __future__ import annotations

import traceback
from pathlib import Path


def export_failure(error: BaseException, what: str = "torch.export could not export the model") -> str:
    """One paragraph for a model torch.export or torch-mlir cannot take: the user's line that
    was running, the error's first lines, and what usually helps."""
    # Frames in site-packages (torch, torch-mlir) and in schedc are not the user's.
    others = (Path(torch_file()).parent.parent, Path(__file__).parents[1])
    frames = [f for f in traceback.extract_tb(error.__traceback__) if not any(Path(f.filename).is_relative_to(o) for o in others)]
    where = f"{frames[-1].filename}:{frames[-1].lineno}: " if frames else ""
    lines = [line for line in str(error).strip().splitlines() if line.strip()]
    detail = "\n".join(lines[:3]) if lines else type(error).__name__
    return (
        f"{where}{what} ({type(error).__name__}):\n{detail}\n"
        "(the usual causes: control flow on a tensor's value, torch.cond, example inputs of the wrong shape)"
    )


def torch_file() -> str:
    import torch

    return torch.__file__
