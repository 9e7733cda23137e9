"""How values cross between numpy, torch and IREE at a module's call: DLPack imports and
exports of torch tensors, device arrays, host copies."""

from __future__ import annotations

import functools

import numpy as np

from schedc.errors import SchedcError


def _first_line(error: BaseException) -> str:
    """The informative part of an IREE runtime error (it often wraps the cause)."""
    while error.__cause__ is not None:
        error = error.__cause__
    lines = str(error).strip().splitlines()
    text = lines[0] if lines else type(error).__name__
    return text.split(": ", 1)[1] if text.startswith("Error creating driver: ") else text


# DLPack device type codes (dlpack.h): where a torch tensor's memory is, per IREE driver.
_DLPACK_CPU, _DLPACK_CUDA, _DLPACK_ROCM = 1, 2, 10


def _dlpack_device(device_name: str, args) -> tuple[int, int] | None:
    """(DLPack device type, device index) when every argument is a torch tensor in the
    module's device memory; None when the call goes through numpy."""
    if not args or not all(_is_torch(a) for a in args):
        return None
    device = args[0].device
    if any(a.device != device for a in args[1:]):
        return None
    kind, driver = device.type, device_name.split(":")[0]
    if kind == "cuda" and driver in ("cuda", "hip"):
        return (_gpu_dlpack_code(), device.index or 0)
    if kind == "cpu" and driver in ("local-task", "local-sync"):
        return (_DLPACK_CPU, 0)
    return None


@functools.cache
def _gpu_dlpack_code() -> int:
    """DLPack's device type of torch's "cuda" tensors: CUDA, or ROCm for a ROCm build of torch."""
    import torch

    return _DLPACK_ROCM if getattr(torch.version, "hip", None) else _DLPACK_CUDA


_STREAMS: dict[int, tuple[int, object]] = {}  # device index -> (raw stream, torch's Stream over it)


def wait_for_torch(dlpack) -> None:
    """Waits until torch's current stream on the device has done its queued work (IREE cannot
    wait on torch's streams). torch's `current_stream()` builds a Stream object on every call
    (2.8-6.5 us on the H200 machine, more than the wait): the object is kept per device and
    made again only when the current stream changes."""
    if dlpack[0] == _DLPACK_CPU:
        return
    index = dlpack[1]
    raw = _raw_stream()(index)
    if raw is None:  # a torch without the raw getter: its Stream object, made every call
        _current_stream(index).synchronize()
        return
    kept = _STREAMS.get(index)
    if kept is None or kept[0] != raw:
        kept = _STREAMS[index] = (raw, _current_stream(index))
    kept[1].synchronize()


@functools.cache
def _raw_stream():
    """torch's getter of a device's current raw stream (a handle, no Stream object), looked up
    once per process: the import and attribute lookup on every call cost about 1 us on the
    H200 machine's host, more than the getter itself (0.6 us)."""
    import torch

    getter = getattr(torch._C, "_cuda_getCurrentRawStream", None)
    return getter if getter is not None else (lambda index: None)


def _current_stream(index: int):
    import torch

    return torch.cuda.current_stream(index)


IMPORT_ALIGNMENT = 64  # bytes: what IREE's heap import takes; a view off it is passed as an aligned copy


def is_aligned(tensor) -> bool:
    return tensor.data_ptr() % IMPORT_ALIGNMENT == 0


def _import_tensor(device, tensor, position: int, function: str):
    """An IREE buffer view over a torch tensor's memory (a contiguous copy of a strided one)."""
    from torch.utils.dlpack import to_dlpack

    source = tensor.detach().contiguous()
    if source.data_ptr() % IMPORT_ALIGNMENT:  # IREE imports host memory aligned to 64 bytes only
        source = source.clone()
    try:
        return device.from_dlpack_capsule(to_dlpack(source))
    except (RuntimeError, ValueError, TypeError, BufferError) as e:
        raise SchedcError(
            f"calling {function}: argument {position} cannot be passed to IREE (a {tensor.device} {tensor.dtype} tensor "
            f"through DLPack: {_first_line(e)})"
        ) from None


def _is_buffer_view(value) -> bool:
    return type(value).__name__ == "HalBufferView"


