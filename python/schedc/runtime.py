"""Loading compiled modules and calling them with numpy arrays or torch tensors (IREE's HAL)."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from .errors import RuntimeLoadError, SchedcError
from .vmfb import check_module_file

EXECUTIONS = ("streams", "graphs")
# IREE reads its driver flags once, when a process creates its first device of that driver:
# the execution mode each GPU driver was started with in this process.
_STARTED: dict[str, str] = {}


def _start_driver(driver: str, execution: str) -> None:
    """Sets the driver's command-buffer mode before its first device exists."""
    import iree.runtime as rt

    if driver not in ("cuda", "hip"):
        if execution == "graphs":
            raise RuntimeLoadError(f"execution='graphs' is for the cuda and hip drivers, not '{driver}'")
        return
    started = _STARTED.get(driver)
    if started is not None and started != execution:
        raise RuntimeLoadError(
            f"this process already runs {driver} in {started} mode; IREE reads the mode once per "
            f"process: load the module with execution='{execution}' in a new process"
        )
    if started is None:
        rt.flags.parse_flags(f"--{driver}_use_streams={'true' if execution == 'streams' else 'false'}")
        _STARTED[driver] = execution


def available_drivers() -> list[str]:
    import iree.runtime as rt

    return list(rt.query_available_drivers())


def _create_config(device: str):
    import iree.runtime as rt

    drivers = available_drivers()
    driver = device.split(":")[0]
    if driver not in drivers:
        raise RuntimeLoadError(f"unknown device '{device}'; drivers in this IREE runtime: {', '.join(drivers)}")
    try:
        return rt.Config(device)
    except (RuntimeError, ValueError) as e:
        usable = [d for d in drivers if d != driver and has_device(d)]
        raise RuntimeLoadError(
            f"no '{driver}' device could be created ({_first_line(e)}); "
            f"drivers in this runtime: {', '.join(drivers)}; with a device here: {', '.join(usable) or 'none'}"
        ) from None


def has_device(driver: str) -> bool:
    import iree.runtime as rt

    if driver.startswith("local"):
        return True
    try:
        return bool(rt.get_driver(driver).query_available_devices())
    except Exception:
        return False


def _device_in_message(message: str) -> str:
    """The device a module was built for, as IREE's runtime names it when no device of that
    kind exists: `... #hal.device.target<"vulkan", ...`; empty when the message does not."""
    _, found, rest = message.partition('#hal.device.target<"')
    return rest.partition('"')[0] if found else ""


def _first_line(error: BaseException) -> str:
    """The informative part of an IREE runtime error (it often wraps the cause)."""
    while error.__cause__ is not None:
        error = error.__cause__
    lines = str(error).strip().splitlines()
    text = lines[0] if lines else type(error).__name__
    return text.split(": ", 1)[1] if text.startswith("Error creating driver: ") else text


