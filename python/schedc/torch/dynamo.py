"""`torch.compile(model, backend="schedc")`: a TorchDynamo backend that compiles with schedc.

    model = torch.compile(model, backend="schedc", options={"target": "cuda"})
    with torch.no_grad():
        y = model(x)

For each graph dynamo hands over:
1. **Freeze**: the graph's parameters and buffers (dynamo lifts them to graph inputs) become
   constants of the compiled module, with the values they have at compile time (for a
   dynamic-shape graph: when each shape compiles, at its first call). A later change
   to a weight is not seen: compile again (`torch._dynamo.reset()`) after changing weights.
   With `options={"freeze_weights": False}`, the weights stay inputs of the module instead:
   each call passes the live tensors (through DLPack, without a copy on the CPU and with
   stream execution; a replayed CUDA module copies them into its static buffers each call),
   so a changed weight is seen without a compile, and the cache key holds the weights'
   types and shapes, not their bytes: a fine-tuned checkpoint of the same model loads the
   module already compiled.
2. **Import**: torch.export and torch-mlir's FX importer turn the graph into torch-dialect MLIR.
3. **Compile**: schedc's pipeline (`schedc.compile`) for the target, by default the one of the
   example inputs' device (CUDA tensors: `cuda`, else `llvm-cpu`).
4. **Cache**: the module is written to a cache folder (`options={"cache_dir": ...}`, else
   `$SCHEDC_CACHE_DIR`, else `~/.cache/schedc`), keyed by the graph's code, its input types,
   the frozen weights' bytes (when frozen), the options and the schedc, IREE, torch-mlir and torch versions:
   another process compiling the same model loads it instead of compiling again.
5. **Load** on the inputs' device; calls take and return torch tensors. On CUDA the module
   is compiled for replay (`execution="graphs"`: one CUDA graph launch per call over static
   buffers) and torch's CUDA tensors pass through DLPack without host copies.

Results: the replayed module's outputs live in static buffers that the next call overwrites
(torch's CUDA graphs, and mode="reduce-overhead", have the same rule). Dynamo cannot tell
whether the caller keeps a result past the next call, so each result is copied once on the
device, into memory of the caller's own, as torch.compile's default mode gives;
`options={"static_outputs": True}` skips the copy: a result is then valid until the next call
of the same graph, as with mode="reduce-overhead" (clone what you keep).

Shapes are static: a new input shape fails dynamo's guards and comes back as a new graph. When
dynamo marks a dimension dynamic instead (`dynamic=True`, or its automatic dynamic shapes after
a shape changed), the graph is compiled once per concrete shape it is called with.

A graph that torch-mlir or IREE cannot compile runs eagerly, with one warning naming the op
(`options={"fallback": False}`: an error instead). Inference only: a graph that needs
gradients raises "not supported yet"; call the model under `torch.no_grad()`.
"""

from __future__ import annotations

import dataclasses
import hashlib
import os
import re
import warnings
from dataclasses import dataclass
from pathlib import Path

from schedc.errors import SchedcError
from schedc.options import Execution, backend_fields, plain_default

# The runtime device a module compiled for each target is loaded on.
RUNTIME_DEVICES = {"llvm-cpu": "local-task", "cuda": "cuda", "rocm": "hip", "vulkan": "vulkan"}


class FallbackWarning(UserWarning):
    """A graph schedc could not compile runs in eager PyTorch instead."""


# The backend's own options, beside the compile options it passes on (the CompileOptions fields
# marked `backend`); `target`, `execution` and `tf32` are compile options whose default differs here.
BACKEND_OWN_OPTIONS = {
    "target": None,  # llvm-cpu, cuda, rocm, vulkan; None: the example inputs' device
    "device": None,  # the IREE runtime device; None: the target's (local-task, cuda, ...)
    "fallback": True,  # a graph schedc cannot compile runs eagerly (with a warning)
    "cache_dir": None,  # None: $SCHEDC_CACHE_DIR, else ~/.cache/schedc
    "execution": None,  # "graphs" (replay) or "streams"; None: graphs on cuda, else streams
    "static_outputs": False,  # return the replayed module's static buffers uncopied (see above)
    "freeze_weights": True,  # weights as the module's constants; False: passed at each call (see above)
    "tf32": None,  # f32 convolutions in TF32 on cuda; None: as torch's own (torch.backends.cudnn.allow_tf32)
}


