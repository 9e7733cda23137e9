"""Greedy text generation with a generation module (`schedc.torch.generation` made it).

    module = schedc.load("lm.vmfb", params="lm.irpa")
    ids = module.generate([15496, 11, 616], max_new_tokens=64, eos_token_id=50256)
    for token in module.generate_iter(prompt, 64): ...

    rows = module.generate_batch([[15496, 11], [40, 588, 257]], max_new_tokens=64)

The prompt runs through the smallest prefill bucket that holds it, padded on the right; each
new token then goes through `decode` at its position. The KV cache is the module's own state on
the device: no call passes or copies it. One generation at a time per module: a prompt starts
over at position 0.

Several prompts (a module imported with --batch-buckets) run together in the smallest batch
bucket that holds them (the rows past them repeat the first prompt, and are dropped): each
padded on the left to the longest, its mask 0 there and its position ids counted from its first
token, as Hugging Face's batched `generate` pads them; then, all at one cache position, on
through the bucket's prefill (padded on the right) and decode.
"""

from __future__ import annotations

import json

import numpy as np

from schedc.errors import SchedcError
from schedc.runtime.abi import generation_functions


class Generation:
    """A generation module's buckets, cache length and vocabulary (its `schedc.generation`
    reflection), and its functions."""

    def __init__(self, module, config_text: str):
        config = json.loads(config_text)
        self.buckets = sorted(int(b) for b in config["buckets"])
        self.max_seq = int(config["max_seq"])
        self.vocab = int(config.get("vocab", 0)) or None
        self.batches = sorted(int(b) for b in config.get("batches", [1]))
        self._module = module

    def check(self, prompt, max_new_tokens: int) -> list[int]:
        """The prompt as token ids; a clear error for one that cannot run."""
        ids = np.asarray(prompt)
        if ids.ndim == 2 and ids.shape[0] == 1:
            ids = ids[0]
        if ids.ndim != 1 or not np.issubdtype(ids.dtype, np.integer) and ids.size:
            raise SchedcError(f"a prompt is a list of token ids (one sequence), not an array of shape {ids.shape} and type {ids.dtype}"
                              " (several prompts go to generate_batch)")
        ids = [int(t) for t in ids]
        if not ids:
            raise SchedcError("the prompt is empty: generation needs at least one token")
        if not isinstance(max_new_tokens, int) or isinstance(max_new_tokens, bool) or max_new_tokens < 1:
            raise SchedcError(f"max_new_tokens must be a positive integer, not {max_new_tokens!r}")
        if self.vocab is not None and not all(0 <= t < self.vocab for t in ids):
            bad = next(t for t in ids if not 0 <= t < self.vocab)
            raise SchedcError(f"token id {bad} is outside the model's vocabulary (0..{self.vocab - 1})")
        if len(ids) > self.buckets[-1]:
            raise SchedcError(f"a prompt of {len(ids)} tokens is longer than the largest sequence bucket ({self.buckets[-1]}); "
                              f"import the model with a larger one (--seq-buckets=..., at most --max-seq={self.max_seq})")
        if len(ids) + max_new_tokens - 1 > self.max_seq:
            raise SchedcError(f"{len(ids)} prompt tokens and {max_new_tokens} new ones need {len(ids) + max_new_tokens - 1} cache "
                              f"positions; the module's cache holds {self.max_seq} (--max-seq)")
        return ids

    def tokens(self, prompt, max_new_tokens: int, eos_token_id: int | None = None):
        """Each new token, as it is made (greedy); stops after `eos_token_id`."""
        ids = self.check(prompt, max_new_tokens)
        length = len(ids)
        bucket = next(b for b in self.buckets if b >= length)
        padded = np.zeros((1, bucket), np.int64)
        padded[0, :length] = ids
        prefill_name, decode_name = generation_functions(bucket, 1)
        prefill = self._module[prefill_name]
        token = int(np.asarray(prefill(padded, np.arange(bucket, dtype=np.int64), np.array([length - 1], np.int64))).reshape(-1)[0])
        decode = self._module[decode_name]
        last = np.zeros(1, np.int64)
        for step in range(max_new_tokens):
            yield token
            if token == eos_token_id or step == max_new_tokens - 1:
                return
            position = np.array([length + step], np.int64)
            token = int(np.asarray(decode(np.array([[token]], np.int64), position, last)).reshape(-1)[0])

    def batch(self, prompts, max_new_tokens: int, eos_token_id: int | None = None) -> list[list[int]]:
        """Each prompt's new tokens (greedy), all generated together (see the module's doc);
        a row stops after `eos_token_id`, the others go on."""
        if isinstance(prompts, np.ndarray) and prompts.ndim == 1 or not len(prompts) or np.ndim(prompts[0]) != 1:
            raise SchedcError("generate_batch takes a list of prompts, each a list of token ids")
        rows = [self.check(p, max_new_tokens) for p in prompts]
        if len(rows) == 1:
            return [list(self.tokens(rows[0], max_new_tokens, eos_token_id))]
        batch = next((b for b in self.batches if b >= len(rows)), None)
        if batch is None or batch == 1:
            raise SchedcError(f"{len(rows)} prompts at once: the module's batch buckets are {self.batches}; import the model with "
                              f"--batch-buckets=... holding {len(rows)}, or generate them in turn")
        length = max(len(r) for r in rows)
        if length + max_new_tokens - 1 > self.max_seq:
            raise SchedcError(f"the longest prompt ({length} tokens, the others padded to it) and {max_new_tokens} new tokens need "
                              f"{length + max_new_tokens - 1} cache positions; the module's cache holds {self.max_seq} (--max-seq)")
        bucket = next(b for b in self.buckets if b >= length)
        rows += [rows[0]] * (batch - len(prompts))
        pads = np.array([length - len(r) for r in rows], np.int64)
        ids, mask = np.zeros((batch, bucket), np.int64), np.ones((batch, self.max_seq), np.int64)
        for i, (row, pad) in enumerate(zip(rows, pads)):
            ids[i, pad:length] = row
            mask[i, :pad] = 0
        positions = np.arange(bucket, dtype=np.int64)
        position_ids = np.maximum(positions[None, :] - pads[:, None], 0)
        prefill_name, decode_name = generation_functions(bucket, batch)
        prefill = self._module[prefill_name]
        tokens = np.asarray(prefill(ids, positions, np.array([length - 1], np.int64), mask, position_ids)).reshape(-1)
        decode = self._module[decode_name]
        out = [[] for _ in prompts]
        done = [False] * len(prompts)
        for step in range(max_new_tokens):
            for i, row in enumerate(out):
                if not done[i]:
                    row.append(int(tokens[i]))
                    done[i] = int(tokens[i]) == eos_token_id
            if all(done) or step == max_new_tokens - 1:
                return out
            position = length + step
            tokens = np.asarray(decode(tokens.reshape(batch, 1).astype(np.int64), np.array([position], np.int64), np.zeros(1, np.int64),
                                       mask, (position - pads).reshape(batch, 1))).reshape(-1)
        return out
