"""Loading compiled modules and calling them with numpy arrays or torch tensors (IREE's HAL)."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np

from .errors import RuntimeLoadError, SchedcError
from .vmfb import check_module_file

DEVICES = ("local-task", "local-sync", "cuda", "hip", "vulkan")
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


def _first_line(error: BaseException) -> str:
    """The informative part of an IREE runtime error (it often wraps the cause)."""
    while error.__cause__ is not None:
        error = error.__cause__
    lines = str(error).strip().splitlines()
    text = lines[0] if lines else type(error).__name__
    return text.split(": ", 1)[1] if text.startswith("Error creating driver: ") else text


class Function:
    """A module's exported function; called with numpy arrays or torch tensors."""

    def __init__(self, module: "Module", name: str, vm_function):
        self._module = module
        self.name = name
        self._vm_function = vm_function

    def __call__(self, *args):
        torch_in = any(_is_torch(a) for a in args)
        host_args = _host_arguments(self.name, args)
        try:
            results = self._module._context.modules[self._module.vm_name][self.name](*host_args)
        except (RuntimeError, ValueError, TypeError) as e:
            raise SchedcError(f"calling {self.name} failed: {_first_line(e)}") from None
        single = not isinstance(results, (tuple, list))
        outputs = [results] if single else list(results)
        return _as_results([_to_host(o) for o in outputs], torch_in, single)

    def async_(self, *args) -> "PendingCall":
        """Queues the call and returns at once; `.wait()` gives the results.

        Uses the module's `<name>$async` export where there is one (IREE's coarse-fences ABI,
        which torch models get): the inputs are copied to the device, the work is queued, and
        a fence is signalled when it is done."""
        import iree.runtime as rt

        module = self._module
        async_name = f"{self.name}$async"
        vm_function = module._vm_module.lookup_function(async_name)
        if vm_function is None:
            # Modules not from torch (func.func input) have no fence-taking export: the call
            # runs on a worker thread instead (IREE releases the GIL while it waits).
            return PendingCall.on_thread(self, args)
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
        return PendingCall(device, done, results, inputs, any(_is_torch(a) for a in args))


class PendingCall:
    """A queued call: `wait()` blocks until the device is done and returns its results."""

    def __init__(self, device, fence, results, inputs, torch_out: bool, future=None):
        self._device, self._fence, self._results = device, fence, results
        self._inputs = inputs  # keeps the device copies of the inputs alive until done
        self._torch = torch_out
        self._future = future

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
        return bool(self._fence.wait(timeout=0))

    def wait(self):
        import iree.runtime as rt

        if self._future is not None:
            return self._future.result()
        self._fence.wait()
        outputs = [
            rt.DeviceArray(self._device, self._results.get_as_object(i, rt.HalBufferView)).to_host()
            for i in range(self._results.size)
        ]
        return _as_results(outputs, self._torch, len(outputs) == 1)


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
            compiled_for = re.search(r'#hal\.device\.target<"([\w-]+)"', str(e))
            if compiled_for:
                raise RuntimeLoadError(
                    f"{path} was compiled for '{compiled_for.group(1)}' devices and cannot run on '{device}'"
                ) from None
            raise RuntimeLoadError(f"{path} cannot run on '{device}' ({_first_line(e)})") from None
        # `f$async` is IREE's fence-taking twin of `f`, reached through `module.f.async_`.
        self.function_names = [
            n.split(".")[-1] for n in vm_module.function_names if not n.startswith("__") and not n.endswith("$async")
        ]
        self.functions = {n: Function(self, n, None) for n in self.function_names}

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
    if isinstance(value, np.ndarray):
        return np.ascontiguousarray(value)
    return value


def _to_host(value):
    return value.to_host() if hasattr(value, "to_host") else value


def summarize(value) -> str:
    """A one-line description of an output, like iree-run-module prints."""
    array = np.asarray(value)
    text = f"{'x'.join(map(str, array.shape)) or 'scalar'}x{array.dtype}"
    if array.size and np.issubdtype(array.dtype, np.number):
        flat = array.reshape(-1)
        head = np.array2string(flat[:8], precision=4, separator=" ", max_line_width=200)
        text += f" min={flat.min():.6g} max={flat.max():.6g} mean={flat.astype(np.float64).mean():.6g} first={head}"
    return text
