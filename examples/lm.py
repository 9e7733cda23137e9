"""A small causal language model for `schedc import --generate` (random weights, nothing
downloaded): Hugging Face's GPT-2 at 2 layers and width 64.

    schedc import examples/lm.py:tiny_gpt2 --generate --seq-buckets=8,16 --max-seq=64 -o lm.mlir
"""

from __future__ import annotations

import torch


def tiny_gpt2():
    from transformers import GPT2Config, GPT2LMHeadModel

    torch.manual_seed(0)
    # initializer_range 0.3: random weights whose greedy tokens do not repeat one token
    config = GPT2Config(n_layer=2, n_embd=64, n_head=4, n_positions=256, vocab_size=500, attn_implementation="eager",
                        bos_token_id=0, eos_token_id=0, initializer_range=0.3)
    return GPT2LMHeadModel(config).eval(), torch.zeros(1, 4, dtype=torch.long)
