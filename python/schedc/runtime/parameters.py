"""Parameter archives: a model's weights outside its module, in IREE's `.irpa` format.

A module compiled from MLIR whose weights are `util.global`s initialised from
`#stream.parameter.named<"scope"::"key">` holds no weight bytes: IREE's `io_parameters` module
reads them from archives when the module is loaded. The runtime alone writes and reads
archives, so a machine without the compiler can turn a checkpoint into one.

What schedc adds to IREE's format is a check before IREE reads anything:
- the compile records what the module needs (`schedc.parameters` in its reflection: scope,
  key, element type and shape of each parameter);
- schedc writes each entry's element type, shape and CRC-32 into the entry's metadata;
- at load, every parameter the module needs must be in the archives of its scope, with its
  byte length, and (where the archive says) its type, shape and checksum. A mismatch is an
  error that names the parameter; IREE itself would load a longer entry's first bytes
  silently, and has no checksum.
"""

from __future__ import annotations

import json
import os
import zlib
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from schedc.errors import RuntimeLoadError, SchedcError
from schedc.runtime.interop import _first_line

SCOPE = "model"  # the scope schedc's importer names its parameters in
METADATA_FORMAT = "schedc-parameter/1"  # an entry's metadata: {"format", "dtype", "shape", "crc32"}

# Element types an archive entry can hold: MLIR's name -> numpy's (bf16 through ml_dtypes).
ELEMENT_TYPES = {"f32": "float32", "f16": "float16", "bf16": "bfloat16", "f64": "float64", "i64": "int64", "i32": "int32",
                 "i16": "int16", "i8": "int8", "ui8": "uint8"}


@dataclass(frozen=True)
class ParameterSpec:
    """One parameter as a module needs it: where it is named, its element type and shape."""

    scope: str
    key: str
    dtype: str  # MLIR's element type name: f32, f16, bf16, i64, ...
    shape: tuple[int, ...]

    @property
    def nbytes(self) -> int:
        return int(np.prod(self.shape, dtype=np.int64)) * numpy_dtype(self.dtype).itemsize

    def describe(self) -> str:
        return f"{self.dtype} {'x'.join(map(str, self.shape)) or 'scalar'}"

    def as_json(self) -> list:
        return [self.scope, self.key, self.dtype, list(self.shape)]

    @staticmethod
    def from_json(entry: list) -> "ParameterSpec":
        scope, key, dtype, shape = entry
        return ParameterSpec(scope, key, dtype, tuple(int(d) for d in shape))


def numpy_dtype(dtype: str) -> np.dtype:
    if dtype not in ELEMENT_TYPES:
        raise SchedcError(f"element type '{dtype}' cannot be kept in a parameter archive; valid: {', '.join(ELEMENT_TYPES)}")
    if dtype == "bf16":
        import ml_dtypes

        return np.dtype(ml_dtypes.bfloat16)
    return np.dtype(ELEMENT_TYPES[dtype])


def mlir_dtype(dtype: np.dtype) -> str:
    """MLIR's name of a numpy element type an archive can hold."""
    name = np.dtype(dtype).name
    for mlir, numpy_name in ELEMENT_TYPES.items():
        if numpy_name == name:
            return mlir
    raise SchedcError(f"a {name} array cannot be kept in a parameter archive; valid: {', '.join(ELEMENT_TYPES.values())}")


def layout_text(specs: list[ParameterSpec]) -> str:
    """The `schedc.parameters` reflection value: what the module needs, as JSON."""
    return json.dumps([s.as_json() for s in specs], separators=(",", ":"))


def parse_layout(text: str) -> list[ParameterSpec]:
    return [ParameterSpec.from_json(entry) for entry in json.loads(text)]


def write_archive(arrays: dict[str, np.ndarray], path: str) -> None:
    """Writes `arrays` (key -> array) to a parameter archive at `path`, whole or not at all.

    Each entry's metadata records its element type, shape and CRC-32 (see the module's doc)."""
    import iree.runtime as rt

    from schedc.outputs import staged_file

    index = rt.ParameterIndex()
    kept = []  # the contiguous arrays the index points at, until the archive is written
    for key, array in arrays.items():
        array = np.asarray(array)
        data = np.ascontiguousarray(array).reshape(-1).view(np.uint8)  # (ascontiguousarray makes a scalar 1-d)
        kept.append(data)
        metadata = {"format": METADATA_FORMAT, "dtype": mlir_dtype(array.dtype), "shape": list(array.shape), "crc32": zlib.crc32(data)}
        if data.size:
            index.add_buffer(key, data, metadata=json.dumps(metadata))
        else:  # IREE's index takes no empty buffer: an empty entry is a splat of no bytes
            index.add_splat(key, np.zeros(1, np.uint8), 0, metadata=json.dumps(metadata))
    with staged_file(path) as staged:
        try:
            index.create_archive_file(str(staged))
        except (RuntimeError, ValueError, OSError) as e:
            raise SchedcError(f"{path}: cannot write the parameter archive ({_first_line(e)})") from None


@dataclass
class Archive:
    """One archive file, opened: its index and its entries by key."""

    path: str
    index: object  # iree.runtime.ParameterIndex
    entries: dict[str, object]  # key -> ParameterIndexEntry

    @staticmethod
    def open(path: str) -> "Archive":
        import iree.runtime as rt

        if not Path(path).is_file():
            raise RuntimeLoadError(f"{path}: no such parameter archive")
        index = rt.ParameterIndex()
        try:
            index.load(str(path))
        except (RuntimeError, ValueError, IndexError, OSError) as e:
            raise RuntimeLoadError(f"{path}: damaged or not a parameter archive (.irpa): {_first_line(e)}") from None
        return Archive(str(path), index, dict(index.items()))