def _device_array(device, view):
    """An IREE DeviceArray over a result, read back to the host on demand (as IREE's own
    function call returns results)."""
    import iree.runtime as rt

    return rt.DeviceArray(device, view, implicit_host_transfer=True)


def _export_tensor(device, view, dlpack):
    """A torch tensor over a result buffer (the call has finished with it).

    IREE's CUDA allocator exports only buffers it allocated whole (a replayed module's static
    buffers); a result from its queue-ordered pool (IREE's default path) is copied on the
    device into a tensor torch allocates. A result that is no buffer view (a scalar the
    function returns by value) is given as it is."""
    if not _is_buffer_view(view):
        return view
    tensor = _exported_view(device, view, dlpack)
    return tensor if tensor is not None else copy_into_torch(device, _device_array(device, view), dlpack)


def _exported_view(device, view, dlpack):
    """A torch tensor over the buffer view's memory; None where IREE cannot export it."""
    from torch.utils.dlpack import from_dlpack

    try:
        return from_dlpack(device.create_dlpack_capsule(view, dlpack[0], dlpack[1]))
    except RuntimeError:
        return None


def _packed(outputs: list):
    """A call's results as IREE's own call gives them: one value, a tuple, or None."""
    if not outputs:
        return None
    return outputs[0] if len(outputs) == 1 else tuple(outputs)


def copy_into_torch(device, output, dlpack):
    """A torch tensor holding `output`, copied on the device into a buffer IREE allocates
    whole (which it can export), then handed to torch."""
    from torch.utils.dlpack import from_dlpack

    copy = owned_copy(device, output._buffer_view)
    return from_dlpack(device.create_dlpack_capsule(copy, dlpack[0], dlpack[1]))


def owned_copy(device, view):
    """A buffer view of the same shape and type as `view`, over a copy of its buffer made on
    the device into a buffer IREE allocates whole (with every access: IREE may write it)."""
    import iree.runtime as rt

    source = view.get_buffer()  # the copy takes the source buffer whole
    buffer = device.allocator.allocate_buffer(
        memory_type=rt.MemoryType.DEVICE_LOCAL,
        allowed_usage=rt.BufferUsage.DEFAULT | rt.BufferUsage.TRANSFER,
        allocation_size=max(source.byte_length(), 1),
    )
    if source.byte_length():
        semaphore = device.create_semaphore(0)
        device.queue_copy(source, buffer, rt.HalFence.create_at(semaphore, 0), rt.HalFence.create_at(semaphore, 1))
        rt.HalFence.create_at(semaphore, 1).wait()
    return rt.HalBufferView(buffer, list(view.shape), view.element_type)


def _as_results(outputs, torch_out: bool, single: bool):
    if torch_out:
        outputs = [_to_torch(o) if isinstance(o, np.ndarray) else o for o in outputs]
    return outputs[0] if single else tuple(outputs)


def _to_torch(array: np.ndarray):
    import ml_dtypes
    import torch

    array = np.ascontiguousarray(array)
    if array.dtype == ml_dtypes.bfloat16:  # torch reads no ml_dtypes array: go through the bits
        return torch.from_numpy(array.view(np.int16)).view(torch.bfloat16)
    return torch.from_numpy(array)


def _is_torch(value) -> bool:
    return type(value).__module__.startswith("torch")


def _host_arguments(function: str, args) -> list:
    """The arguments as numpy arrays (scalars as they are); one clear error for a value that
    cannot be passed."""
    host = []
    for i, value in enumerate(args):
        check_argument(function, i, value)
        try:
            host.append(_to_numpy(value))
        except (TypeError, ValueError, RuntimeError) as e:
            raise SchedcError(f"calling {function}: argument {i} cannot be passed to IREE ({_first_line(e)})") from None
    return host


def check_argument(function: str, position: int, value) -> None:
    """One clear error for an argument no function takes (None, a string, an object)."""
    if value is None or isinstance(value, (str, bytes, dict, set)):
        raise SchedcError(f"calling {function}: argument {position} is {type(value).__name__}; "
                          "pass numpy arrays, torch tensors, IREE device arrays or numbers")