class _BackendOptionsBase:
    """What `torch.compile(..., options={...})` can say to the schedc backend: the compile
    options of `schedc.options.CompileOptions` that are marked `backend` (passes, tuning,
    kernel_db, the chips, iree_flags, ...), and BACKEND_OWN_OPTIONS."""

    @classmethod
    def from_dict(cls, options: dict | None):
        options = dict(options or {})
        valid = [f.name for f in dataclasses.fields(cls)]
        unknown = sorted(set(options) - set(valid))
        if unknown:
            raise SchedcError(f"unknown schedc backend option(s) {', '.join(map(repr, unknown))}; valid: {', '.join(valid)}")
        if "iree_flags" in options:
            flags = options["iree_flags"]
            options["iree_flags"] = (flags,) if isinstance(flags, str) else tuple(flags)  # one flag, not its characters
        return cls(**options)

    def check(self, target: str) -> None:
        """Raises on an unknown target, chip or pass pipeline."""
        from schedc.targets import resolve_target

        if target not in RUNTIME_DEVICES:
            raise SchedcError(f"unknown target '{target}'; valid targets: {', '.join(RUNTIME_DEVICES)}")
        resolve_target(target, cuda_arch=self.cuda_arch, rocm_arch=self.rocm_arch, vulkan_target=self.vulkan_target, cpu=self.cpu)
        if self.execution not in (None, *Execution.names()):
            raise SchedcError(f"unknown execution '{self.execution}'; valid: graphs, streams")
        if self.passes is not None:
            from schedc.compiler.pipeline import parse_pipeline
            from schedc.passes import REGISTRY

            parse_pipeline(self.passes, REGISTRY)

    def cache_folder(self) -> Path:
        if self.cache_dir:
            return Path(self.cache_dir)
        if os.environ.get("SCHEDC_CACHE_DIR"):
            return Path(os.environ["SCHEDC_CACHE_DIR"])
        return Path.home() / ".cache" / "schedc"

    def compile_options(self, target: str) -> dict:
        """`schedc.compile`'s keywords for `target` (the cache key's share of the options)."""
        passed_on = {f.name: getattr(self, f.name) for f in backend_fields() if f.name not in ("target", "execution", "tf32")}
        return {**passed_on, "execution": self.execution_for(target), "tf32": self.tf32_for(target)}

    def tf32_for(self, target: str) -> bool:
        """On cuda, f32 convolutions in TF32 where torch would run them so (its cuDNN
        convolutions' default) and schedc's kernels run (not with tuning=False), unless told
        otherwise; never elsewhere."""
        if target != "cuda":
            return False
        if self.tf32 is None:
            import torch

            return bool(torch.backends.cudnn.allow_tf32) and self.tuning is not False
        return bool(self.tf32)

    def execution_for(self, target: str) -> str:
        """Replay on CUDA unless told otherwise; IREE's stream execution elsewhere."""
        return self.execution or ("graphs" if target == "cuda" else "streams")


def _backend_options_fields() -> list:
    """The backend's own options first, then the compile options it passes on."""
    fields = [(name, object, dataclasses.field(default=default)) for name, default in BACKEND_OWN_OPTIONS.items()]
    for f in backend_fields():
        if f.name not in BACKEND_OWN_OPTIONS:
            fields.append((f.name, object, dataclasses.field(default=plain_default(f))))
    return fields


BackendOptions = dataclasses.make_dataclass("BackendOptions", _backend_options_fields(), bases=(_BackendOptionsBase,), frozen=True)
BackendOptions.__doc__ = _BackendOptionsBase.__doc__


def backend(gm, example_inputs, options: dict | None = None):
    """The `schedc` TorchDynamo backend: returns a callable that runs `gm` compiled by schedc."""
    options = BackendOptions.from_dict(options)
    _reject_training(example_inputs)
    graph = FrozenGraph.build(gm, example_inputs, freeze=bool(options.freeze_weights))
    target = options.target or _default_target(graph.input_values(example_inputs))
    options.check(target)  # a mistake in the options is an error, never a silent fallback
    if graph.is_dynamic(example_inputs):
        return ShapeSpecialized(graph, target, options)
    return compile_or_fall_back(graph, example_inputs, target, options)


def _reject_training(example_inputs) -> None:
    import torch

    if torch.is_grad_enabled() and any(isinstance(a, torch.Tensor) and a.requires_grad for a in example_inputs):
        raise SchedcError(
            "schedc's torch.compile backend: graphs that need gradients (training) are not supported yet; "
            "run the model under torch.no_grad() or torch.inference_mode()"
        )


def _default_target(inputs) -> str:
    import torch

    devices = {a.device.type for a in inputs if isinstance(a, torch.Tensor)}
    return "cuda" if "cuda" in devices else "llvm-cpu"


