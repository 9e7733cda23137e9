"""Results as torch gave them: the runtime half of schedc.torch.signature.

A function's `schedc.signature` reflection gives its results in torch's terms. Where IREE's
buffer views lose them, a call's results are mended here:
- a dtype IREE's ABI has no word for comes back as the same bits in the dtype torch gave
  (uint8 from IREE's signless int8; bool from a byte);
- a Python-number result (`x.sum().item()`, a `bool` of a comparison) comes back as a number;
- a result that is an argument's value after an in-place write (torch.export made it one
  more result) is written back into the caller's tensor or array and not returned, as the
  torch model leaves it.
Results of other dtypes pass untouched; a function with none of these has no work per call.
"""

from __future__ import annotations

import json

import numpy as np

from schedc.errors import SchedcError
from schedc.runtime.interop import _is_torch

# The dtypes IREE's buffer views may give back in another form (signless, or a byte for bool).
_MENDED = {"bool", "uint8", "uint16", "uint32", "uint64", "float64"}
_NUMBERS = {"int": int, "float": float, "bool": bool}


class Signature:
    """The per-result mending of one function (None from `parse` where nothing needs it)."""

    def __init__(self, results: list[str], mutated: dict[int, int], function: str):
        self.results = results  # every result's entry, as the importer wrote it
        self.mutated = mutated  # result position -> the argument it writes back
        self.function = function

    @classmethod
    def parse(cls, text: str | None, function: str) -> "Signature | None":
        if not text:
            return None
        try:
            results = [str(r) for r in json.loads(text)["results"]]
        except (ValueError, KeyError, TypeError):
            return None  # not schedc's: results as IREE gives them
        mutated = {i: int(r.split(":", 1)[1]) for i, r in enumerate(results) if r.startswith("mutates:")}
        if not mutated and not any(r in _MENDED or r.endswith(":number") for r in results):
            return None
        return cls(results, mutated, function)

    def check_arguments(self, args: tuple) -> None:
        """Before the call: every argument the function writes in place can be written."""
        for position in self.mutated.values():
            value = args[position] if position < len(args) else None
            if not _writable(value):
                what = "a read-only numpy array" if isinstance(value, np.ndarray) else "no argument" if value is None else f"a {type(value).__name__}"
                raise SchedcError(
                    f"calling {self.function}: the model writes argument {position} in place, and {what} "
                    "cannot be written back: pass a torch tensor or a writable numpy array"
                )

    def mend(self, args: tuple, packed):
        """The call's results (one value, a tuple or None, as the call packs them) as torch
        gave them, once the arguments written in place hold their new values."""
        outputs = [] if packed is None else list(packed) if isinstance(packed, tuple) else [packed]
        if len(outputs) != len(self.results):  # not the function the signature describes
            return packed
        kept = []
        for i, (value, entry) in enumerate(zip(outputs, self.results)):
            if i in self.mutated:
                _write_back(args[self.mutated[i]], value)
            elif entry.endswith(":number"):
                kept.append(_number(value, _NUMBERS[entry.split(":", 1)[0]]))
            elif entry in _MENDED:
                kept.append(_retyped(value, entry))
            else:
                kept.append(value)
        if not kept:
            return None
        return kept[0] if len(kept) == 1 else tuple(kept)


def _writable(value) -> bool:
    if _is_torch(value):
        return True
    return isinstance(value, np.ndarray) and value.flags.writeable


def _write_back(argument, value) -> None:
    """The argument's new value into the caller's tensor or array. torch.export may give it
    another shape of the same size (an `out=` the op resized): written in the argument's."""
    shape = tuple(getattr(value, "shape", ()))
    if shape != tuple(argument.shape):
        if int(np.prod(shape)) != int(np.prod(argument.shape)):
            raise SchedcError(f"the model writes an argument of shape {list(argument.shape)} in place with a value of shape "
                              f"{list(shape)}: it cannot be written back")
        value = value.reshape(tuple(argument.shape))
    if _is_torch(argument):
        import torch

        with torch.no_grad():
            source = value if _is_torch(value) else torch.from_numpy(np.ascontiguousarray(_host(value)))
            argument.copy_(source.view(argument.dtype) if source.dtype != argument.dtype and source.element_size() == argument.element_size() else source)
        return
    host = _host(value)
    np.copyto(argument, host.view(argument.dtype) if host.dtype != argument.dtype and host.itemsize == argument.itemsize else host)


def _host(value) -> np.ndarray:
    if _is_torch(value):
        return value.detach().cpu().numpy()
    return np.asarray(value.to_host() if hasattr(value, "to_host") else value)


def _number(value, kind):
    if hasattr(value, "item"):
        return kind(value.item())
    if hasattr(value, "to_host"):
        return kind(np.asarray(value.to_host()).item())
    return kind(value)


def _retyped(value, name: str):
    """`value` in torch's dtype `name`: the same bits where the width is the same."""
    if _is_torch(value):
        import torch

        wanted = getattr(torch, name)
        if value.dtype == wanted:
            return value
        return value.view(wanted) if value.element_size() == wanted.itemsize and value.dtype != torch.bool else value.to(wanted)
    if isinstance(value, np.ndarray):
        wanted = np.dtype(name)
        if value.dtype == wanted:
            return value
        return value.view(wanted) if value.dtype.itemsize == wanted.itemsize and value.dtype != np.bool_ else value.astype(wanted)
    return value  # an IREE device array: its own element type
