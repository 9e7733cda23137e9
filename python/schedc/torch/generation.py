"""A causal language model as one generation module: prefill per sequence bucket, one decode
step, the KV cache as device state.

    mlir = import_generation(model, seq_buckets=(32, 64), max_seq=256, params="w.irpa")

The module exports, for a Hugging Face causal LM (GPT-2, Llama, ... with a static cache):
- `prefill_<b>(ids: i64[1, b], positions: i64[b], last: i64[1]) -> i64[1]` per bucket b: the
  prompt, padded on the right to b, written into the cache at positions 0..b-1 (`positions` is
  0..b-1: a prefill starts a sequence, its queries attend to the prompt's own keys alone);
  returns the greedy next token after the prompt's token at `last` (its length - 1). The padding
  needs no mask: attention is causal, so no real token sees a padded one, and the decode steps
  overwrite the padded positions before any query reaches them.
- `decode(ids: i64[1, 1], positions: i64[1], last: i64[1]) -> i64[1]`: one token at its
  position; returns the next greedy token.
- with `batches=(1, 4, ...)`, for each batch size B past 1, `prefill_<b>_x<B>(ids: i64[B, b],
  positions, last, mask: i64[B, max_seq], position_ids: i64[B, b]) -> i64[B]` and
  `decode_x<B>(ids: i64[B, 1], positions, last, mask, position_ids: i64[B, 1]) -> i64[B]`, a
  cache of their own: B prompts, each padded on the left to the longest (its mask is 0 there
  and its position ids count from its first real token), so that every sequence's next token
  goes to the same cache position and one decode graph serves them all, as Hugging Face's
  batched `generate` pads them.
The cache (each layer's keys and values, max_seq long, and its length) is a set of mutable
`util.global`s that prefill and decode update in place: no call passes or copies the cache,
and the position is data, so one decode graph serves every step.

torch-mlir imports each function with its importer hooks (`ExternalWeights` for the weights,
this module's `State` for the cache): resolve_input reads a cache buffer from its global,
store_produced_value writes the updated one back.
"""

from __future__ import annotations

import contextlib
import inspect
import io
import json
import logging
import math
import warnings

from schedc.errors import SchedcError

from schedc.runtime.abi import GENERATION, generation_functions  # the module's attribute, then its functions' reflection


