"""Loading compiled modules and calling them with numpy arrays or torch tensors (IREE's HAL)."""

from __future__ import annotations

import operator
import os
import tempfile
import threading
import time
from pathlib import Path
from typing import NamedTuple

import numpy as np

from schedc.errors import RuntimeLoadError, SchedcError
from schedc.options import Execution
from schedc.runtime.interop import (
    _as_results,
    _device_array,
    _dlpack_device,
    HostStaging,
    _export_tensor,
    _exported_view,
    _first_line,
    _host_arguments,
    _import_tensor,
    _is_buffer_view,
    owned_copy,
    _is_device_array,
    _is_torch,
    _packed,
    _to_host,
    check_argument,
    copy_into_torch,
    is_aligned,
    wait_for_torch,
)
from schedc.runtime import abi
from schedc.runtime.vmfb import check_module_file
from schedc.runtime.signature import Signature

EXECUTIONS = Execution.names()  # the modes a module runs in (schedc.options.Execution)
WAITS = ("spin", "block")
# How long a replayed GPU call polls its fence before it blocks (Function._invoke_spinning).
SPIN_SECONDS = 0.005
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


def running_execution(driver: str) -> str | None:
    """The execution mode this process runs a GPU driver in; None before its first device."""
    return _STARTED.get(driver)


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


def _tensor_key(tensor) -> tuple:
    """What makes a torch argument the same as an earlier one for an import: its memory,
    shape, strides and dtype. (Its device is in its address: torch's GPU memory shares one
    address space with the host's.)"""
    return (tensor.data_ptr(), tensor.shape, tensor.stride(), tensor.dtype)


def _result_key(tensor) -> tuple:
    """What a caller can change of a result tensor handed out again: its memory, shape,
    strides, dtype (`set_`, `resize_`, `unsqueeze_`, `.data = ...`) and whether autograd
    tracks it."""
    return (tensor.data_ptr(), tensor.shape, tensor.stride(), tensor.dtype, tensor.requires_grad)


class _Repeat(NamedTuple):
    """The last torch call that imported its tensors, for a call with the same tensor objects,
    unchanged, to skip straight to the call."""

    tensors: tuple
    keys: list
    views: list
    dlpack: tuple


class _Imported(NamedTuple):
    """An input slot's last torch tensor imported through DLPack, its key and buffer view."""

    tensor: object
    key: tuple
    view: object