class Function:
    """A module's exported function, called with numpy arrays, torch tensors or IREE arrays.

    - numpy in, numpy out: the inputs are copied to the device, the results back to the host
      (arrays of the caller's own).
    - torch tensors on the module's device (CUDA tensors on cuda, CPU tensors on local-task
      and local-sync) go in and come out through DLPack, without a copy: the results are
      torch tensors over IREE's output buffers, on the same device. IREE cannot wait on
      torch's streams, so a call first waits for the current CUDA stream, and returns when
      its results are ready. Other torch tensors go through numpy (a host copy).
    - IREE `DeviceArray`s in (`iree.runtime.asdevicearray`), `DeviceArray`s out, on the device.

    A replayed module (compiled with execution="graphs") returns views of its static output
    buffers, which the next call overwrites, as torch's CUDA graphs do: keep a result past the
    next call with `copy=True` (or `.clone()` it). numpy results are always copies.
    """

    def __init__(self, module: "Module", name: str, vm_function):
        self._module = module
        self.name = name
        self._vm_function = vm_function

    def __call__(self, *args, copy: bool = False):
        module = self._module
        module._collect_pending()
        dlpack = _dlpack_device(module.device_name, args)
        if dlpack is not None:
            inputs = _import_tensors(module.device, args, dlpack, self.name)
        else:
            inputs = _host_arguments(self.name, args)
        try:
            results = module._context.modules[module.vm_name][self.name](*inputs)
        except (RuntimeError, ValueError, TypeError) as e:
            raise SchedcError(f"calling {self.name} failed: {_first_line(e)}") from None
        single = not isinstance(results, (tuple, list))
        outputs = [results] if single else list(results)
        if dlpack is not None:
            tensors = _export_tensors(module.device, outputs, dlpack)
            tensors = [t.clone() for t in tensors] if copy else tensors
            return tensors[0] if single else tuple(tensors)
        if args and all(_is_device_array(a) for a in args):
            return outputs[0] if single else tuple(outputs)
        host = [_to_host(o, copy=copy or module.replayed) for o in outputs]
        return _as_results(host, any(_is_torch(a) for a in args), single)

    def async_(self, *args) -> "PendingCall":
        """Queues the call and returns at once; `.wait()` gives the results (host copies).

        Uses the module's `<name>$async` export where there is one (IREE's coarse-fences ABI,
        which torch models get): the inputs are copied to the device, the work is queued, and
        a fence is signalled when it is done. On a replayed module the next call reuses the
        static buffers: it first waits for this one and keeps its results."""
        import iree.runtime as rt

        module = self._module
        async_name = f"{self.name}$async"
        vm_function = module._vm_module.lookup_function(async_name)
        if vm_function is None:
            # Modules not from torch (func.func input) have no fence-taking export: the call
            # runs on a worker thread instead (IREE releases the GIL while it waits).
            return PendingCall.on_thread(self, args)
        module._collect_pending()
        device = module._config.device
        inputs = []
        arguments = rt.VmVariantList(len(args) + 2)
        for value in _host_arguments(async_name, args):
            if isinstance(value, (bool, int, np.integer)):  # scalars go by value, as in a plain call
                arguments.push_int(int(value))
            elif isinstance(value, (float, np.floating)):
                arguments.push_float(float(value))
            else:
                array = rt.asdevicearray(device, value)
                inputs.append(array)
                arguments.push_ref(array._buffer_view)
        semaphore = device.create_semaphore(0)
        ready, done = rt.HalFence.create_at(semaphore, 0), rt.HalFence.create_at(semaphore, 1)
        arguments.push_ref(ready)
        arguments.push_ref(done)
        results = rt.VmVariantList(4)
        try:
            module._context.vm_context.invoke(vm_function, arguments, results)
        except (RuntimeError, ValueError) as e:
            raise SchedcError(f"calling {async_name} failed: {_first_line(e)}") from None
        pending = PendingCall(device, done, results, inputs, any(_is_torch(a) for a in args))
        if module.replayed:
            module._pending = pending
        return pending


class BucketedFunction:
    """A function compiled once per batch bucket: a call with batch b runs the smallest bucket
    that holds b, on inputs zero-padded to it, and returns the first b rows of the results
    (numpy arrays or torch tensors; see `Function` for where results live)."""

    def __init__(self, name: str, buckets: dict[int, Function], batched_inputs: tuple, batched_outputs: tuple):
        self.name = name
        self.buckets = dict(sorted(buckets.items()))
        self._inputs, self._outputs = batched_inputs, batched_outputs

    def __call__(self, *args, copy: bool = False):
        sizes = {int(args[i].shape[0]) for i in self._inputs if i < len(args)}
        if len(sizes) != 1:
            raise SchedcError(f"{self.name}: the batched inputs {list(self._inputs)} must share their first dimension, got {sorted(sizes)}")
        batch = sizes.pop()
        bucket = choose_bucket(batch, tuple(self.buckets))
        if bucket is None:
            raise SchedcError(
                f"{self.name}: batch {batch} is above the largest bucket {max(self.buckets)}; "
                f"compiled buckets: {', '.join(map(str, self.buckets))}"
            )
        padded = [_pad_rows(a, bucket) if i in self._inputs else a for i, a in enumerate(args)]
        results = self.buckets[bucket](*padded, copy=copy)
        single = not isinstance(results, tuple)
        outputs = [results] if single else list(results)
        outputs = [o[:batch] if i in self._outputs else o for i, o in enumerate(outputs)]
        return outputs[0] if single else tuple(outputs)

    def async_(self, *args) -> "PendingCall":
        return PendingCall.on_thread(self, args)