def parse_params(params) -> dict[str, list[str]]:
    """`params` as scope -> archive paths: a path (scope "model"), a list of paths, or a dict
    of scope -> path(s)."""
    def paths(value) -> list[str]:
        if isinstance(value, (str, os.PathLike)):
            return [str(value)]
        if isinstance(value, (list, tuple)) and value and all(isinstance(v, (str, os.PathLike)) for v in value):
            return [str(v) for v in value]
        raise RuntimeLoadError(f"params takes an archive's path, a list of them, or a dict of scope -> path(s); not {value!r}")

    if params is None:
        return {}
    if isinstance(params, dict):
        if not all(isinstance(scope, str) for scope in params):
            raise RuntimeLoadError(f"params: a scope is a string, not {next(s for s in params if not isinstance(s, str))!r}")
        return {scope: paths(value) for scope, value in params.items()}
    return {SCOPE: paths(params)}


def open_scopes(params) -> dict[str, list[Archive]]:
    """The archives of each scope, opened; a key in two archives of one scope is an error."""
    scopes = {}
    for scope, paths in parse_params(params).items():
        archives = [Archive.open(p) for p in paths]
        seen: dict[str, str] = {}
        for archive in archives:
            for key in archive.entries:
                if key in seen:
                    raise RuntimeLoadError(f"parameter '{key}' of scope '{scope}' is in both {seen[key]} and {archive.path}")
                seen[key] = archive.path
        scopes[scope] = archives
    return scopes


def check_parameters(needed: list[ParameterSpec], scopes: dict[str, list[Archive]], module: str) -> None:
    """Raises RuntimeLoadError, naming the parameter, unless every parameter `module` needs is
    in its scope's archives with its byte length, element type, shape and checksum."""
    for spec in needed:
        archives = scopes.get(spec.scope)
        if archives is None:
            raise RuntimeLoadError(
                f"{module} needs parameters of scope '{spec.scope}' (such as '{spec.key}'), and no archive was given for it; "
                f"scopes given: {', '.join(scopes) or 'none'}"
            )
        found = next(((a, a.entries[spec.key]) for a in archives if spec.key in a.entries), None)
        if found is None:
            names = ", ".join(a.path for a in archives)
            raise RuntimeLoadError(f"parameter '{spec.key}' ({spec.describe()}) that {module} needs is not in {names}")
        archive, entry = found
        _check_entry(spec, archive.path, entry)


def _check_entry(spec: ParameterSpec, path: str, entry) -> None:
    where = f"parameter '{spec.key}' in {path}"
    metadata = _metadata(entry)
    if metadata is not None:
        held = ParameterSpec(spec.scope, spec.key, metadata["dtype"], tuple(metadata["shape"]))
        if (held.dtype, _without_unit_dims(held.shape)) != (spec.dtype, _without_unit_dims(spec.shape)):
            raise RuntimeLoadError(f"{where} is {held.describe()}; the module needs {spec.describe()}")
    if entry.length != spec.nbytes:
        raise RuntimeLoadError(f"{where} holds {entry.length} bytes; the module needs {spec.describe()} ({spec.nbytes} bytes)")
    if metadata is not None and "crc32" in metadata and entry.is_file and entry.length:
        import iree.runtime as rt

        data = rt.parameter_index_entry_as_numpy_flat_ndarray(entry)
        if zlib.crc32(data) != metadata["crc32"]:
            raise RuntimeLoadError(f"{where} is damaged: its bytes do not match the checksum the archive records")


def _without_unit_dims(shape: tuple[int, ...]) -> tuple[int, ...]:
    """A shape less its dimensions of 1: the same bytes in the same order. IREE's global
    optimisation folds unit dimensions of globals too (a [1] weight is a scalar in the module)."""
    return tuple(d for d in shape if d != 1)


def _metadata(entry) -> dict | None:
    """An entry's metadata as schedc writes it; None for an archive of another writer."""
    raw = entry.metadata
    if not raw:
        return None
    try:
        metadata = json.loads(bytes(raw).decode() if not isinstance(raw, str) else raw)
    except (ValueError, UnicodeDecodeError):
        return None
    if not isinstance(metadata, dict) or metadata.get("format") != METADATA_FORMAT:
        return None
    return metadata


def parameters_module(instance, scopes: dict[str, list[Archive]]):
    """IREE's `io_parameters` module over the archives, one provider per scope."""
    import iree.runtime as rt

    providers = []
    for scope, archives in scopes.items():
        index = archives[0].index
        if len(archives) > 1:  # one index per scope: the archives' entries together
            index = rt.ParameterIndex()
            for archive in archives:
                index.load(archive.path)
        providers.append(index.create_provider(scope=scope))
    return rt.create_io_parameters_module(instance, *providers)


def read_archive(path: str) -> dict[str, np.ndarray]:
    """The arrays of an archive schedc wrote (key -> array of its type and shape); entries of
    other writers come back as flat uint8 arrays."""
    import iree.runtime as rt

    arrays = {}
    for key, entry in Archive.open(path).entries.items():
        data = np.array(rt.parameter_index_entry_as_numpy_flat_ndarray(entry)) if entry.length else np.zeros(0, np.uint8)
        metadata = _metadata(entry)
        if metadata is not None:
            data = data.view(numpy_dtype(metadata["dtype"])).reshape(metadata["shape"])
        arrays[key] = data
    return arrays