def _to_numpy(value):
    if _is_torch(value):
        import torch

        tensor = value.detach().cpu().contiguous()
        if tensor.dtype == torch.bfloat16:  # numpy has no bfloat16; IREE takes ml_dtypes'
            import ml_dtypes

            return tensor.view(torch.int16).numpy().view(ml_dtypes.bfloat16)
        return tensor.numpy()
    if isinstance(value, (list, tuple)):  # nested lists of numbers: an array
        value = np.asarray(value)
        if value.dtype == object:
            raise TypeError("a list that is not an array of numbers")
    if isinstance(value, np.ndarray):  # (np.ascontiguousarray would make a 0-d array 1-d)
        if value.dtype == object:
            raise TypeError("an array of Python objects")
        return value if value.flags.c_contiguous else value.copy(order="C")
    return value


def _is_device_array(value) -> bool:
    return type(value).__name__ == "DeviceArray"


def _to_host(value, copy: bool = False):
    """A host array of a result; a copy where the result's buffer may be mapped and reused."""
    if not hasattr(value, "to_host"):
        return value
    host = value.to_host()
    return np.array(host) if copy else host


def _host_mappable(buffer) -> bool:
    """Whether the host can map the buffer: host-visible memory that allows mapping."""
    import iree.runtime as rt

    return bool(int(buffer.memory_type()) & int(rt.MemoryType.HOST_VISIBLE)) and bool(int(buffer.allowed_usage()) & int(rt.BufferUsage.MAPPING_SCOPED))


def _fits(made: tuple | None, array) -> bool:
    """Whether an argument's made view (HostStaging) has the array's shape and type."""
    return made is not None and made[0] == array.shape and made[1] == array.dtype


