"""PyTorch import: torch-dialect MLIR through torch-mlir's FX importer.

torch-mlir carries its own MLIR build, so the result crosses to IREE as text, never as objects.
"""

from __future__ import annotations

import contextlib
import importlib.util
import io
import logging
import os
import sys
import traceback
import warnings
from pathlib import Path

from schedc.errors import SchedcError
from schedc.torch.failures import export_failure, import_failure
from schedc.runtime.abi import SIGNATURE  # the module's attribute, then its functions' reflection
from schedc.torch.signature import signature_text, torch_signature


# Reduced precisions an import can convert a float32 model to, by their MLIR names.
DTYPES = ("f32", "f16", "bf16")


def import_torch(model, *example_args, func_name: str | None = None, dtype: str | None = None, dynamic_batch: bool = False,
                 train: bool = False, targets: tuple = (), loss=None, params: str | None = None) -> str:
    """Exports `model(*example_args)` with torch.export and returns torch-dialect MLIR text
    (a function `forward`, or `func_name`).

    With `train=True`, the function is one training step instead, `train_step` by default:
    (parameters, buffers, inputs, targets) -> (updated buffers, loss, gradients) of
    `loss(model(*example_args), *targets)`, as `schedc.torch.training` documents.

    Weights are inlined as `dense_resource` blobs, so the text is self-contained, unless
    `params` names a parameter archive (.irpa): then the model's parameters and persistent
    buffers are written there (`schedc.torch.parameters` says which), and the MLIR names them
    (`#stream.parameter.named<"model"::"<state_dict key>">`) instead of holding them. With
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
        if params is not None:
            raise SchedcError("a training step takes its weights as arguments: params (an archive of weights) is for inference")
        targets = targets if isinstance(targets, (tuple, list)) else (targets,)
        if dtype is not None:
            targets = convert_tensors(targets, dtype)
        return import_train_step(model, tuple(example_args), tuple(targets), loss, func_name or "train_step")[0]
    func_name = func_name or "forward"
    model = model.eval()
    options = {}
    if dynamic_batch:
        example_args, options["dynamic_shapes"] = _dynamic_batch(example_args)
    external = None
    if params is not None:
        from schedc.outputs import check_output_path

        check_output_path(str(params), what="parameter archive")
        external = ExternalWeights(model.state_dict())
        options.update(fx_importer=external.importer(), experimental_support_mutation=True)
    # torch logs and prints a failed export's tracebacks and graphs itself: the error below
    # says what failed, at the user's line.
    logging.disable(logging.CRITICAL)
    chatter = io.StringIO()
    try:
        with torch.no_grad(), warnings.catch_warnings(), contextlib.redirect_stdout(chatter), contextlib.redirect_stderr(chatter):
            warnings.simplefilter("ignore")
            program = export_program(model, example_args, options.pop("dynamic_shapes", None))
    except Exception as e:  # torch.export's refusal of the user's model
        if dynamic_batch:  # torch.export's constraint errors: the model fixes its batch
            raise SchedcError(f"the model cannot be exported with a dynamic batch: {str(e).strip().splitlines()[0]}") from None
        raise SchedcError(export_failure(e)) from None
    finally:
        logging.disable(logging.NOTSET)
    # torch-mlir's MLIR passes print their diagnostics on the process's stderr itself.
    with native_stderr() as diagnostics:
        try:
            with torch.no_grad(), warnings.catch_warnings(), contextlib.redirect_stdout(chatter), contextlib.redirect_stderr(chatter):
                warnings.simplefilter("ignore")
                module = fx.export_and_import(program, output_type="torch", func_name=func_name, decomposition_table={}, **options)
        except Exception as e:  # torch-mlir's refusal of the program torch.export made
            failure = e
        else:
            failure = None
    if failure is not None:
        raise SchedcError(import_failure(failure, diagnostics.text)) from None
    if external is not None:
        external.save(str(params))
    if external is None:
        attach_signature(module, program, func_name)
    return str(module)


def attach_signature(module, program, func_name: str) -> None:
    """Records the torch signature of `program`'s function in torch-mlir's module (the
    `schedc.signature` attribute: what IREE's ABI loses, which the runtime reads)."""
    signature = torch_signature(program)
    if signature is None:
        return
    from torch_mlir import ir

    with module.context:
        module.operation.attributes[SIGNATURE] = ir.StringAttr.get(signature_text({func_name: signature}))


# torch's own deprecation warnings that its export machinery raises on itself (not on the
# user's code): filtered inside schedc's calls into torch only.
KNOWN_TORCH_WARNINGS = (r".*isinstance\(treespec, LeafSpec\)` is deprecated.*",)


@contextlib.contextmanager
def known_torch_warnings_filtered():
    with warnings.catch_warnings():
        for message in KNOWN_TORCH_WARNINGS:
            warnings.filterwarnings("ignore", message=message, category=FutureWarning)
        yield


class native_stderr(contextlib.AbstractContextManager):
    """What native code (MLIR's diagnostics) writes to file descriptor 2 while inside, kept
    (`.text` after the block) instead of printed."""

    def __enter__(self):
        import tempfile

        sys.stderr.flush()
        self._file = tempfile.TemporaryFile()
        self._saved = os.dup(2)
        os.dup2(self._file.fileno(), 2)
        self.text = ""
        return self

    def __exit__(self, *exc):
        os.dup2(self._saved, 2)
        os.close(self._saved)
        self._file.seek(0)
        self.text = self._file.read().decode(errors="replace")
        self._file.close()
        return False


def export_program(model, example_args: tuple, dynamic_shapes=None):
    """torch.export's program of `model(*example_args)` after torch-mlir's decompositions and
    schedc's (schedc.torch.decompositions): as torch-mlir's export_and_import makes it, kept
    for its signature."""
    with known_torch_warnings_filtered():  # torch's own deprecations, not the user's to act on
        return _export_program(model, example_args, dynamic_shapes)


def _export_program(model, example_args: tuple, dynamic_shapes):
    import torch
    from torch_mlir.extras.fx_decomp_util import get_decomposition_table

    try:
        program = torch.export.export(model, tuple(example_args), dynamic_shapes=dynamic_shapes, strict=False)
    except Exception as first:
        # Python-level tracing guards on what dynamo's bytecode tracing keeps symbolic (a
        # tensor's value as a Python number: `float(x) + int(y)`, data-dependent scalars):
        # dynamo's graph, strict export, takes those. Its own failure is not the one to report.
        try:
            program = torch.export.export(model, tuple(example_args), dynamic_shapes=dynamic_shapes, strict=True)
        except Exception:
            raise first from None
    from schedc.torch.decompositions import decompositions, widen_unsigned

    program = program.run_decompositions({**get_decomposition_table(), **decompositions()})
    widen_unsigned(program)
    return program


class ExternalWeights:
    """torch-mlir's importer hooks that name a model's weights instead of inlining them.

    Each parameter or persistent buffer the archive holds becomes a `util.global` initialised
    from `#stream.parameter.named<"model"::"<key>">`, read where the graph uses it:

        util.global private @__param_fc_weight = #stream.parameter.named<"model"::"fc.weight"> : tensor<8x4xf32>
        %0 = util.global.load @__param_fc_weight : tensor<8x4xf32>
        %1 = torch_c.from_builtin_tensor %0 : tensor<8x4xf32> -> !torch.vtensor<[8,4],f32>

    (written in generic form: torch-mlir's context knows neither dialect, IREE's parser does.)
    Tied weights share one global. Other inputs (constants, non-persistent buffers, element
    types an archive does not keep) stay inlined, as the default import does."""

    def __init__(self, state_dict: dict, prefix: str = ""):
        from schedc.torch.parameters import archive_keys

        self.state_dict = state_dict
        self.prefix = prefix  # what the exported module's names add to the model's (a wrapper's attribute)
        self.keys = archive_keys(state_dict)  # state_dict key -> the archive's key
        self.globals: dict[str, tuple[str, object]] = {}  # the archive's key -> (symbol, builtin tensor type)

    def importer(self):
        from torch_mlir import ir
        from torch_mlir.dialects import torch as torch_d
        from torch_mlir.extras.fx_importer import FxImporter, FxImporterHooks

        weights = self

        class Hooks(FxImporterHooks):
            def resolve_input(self, gni, value, info):
                return weights.resolve(gni, info)

        context = ir.Context()
        torch_d.register_dialect(context)
        context.allow_unregistered_dialects = True  # util.* and torch_c.*, printed generically
        return FxImporter(context=context, hooks=Hooks())

    def resolve(self, gni, info):
        """The value of a weight input read from its global; None (inline it) for the rest."""
        from torch_mlir import ir

        from schedc.runtime.parameters import SCOPE

        target = info.input_spec.target or ""
        key = self.keys.get(target.removeprefix(self.prefix) if target.startswith(self.prefix) else None)
        if key is None or info.mutable_producer_node_name is not None or info.store_producer_node is not None:
            return None
        if key not in self.globals:
            tensor = self.state_dict[key]
            shape = "".join(f"{d}x" for d in tensor.shape)
            builtin = ir.RankedTensorType.parse(f"tensor<{shape}{_builtin_element(tensor)}>")
            symbol = self._symbol(key)
            body = gni.fx_importer._m.body
            ops = list(body.operations)
            where = ir.InsertionPoint(ops[len(self.globals)]) if len(ops) > len(self.globals) else ir.InsertionPoint(body)
            with where, ir.Location.unknown():
                ir.Operation.create("util.global", attributes={
                    "sym_name": ir.StringAttr.get(symbol),
                    "sym_visibility": ir.StringAttr.get("private"),
                    "type": ir.TypeAttr.get(builtin),
                    "initial_value": ir.Attribute.parse(f"#stream.parameter.named<{_quoted(SCOPE)}::{_quoted(key)}> : {builtin}"),
                })
            self.globals[key] = (symbol, builtin)
        symbol, builtin = self.globals[key]
        loaded = ir.Operation.create("util.global.load", results=[builtin], attributes={"global": ir.FlatSymbolRefAttr.get(symbol)}).result
        return ir.Operation.create("torch_c.from_builtin_tensor", results=[info.ir_type], operands=[loaded]).result

    def _symbol(self, key: str) -> str:
        base = "__param_" + "".join(c if c.isalnum() or c == "_" else "_" for c in key)
        taken = {symbol for symbol, _ in self.globals.values()}
        symbol, n = base, 1
        while symbol in taken:
            symbol, n = f"{base}_{n}", n + 1
        return symbol

    def save(self, path: str) -> None:
        """Writes every weight the archive holds (those the graph reads and the rest)."""
        from schedc.torch.parameters import save_params

        save_params(self.state_dict, path)


def _builtin_element(tensor) -> str:
    from schedc.torch.parameters import archive_dtype

    return archive_dtype(tensor)


def _quoted(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


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
    if loader_spec is None or loader_spec.loader is None:
        raise SchedcError(f"{path_text}: not a Python file (expected path/to/file.py:factory)")
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