def choose_bucket(batch: int, buckets) -> int | None:
    """The smallest bucket that holds `batch`; None above the largest."""
    return next((b for b in sorted(buckets) if b >= batch), None)


def _pad_rows(value, rows: int):
    """`value` with zero rows appended up to `rows` (numpy arrays and torch tensors)."""
    missing = rows - int(value.shape[0])
    if missing == 0:
        return value
    if _is_torch(value):
        import torch

        return torch.cat([value, value.new_zeros((missing, *value.shape[1:]))])
    if _is_device_array(value):
        raise SchedcError(f"an IREE device array of batch {value.shape[0]} cannot be padded to bucket {rows}: pass numpy arrays or torch tensors")
    value = np.asarray(value)
    return np.concatenate([value, np.zeros((missing, *value.shape[1:]), value.dtype)])


class PendingCall:
    """A queued call: `wait()` blocks until the device is done and returns its results."""

    def __init__(self, device, fence, results, inputs, torch_out: bool, future=None):
        self._device, self._fence, self._results = device, fence, results
        self._inputs = inputs  # keeps the device copies of the inputs alive until done
        self._torch = torch_out
        self._future = future
        self._outputs = None

    @classmethod
    def on_thread(cls, function: "Function", args) -> "PendingCall":
        from concurrent.futures import ThreadPoolExecutor

        executor = ThreadPoolExecutor(max_workers=1)
        future = executor.submit(function, *args)
        executor.shutdown(wait=False)
        return cls(None, None, None, args, False, future)

    def done(self) -> bool:
        """Whether the device has finished, without waiting."""
        if self._future is not None:
            return self._future.done()
        return self._outputs is not None or bool(self._fence.wait(timeout=0))

    def wait(self):
        import iree.runtime as rt

        if self._future is not None:
            return self._future.result()
        if self._outputs is None:
            self._fence.wait()
            self._outputs = [
                np.array(rt.DeviceArray(self._device, self._results.get_as_object(i, rt.HalBufferView)).to_host())
                for i in range(self._results.size)
            ]
        return _as_results(self._outputs, self._torch, len(self._outputs) == 1)


# DLPack device type codes (dlpack.h): where a torch tensor's memory is, per IREE driver.
_DLPACK_CPU, _DLPACK_CUDA, _DLPACK_ROCM = 1, 2, 10


def _dlpack_device(device_name: str, args) -> tuple[int, int] | None:
    """(DLPack device type, device index) when every argument is a torch tensor in the
    module's device memory; None when the call goes through numpy."""
    if not args or not all(_is_torch(a) for a in args):
        return None
    driver = device_name.split(":")[0]
    kinds = {a.device.type for a in args}
    if driver in ("local-task", "local-sync") and kinds == {"cpu"}:
        return (_DLPACK_CPU, 0)
    if driver in ("cuda", "hip") and kinds == {"cuda"} and len({a.device.index for a in args}) == 1:
        import torch

        code = _DLPACK_ROCM if getattr(torch.version, "hip", None) else _DLPACK_CUDA
        return (code, args[0].device.index or 0)
    return None


def _import_tensors(device, tensors, dlpack, function: str):
    """IREE arrays over the tensors' memory, after torch's queued work on them is done."""
    import iree.runtime as rt
    import torch
    from torch.utils.dlpack import to_dlpack

    if dlpack[0] != _DLPACK_CPU:
        torch.cuda.current_stream(tensors[0].device).synchronize()  # no shared timeline with IREE
    arrays = []
    for i, tensor in enumerate(tensors):
        try:
            view = device.from_dlpack_capsule(to_dlpack(tensor.detach().contiguous()))
        except (RuntimeError, ValueError, TypeError, BufferError) as e:
            raise SchedcError(
                f"calling {function}: argument {i} cannot be passed to IREE (a {tensor.device} {tensor.dtype} tensor "
                f"through DLPack: {_first_line(e)})"
            ) from None
        arrays.append(rt.DeviceArray(device, view))
    return arrays


