"""Bench row 9 (issue 20): one training step of a nanoGPT-style decoder-only Transformer LM.

The model is written once against a module ``lib`` (glassgrad or torch) from the nn modules both
libraries have (Embedding, LayerNorm, Linear, GELU) and
``nn.functional.scaled_dot_product_attention(is_causal=True)``, as nanoGPT's ``model.py`` does
(pre-norm blocks, a fused q/k/v projection, a 4x MLP, the LM head tied to nothing). Weights and
tokens come from NumPy, identically on both libraries (``workloads.init_from_numpy``).
"""

from __future__ import annotations

import numpy as np


_CLASSES: dict = {}


def gpt_classes(lib):
    """``(Block, GPT)`` subclassing ``lib.nn.Module`` (made once per library)."""
    if lib.__name__ in _CLASSES:
        return _CLASSES[lib.__name__]
    nn, F = lib.nn, lib.nn.functional

    class CausalSelfAttention(nn.Module):
        def __init__(self, d_model: int, n_heads: int):
            super().__init__()
            self.n_heads = n_heads
            self.c_attn = nn.Linear(d_model, 3 * d_model)
            self.c_proj = nn.Linear(d_model, d_model)

        def forward(self, x):
            batch, steps, d_model = x.shape
            q, k, v = self.c_attn(x).split(d_model, dim=2)
            shape = (batch, steps, self.n_heads, d_model // self.n_heads)
            q, k, v = (t.reshape(shape).transpose(1, 2) for t in (q, k, v))
            y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
            return self.c_proj(y.transpose(1, 2).reshape(batch, steps, d_model))

    class Block(nn.Module):
        def __init__(self, d_model: int, n_heads: int):
            super().__init__()
            self.ln_1 = nn.LayerNorm(d_model)
            self.attn = CausalSelfAttention(d_model, n_heads)
            self.ln_2 = nn.LayerNorm(d_model)
            self.mlp = nn.Sequential(nn.Linear(d_model, 4 * d_model), nn.GELU(),
                                     nn.Linear(4 * d_model, d_model))

        def forward(self, x):
            x = x + self.attn(self.ln_1(x))
            return x + self.mlp(self.ln_2(x))

    class GPT(nn.Module):
        def __init__(self, vocab: int, block_size: int, n_layers: int, d_model: int,
                     n_heads: int):
            super().__init__()
            self.wte = nn.Embedding(vocab, d_model)
            self.wpe = nn.Embedding(block_size, d_model)
            self.blocks = nn.ModuleList([Block(d_model, n_heads) for _ in range(n_layers)])
            self.ln_f = nn.LayerNorm(d_model)
            self.lm_head = nn.Linear(d_model, vocab, bias=False)

        def forward(self, idx):
            steps = idx.shape[1]
            x = self.wte(idx) + self.wpe(lib.arange(steps))
            for block in self.blocks:
                x = block(x)
            return self.lm_head(self.ln_f(x))

    _CLASSES[lib.__name__] = (Block, GPT)
    return _CLASSES[lib.__name__]


def reset_layer_norms(lib, model) -> None:
    """LayerNorm weights back to 1 and biases to 0 (``init_from_numpy`` draws every 1-D
    parameter at the previous layer's scale; a LayerNorm of weight ~0.1 would shrink each block)."""
    with lib.no_grad():
        for module in model.modules():
            if isinstance(module, lib.nn.LayerNorm):
                module.weight.fill_(1.0)
                module.bias.fill_(0.0)


def transformer_lm_step(lib, n_layers: int = 4, d_model: int = 128, n_heads: int = 4,
                        steps: int = 64, batch: int = 16, vocab: int = 65):
    """nanoGPT-style decoder (4 layers, d_model 128, 4 heads, causal attention) on batch 16 x T 64
    tokens of a 65-symbol vocabulary: next-token cross-entropy, one AdamW step."""
    from benchmarks.workloads import init_from_numpy  # (late: workloads.py imports this module)

    _, GPT = gpt_classes(lib)
    model = GPT(vocab, steps, n_layers, d_model, n_heads)
    init_from_numpy(lib, model, 0)
    reset_layer_norms(lib, model)
    rng = np.random.default_rng(1)
    tokens = rng.integers(0, vocab, size=(batch, steps + 1)).astype(np.int64)
    idx = lib.from_numpy(np.ascontiguousarray(tokens[:, :-1]))
    targets = lib.from_numpy(np.ascontiguousarray(tokens[:, 1:]).reshape(-1))
    opt = lib.optim.AdamW(model.parameters(), lr=3e-4, betas=(0.9, 0.95), weight_decay=0.1)

    def step():
        logits = model(idx)
        loss = lib.nn.functional.cross_entropy(logits.reshape(-1, vocab), targets)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        return loss.item()

    return step