@dataclass
class FrozenGraph:
    """A dynamo graph split into the weights it freezes and the inputs a call passes."""

    gm: object  # torch.fx.GraphModule
    weights: dict[int, object]  # graph input position -> the parameter or buffer (tensor)
    input_positions: list[int]  # the other graph inputs, in order
    tuple_output: bool

    @staticmethod
    def build(gm, example_inputs, freeze: bool = True) -> "FrozenGraph":
        placeholders = [n for n in gm.graph.nodes if n.op == "placeholder"]
        weights = {i: example_inputs[i] for i, node in enumerate(placeholders) if freeze and _is_weight(node, example_inputs[i])}
        inputs = [i for i in range(len(placeholders)) if i not in weights]
        output = next(n for n in gm.graph.nodes if n.op == "output")
        return FrozenGraph(gm, weights, inputs, isinstance(output.args[0], (tuple, list)))

    def input_values(self, args) -> list:
        return [args[i] for i in self.input_positions]

    def is_dynamic(self, example_inputs) -> bool:
        import torch

        for value in self.input_values(example_inputs):
            if isinstance(value, torch.SymInt):
                return True
            if isinstance(value, torch.Tensor) and not all(isinstance(d, int) for d in value.shape):
                return True
        return any(
            not all(isinstance(d, int) for d in getattr(n.meta.get("example_value"), "shape", ()))
            for n in self.gm.graph.nodes
            if n.op == "placeholder"
        )


def _is_weight(node, value) -> bool:
    """A parameter or buffer of an nn.Module that dynamo lifted to a graph input."""
    import torch

    if isinstance(value, torch.nn.Parameter):
        return True
    # Dynamo marks an inlined module's parameters and buffers as static inputs it does not
    # guard (torch 2.11 and 2.13); that mark stays on the placeholder, while torch 2.13 drops
    # `grapharg` once the backend has returned (a graph kept and frozen later lost its buffers).
    if node.meta.get("tensor_dict", {}).get("_dynamo_static_input_type") == "unguarded":
        return True
    grapharg = node.meta.get("grapharg")
    source = getattr(grapharg, "source", None)
    if source is None or not isinstance(value, torch.Tensor):
        return False
    name = source.name if isinstance(source.name, str) else source.name()
    return "._parameters[" in name or "._buffers[" in name


