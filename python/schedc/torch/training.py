"""Training steps: one function that runs the forward pass, the loss and the backward pass.

    train_step(*parameters, *buffers, *inputs, *targets) -> (*updated_buffers, loss, *gradients)

- `parameters`: `model.named_parameters()`'s tensors, in that order; `buffers`:
  `model.named_buffers()`'s (batch norm's running statistics and counters), in that order.
- `updated_buffers`: the new values of the buffers the step changes, in the order of
  `named_buffers()` (all of batch norm's); the caller stores them for the next step.
- `loss`: the scalar `loss(model(*inputs), *targets)`.
- `gradients`: d loss / d parameter for each parameter that requires grad, in the order of
  `named_parameters()`. No optimizer step: what to do with the gradients is the caller's.

The joint graph comes from `torch._functorch.aot_autograd.aot_export_module(...,
trace_joint=True)` with torch-mlir's decomposition table (without it mse/nll loss, layer and
batch norm backward and embedding backward do not lower), under PyTorch's math attention
(`scaled_dot_product_attention`'s fused CPU backward does not lower). torch-mlir imports it
with weights as arguments, not constants.
"""

from __future__ import annotations

import contextlib
import io
import logging
import warnings
from dataclasses import dataclass

from schedc.errors import SchedcError
from schedc.torch.failures import export_failure


@dataclass(frozen=True)
class TrainStepSignature:
    """The names behind each argument and result of an imported training step."""

    parameters: tuple[str, ...]
    buffers: tuple[str, ...]
    inputs: int
    targets: int
    updated_buffers: tuple[str, ...]
    gradients: tuple[str, ...]  # the parameters whose gradients come back, in their order


def import_train_step(model, inputs: tuple, targets: tuple, loss, func_name: str = "train_step") -> tuple[str, TrainStepSignature]:
    """torch-dialect MLIR of one training step of `model` (see the module docstring), and the
    names of its arguments and results."""
    from torch._functorch.aot_autograd import aot_export_module
    from torch_mlir import fx

    from schedc.torch.decompositions import training_decompositions

    _check(model, inputs, targets, loss)
    step = _train_step_module(model.train(), loss, len(inputs))
    example = tuple(inputs) + tuple(targets)
    logging.disable(logging.CRITICAL)
    chatter = io.StringIO()
    try:
        with warnings.catch_warnings(), contextlib.redirect_stdout(chatter), contextlib.redirect_stderr(chatter), _math_attention():
            warnings.simplefilter("ignore")
            _check_loss(step, example)
            graph, signature = aot_export_module(
                step, example, trace_joint=True, output_loss_index=0, decompositions={**fx.get_decomposition_table(), **training_decompositions()},
            )
            module = fx.stateless_fx_import(graph, output_type="torch", model_name=func_name)
    except SchedcError:
        raise
    except Exception as e:  # torch's or torch-mlir's refusal of the user's model
        raise SchedcError(export_failure(e, "the training step could not be traced")) from None
    finally:
        logging.disable(logging.NOTSET)
    prefix = "model."
    names = TrainStepSignature(
        parameters=tuple(name for name, _ in model.named_parameters()),
        buffers=tuple(name for name, _ in model.named_buffers()),
        inputs=len(inputs),
        targets=len(targets),
        updated_buffers=tuple(name.removeprefix(prefix) for name in signature.buffers_to_mutate.values()),
        gradients=tuple(name.removeprefix(prefix) for name in signature.backward_signature.gradients_to_parameters.values()),
    )
    if list(names.updated_buffers) != [b for b in names.buffers if b in set(names.updated_buffers)]:
        raise SchedcError("internal: the step's updated buffers are not in the model's buffer order")  # documented order
    return str(module), names


def _train_step_module(model, loss, input_count: int):
    """model + loss as the module aot_export_module traces (it must return a tuple)."""
    import torch

    class TrainStep(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.model = model
            self.loss = loss

        def forward(self, *args):
            return (self.loss(self.model(*args[:input_count]), *args[input_count:]),)

    return TrainStep()


def _check(model, inputs, targets, loss) -> None:
    import torch

    if not isinstance(model, torch.nn.Module):
        raise SchedcError(f"a training step needs a torch.nn.Module, got {type(model).__name__}")
    if not callable(loss):
        raise SchedcError(f"the loss must be callable (e.g. torch.nn.CrossEntropyLoss()), got {type(loss).__name__}")
    if not any(p.requires_grad for p in model.parameters()):
        raise SchedcError("the model has no parameter that requires grad: there is nothing to train")
    for what, values in (("input", inputs), ("target", targets)):
        for i, value in enumerate(values):
            if not isinstance(value, torch.Tensor):
                raise SchedcError(f"training {what} {i} must be a tensor, got {type(value).__name__}")


def _check_loss(step, example) -> None:
    """Runs the step once eagerly: the loss must be a scalar tensor that depends on the weights."""
    import copy

    import torch

    try:
        (value,) = copy.deepcopy(step)(*example)  # a copy: batch norm's statistics must not move
    except Exception as e:
        raise SchedcError(export_failure(e, "the training step failed to run")) from None
    if not isinstance(value, torch.Tensor) or value.dim() != 0:
        shape = list(value.shape) if isinstance(value, torch.Tensor) else type(value).__name__
        raise SchedcError(f"the loss must be a scalar tensor (use a reduction such as 'mean'), got {shape}")
    if not value.requires_grad:
        raise SchedcError("the loss does not depend on any parameter that requires grad")


def _math_attention():
    from torch.nn.attention import SDPBackend, sdpa_kernel

    return sdpa_kernel(SDPBackend.MATH)
