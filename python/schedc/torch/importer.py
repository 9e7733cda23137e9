"""PyTorch import: torch-dialect MLIR through torch-mlir's FX importer.

torch-mlir carries its own MLIR build, so the result crosses to IREE as text, never as objects.
"""

from __future__ import annotations

import contextlib
import importlib.util
import io
import logging
import sys
import traceback
import warnings
from pathlib import Path

from schedc.errors import SchedcError
from schedc.torch.failures import export_failure


# Reduced precisions an import can convert a float32 model to, by their MLIR names.
DTYPES = ("f32", "f16", "bf16")


def import_torch(model, *example_args, func_name: str | None = None, dtype: str | None = None, dynamic_batch: bool = False,
                 train: bool = False, targets: tuple = (), loss=None) -> str:
    """Exports `model(*example_args)` with torch.export and returns torch-dialect MLIR text
    (a function `forward`, or `func_name`).

    With `train=True`, the function is one training step instead, `train_step` by default:
    (parameters, buffers, inputs, targets) -> (updated buffers, loss, gradients) of
    `loss(model(*example_args), *targets)`, as `schedc.torch.training` documents.

    Weights are inlined as `dense_resource` blobs, so the text is self-contained. With
    `dtype="f16"` or `"bf16"`, a copy of the model and its floating-point example inputs are
    converted first: the module then takes and returns that type (GPU tensor cores run it).
    With `dynamic_batch`, dimension 0 of every tensor input is left dynamic (for batch buckets:
    `schedc.compile(..., batch_buckets=(1, 2, 4, 8))`).
    """
    import torch
    from torch_mlir import fx

    if not isinstance(model, torch.nn.Module):
        raise SchedcError(f"import_torch expects a torch.nn.Module, got {type(model).__name__}")
    if dtype is not None:
        model, example_args = convert_precision(model, example_args, dtype)
    if train:
        from schedc.torch.training import import_train_step

        if loss is None:
            raise SchedcError("a training step needs a loss: import_torch(..., train=True, targets=(y,), loss=fn)")
        if dynamic_batch:
            raise SchedcError("training steps take static shapes: dynamic_batch is for inference")
        targets = targets if isinstance(targets, (tuple, list)) else (targets,)
        if dtype is not None:
            targets = convert_tensors(targets, dtype)
        return import_train_step(model, tuple(example_args), tuple(targets), loss, func_name or "train_step")[0]
    func_name = func_name or "forward"
    model = model.eval()
    options = {}
    if dynamic_batch:
        example_args, options["dynamic_shapes"] = _dynamic_batch(example_args)
    # torch logs and prints a failed export's tracebacks and graphs itself: the error below
    # says what failed, at the user's line.
    logging.disable(logging.CRITICAL)
    chatter = io.StringIO()
    try:
        with torch.no_grad(), warnings.catch_warnings(), contextlib.redirect_stdout(chatter), contextlib.redirect_stderr(chatter):
            warnings.simplefilter("ignore")
            module = fx.export_and_import(model, *example_args, output_type="torch", func_name=func_name, **options)
    except Exception as e:  # torch.export's or torch-mlir's refusal of the user's model
        if dynamic_batch:  # torch.export's constraint errors: the model fixes its batch
            raise SchedcError(f"the model cannot be exported with a dynamic batch: {str(e).strip().splitlines()[0]}") from None
        raise SchedcError(export_failure(e)) from None
    finally:
        logging.disable(logging.NOTSET)
    return str(module)


def convert_precision(model, example_args, dtype: str):
    """A copy of `model` and of its floating-point inputs in `dtype` (f32, f16 or bf16)."""
    import copy

    return copy.deepcopy(model).to(_torch_dtype(dtype)), convert_tensors(example_args, dtype)


def convert_tensors(values, dtype: str) -> tuple:
    """`values` with each floating-point tensor converted to `dtype`; the rest as they are."""
    import torch

    torch_dtype = _torch_dtype(dtype)
    return tuple(v.to(torch_dtype) if isinstance(v, torch.Tensor) and v.is_floating_point() else v for v in values)


def _torch_dtype(dtype: str):
    import torch

    types = {"f32": torch.float32, "f16": torch.float16, "bf16": torch.bfloat16}
    if dtype not in types:
        raise SchedcError(f"unknown dtype '{dtype}'; valid: {', '.join(DTYPES)}")
    return types[dtype]


def _dynamic_batch(example_args):
    """Examples of batch 2 at least (torch.export specializes a batch of 1) and a dynamic
    dimension 0 for each tensor."""
    import torch

    batch = torch.export.Dim("batch", min=1, max=65536)
    examples, shapes = [], []
    for value in example_args:
        if isinstance(value, torch.Tensor) and value.dim() > 0:
            if value.shape[0] == 1:
                value = torch.cat([value, value])
            shapes.append({0: batch})
        else:
            shapes.append(None)
        examples.append(value)
    return tuple(examples), tuple(shapes)


def load_factory(spec: str, train: bool = False):
    """Calls `path/to/file.py:factory` and returns (model, example_args).

    The factory returns the model and its example inputs: `(model, (x, y))` or `(model, x)`.
    With `train`, it returns the model, its inputs, the targets and the loss:
    `(model, x, y, loss_fn)` (inputs and targets may be tuples); the result is then
    (model, inputs, targets, loss).
    """
    path_text, sep, factory_name = spec.rpartition(":")
    if not sep or not path_text or not factory_name:
        raise SchedcError(f"'{spec}': expected path/to/file.py:factory")
    path = Path(path_text)
    if not path.is_file():
        raise SchedcError(f"{path_text}: no such file")
    module_name = f"schedc_user_{path.stem}"
    loader_spec = importlib.util.spec_from_file_location(module_name, path)
    user_module = importlib.util.module_from_spec(loader_spec)
    sys.modules[module_name] = user_module
    try:
        loader_spec.loader.exec_module(user_module)
        factory = getattr(user_module, factory_name, None)
        if not callable(factory):
            raise SchedcError(f"{path_text}: has no function '{factory_name}'")
        result = factory()
    except SchedcError:
        raise
    except Exception as e:  # the user's own code failed: point at their line, not at ours
        raise SchedcError(_user_frame(e, path) + f"{type(e).__name__}: {e}") from None
    if train:
        if not (isinstance(result, tuple) and len(result) == 4):
            raise SchedcError(f"{spec}: with --train the factory must return (model, inputs, targets, loss)")
        model, inputs, targets, loss = result
        return model, _as_tuple(inputs), _as_tuple(targets), loss
    if not (isinstance(result, tuple) and len(result) == 2):
        hint = " (it returns four values: for a training step, add --train)" if isinstance(result, tuple) and len(result) == 4 else ""
        raise SchedcError(f"{spec}: the factory must return (model, example_inputs){hint}")
    model, example = result
    return model, _as_tuple(example)


def _as_tuple(values) -> tuple:
    return tuple(values) if isinstance(values, (tuple, list)) else (values,)


def _user_frame(error: BaseException, path: Path) -> str:
    frames = [f for f in traceback.extract_tb(error.__traceback__) if Path(f.filename) == path.resolve() or Path(f.filename) == path]
    if isinstance(error, SyntaxError) and error.lineno:
        return f"{path}:{error.lineno}:{error.offset or 1}: error: "
    if frames:
        return f"{path}:{frames[-1].lineno}: error: "
    return f"{path}: error: "