def frozen_module(graph: FrozenGraph, args):
    """torch.export's view of a graph: the weights as buffers (constants after import), the
    non-tensor inputs as the constants of one specialization, the tensor inputs as arguments."""
    import torch

    class Frozen(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.graph = graph.gm
            for position, weight in graph.weights.items():
                self.register_buffer(f"weight_{position}", weight.detach())

        def forward(self, *tensors):
            supplied = iter(tensors)
            full = []
            for position in range(len(args)):
                if position in graph.weights:
                    full.append(getattr(self, f"weight_{position}"))
                elif isinstance(args[position], torch.Tensor):
                    full.append(next(supplied))
                else:
                    full.append(args[position])
            return tuple(self.graph(*full))

    return Frozen()


def compile_or_fall_back(graph: FrozenGraph, args, target: str, options: BackendOptions):
    """A callable running `graph` for `args`'s shapes: schedc's module, or eager where torch-mlir
    or IREE cannot compile it. A module that cannot be loaded (a wrong device) is an error."""
    try:
        module = compiled_module(graph, args, target, options)
    except SchedcError as e:
        if not options.fallback:
            raise
        warnings.warn(f"schedc could not compile a graph ({failing_op(str(e))}); it runs in eager PyTorch: {_first_line(str(e))}", FallbackWarning, stacklevel=2)
        return graph.gm.forward
    return CompiledGraph(graph, module, options.device or RUNTIME_DEVICES[target], options.execution_for(target), options.static_outputs)


def compiled_module(graph: FrozenGraph, args, target: str, options: BackendOptions) -> Path:
    """The path of the compiled module for `args`: from the cache, or compiled into it."""
    key = cache_key(graph, args, target, options)
    path = options.cache_folder() / "dynamo" / f"{key}.vmfb"
    if path.is_file():
        if _intact(path):
            return path
        warnings.warn(f"schedc: the cached module {path} is damaged; compiling it again", stacklevel=2)
        path.unlink(missing_ok=True)
    mlir = import_graph(graph, args)
    from schedc.compiler.driver import compile  # the compiler's half: only on a cache miss
    from schedc.outputs import write_output

    vmfb = compile(mlir, target=target, **options.compile_options(target))
    try:
        write_output(str(path), vmfb)  # a concurrent process writes the same bytes
    except SchedcError as e:  # an unwritable cache costs the cache, not the compiled module
        import tempfile

        fallback = Path(tempfile.gettempdir()) / f"schedc-dynamo-{os.getpid()}" / f"{key}.vmfb"
        warnings.warn(f"schedc: cannot cache compiled modules ({e}); this process keeps them in {fallback.parent}", stacklevel=2)
        write_output(str(fallback), vmfb)
        return fallback
    return path


def _intact(path: Path) -> bool:
    """Whether a cached module's file is whole (its archive's checksums hold)."""
    from schedc.errors import RuntimeLoadError
    from schedc.runtime.vmfb import check_module_file

    try:
        check_module_file(str(path))
    except (RuntimeLoadError, OSError):
        return False
    return True


def import_graph(graph: FrozenGraph, args) -> str:
    """torch-dialect MLIR for the graph at `args`'s shapes, the weights inlined."""
    import torch
    from torch_mlir import fx

    from schedc.torch.importer import attach_signature, export_program, known_torch_warnings_filtered

    tensors = [args[i] for i in graph.input_positions if isinstance(args[i], torch.Tensor)]
    tensors = [t.detach() for t in tensors]
    try:
        with torch.no_grad(), known_torch_warnings_filtered():  # schedc's decompositions and signature, as import_torch's
            program = export_program(frozen_module(graph, args), tensors)
            module = fx.export_and_import(program, output_type="torch", func_name="forward", decomposition_table={})
            attach_signature(module, program, "forward")
    except Exception as e:  # torch.export and torch-mlir raise many kinds; all mean "cannot import"
        raise SchedcError(f"torch-mlir could not import the graph: {type(e).__name__}: {e}") from None
    return str(module)


def cache_key(graph: FrozenGraph, args, target: str, options: BackendOptions) -> str:
    """A hash of all a compiled module depends on: the graph's code, its inputs' types and
    shapes (and non-tensor values), the weights' bytes, the options, the tools' versions and,
    for the host CPU, the host and the CPU database it plans from."""
    import torch

    digest = hashlib.sha256()
    digest.update(graph.gm.code.encode())
    for position, value in enumerate(args):
        if position in graph.weights:
            weight = graph.weights[position].detach().cpu().contiguous()
            digest.update(f"weight {position} {weight.dtype} {tuple(weight.shape)}\n".encode())
            digest.update(weight.view(torch.uint8).numpy().data if weight.numel() else b"")
        elif isinstance(value, torch.Tensor):
            digest.update(f"input {position} {value.dtype} {tuple(value.shape)}\n".encode())
        else:
            digest.update(f"value {position} {value!r}\n".encode())
    digest.update(repr((target, sorted(options.compile_options(target).items()), tool_versions(), host_inputs(target))).encode())
    return digest.hexdigest()[:32]


def host_inputs(target: str) -> tuple[str, ...]:
    """What an llvm-cpu module depends on beyond its options: the CPU IREE generates code for
    (the host's), the ISA whose database cpu-config plans from ($SCHEDC_CPU_ISA or the host's)
    and that database's contents (a new measurement changes plans)."""
    if target != "llvm-cpu":
        return ()
    import hashlib

    from schedc.decisions.cpu_config import default_database_path, host_isa
    from schedc.passes.cpu_config import database_isa
    from schedc.targets import host_cpu, host_cpu_features

    isa = database_isa()
    path = default_database_path(isa)
    digest = hashlib.sha256(path.read_bytes()).hexdigest()[:16] if path is not None else "none"
    return (host_cpu(), host_isa(host_cpu_features()), isa, digest)


def tool_versions() -> tuple[str, ...]:
    from importlib.metadata import PackageNotFoundError, version

    from schedc.version import __version__

    versions = [f"schedc {__version__}"]
    for package in ("iree-base-compiler", "torch-mlir", "torch"):
        try:
            versions.append(f"{package} {version(package)}")
        except PackageNotFoundError:
            versions.append(f"{package} none")
    return tuple(versions)


def _serializable_base():
    """torch's base class for a backend result that dynamo's ahead-of-time compile can save
    (torch._dynamo.aot_compile, torch 2.9 and later); a plain object before it."""
    try:
        from torch._dynamo.aot_compile_types import SerializableCallable
    except ImportError:
        return object
    return SerializableCallable


class CompiledGraph(_serializable_base()):
    """Calls a compiled module with the graph's non-weight tensor inputs; returns what the
    graph returns (a tuple of tensors) on the inputs' device.

    Dynamo's ahead-of-time compile (`torch._dynamo.config.enable_aot_compile`) can save it:
    what it saves is the module's path and how to call it, and loading it in another process
    loads the module again (the weights are in the module), without tracing or compiling."""

    def __init__(self, graph: FrozenGraph, path: Path, device: str, execution: str = "streams", static_outputs: bool = False):
        self._setup(graph.input_positions, graph.tuple_output, path, device, execution, static_outputs)

    def _setup(self, input_positions, tuple_output: bool, path: Path, device: str, execution: str, static_outputs: bool) -> None:
        from schedc.runtime.module import load, running_execution

        self._input_positions, self._tuple_output = list(input_positions), tuple_output
        self.path, self.device = Path(path), device
        self._requested = (execution, static_outputs)
        driver = device.split(":")[0]
        # IREE runs a GPU driver in one mode per process: where this process already runs it
        # in stream mode (a module loaded earlier), the replay module runs on the stream.
        if execution == "graphs" and running_execution(driver) == "streams":
            execution = "streams"
        self.execution = execution if driver in ("cuda", "hip") else None
        self._module = load(path, device=device, execution=self.execution)
        self._static_outputs = static_outputs and self._module.replayed
        self._forward = self._module.forward

    @classmethod
    def serialize_compile_artifacts(cls, fn: "CompiledGraph") -> bytes:
        import json

        execution, static_outputs = fn._requested
        return json.dumps({
            "path": str(fn.path), "device": fn.device, "execution": execution, "static_outputs": static_outputs,
            "input_positions": fn._input_positions, "tuple_output": fn._tuple_output,
        }).encode()

    @classmethod
    def deserialize_compile_artifacts(cls, data: bytes) -> "CompiledGraph":
        import json

        state = json.loads(data)
        if not Path(state["path"]).is_file():
            raise SchedcError(f"the saved compiled graph's module {state['path']} is gone from the cache: compile again")
        graph = cls.__new__(cls)
        graph._setup(state["input_positions"], state["tuple_output"], Path(state["path"]), state["device"], state["execution"], state["static_outputs"])
        return graph

    def __call__(self, *args):
        import torch

        tensors = [args[i] for i in self._input_positions if isinstance(args[i], torch.Tensor)]
        if tensors and all(t.is_cuda for t in tensors):
            # Results on the GPU: the static buffers of a replayed module (copied on the
            # device unless static_outputs), else tensors the runtime already made for them.
            copy = self._module.replayed and not self._static_outputs
            results = self._forward(*tensors, copy=copy)
            results = results if isinstance(results, tuple) else (results,)
            device = tensors[0].device
            results = tuple(r if r.device == device else r.to(device) for r in results)
        else:
            results = self._forward(*tensors)
            results = results if isinstance(results, tuple) else (results,)
            device = tensors[0].device if tensors else torch.device("cpu")
            # The runtime's host results view IREE's mapped buffers; a tensor kept to the end of
            # the program outlived them in the interpreter's last garbage collection (a crash at
            # exit). So results own their memory: moved to the inputs' device, or copied.
            results = tuple(r.to(device) if r.device != device else r.clone() for r in results)
        return results if self._tuple_output else results[0]


class ShapeSpecialized:
    """A dynamic-shape graph, compiled once per concrete signature it is called with."""

    def __init__(self, graph: FrozenGraph, target: str, options: BackendOptions):
        self._graph, self._target, self._options = graph, target, options
        self._compiled: dict[tuple, object] = {}

    def __call__(self, *args):
        signature = tuple(_signature(a) for a in args)
        if signature not in self._compiled:
            self._compiled[signature] = compile_or_fall_back(self._graph, list(args), self._target, self._options)
        return self._compiled[signature](*args)


def _signature(value):
    import torch

    if isinstance(value, torch.Tensor):
        return (str(value.dtype), tuple(value.shape), value.device.type)
    return repr(value)


# How torch-mlir's and IREE's messages name an op, most specific first: a torch op on the
# failing line of IREE's diagnostic, an aten op from torch.export, a higher-order op the FX
# importer lacks, then any MLIR op a diagnostic names ('math.absf' op).
_OP_NAMES = (
    re.compile(r"torch\.(?:aten|prims|prim)\.[\w.]+|torch\.operator \"[^\"]+\""),
    re.compile(r"aten(?:\.|::)[\w.]+"),
    re.compile(r"operation '(\w+)'"),
    re.compile(r"'([a-z_]+\.[\w.]+)' op"),
)


def failing_op(message: str) -> str:
    """The op a compile error is about, as the error names it."""
    for pattern in _OP_NAMES:
        match = pattern.search(message)
        if match:
            return f"op {match.group(match.lastindex or 0)}"
    return "an op the error does not name"


def _first_line(message: str) -> str:
    lines = [line for line in message.strip().splitlines() if line.strip()]
    return lines[0][:300] if lines else ""