def static_step(model, max_seq: int, batch: int = 1):
    """A torch module that runs `model` on a static cache of `max_seq` positions for `batch`
    sequences, its cache tensors registered as buffers (torch.export lifts buffers it reaches
    through the module; tensors held by a cache object alone would be unmutable constants).
    With several sequences the step also takes each one's attention mask over the cache
    positions (0 where it is left-padded) and its position ids."""
    import torch
    from transformers.cache_utils import StaticCache

    keeps_logits = "logits_to_keep" in inspect.signature(model.forward).parameters
    tag = "" if batch == 1 else f"x{batch}_"

    class Step(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.model = model
            config = model.config.get_text_config()
            self.cache = StaticCache(max_cache_len=max_seq, config=config)
            heads = getattr(config, "num_key_value_heads", None) or config.num_attention_heads
            head_dim = getattr(config, "head_dim", None) or config.hidden_size // config.num_attention_heads
            dtype = next(model.parameters()).dtype
            self.cache.early_initialization(batch, heads, head_dim, dtype, torch.device("cpu"))
            self.names = [(f"cache_{tag}keys_{i}", f"cache_{tag}values_{i}", f"cache_{tag}length_{i}") for i in range(len(self.cache.layers))]
            for layer, (keys, values, length) in zip(self.cache.layers, self.names):
                self.register_buffer(keys, layer.keys, persistent=False)
                self.register_buffer(values, layer.values, persistent=False)
                self.register_buffer(length, layer.cumulative_length, persistent=False)

        prefill = False  # set while a prefill function is traced (see prefill_layer)

        def forward(self, ids, positions, last, mask=None, position_ids=None):
            for layer, (keys, values, length) in zip(self.cache.layers, self.names):  # the buffers as the trace sees them
                layer.keys, layer.values = getattr(self, keys), getattr(self, values)
                layer.cumulative_length = getattr(self, length)
                layer.cumulative_length.copy_(positions[0])
                prefill_layer(layer, self.prefill)
            extra = {} if mask is None else {"attention_mask": mask, "position_ids": position_ids}
            if keeps_logits:  # the LM head on the last prompt token alone, not on every padded position
                logits = self.model(input_ids=ids, cache=self.cache, use_cache=True, logits_to_keep=last, **extra).logits[:, 0]
            else:
                logits = self.model(input_ids=ids, cache=self.cache, use_cache=True, **extra).logits.index_select(1, last)[:, 0]
            return greedy_token(logits)

    return Step()


def prefill_layer(layer, on: bool) -> None:
    """Make a static cache layer start a sequence (`on`) or go on from its cache (`on` false).

    A prefill starts a sequence at cache position 0, so its queries attend to its own keys alone:
    the layer writes them into the cache's first positions (a scatter at positions known when
    the module is compiled) and hands them to attention as they are, with a causal mask as long as
    the prompt's bucket. Hugging Face's static layer attends over all max_seq positions of the
    cache instead: at a 32-token bucket of a 512-position cache, 16 times the scores, and a
    transpose of the whole cache per layer."""
    if not on or getattr(layer, "is_sliding", False):  # a sliding window's cache keeps its own update
        for name in ("update", "get_mask_sizes"):
            layer.__dict__.pop(name, None)  # the class's own methods again
        return

    def update(key_states, value_states, *args, **kwargs):
        import torch

        batch, heads, length, _ = key_states.shape
        layer.cumulative_length.add_(length)  # as Hugging Face's update counts them
        # cache[b, h, p] = states[b, h, p] for p < length, indexed as (b, p, h): the states'
        # own layout before attention's transpose to heads first, which IREE then reads in
        # place (one scatter a cache, where a slice copy was a transpose and a copy)
        b, p, h = torch.meshgrid(torch.arange(batch), torch.arange(length), torch.arange(heads), indexing="ij")
        where = (b, h, p)
        layer.keys.index_put_(where, key_states.transpose(1, 2))
        layer.values.index_put_(where, value_states.transpose(1, 2))
        return key_states, value_states

    layer.update = update
    layer.get_mask_sizes = lambda query_length: (query_length, 0)


def greedy_token(logits):
    """argmax over the vocabulary of each row of `logits` [B, V], in two stages: the max of each chunk of
    about sqrt(V) logits (the last padded with -inf), then the first chunk holding the largest.
    IREE builds a one-stage argmax of a whole row as one GPU thread (50,257 logits in sequence);
    each stage here is a row per thread over sqrt(V). Ties go to the lowest id, as in
    torch.argmax."""
    import torch

    rows, vocab = logits.shape
    chunk = 1 << max(0, math.ceil(math.log2(math.sqrt(vocab))))
    groups = -(-vocab // chunk)
    padded = torch.nn.functional.pad(logits, (0, groups * chunk - vocab), value=float("-inf"))
    values, within = padded.view(rows, groups, chunk).max(dim=-1)
    group = values.argmax(dim=-1, keepdim=True)
    return (group * chunk + within.gather(-1, group)).view(rows)


def import_generation(model, seq_buckets, max_seq: int, params: str | None = None, batches=(1,)) -> str:
    """torch-dialect MLIR of the generation module (see the module's doc) for a causal LM, with
    prefill and decode functions for each batch size of `batches` and for 1 (`generation_functions`)."""
    import torch
    from torch_mlir import fx, ir

    from schedc.torch.importer import ExternalWeights

    buckets = sorted(set(int(b) for b in seq_buckets))
    if not buckets or buckets[0] < 1 or buckets[-1] > max_seq:
        raise SchedcError(f"sequence buckets must be from 1 to --max-seq={max_seq}, got {seq_buckets}")
    batches = sorted(set(int(b) for b in batches) | {1})  # one prompt alone runs at batch 1
    if batches[0] < 1 or batches[-1] > MAX_BATCH:
        raise SchedcError(f"batch buckets must be from 1 to {MAX_BATCH}, got {list(batches)}")
    model = model.eval().requires_grad_(False)
    weights = ExternalWeights(model.state_dict(), prefix="model.") if params else None
    state = State()
    importer = Hooks.importer(weights, state)
    logging.disable(logging.CRITICAL)
    try:
        for batch in batches:
            step = static_step(model, max_seq, batch)
            for name, length, prefill in [(generation_functions(b, batch)[0], b, True) for b in buckets] + [(generation_functions(1, batch)[1], 1, False)]:
                step.prefill = prefill
                example = (torch.zeros(batch, length, dtype=torch.long), torch.arange(length), torch.tensor([length - 1]))
                if batch > 1:  # each sequence's mask over the cache positions, and its position ids
                    example += (torch.ones(batch, max_seq, dtype=torch.long), torch.arange(length).expand(batch, length).contiguous())
                with torch.no_grad(), warnings.catch_warnings(), contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
                    warnings.simplefilter("ignore")
                    fx.export_and_import(step, *example, output_type="torch", fx_importer=importer, func_name=name,
                                         experimental_support_mutation=True)
    except SchedcError:
        raise
    except Exception as e:  # torch.export's or torch-mlir's refusal of the model
        from schedc.torch.failures import export_failure

        raise SchedcError(f"the model cannot be imported for generation: {export_failure(e)}") from None
    finally:
        logging.disable(logging.NOTSET)
    if weights is not None:
        weights.save(str(params))
    module = importer.module
    with module.context:  # what the runtime's generate() reads (the compile copies it into the reflection)
        config = {"buckets": buckets, "max_seq": max_seq, "vocab": int(model.config.get_text_config().vocab_size), "batches": batches}
        module.operation.attributes[GENERATION] = ir.StringAttr.get(json.dumps(config))
    return str(module)


# The most sequences one call generates (--batch-buckets): each batch size has its own cache.
MAX_BATCH = 64


class State:
    """The KV cache's buffers as mutable globals, zero at load."""

    def __init__(self):
        self.globals: dict[str, tuple[str, object]] = {}  # buffer name -> (symbol, builtin type)

    def resolve(self, gni, value, info):
        from torch_mlir import ir

        name = info.input_spec.target
        if not name.startswith("cache_"):
            return None
        if name not in self.globals:
            builtin = _builtin_type(value)
            symbol = f"__state_{name}"
            body = gni.fx_importer._m.body
            with ir.InsertionPoint.at_block_begin(body), ir.Location.unknown():
                element = builtin.element_type
                # A distinct initial value per global: IREE 3.13 gives mutable globals of one type
                # and one initial value one storage, and an in-place update of one then writes
                # the others (two KV caches of a layer read each other's keys). What a cache
                # holds before a call writes it is never read: a position is attended only once
                # written, and each call sets the lengths first.
                number = len(self.globals)
                # (multiples of 2**-24, f16's smallest step: distinct in f16, bf16 and f32 alike)
                zero = (ir.FloatAttr.get(element, (number + 1) * 2.0**-24) if isinstance(element, ir.FloatType)
                        else ir.IntegerAttr.get(element, number + 1))
                ir.Operation.create("util.global", attributes={
                    "sym_name": ir.StringAttr.get(symbol), "sym_visibility": ir.StringAttr.get("private"),
                    "type": ir.TypeAttr.get(builtin), "is_mutable": ir.UnitAttr.get(),
                    "initial_value": ir.DenseElementsAttr.get_splat(builtin, zero),
                })
            self.globals[name] = (symbol, builtin)
        symbol, builtin = self.globals[name]
        loaded = ir.Operation.create("util.global.load", results=[builtin], attributes={"global": ir.FlatSymbolRefAttr.get(symbol)}).result
        return ir.Operation.create("torch_c.from_builtin_tensor", results=[info.ir_type], operands=[loaded]).result

    def store(self, gni, value, produced, info) -> None:
        from torch_mlir import ir

        symbol, builtin = self.globals[info.input_spec.target]
        stored = ir.Operation.create("torch_c.to_builtin_tensor", results=[builtin], operands=[produced]).result
        ir.Operation.create("util.global.store", operands=[stored], attributes={"global": ir.FlatSymbolRefAttr.get(symbol)})


def _builtin_type(tensor):
    from torch_mlir import ir

    from schedc.torch.parameters import archive_dtype

    element = archive_dtype(tensor)
    if element is None:
        raise SchedcError(f"a cache tensor of {tensor.dtype} cannot be device state")
    return ir.RankedTensorType.parse(f"tensor<{''.join(f'{d}x' for d in tensor.shape)}{element}>")


class Hooks:
    @staticmethod
    def importer(weights, state: State):
        from torch_mlir import ir
        from torch_mlir.dialects import torch as torch_d
        from torch_mlir.extras.fx_importer import FxImporter, FxImporterHooks

        class GenerationHooks(FxImporterHooks):
            def resolve_input(self, gni, value, info):
                found = state.resolve(gni, value, info)
                if found is None and weights is not None:
                    found = weights.resolve(gni, info)
                return found

            def store_produced_value(self, gni, py_value, produced_ir_value, info):
                state.store(gni, py_value, produced_ir_value, info)

        context = ir.Context()
        torch_d.register_dialect(context)
        context.allow_unregistered_dialects = True
        return FxImporter(context=context, hooks=GenerationHooks())