class _Exported(NamedTuple):
    """An output slot's last exported result: its IREE buffer and bytes, the torch tensor over
    it, the alias handed out and that alias's key when handed out."""

    buffer: object
    byte_length: int
    tensor: object
    handed: object
    key: tuple


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

    A replayed module (compiled with execution="graphs") reads its inputs from static buffers,
    on the device: the last call's tensors or device arrays passed again are copied there by
    the replayed graph itself (static-replay's kept recording), other torch tensors by torch.
    It returns views of its static output buffers, which the next call overwrites, as torch's
    CUDA graphs do (torch results: the same tensor every call while the caller leaves it as
    it is): keep a result past the next call with `copy=True` (or `.clone()` it).
    numpy results are always copies.
    """

    def __init__(self, module: "Module", name: str, vm_function):
        self._module = module
        self.name = name
        self._vm_function = vm_function
        self._invoker = None  # IREE's FunctionInvoker, made once: it parses the reflection
        self._invoke = None  # the VM context's invoke, bound on the first call on buffer views
        # Per input slot: the last torch tensor imported through DLPack and its buffer view.
        self._imported: list[_Imported | None] = []
        self._last_keys: list[tuple] | None = None  # the last torch call's tensors (_tensor_key)
        # The last torch call that imported its tensors: (tensors, keys, views, DLPack device),
        # for a call with the same tensor objects, unchanged, to skip straight to the call.
        self._repeat: _Repeat | None = None
        # Per output slot: the last exported result buffer and the torch tensor over it.
        self._exported: list[_Exported | None] = []
        # A replayed function's static input buffers: (views, torch tensors over them), or
        # False where it has none to offer; None until the first torch call looks.
        self._static_inputs = None
        self._staging: HostStaging | None = None  # a replayed function's numpy calls' host buffers
        self._static_slots: frozenset[int] | None = None  # results always in the same static buffer
        # Module.wait == "spin": (the `$async` twin, a semaphore of this function's calls), or
        # False (the synchronous export); None until the first call looks.
        self._spin: tuple | bool | None = None
        self._signalled = 0  # the semaphore's value after the last call
        self._signature: Signature | None | bool = False  # False until the first call reads it
        self._writes_inputs = False  # IREE writes an argument's buffer: call on copies (_invoke_on_imports)

    def __call__(self, *args, copy: bool = False):
        signature = self.signature
        if signature is not None:
            signature.check_arguments(args)
        if self._module.replayed:  # one call at a time: every call shares the static buffers
            with self._module._lock:
                results = self._call(args, copy)
        else:
            results = self._call(args, copy)
        return results if signature is None else signature.mend(args, results)

    @property
    def signature(self) -> Signature | None:
        """How this function's results are mended into torch's (runtime.signature), from its
        `schedc.signature` reflection; None where they need nothing."""
        if self._signature is False:
            function = self._vm_function or self._module._vm_module.lookup_function(self.name)
            text = function.reflection.get(abi.SIGNATURE) if function is not None else None
            self._signature = Signature.parse(text, self.name)
        return self._signature

    def _call(self, args: tuple, copy: bool):
        module = self._module
        if module._pending is not None:
            module._collect_pending()
        if module.replayed and args and all(type(a) is np.ndarray and a.flags.c_contiguous and a.dtype != object for a in args):
            # numpy arrays into a replayed module (a generation step's tokens): straight to the
            # host buffers, the checks below being for other values
            self._repeat = None
            return self._replay_on_host(args, torch_results=False)
        repeat, keys = self._repeat, None
        if repeat is not None and len(args) == len(repeat.tensors) and all(map(operator.is_, args, repeat.tensors)):
            keys = list(map(_tensor_key, args))
            if keys == repeat.keys:  # the last call's tensors, unchanged: their imports again
                wait_for_torch(repeat.dlpack)
                tensors = self._export(self._invoke_views(repeat.views), repeat.dlpack)
                return _packed([t.clone() for t in tensors] if copy else tensors)
        dlpack = _dlpack_device(module.device_name, args)
        if dlpack is not None:
            keys = keys if keys is not None else list(map(_tensor_key, args))
            again, self._last_keys, self._repeat = keys == self._last_keys, keys, None
            # The last call's tensors again: imported once, and the module's kept recording
            # copies them in as part of its graph. Other tensors: torch writes them into the
            # static inputs (a replayed module's; else they are imported).
            views = self._write_static_inputs(args, dlpack) if module.static_inputs and not again else None
            if views is None:
                views = self._import(args, dlpack, keys)
                if all(entry is not None for entry in self._imported) and not self._writes_inputs:  # kept for the next call
                    self._repeat = _Repeat(args, keys, views, dlpack)
            tensors = self._export(self._invoke_on_imports(views), dlpack)
            return _packed([t.clone() for t in tensors] if copy else tensors)
        self._repeat = None
        if args and all(_is_device_array(a) for a in args):
            results = self._invoke_views([a._buffer_view for a in args])
            return _packed([_device_array(module.device, r) if _is_buffer_view(r) else r for r in results])
        inputs = _host_arguments(self.name, args)
        if module.replayed and inputs and all(isinstance(a, np.ndarray) for a in inputs):
            return self._replay_on_host(inputs, torch_results=any(_is_torch(a) for a in args))
        try:
            results = self._bound_invoker()(*inputs)
        except (RuntimeError, ValueError, TypeError) as e:
            scalars = [i for i, a in enumerate(args) if isinstance(a, (int, float, np.integer, np.floating)) and not isinstance(a, bool)]
            if scalars and "FAILED_PRECONDITION" in str(e):  # IREE's words for a number where a tensor goes
                raise SchedcError(f"calling {self.name} failed: argument {scalars[0]} is a Python number where the function "
                                  f"takes a tensor: pass an array (numpy, torch) of the function's shape") from None
            raise SchedcError(f"calling {self.name} failed: {_first_line(e)}") from None
        single = not isinstance(results, (tuple, list))
        outputs = [results] if single else list(results)
        # Results of the caller's own: IREE's to_host maps a host-visible buffer (local-task)
        # and the mapping did not keep its memory: a bucketed module's result read wrong values
        # once the module was dropped and another loaded (bench/params.py equal, RandWire).
        host = [_to_host(o, copy=True) for o in outputs]
        return _as_results(host, any(_is_torch(a) for a in args), single)

    def _invoke_on_imports(self, views) -> list:
        """The call on buffer views over the caller's tensors. IREE 3.13 may write a result
        into an argument's buffer in place (iree-org/iree#16168: slice_scatter, index_put), and
        the buffers it imports from torch do not allow that (PERMISSION_DENIED, "requires
        DISCARD_WRITE"): the caller's tensor stays as it was, and such a function is called on
        copies of its arguments in buffers of IREE's own from then on."""
        if not self._writes_inputs:
            try:
                return self._invoke_views(views)
            except SchedcError as e:
                if "PERMISSION_DENIED" not in str(e) or "DISCARD_WRITE" not in str(e):
                    raise
                self._writes_inputs, self._repeat = True, None
        device = self._module.device
        return self._invoke_views([owned_copy(device, v) if _is_buffer_view(v) else v for v in views])

    def _host_staging(self) -> HostStaging:
        """The host buffers of a replayed function's numpy calls (see HostStaging): the static
        input buffers the host can map, adopted at the first call, or pinned buffers of the
        runtime's own."""
        if self._staging is None:
            self._staging = HostStaging(self._module.device)
            self._staging.adopt(self._static_input_views())
        return self._staging

    def _replay_on_host(self, arrays, torch_results: bool):
        """A replayed call on host arrays, its results read back as numpy (torch CPU tensors
        if asked)."""
        staging = self._host_staging()
        host = staging.download(self._invoke_views(staging.upload(arrays)))
        return _as_results(host, torch_results, len(host) == 1)

    def _bound_invoker(self):
        if self._invoker is None:
            module = self._module
            self._invoker = module._context.modules[module.vm_name][self.name]
        return self._invoker

    def _invoke_views(self, views) -> list:
        """Calls the function on buffer views: its results as buffer views (other values as
        IREE gives them). The per-call path of device arrays and torch tensors: no argument
        packing, no reflection, nothing looked up twice."""
        if self._invoke is None:
            import iree.runtime as rt

            module = self._module
            self._vm_function = self._vm_function or module._vm_module.lookup_function(self.name)
            self._invoke, self._new_list, self._view_type = module._context.vm_context.invoke, rt.VmVariantList, rt.HalBufferView
        if self._spin is None:
            module = self._module
            twin = module._vm_module.lookup_function(f"{self.name}$async") if module.wait == "spin" else None
            self._spin = (twin, module._config.device.create_semaphore(0)) if twin is not None else False
        arguments = self._new_list(len(views) + 2)
        for view in views:
            arguments.push_ref(view)
        results = self._new_list(4)
        try:
            if self._spin:
                self._invoke_spinning(arguments, results)
            else:
                self._invoke(self._vm_function, arguments, results)
        except (RuntimeError, ValueError, TypeError) as e:
            if self._spin:  # a failed fence fails its semaphore: the next call makes another
                self._spin, self._signalled = None, 0
            raise SchedcError(f"calling {self.name} failed: {_first_line(e)}") from None
        outputs = []
        for i in range(results.size):
            try:
                outputs.append(results.get_as_object(i, self._view_type))
            except (RuntimeError, ValueError, TypeError):  # not a buffer: a scalar, a list
                outputs.append(results.get_variant(i))
        return outputs

    def _invoke_spinning(self, arguments, results) -> None:
        """The call through the function's fence-taking twin (`f$async`), waiting for its
        fence by polling it (for SPIN_SECONDS at most, then blocking).

        The synchronous export blocks in IREE's fence wait, and the thread that wakes from it
        after a replay of a few hundred microseconds pays for the wake-up: on an H200 the
        polled call took 11-25 us less (bench/replay.py's models, in place). CUDA's own
        synchronization spins the same way by default while the host has cores to spare."""
        import iree.runtime as rt

        twin, semaphore = self._spin
        ready = rt.HalFence.create_at(semaphore, self._signalled)
        done = rt.HalFence.create_at(semaphore, self._signalled + 1)
        arguments.push_ref(ready)
        arguments.push_ref(done)
        self._invoke(twin, arguments, results)
        deadline = time.perf_counter() + SPIN_SECONDS
        while not done.wait(timeout=0):
            if time.perf_counter() > deadline:
                done.wait()
                break
        self._signalled += 1

    def _write_static_inputs(self, tensors, dlpack) -> list | None:
        """A replayed module's static input buffers, with the tensors copied into them by torch
        (on torch's current stream, which the call then waits for); None where the module
        offers none or a tensor does not match its buffer (the call then imports it).

        The module skips its own copy for an input that already is its static buffer. Used for
        tensors other than the last call's; those the module copies in itself (see __call__)."""
        import torch

        if self._static_inputs is None:
            self._static_inputs = self._load_static_inputs(dlpack) or False
        if not self._static_inputs:
            return None
        views, statics = self._static_inputs
        if len(statics) != len(tensors) or any(s.shape != t.shape or s.dtype != t.dtype or s.device != t.device for s, t in zip(statics, tensors)):
            return None
        if any(t.requires_grad for t in tensors):  # copy_ would make the static buffer part of the autograd graph
            with torch.no_grad():
                for static, tensor in zip(statics, tensors):
                    static.copy_(tensor)
        else:
            for static, tensor in zip(statics, tensors):
                static.copy_(tensor)
        wait_for_torch(dlpack)
        return views

    def _static_input_views(self) -> list:
        """Views of the static input buffers the module exports for this function
        (`__schedc_static_inputs_<f>`, made by static-replay), in argument order; [] without."""
        module = self._module
        for name in (f"{abi.STATIC_INPUTS_PREFIX}{self.name}$async", f"{abi.STATIC_INPUTS_PREFIX}{self.name}"):
            if module._vm_module.lookup_function(name) is not None:
                return Function(module, name, None)._invoke_views([])
        return []

    def _load_static_inputs(self, dlpack) -> tuple | None:
        """(views, torch tensors) of the static input buffers the module exports for this
        function; None without them."""
        module = self._module
        views = self._static_input_views()
        tensors = [_exported_view(module.device, view, dlpack) if _is_buffer_view(view) else None for view in views]
        if not views or any(t is None for t in tensors):
            return None
        return views, tensors

    def _import(self, tensors, dlpack, keys) -> list:
        """Buffer views over the tensors' memory, after torch's queued work on them is done.

        A contiguous tensor that comes back to the same slot with the same memory, shape,
        strides and dtype (`keys`, from _tensor_key) reuses the view imported for it: the slot
        keeps the tensor, so its memory cannot be freed and handed to another tensor
        meanwhile, and IREE reads the memory (not a copy of it) on every call. The same view
        is the same IREE buffer, which a replayed module's kept recording copies from."""
        wait_for_torch(dlpack)
        if len(self._imported) != len(tensors):
            self._imported = [None] * len(tensors)
        views = []
        for i, (tensor, key) in enumerate(zip(tensors, keys)):
            cached = self._imported[i]
            if cached is not None and cached.key == key:
                views.append(cached.view)
                continue
            view = _import_tensor(self._module.device, tensor, i, self.name)
            # Kept for the next call only where the view is over the tensor's own memory.
            self._imported[i] = _Imported(tensor, key, view) if tensor.is_contiguous() and is_aligned(tensor) else None
            views.append(view)
        return views

    def _export(self, results, dlpack) -> list:
        """torch tensors over the result buffers (the call has finished with them).

        A replayed module returns the same static buffers on every call: the tensor exported
        for a slot's buffer is handed out again while the buffer stays the same, as
        torch.cuda.graph's static outputs are; a fresh alias of it once the caller changed the
        one handed out (its shape, memory or autograd state: `_result_key`). A fresh alias
        per call (`detach`) cost 2.9-3.5 us on the H200 machine's host, the key 1.2-1.7 us.
        The slot keeps the tensor it exported, which keeps IREE's buffer alive."""
        device = self._module.device
        if not self._module.replayed:
            return [_export_tensor(device, view, dlpack) for view in results]
        if len(self._exported) != len(results):
            self._exported = [None] * len(results)
        if self._static_slots is None:
            self._static_slots = self._module.static_result_slots(self.name)
        tensors = []
        for i, view in enumerate(results):
            if not _is_buffer_view(view):  # a scalar the function returns by value
                tensors.append(view)
                continue
            cached = self._exported[i]
            if cached is not None and i in self._static_slots:  # the same static buffer on every call
                tensors.append(self._hand_out(i, cached))
                continue
            buffer = view.get_buffer().ref  # equal refs: the same IREE buffer
            if cached is not None and cached.buffer == buffer and cached.byte_length == view.byte_length:
                tensors.append(self._hand_out(i, cached))
                continue
            tensor = _exported_view(device, view, dlpack)
            if tensor is None:  # not exportable: a copy of this call's result, never reused
                self._exported[i] = None
                tensors.append(copy_into_torch(device, _device_array(device, view), dlpack))
                continue
            handed = tensor.detach()
            self._exported[i] = _Exported(buffer, view.byte_length, tensor, handed, _result_key(handed))
            tensors.append(handed)
        return tensors

    def _hand_out(self, slot: int, cached: "_Exported"):
        """The result tensor handed out for a slot before, while the caller left it as it was;
        else a fresh alias of the exported tensor, which is never handed out itself."""
        handed = cached.handed
        if _result_key(handed) == cached.key:
            return handed
        handed = cached.tensor.detach()
        self._exported[slot] = cached._replace(handed=handed, key=_result_key(handed))
        return handed

    def async_(self, *args) -> "PendingCall":
        """Queues the call and returns at once; `.wait()` gives the results (host copies).

        Uses the module's `<name>$async` export where there is one (IREE's coarse-fences ABI,
        which torch models get): the inputs are copied to the device, the work is queued, and
        a fence is signalled when it is done. On a replayed module the next call reuses the
        static buffers: it first waits for this one and keeps its results."""
        module = self._module
        async_name = f"{self.name}$async"
        for position, value in enumerate(args):
            check_argument(async_name, position, value)
        vm_function = module._vm_module.lookup_function(async_name)
        if vm_function is None:
            # Modules not from torch (func.func input) have no fence-taking export: the call
            # runs on a worker thread instead (IREE releases the GIL while it waits).
            return PendingCall.on_thread(self, args)
        if module.replayed:
            with module._lock:
                return self._queue(vm_function, async_name, args)
        return self._queue(vm_function, async_name, args)

    def _queue(self, vm_function, async_name: str, args: tuple) -> "PendingCall":
        import iree.runtime as rt

        module = self._module
        module._collect_pending()
        device = module._config.device
        inputs = []
        arguments = rt.VmVariantList(len(args) + 2)
        values = _host_arguments(async_name, args)
        staging = self._host_staging() if module.replayed and all(isinstance(v, np.ndarray) for v in values) else None
        for position, value in enumerate(staging.upload(values) if staging else values):
            try:
                if isinstance(value, (bool, int, np.integer)):  # scalars go by value, as in a plain call
                    arguments.push_int(int(value))
                elif isinstance(value, (float, np.floating)):
                    arguments.push_float(float(value))
                elif _is_buffer_view(value):  # staged: the next call waits for this one (see below)
                    arguments.push_ref(value)
                else:
                    array = rt.asdevicearray(device, value)
                    inputs.append(array)
                    arguments.push_ref(array._buffer_view)
            except (TypeError, ValueError, OverflowError, RuntimeError) as e:  # a number out of range, an array of objects
                raise SchedcError(f"calling {async_name}: argument {position} cannot be passed to IREE ({_first_line(e)})") from None
        semaphore = device.create_semaphore(0)
        ready, done = rt.HalFence.create_at(semaphore, 0), rt.HalFence.create_at(semaphore, 1)
        arguments.push_ref(ready)
        arguments.push_ref(done)
        results = rt.VmVariantList(4)
        try:
            module._context.vm_context.invoke(vm_function, arguments, results)
        except (RuntimeError, ValueError) as e:
            raise SchedcError(f"calling {async_name} failed: {_first_line(e)}") from None
        pending = PendingCall(device, done, results, inputs, any(_is_torch(a) for a in args), staging=staging)
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
        for i in self._inputs:
            if i < len(args) and not (hasattr(args[i], "shape") and len(args[i].shape) > 0):
                raise SchedcError(f"calling {self.name}: argument {i} carries the batch and must be an array or tensor, "
                                  f"not {type(args[i]).__name__}")
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

    def __init__(self, device, fence, results, inputs, torch_out: bool, future=None, staging: HostStaging | None = None):
        self._device, self._fence, self._results = device, fence, results
        self._inputs = inputs  # keeps the device copies of the inputs alive until done
        self._torch = torch_out
        self._future = future
        self._staging = staging  # a replayed function's host buffers: results are read through them
        self._outputs = None
        self._lock = threading.Lock()  # its caller and the module's next call may both wait

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
        if self._future is not None:
            return self._future.result()
        with self._lock:
            return self._wait()

    def _wait(self):
        import iree.runtime as rt

        if self._outputs is None:
            self._fence.wait()
            views = [self._results.get_as_object(i, rt.HalBufferView) for i in range(self._results.size)]
            if self._staging is not None:
                self._outputs = self._staging.download(views)
            else:
                self._outputs = [np.array(rt.DeviceArray(self._device, view).to_host()) for view in views]
        return _as_results(self._outputs, self._torch, len(self._outputs) == 1)


class Module:
    """A compiled .vmfb loaded on one device; its exported functions are attributes."""

    def __init__(self, path: str, device: str, execution: str | None = None, static_inputs: bool = True, wait: str | None = None,
                 params=None, shown_as: str | None = None):
        import iree.runtime as rt

        if not isinstance(device, str):
            raise RuntimeLoadError(f"device must be a name such as 'local-task' or 'cuda', not {type(device).__name__}")
        try:
            if Path(path).is_dir():
                raise RuntimeLoadError(f"{path}: is a directory, expected a .vmfb module")
            if not Path(path).is_file():
                raise RuntimeLoadError(f"{path}: no such file")
        except OSError as e:  # a name too long, a path through a file
            raise RuntimeLoadError(f"{path}: {e.strerror}") from None
        if wait is not None and wait not in WAITS:
            raise RuntimeLoadError(f"unknown wait '{wait}'; valid: {', '.join(WAITS)}")
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
            # A copy in memory, not a mapping of the file: a module file changed or truncated
            # while loaded would fault at the next call (SIGBUS).
            vm_module = rt.VmModule.copy_buffer(self._config.vm_instance, Path(path).read_bytes())
        except (RuntimeError, ValueError) as e:
            raise RuntimeLoadError(f"{path}: not a loadable IREE module ({_first_line(e)})") from None
        self._vm_module = vm_module
        self.vm_name = vm_module.name
        self.parameters = module_parameters(vm_module)
        modules = [vm_module]
        if self.parameters or params is not None:
            modules.insert(0, _parameters_module(self._config.vm_instance, self.parameters, params, shown_as or path))
        try:
            self._context = rt.SystemContext(vm_modules=modules, config=self._config)
        except (RuntimeError, ValueError, IndexError) as e:
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
        for name, function in self.functions.items():  # module.forward without __getattr__ per call
            if name.isidentifier() and not hasattr(type(self), name) and name not in self.__dict__:
                self.__dict__[name] = function
        # A replayed module (static-replay) returns its static buffers: see Function.
        self.replayed = any(
            abi.STATIC_RESULTS in vm_module.lookup_function(n).reflection for n in vm_module.function_names
        )
        # Torch writes its inputs into a replayed module's static input buffers (see load).
        self.static_inputs = static_inputs and self.replayed
        # How a replayed module's synchronous call waits for the device (see load).
        self.wait = wait or ("spin" if self.replayed and driver in ("cuda", "hip") else "block")
        self._pending: PendingCall | None = None
        self._lock = threading.RLock()  # a replayed module's calls, one at a time (Function.__call__)

    @property
    def generation(self):
        """A generation module's `Generation` (buckets, cache length); None for other modules."""
        from schedc.runtime.generation import Generation

        for name in self._vm_module.function_names:
            function = self._vm_module.lookup_function(name)
            if function is not None and abi.GENERATION in function.reflection:
                return Generation(self, function.reflection[abi.GENERATION])
        return None

    def generate(self, prompt_ids, max_new_tokens: int, eos_token_id: int | None = None) -> list[int]:
        """The greedy continuation of `prompt_ids` (token ids), up to `max_new_tokens` tokens,
        stopping after `eos_token_id`: for a module made by `schedc import --generate`
        (`schedc.runtime.generation`)."""
        return list(self.generate_iter(prompt_ids, max_new_tokens, eos_token_id))

    def generate_batch(self, prompts, max_new_tokens: int, eos_token_id: int | None = None) -> list[list[int]]:
        """Greedy new tokens for each of several prompts, generated together in the module's
        smallest batch bucket that holds them (`schedc import --generate --batch-buckets`)."""
        generation = self.generation
        if generation is None:
            raise RuntimeLoadError("this module is not a generation module: import the model with schedc import --generate")
        return generation.batch(prompts, max_new_tokens, eos_token_id)

    def generate_iter(self, prompt_ids, max_new_tokens: int, eos_token_id: int | None = None):
        """Each token of `generate`, as it is made."""
        generation = self.generation
        if generation is None:
            raise RuntimeLoadError("this module is not a generation module: import the model with schedc import --generate")
        return generation.tokens(prompt_ids, max_new_tokens, eos_token_id)

    def static_result_slots(self, name: str) -> frozenset[int]:
        """The positions of `name`'s results that static-replay found to be views of the same
        static buffer on every call (its `schedc.static_result_slots` reflection, on the
        function or on its `$async` form, which the synchronous one calls)."""
        for candidate in (name, f"{name}$async"):
            function = self._vm_module.lookup_function(candidate)
            if function is not None and abi.STATIC_RESULT_SLOTS in function.reflection:
                text = function.reflection[abi.STATIC_RESULT_SLOTS]
                return frozenset(int(slot) for slot in text.split(",") if slot)
        return frozenset()

    def _group_buckets(self, vm_module) -> None:
        """Functions compiled per batch bucket (`forward$b4`, ...) are called as one, `forward`."""
        buckets: dict[str, dict[int, Function]] = {}
        batched: dict[str, tuple] = {}
        for name in list(self.function_names):
            reflection = vm_module.lookup_function(name).reflection
            if abi.BUCKET_OF not in reflection:
                continue
            base = reflection[abi.BUCKET_OF]
            buckets.setdefault(base, {})[int(reflection[abi.BATCH])] = self.functions[name]
            batched[base] = tuple(
                tuple(int(i) for i in reflection[key].split(",") if i) for key in (abi.BATCHED_INPUTS, abi.BATCHED_OUTPUTS)
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


def load(path, device: str = "local-task", execution: str | None = None, static_inputs: bool = True, wait: str | None = None,
         params=None) -> Module:
    """Loads a compiled module on `device` (local-task, local-sync, cuda, hip or vulkan):
    a .vmfb file's path, or the bytes `schedc.compile` returned.

    `params`: the parameter archives (.irpa) of a module compiled with its weights outside it
    (`schedc import --params`): a path, a list of paths (one scope, "model"), or a dict of
    scope -> path(s). Any archive of the same layout will do: another checkpoint of the same
    architecture changes the outputs without a compile. Every parameter the module needs is
    checked first (present, its type, shape and bytes, its checksum where the archive records
    one), and a mismatch is an error naming the parameter.

    `execution` ("streams" or "graphs", for cuda and hip) chooses how IREE replays command
    buffers: on the device's one stream, or as graphs whose concurrent waves run as parallel
    branches. By default, the mode the module was compiled for.

    `static_inputs` (on by default; it matters for replayed modules called with torch
    tensors): torch copies a tensor other than the last call's, on its stream, into the
    module's static input buffer, and the module skips its own copy (for a new buffer an IREE
    queue copy that the replay waits for on the host). Off, the module imports each tensor
    through DLPack and copies it itself.

    `wait` ("spin" or "block"): how a synchronous call of a replayed module waits for the
    device. "spin" (the default on cuda and hip) polls the call's fence for up to 5 ms, then
    blocks; "block" (the default elsewhere: the CPU drivers' workers need the cores) blocks
    in IREE's wait at once."""
    if isinstance(path, (bytes, bytearray, memoryview)):
        return _load_bytes(bytes(path), device, execution, static_inputs, wait, params)
    if not isinstance(path, (str, os.PathLike)):
        raise RuntimeLoadError(f"schedc.load takes a .vmfb path or a compiled module's bytes, not {type(path).__name__}")
    return Module(str(path), device, execution, static_inputs, wait, params)


def _load_bytes(data: bytes, device: str, execution: str | None, static_inputs: bool, wait: str | None, params=None) -> Module:
    """A module from its bytes, through a file that is gone once IREE has mapped it."""
    with tempfile.TemporaryDirectory(prefix="schedc-module-") as folder:
        path = str(Path(folder) / "module.vmfb")
        Path(path).write_bytes(data)
        try:
            return Module(path, device, execution, static_inputs, wait, params, shown_as="the module")
        except RuntimeLoadError as e:
            raise RuntimeLoadError(str(e).replace(path, "the module's bytes")) from None


def module_parameters(vm_module) -> list:
    """The parameters a module reads from archives, as its compile recorded them."""
    from schedc.runtime.parameters import parse_layout

    for name in vm_module.function_names:
        function = vm_module.lookup_function(name)
        if function is not None and abi.PARAMETERS in function.reflection:
            return parse_layout(function.reflection[abi.PARAMETERS])
    return []


def _parameters_module(instance, needed: list, params, path: str):
    """IREE's io_parameters module over the archives `params` names, checked against what the
    module needs (see load)."""
    from schedc.runtime.parameters import check_parameters, open_scopes, parameters_module

    if needed and params is None:
        raise RuntimeLoadError(
            f"{path} keeps its weights in a parameter archive: load it with params='WEIGHTS.irpa' "
            f"(schedc run --params=WEIGHTS.irpa); it needs {len(needed)} parameters, such as '{needed[0].key}'"
        )
    if not needed:
        raise RuntimeLoadError(f"{path} reads no parameters (its weights are in the module): load it without params")
    scopes = open_scopes(params)
    check_parameters(needed, scopes, path)
    return parameters_module(instance, scopes)


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
        if function is not None and abi.EXECUTION in function.reflection:
            return function.reflection[abi.EXECUTION]
    return "streams"


def summarize(value) -> str:
    """A one-line description of an output, like iree-run-module prints."""
    array = np.asarray(value)
    text = f"{'x'.join(map(str, array.shape))}x{array.dtype}" if array.shape else f"scalar {array.dtype}"
    if array.size and np.issubdtype(array.dtype, np.number):
        flat = array.reshape(-1)
        head = np.array2string(flat[:8], precision=4, separator=" ", max_line_width=200)
        text += f" min={flat.min():.6g} max={flat.max():.6g} mean={flat.astype(np.float64).mean():.6g} first={head}"
    return text
