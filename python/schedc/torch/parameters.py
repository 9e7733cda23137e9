"""A model's weights as a parameter archive: torch's side (the runtime writes the file).

Needs torch and IREE's runtime only, not the compiler: `schedc params save` runs on a machine
that runs modules and cannot compile them.

Which tensors go to the archive, under which key, is decided here once, for the importer (which
names them in the MLIR) and for the archive writer alike:
- a model's state_dict entries (parameters and persistent buffers), under their state_dict key;
- of an element type the runtime keeps bit for bit (ARCHIVE_DTYPES); other tensors (bool masks,
  f64, which IREE demotes to f32 inside the module) stay inlined in the module;
- tensors that share memory (tied weights, such as a language model's embedding and output
  projection) are one entry, under the first of their keys in state_dict order, which is also
  the order torch.export lists them in.
"""

from __future__ import annotations

import zipfile
from pathlib import Path

from schedc.errors import SchedcError
from schedc.runtime.interop import _first_line

# torch's element types an archive entry keeps, by name, as MLIR names them.
ARCHIVE_DTYPES = {"float32": "f32", "float16": "f16", "bfloat16": "bf16", "int64": "i64", "int32": "i32", "int8": "i8"}


def archive_dtype(tensor) -> str | None:
    """MLIR's element type of a tensor an archive keeps; None for one that stays inlined."""
    return ARCHIVE_DTYPES.get(str(tensor.dtype).removeprefix("torch."))


def alias_key(tensor) -> tuple:
    """What makes two tensors the same weight: their memory, shape, strides and dtype."""
    return (tensor.untyped_storage().data_ptr(), tensor.storage_offset(), tuple(tensor.shape), tuple(tensor.stride()), tensor.dtype)


def archive_keys(state_dict: dict) -> dict[str, str]:
    """Each key of `state_dict` whose tensor an archive holds -> the archive's key for it (its
    own, or that of the first tensor sharing its memory): see the module's doc."""
    import torch

    keys, first = {}, {}
    for key, tensor in state_dict.items():
        if isinstance(tensor, torch.Tensor) and archive_dtype(tensor) is not None:
            keys[key] = first.setdefault(alias_key(tensor), key)
    return keys


def archived_tensors(state_dict: dict) -> dict:
    """The entries of `state_dict` an archive holds (key -> tensor), one per weight."""
    return {key: state_dict[key] for key, archived in archive_keys(state_dict).items() if key == archived}


def to_numpy(tensor):
    """A host numpy array with the tensor's bytes (bfloat16 through ml_dtypes)."""
    import torch

    tensor = tensor.detach().cpu().contiguous()
    if tensor.dtype == torch.bfloat16:
        import ml_dtypes

        return tensor.view(torch.int16).numpy().view(ml_dtypes.bfloat16)
    return tensor.numpy()


def save_params(weights, path: str) -> int:
    """Writes a model's weights (a torch.nn.Module, or its state_dict) to a parameter archive
    at `path`, under the keys `schedc.import_torch(..., params=...)` names them by; returns how
    many entries it wrote. Another checkpoint of the architecture written so loads into the
    same compiled module."""
    import torch

    from schedc.runtime.parameters import write_archive

    state_dict = weights.state_dict() if isinstance(weights, torch.nn.Module) else weights
    if not isinstance(state_dict, dict):
        raise SchedcError(f"save_params takes a torch.nn.Module or a state_dict, not {type(weights).__name__}")
    tensors = archived_tensors(state_dict)
    write_archive({key: to_numpy(t) for key, t in tensors.items()}, path)
    return len(tensors)


def read_checkpoint(path: str, dtype: str | None = None) -> dict:
    """The state_dict of a checkpoint file (torch.save of a state_dict, or of a dict holding one
    under "state_dict" or "model"), its floating-point tensors converted to `dtype` (f32, f16,
    bf16) when given."""
    import torch

    if not Path(path).is_file():
        raise SchedcError(f"{path}: no such file")
    if not zipfile.is_zipfile(path):
        raise SchedcError(f"{path}: not a torch checkpoint of tensors (torch.save writes a zip archive)")
    try:
        loaded = torch.load(path, map_location="cpu", weights_only=True)
    except Exception as e:  # torch.load raises many kinds: a pickle, zip or weights-only refusal
        if "weights_only" in str(e) or "Weights only" in str(e):  # a pickled object, not only tensors: not unpickled here
            raise SchedcError(f"{path}: a pickled Python object, not a checkpoint of tensors; save the model's state_dict() "
                              "(torch.save(model.state_dict(), PATH)) and pass that") from None
        raise SchedcError(f"{path}: not a torch checkpoint of tensors: {_first_line(e)}") from None
    for key in ("state_dict", "model"):
        if isinstance(loaded, dict) and isinstance(loaded.get(key), dict):
            loaded = loaded[key]
            break
    if not isinstance(loaded, dict) or not any(isinstance(v, torch.Tensor) for v in loaded.values()):
        raise SchedcError(f"{path}: holds a {type(loaded).__name__}, not a state_dict (a dict of tensors)")
    state = {str(k): v for k, v in loaded.items() if isinstance(v, torch.Tensor)}
    if dtype is not None:
        types = {"f32": torch.float32, "f16": torch.float16, "bf16": torch.bfloat16}
        state = {k: v.to(types[dtype]) if v.is_floating_point() else v for k, v in state.items()}
    return state