def _export_tensors(device, outputs, dlpack):
    """torch tensors over IREE's result buffers (the call has finished with them).

    IREE's CUDA allocator exports only buffers it allocated whole (a replayed module's static
    buffers); a result from its queue-ordered pool (IREE's default path) is copied on the
    device into a tensor torch allocates."""
    from torch.utils.dlpack import from_dlpack

    tensors = []
    for output in outputs:
        try:
            tensors.append(from_dlpack(device.create_dlpack_capsule(output._buffer_view, dlpack[0], dlpack[1])))
        except RuntimeError:
            tensors.append(copy_into_torch(device, output, dlpack))
    return tensors


def copy_into_torch(device, output, dlpack):
    """A torch tensor holding `output`, copied on the device into a buffer IREE allocates
    whole (which it can export), then handed to torch."""
    import iree.runtime as rt
    from torch.utils.dlpack import from_dlpack

    view = output._buffer_view
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
    copy = rt.HalBufferView(buffer, list(view.shape), view.element_type)
    return from_dlpack(device.create_dlpack_capsule(copy, dlpack[0], dlpack[1]))


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


class Module:
    """A compiled .vmfb loaded on one device; its exported functions are attributes."""

    def __init__(self, path: str, device: str, execution: str | None = None):
        import iree.runtime as rt

        if not Path(path).is_file():
            raise RuntimeLoadError(f"{path}: no such file")
        check_module_file(path)  # IREE maps a module unchecked: a damaged one can crash the process
        if execution is not None and execution not in EXECUTIONS:
            raise RuntimeLoadError(f"unknown execution '{execution}'; valid: {', '.join(EXECUTIONS)}")
        driver = device.split(":")[0]
        built_for = _module_execution(path)
        if execution == "graphs" and built_for != "graphs":
            raise RuntimeLoadError(
                f"{path} was compiled for streams execution: graph execution needs a module compiled "
                f"with execution='graphs' (schedc --execution=graphs), which turns IREE's indirect "
                f"command buffers off"
            )
        self.execution = execution or (built_for if driver in ("cuda", "hip") else "streams")
        if driver in available_drivers():
            _start_driver(driver, self.execution)
        self.device_name = device
        self._config = _create_config(device)
        try:
            vm_module = rt.VmModule.mmap(self._config.vm_instance, str(path))
        except (RuntimeError, ValueError) as e:
            raise RuntimeLoadError(f"{path}: not a loadable IREE module ({_first_line(e)})") from None
        self._vm_module = vm_module
        self.vm_name = vm_module.name
        try:
            self._context = rt.SystemContext(vm_modules=[vm_module], config=self._config)
        except (RuntimeError, ValueError) as e:
            compiled_for = _device_in_message(str(e))
            if compiled_for:
                raise RuntimeLoadError(f"{path} was compiled for '{compiled_for}' devices and cannot run on '{device}'") from None
            raise RuntimeLoadError(f"{path} cannot run on '{device}' ({_first_line(e)})") from None
        # `f$async` is IREE's fence-taking twin of `f`, reached through `module.f.async_`.
        self.function_names = [
            n.split(".")[-1] for n in vm_module.function_names if not n.startswith("__") and not n.endswith("$async")
        ]
        self.functions = {n: Function(self, n, None) for n in self.function_names}
        self._group_buckets(vm_module)
        # A replayed module (static-replay) returns its static buffers: see Function.
        self.replayed = any(
            "schedc.static_results" in vm_module.lookup_function(n).reflection for n in vm_module.function_names
        )
        self._pending: PendingCall | None = None

    def _group_buckets(self, vm_module) -> None:
        """Functions compiled per batch bucket (`forward$b4`, ...) are called as one, `forward`."""
        buckets: dict[str, dict[int, Function]] = {}
        batched: dict[str, tuple] = {}
        for name in list(self.function_names):
            reflection = vm_module.lookup_function(name).reflection
            if "schedc.bucket_of" not in reflection:
                continue
            base = reflection["schedc.bucket_of"]
            buckets.setdefault(base, {})[int(reflection["schedc.batch"])] = self.functions[name]
            batched[base] = tuple(
                tuple(int(i) for i in reflection[key].split(",") if i) for key in ("schedc.batched_inputs", "schedc.batched_outputs")
            )
        for base, functions in buckets.items():
            self.functions[base] = BucketedFunction(base, functions, *batched[base])
            self.function_names.append(base)

    def _collect_pending(self) -> None:
        """Waits for the last queued call of a replayed module and keeps its results: the
        next call reuses its static buffers."""
        if self._pending is not None:
            self._pending.wait()
            self._pending = None

    @property
    def device(self):
        return self._config.device

    def allocator_statistics(self) -> str:
        return str(self._config.device.allocator.statistics)

    def __getattr__(self, name: str) -> Function:
        functions = self.__dict__.get("functions", {})
        if name in functions:
            return functions[name]
        raise AttributeError(f"module has no function '{name}'; it exports: {', '.join(functions) or 'none'}")

    def __getitem__(self, name: str) -> Function:
        if name not in self.functions:
            raise RuntimeLoadError(f"module has no function '{name}'; it exports: {', '.join(self.functions) or 'none'}")
        return self.functions[name]