class HostStaging:
    """Host buffers that a replayed module's numpy arguments and results pass through.

    IREE's own numpy path makes a device buffer per call (`allocate_buffer_copy`) and reads
    results back through the caller's numpy memory imported as host memory
    (`DeviceArray.to_host`); on CUDA in graph mode each copy is a graph of its own. The replay
    bench failed in that path now and then (CUDA_ERROR_LAUNCH_FAILED in the numpy calls under
    compute-sanitizer, no kernel reported out of bounds; H200, 2026-11-30), and never since
    the calls go through buffers of the runtime's own. Here each argument and result slot gets
    one buffer allocated by IREE in pinned host memory, once: an argument is written into it
    on the host and the module's own input copy reads it; a result is copied into it by a
    queue copy and read on the host. A static input or result the host can map (on the CPU
    every one; on a GPU a generation step's tokens, which static-replay keeps in host memory)
    is written or read where it is instead, with no copy. The next call reuses the buffers, so
    a call must be done (or waited for) before the next one writes them: a replayed module's
    calls are."""

    def __init__(self, device):
        self._device = device
        self._slots: dict[tuple[str, int], tuple] = {}  # (kind, slot) -> (bytes, buffer, mapped memory)
        self._inputs: dict[int, tuple] = {}  # slot -> (shape, dtype, buffer view, numpy array over its memory)
        self._adopted: dict[int, tuple] = {}  # slot -> the same for a static input buffer (adopt)
        self._results: dict[int, tuple] = {}  # slot -> (key of a mappable result, numpy array over its memory, its buffer)
        self._semaphore, self._value = None, 0

    def adopt(self, views) -> None:
        """Writes each argument whose view the host can map (a replayed function's static input
        buffer, `__schedc_static_inputs_<f>`: on the CPU every one, on a GPU a generation step's
        tokens that static-replay keeps in host memory) into that buffer itself, so the module
        copies nothing in; None for an argument that keeps a buffer of the runtime's own."""
        import iree.runtime as rt

        for i, view in enumerate(views):
            if view is not None and _is_buffer_view(view) and view.byte_length and _host_mappable(view.get_buffer()):
                shape, dtype = tuple(view.shape), np.dtype(rt.HalElementType.map_to_dtype(view.element_type))
                self._adopted[i] = self._inputs[i] = (shape, dtype, view, view.map().asarray(list(shape), dtype))

    def upload(self, arrays) -> list:
        """Buffer views of pinned copies of the arrays (C-contiguous numpy arrays). A slot's
        view and the numpy array over its mapped memory are made once, for its shape and type
        (a decode step passes the same every call): a call then only copies the bytes."""
        views = []
        for i, array in enumerate(arrays):
            made = self._inputs.get(i)
            if not _fits(made, array):  # the static input again after an argument that did not fit it, or a slot
                adopted = self._adopted.get(i)
                made = self._inputs[i] = adopted if _fits(adopted, array) else self._slot_input(i, array)
            if made[3] is not None:
                np.copyto(made[3], array)
            views.append(made[2])
        return views

    def _slot_input(self, i: int, array) -> tuple:
        """(shape, dtype, buffer view, numpy array over its memory) of argument `i`'s pinned slot."""
        import iree.runtime as rt
        from iree.runtime.array_interop import map_dtype_to_element_type

        element_type = map_dtype_to_element_type(array.dtype)
        if element_type is None:
            raise SchedcError(f"argument {i}: IREE has no element type for numpy's {array.dtype}")
        buffer, mapped = self._slot("in", i, array.nbytes)
        host = mapped.asarray(array.shape, array.dtype) if array.nbytes else None
        return (array.shape, array.dtype, rt.HalBufferView(buffer, list(array.shape), element_type), host)

    def download(self, results) -> list:
        """numpy copies of the results (buffer views; other values as they are)."""
        import iree.runtime as rt

        pending = []
        for i, view in enumerate(results):
            if not _is_buffer_view(view):
                continue
            source = view.get_buffer()
            if _host_mappable(source):  # a result in host memory (static-replay's host results): read in place
                pending.append((i, view, None))
                continue
            buffer, mapped = self._slot("out", i, source.byte_length())
            if source.byte_length():
                if self._semaphore is None:
                    self._semaphore = self._device.create_semaphore(0)
                wait = rt.HalFence.create_at(self._semaphore, self._value)
                self._value += 1
                self._device.queue_copy(source, buffer, wait, rt.HalFence.create_at(self._semaphore, self._value))
            pending.append((i, view, mapped))
        if self._semaphore is not None:
            rt.HalFence.create_at(self._semaphore, self._value).wait()
        host = list(results)
        for i, view, mapped in pending:
            if mapped is None:  # read where it is: the array over its mapping is made once per buffer
                host[i] = np.array(self._mapped_result(i, view))
                continue
            dtype = rt.HalElementType.map_to_dtype(view.element_type)
            host[i] = np.array(mapped.asarray(list(view.shape), dtype)) if view.byte_length else np.zeros(view.shape, dtype)
        return host

    def _mapped_result(self, slot: int, view):
        """A numpy array over a mappable result's memory, kept while the slot's result is the
        same buffer of the same shape and type (a replayed function's static result). The entry
        holds the buffer, so no other buffer can take its address (the key) meanwhile."""
        import iree.runtime as rt

        buffer = view.get_buffer()
        key = (buffer.ref, view.byte_length, tuple(view.shape), view.element_type)
        made = self._results.get(slot)
        if made is None or made[0] != key:
            dtype = rt.HalElementType.map_to_dtype(view.element_type)
            array = view.map().asarray(list(view.shape), dtype) if view.byte_length else np.zeros(view.shape, dtype)
            made = self._results[slot] = (key, array, buffer)
        return made[1]

    def _slot(self, kind: str, index: int, nbytes: int) -> tuple:
        """The slot's pinned buffer and its mapping, (re)allocated when the size changes."""
        import iree.runtime as rt

        entry = self._slots.get((kind, index))
        if entry is None or entry[0] != nbytes:
            buffer = self._device.allocator.allocate_buffer(
                memory_type=int(rt.MemoryType.HOST_LOCAL) | int(rt.MemoryType.DEVICE_VISIBLE),
                allowed_usage=int(rt.BufferUsage.TRANSFER) | int(rt.BufferUsage.MAPPING) | int(rt.BufferUsage.DISPATCH_STORAGE),
                allocation_size=max(nbytes, 1),
            )
            entry = (nbytes, buffer, buffer.map())
            self._slots[(kind, index)] = entry
        return entry[1], entry[2]
