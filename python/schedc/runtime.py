"""Loading compiled modules and calling them with numpy arrays or torch tensors (IREE's HAL)."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np

from .errors import RuntimeLoadError, SchedcError

DEVICES = ("local-task", "local-sync", "cuda", "hip", "vulkan")


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
        host_args = [_to_numpy(a) for a in args]
        try:
            results = self._module._context.modules[self._module.vm_name][self.name](*host_args)
        except (RuntimeError, ValueError, TypeError) as e:
            raise SchedcError(f"calling {self.name} failed: {_first_line(e)}") from None
        single = not isinstance(results, (tuple, list))
        outputs = [results] if single else list(results)
        outputs = [_to_host(o) for o in outputs]
        if torch_in:
            import torch

            outputs = [torch.from_numpy(np.ascontiguousarray(o)) if isinstance(o, np.ndarray) else o for o in outputs]
        return outputs[0] if single else tuple(outputs)


class Module:
    """A compiled .vmfb loaded on one device; its exported functions are attributes."""

    def __init__(self, path: str, device: str):
        import iree.runtime as rt

        if not Path(path).is_file():
            raise RuntimeLoadError(f"{path}: no such file")
        self.device_name = device
        self._config = _create_config(device)
        try:
            vm_module = rt.VmModule.mmap(self._config.vm_instance, str(path))
        except (RuntimeError, ValueError) as e:
            raise RuntimeLoadError(f"{path}: not a loadable IREE module ({_first_line(e)})") from None
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
        self.function_names = [n.split(".")[-1] for n in vm_module.function_names if not n.startswith("__")]
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


def load(path: str, device: str = "local-task") -> Module:
    """Loads a compiled module on `device` (local-task, local-sync, cuda, hip or vulkan)."""
    return Module(str(path), device)


def _is_torch(value) -> bool:
    return type(value).__module__.startswith("torch")


def _to_numpy(value):
    if _is_torch(value):
        return value.detach().cpu().contiguous().numpy()
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