def load(path: str, device: str = "local-task", execution: str | None = None) -> Module:
    """Loads a compiled module on `device` (local-task, local-sync, cuda, hip or vulkan).

    `execution` ("streams" or "graphs", for cuda and hip) chooses how IREE replays command
    buffers: on the device's one stream, or as graphs whose concurrent waves run as parallel
    branches. By default, the mode the module was compiled for."""
    return Module(str(path), device, execution)


def _module_execution(path: str) -> str:
    """The execution mode recorded in a module by `schedc.compile(..., execution=...)`."""
    import iree.runtime as rt

    instance = rt.VmInstance()
    try:
        vm_module = rt.VmModule.mmap(instance, str(path))
    except (RuntimeError, ValueError):
        return "streams"  # not a module: the load below says so
    for name in vm_module.function_names:
        function = vm_module.lookup_function(name)
        if function is not None and "schedc.execution" in function.reflection:
            return function.reflection["schedc.execution"]
    return "streams"


def _is_torch(value) -> bool:
    return type(value).__module__.startswith("torch")


def _host_arguments(function: str, args) -> list:
    """The arguments as numpy arrays (scalars as they are); one clear error for a value that
    cannot be passed."""
    host = []
    for i, value in enumerate(args):
        try:
            host.append(_to_numpy(value))
        except (TypeError, RuntimeError) as e:
            raise SchedcError(f"calling {function}: argument {i} cannot be passed to IREE ({_first_line(e)})") from None
    return host


def _to_numpy(value):
    if _is_torch(value):
        import torch

        tensor = value.detach().cpu().contiguous()
        if tensor.dtype == torch.bfloat16:  # numpy has no bfloat16; IREE takes ml_dtypes'
            import ml_dtypes

            return tensor.view(torch.int16).numpy().view(ml_dtypes.bfloat16)
        return tensor.numpy()
    if isinstance(value, np.ndarray):  # (np.ascontiguousarray would make a 0-d array 1-d)
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


def summarize(value) -> str:
    """A one-line description of an output, like iree-run-module prints."""
    array = np.asarray(value)
    text = f"{'x'.join(map(str, array.shape)) or 'scalar'}x{array.dtype}"
    if array.size and np.issubdtype(array.dtype, np.number):
        flat = array.reshape(-1)
        head = np.array2string(flat[:8], precision=4, separator=" ", max_line_width=200)
        text += f" min={flat.min():.6g} max={flat.max():.6g} mean={flat.astype(np.float64).mean():.6g} first={head}"
    return text
