"""What a user reads when torch.export or torch-mlir cannot take their model: their own line
that was running, the error's first lines, and what usually helps."""

from __future__ import annotations

import re
import traceback
from pathlib import Path


def export_failure(error: BaseException, what: str = "torch.export could not export the model") -> str:
    """One paragraph for a model torch.export or torch-mlir cannot take: the user's line that
    was running, the error's first lines, and what usually helps."""
    frames = [f for f in traceback.extract_tb(error.__traceback__) if not _not_users(f.filename)]
    where = f"{frames[-1].filename}:{frames[-1].lineno}: " if frames else ""
    lines = [line for line in str(error).strip().splitlines() if line.strip()]
    detail = "\n".join(lines[:3]) if lines else type(error).__name__
    if "data-dependent" in str(error) or type(error).__name__.startswith("GuardOnDataDependent"):
        hint = ("(a Python number or branch taken from a tensor's value decides the program: float(x), int(x), bool(x), "
                ".item(), `if x > 0`; keep the value a tensor, with torch.where for a branch)")
    else:
        hint = "(the usual causes: control flow on a tensor's value, torch.cond, example inputs of the wrong shape)"
    code = f" (in `{frames[-1].line.strip()}`)" if frames and frames[-1].line else ""
    return f"{where}{what}{code} ({type(error).__name__}):\n{detail}\n{hint}"


def torch_file() -> str:
    import torch

    return torch.__file__


def import_failure(error: BaseException, diagnostics: str = "") -> str:
    """One paragraph for a program torch.export made and torch-mlir cannot import or lower:
    the op it has no conversion for (and the user's line that called it, from the node's
    stack trace), or MLIR's located error lines (`diagnostics`: what torch-mlir's passes
    printed)."""
    text = str(error)
    unimplemented = re.search(r"Unimplemented call_function: target=(<[^>]*>|[^,\s]+)", text)
    if unimplemented:
        target = unimplemented.group(1)
        name = re.sub(r"^<(function|built-in function|OpOverload\(op=)\s*'?([\w.]+).*$", r"\2", target)
        frames = [m for m in re.finditer(r'File \\?"([^"\\]+)\\?", line (\d+), in \w+\\n\s*(.*?)\\n', text) if not _not_users(m.group(1))]
        where = f"{frames[-1].group(1)}:{frames[-1].group(2)}: " if frames else ""
        code = f" (in `{frames[-1].group(3).strip()}`)" if frames else ""
        hint = " Python arithmetic on a tensor's value: keep the value a tensor (x + y, not float(x) + int(y))" if name.startswith("sym_") else ""
        return f"{where}torch-mlir cannot import `{name}`{code}: its FX importer has no conversion for it.{hint}"
    errors = [re.sub(r'^loc\("([^"]+)":(\d+):(\d+)\): ', r"\1:\2:\3: ", line.strip()) for line in diagnostics.splitlines() if "error:" in line]
    if errors:
        shown = "\n".join(errors[:3])
        return f"torch-mlir could not lower the program torch.export made ({type(error).__name__}):\n{shown}"
    lines = [line for line in text.strip().splitlines() if line.strip() and not line.startswith("For Torch-MLIR developers")]
    detail = "\n".join(lines[:3]) if lines else type(error).__name__
    return f"torch-mlir could not import the program torch.export made ({type(error).__name__}):\n{detail}"


def _not_users(filename: str) -> bool:
    """Frames in site-packages (torch, torch-mlir) and in schedc are not the user's."""
    path = Path(filename)
    return any(path.is_relative_to(o) for o in (Path(torch_file()).parent.parent, Path(__file__).parents[1]))
