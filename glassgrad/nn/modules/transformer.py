"""The Transformer family: ``TransformerEncoderLayer``, ``TransformerEncoder``,
``TransformerDecoderLayer``, ``TransformerDecoder`` and ``Transformer``
(``torch.nn.modules.transformer``).

Built from ``MultiheadAttention``, ``Linear``, ``LayerNorm`` and ``Dropout``, in PyTorch's
construction order, so the same seed gives the same weights and the state-dict keys are
PyTorch's. No derivative code.

NOTE [Transformer fast paths]: in eval mode with nothing requiring grad, PyTorch swaps in fused
kernels (``_transformer_encoder_layer_fwd``, ``_native_multi_head_attention``). They compute the
training path's numbers except on fully masked rows and ``is_causal`` (NOTE [Fully masked rows]
in attention.py), so glassgrad runs the training path with those two differences. One more fast
path changes the numbers and is reproduced: ``TransformerEncoder`` with ``use_nested_tensor`` and
a left-aligned ``src_key_padding_mask`` runs the layers on a nested tensor, so padded positions
come out as zeros before the final ``norm``.
"""

from __future__ import annotations

import copy

import numpy as np

from ..._factories import full
from ...amp.autocast import is_autocast_enabled
from ...ops.diagonal import triu
from ...ops.elementwise import where
from .. import functional as F
from ..init import xavier_uniform_
from ..module import Module
from .activation import GELU, ReLU
from .attention import MultiheadAttention, _canonical_mask, fastpath_enabled, needs_grad
from .container import ModuleList
from .dropout import Dropout
from .linear import Linear
from .normalization import LayerNorm
from ..._user_warning import warn_user

__all__ = [
    "Transformer",
    "TransformerDecoder",
    "TransformerDecoderLayer",
    "TransformerEncoder",
    "TransformerEncoderLayer",
]


def _generate_square_subsequent_mask(sz: int, device=None, dtype=None):
    """``(sz, sz)`` float mask: ``-inf`` above the diagonal, 0 elsewhere."""
    return triu(full((sz, sz), float("-inf"), dtype=dtype, device=device), diagonal=1)


def _get_seq_len(src, batch_first: bool) -> int:
    if src.dim() == 2:
        return src.shape[0]
    return src.shape[1 if batch_first else 0]


def _get_clones(module, n: int):
    return ModuleList([copy.deepcopy(module) for _ in range(n)])


def _get_activation_fn(activation: str):
    if activation == "relu":
        return F.relu
    if activation == "gelu":
        return F.gelu
    raise RuntimeError(f"activation should be relu/gelu, not {activation}")


def _public(activation):
    """The public ``F.relu``/``F.gelu`` for their raw functions (a default argument captured
    the raw one before the argument checks wrapped it), so ``layer.activation is F.relu`` as in
    PyTorch."""
    for public in (F.relu, F.gelu):
        if activation is getattr(public, "__wrapped__", public):
            return public
    return activation


def _relu_or_gelu(activation) -> int:
    """PyTorch's ``activation_relu_or_gelu``: 1 for relu, 2 for gelu, 0 for anything else."""
    if activation is F.relu or isinstance(activation, ReLU):
        return 1
    if activation is F.gelu or isinstance(activation, GELU):
        return 2
    return 0


def _detect_is_causal_mask(mask, is_causal: bool | None = None, size: int | None = None) -> bool:
    """``is_causal`` when given; otherwise whether ``mask`` equals the causal mask of ``size``."""
    make_causal = is_causal is True
    if is_causal is None and mask is not None:
        sz = size if size is not None else mask.shape[-2]
        causal = _generate_square_subsequent_mask(sz, dtype=mask.dtype)
        make_causal = tuple(mask.shape) == tuple(causal.shape) and bool((mask == causal).all())
    return make_causal


def _canonical_pair(mask, key_padding_mask, target_dtype, mask_name: str, kpm_name: str):
    """Both masks as float (``-inf`` where a bool mask is True), as PyTorch's layers pass on."""
    key_padding_mask = _canonical_mask(key_padding_mask, kpm_name, mask, mask_name, target_dtype)
    mask = _canonical_mask(mask, mask_name, None, "", target_dtype, check_other=False)
    return mask, key_padding_mask


def _add_feed_forward_and_norms(layer, n: int, d_model, dim_feedforward, dropout, eps, norm_first,
                                bias, factory) -> None:
    """The feed-forward block, ``n`` LayerNorms and ``n`` Dropouts, registered in PyTorch's
    order (it fixes the state-dict order and, after a seed, the weights)."""
    layer.linear1 = Linear(d_model, dim_feedforward, bias=bias, **factory)
    layer.dropout = Dropout(dropout)
    layer.linear2 = Linear(dim_feedforward, d_model, bias=bias, **factory)
    layer.norm_first = norm_first
    for k in range(1, n + 1):
        setattr(layer, f"norm{k}", LayerNorm(d_model, eps=eps, bias=bias, **factory))
    for k in range(1, n + 1):
        setattr(layer, f"dropout{k}", Dropout(dropout))


def _sa_block(self, x, attn_mask, key_padding_mask, is_causal: bool = False):
    """Both layers' self-attention block (their ``_sa_block`` method): attention, then dropout1."""
    x = self.self_attn(x, x, x, attn_mask=attn_mask, key_padding_mask=key_padding_mask,
                       need_weights=False, is_causal=is_causal)[0]
    return self.dropout1(x)


def _fused_sa_block(self, x, attn_mask, key_padding_mask, is_causal: bool = False):
    """The self-attention of PyTorch's fused encoder layer: no ``is_causal``, a plain softmax
    (NOTE [Fully masked rows] in attention.py); dropout is off in eval mode anyway."""
    return self.self_attn(x, x, x, attn_mask=attn_mask, key_padding_mask=key_padding_mask,
                          need_weights=True)[0]


def _layer_tensors(layer, src) -> tuple:
    """What PyTorch checks for ``requires_grad`` before its fused encoder kernels."""
    attn = layer.self_attn
    return (src, attn.in_proj_weight, attn.in_proj_bias, attn.out_proj.weight,
            attn.out_proj.bias, layer.norm1.weight, layer.norm1.bias, layer.norm2.weight,
            layer.norm2.bias, layer.linear1.weight, layer.linear1.bias, layer.linear2.weight,
            layer.linear2.bias)


class TransformerEncoderLayer(Module):
    """Self-attention then a feed-forward block, each with dropout, a residual and a LayerNorm
    (after each block, or before it with ``norm_first``) (``torch.nn.TransformerEncoderLayer``).

    ``forward(src (S, N, E) | (N, S, E) with batch_first | (S, E), src_mask (S, S) or
    (N*nhead, S, S)=None, src_key_padding_mask (N, S)=None, is_causal=False)`` -> same shape as
    ``src``. Boolean masks are True where attention is blocked; float masks are added.
    ``activation`` is "relu", "gelu" or a unary callable; another string raises RuntimeError.

    Example::

        >>> layer = glassgrad.nn.TransformerEncoderLayer(d_model=8, nhead=2, dim_feedforward=16)
        >>> out = layer(glassgrad.randn(5, 3, 8))  # (5, 3, 8)
    """

    def __init__(self, d_model: int, nhead: int, dim_feedforward: int = 2048,
                 dropout: float = 0.1, activation=F.relu, layer_norm_eps: float = 1e-5,
                 batch_first: bool = False, norm_first: bool = False, bias: bool = True,
                 device=None, dtype=None) -> None:
        factory = {"device": device, "dtype": dtype}
        super().__init__()
        self.self_attn = MultiheadAttention(d_model, nhead, dropout=dropout, bias=bias,
                                            batch_first=batch_first, **factory)
        _add_feed_forward_and_norms(self, 2, d_model, dim_feedforward, dropout, layer_norm_eps,
                                    norm_first, bias, factory)
        activation = (_get_activation_fn(activation) if isinstance(activation, str)
                      else _public(activation))
        self.activation_relu_or_gelu = _relu_or_gelu(activation)
        self.activation = activation

    def __setstate__(self, state) -> None:
        super().__setstate__(state)
        if not hasattr(self, "activation"):
            self.activation = F.relu

    def forward(self, src, src_mask=None, src_key_padding_mask=None, is_causal: bool = False):
        src_mask, src_key_padding_mask = _canonical_pair(
            src_mask, src_key_padding_mask, src.dtype, "src_mask", "src_key_padding_mask")
        sa_block = self._sa_block
        if self._fused_path(src):
            sa_block = _fused_sa_block.__get__(self)  # NOTE [Transformer fast paths]
        x = src
        if self.norm_first:
            x = x + sa_block(self.norm1(x), src_mask, src_key_padding_mask, is_causal)
            x = x + self._ff_block(self.norm2(x))
        else:
            x = self.norm1(x + sa_block(x, src_mask, src_key_padding_mask, is_causal))
            x = self.norm2(x + self._ff_block(x))
        return x

    def _fused_path(self, src) -> bool:
        """Whether PyTorch would run ``_transformer_encoder_layer_fwd`` here (NOTE [Transformer
        fast paths]): eval, batched batch-first input, biases, relu or gelu, one eps, an even
        head count, no forward hooks, nothing that needs a gradient."""
        attn = self.self_attn
        if (src.dim() != 3 or self.training or not attn.batch_first or attn.in_proj_bias is None
                or not attn._qkv_same_embed_dim or not self.activation_relu_or_gelu
                or self.norm1.eps != self.norm2.eps or attn.num_heads % 2
                or is_autocast_enabled() or not fastpath_enabled()
                or any(m._forward_hooks or m._forward_pre_hooks for m in self.modules())):
            return False
        return not needs_grad(_layer_tensors(self, src))

    _sa_block = _sa_block

    def _ff_block(self, x):
        x = self.linear2(self.dropout(self.activation(self.linear1(x))))
        return self.dropout2(x)


def _why_not_nested(layer) -> str:
    """PyTorch's reason, checked at construction, for not using nested tensors."""
    name = "encoder_layer"
    if not isinstance(layer, TransformerEncoderLayer):
        return f"{name} was not TransformerEncoderLayer"
    if layer.norm_first:
        return f"{name}.norm_first was True"
    if not layer.self_attn.batch_first:
        return (f"{name}.self_attn.batch_first was not True"
                "(use batch_first for better inference performance)")
    if not layer.self_attn._qkv_same_embed_dim:
        return f"{name}.self_attn._qkv_same_embed_dim was not True"
    if layer.self_attn.in_proj_bias is None:
        return f"{name}.self_attn was passed bias=False"
    if not layer.activation_relu_or_gelu:
        return f"{name}.activation_relu_or_gelu was not True"
    if layer.norm1.eps != layer.norm2.eps:
        return f"{name}.norm1.eps was not equal to {name}.norm2.eps"
    if layer.self_attn.num_heads % 2 == 1:
        return f"{name}.self_attn.num_heads is odd"
    return ""


class TransformerEncoder(Module):
    """A stack of ``num_layers`` deep copies of ``encoder_layer``, then ``norm`` if given
    (``torch.nn.TransformerEncoder``).

    ``forward(src, mask=None, src_key_padding_mask=None, is_causal=None)``: shapes as in
    ``TransformerEncoderLayer``; ``is_causal=None`` detects a causal ``mask``. With
    ``enable_nested_tensor`` (the default) a layer that rules nested tensors out gives PyTorch's
    UserWarning; one that allows them zeroes padded positions in eval mode without grad (NOTE
    [Transformer fast paths]). ``mask_check`` is accepted and used as PyTorch uses it.

    Example::

        >>> layer = glassgrad.nn.TransformerEncoderLayer(8, 2, 16, batch_first=True)
        >>> enc = glassgrad.nn.TransformerEncoder(layer, num_layers=2)
        >>> out = enc(glassgrad.randn(3, 5, 8))  # (3, 5, 8)
    """

    def __init__(self, encoder_layer, num_layers: int, norm: Module | None = None,
                 enable_nested_tensor: bool = True, mask_check: bool = True) -> None:
        super().__init__()
        self.layers = _get_clones(encoder_layer, num_layers)
        self.num_layers = num_layers
        self.norm = norm
        self.enable_nested_tensor = enable_nested_tensor
        self.use_nested_tensor = enable_nested_tensor
        self.mask_check = mask_check
        why_not = _why_not_nested(encoder_layer)
        if enable_nested_tensor and why_not:
            warn_user(
                "enable_nested_tensor is True, but self.use_nested_tensor is False because "
                f"{why_not}",
                stacklevel=2,
            )
            self.use_nested_tensor = False

    def forward(self, src, mask=None, src_key_padding_mask=None, is_causal: bool | None = None):
        mask, src_key_padding_mask = _canonical_pair(mask, src_key_padding_mask, src.dtype,
                                                     "mask", "src_key_padding_mask")
        first = self.layers[0]
        valid = self._nested_valid(src, mask, src_key_padding_mask, first)
        is_causal = _detect_is_causal_mask(mask, is_causal,
                                           _get_seq_len(src, first.self_attn.batch_first))
        output = src
        for mod in self.layers:
            output = mod(output, src_mask=mask, is_causal=is_causal,
                         src_key_padding_mask=src_key_padding_mask)
        if valid is not None:
            if not valid.any():
                raise RuntimeError("to_padded_tensor: at least one constituent tensor should "
                                   "have non-zero numel")
            # NOTE [Transformer fast paths]: the padding mask did what the nested tensor's
            # lengths do; to_padded_tensor(0.0) then zeroes the padded positions
            output = where(valid[..., None], output, 0.0)
        if self.norm is not None:
            output = self.norm(output)
        return output

    def _nested_valid(self, src, mask, key_padding_mask, first):
        """The non-padded positions ``(N, S)`` when PyTorch would go through nested tensors,
        else None (NOTE [Transformer fast paths])."""
        if (not getattr(self, "use_nested_tensor", False) or first.training or src.dim() != 3
                or key_padding_mask is None or mask is not None or is_autocast_enabled()
                or not fastpath_enabled()):
            return None
        valid = key_padding_mask._array == 0  # PyTorch's mask.logical_not()
        if getattr(self, "mask_check", True) and not np.all(valid[:, 1:] <= valid[:, :-1]):
            return None  # not left-aligned
        if needs_grad(_layer_tensors(first, src)):
            return None
        if not first.self_attn.batch_first:
            valid = valid.T
        return valid


class TransformerDecoderLayer(Module):
    """Self-attention on ``tgt``, attention over ``memory``, then a feed-forward block, each
    with dropout, a residual and a LayerNorm (``torch.nn.TransformerDecoderLayer``).

    ``forward(tgt (T, N, E), memory (S, N, E), tgt_mask (T, T)=None, memory_mask (T, S)=None,
    tgt_key_padding_mask (N, T)=None, memory_key_padding_mask (N, S)=None, tgt_is_causal=False,
    memory_is_causal=False)`` -> ``(T, N, E)``; batch first with ``batch_first``.

    Example::

        >>> layer = glassgrad.nn.TransformerDecoderLayer(8, 2, 16)
        >>> out = layer(glassgrad.randn(4, 3, 8), glassgrad.randn(6, 3, 8))  # (4, 3, 8)
    """

    def __init__(self, d_model: int, nhead: int, dim_feedforward: int = 2048,
                 dropout: float = 0.1, activation=F.relu, layer_norm_eps: float = 1e-5,
                 batch_first: bool = False, norm_first: bool = False, bias: bool = True,
                 device=None, dtype=None) -> None:
        factory = {"device": device, "dtype": dtype}
        super().__init__()
        self.self_attn = MultiheadAttention(d_model, nhead, dropout=dropout,
                                            batch_first=batch_first, bias=bias, **factory)
        self.multihead_attn = MultiheadAttention(d_model, nhead, dropout=dropout,
                                                 batch_first=batch_first, bias=bias, **factory)
        _add_feed_forward_and_norms(self, 3, d_model, dim_feedforward, dropout, layer_norm_eps,
                                    norm_first, bias, factory)
        self.activation = (_get_activation_fn(activation) if isinstance(activation, str)
                           else _public(activation))

    def __setstate__(self, state) -> None:
        state.setdefault("activation", F.relu)
        super().__setstate__(state)

    def forward(self, tgt, memory, tgt_mask=None, memory_mask=None, tgt_key_padding_mask=None,
                memory_key_padding_mask=None, tgt_is_causal: bool = False,
                memory_is_causal: bool = False):
        x = tgt
        if self.norm_first:
            x = x + self._sa_block(self.norm1(x), tgt_mask, tgt_key_padding_mask, tgt_is_causal)
            x = x + self._mha_block(self.norm2(x), memory, memory_mask, memory_key_padding_mask,
                                    memory_is_causal)
            x = x + self._ff_block(self.norm3(x))
        else:
            x = self.norm1(x + self._sa_block(x, tgt_mask, tgt_key_padding_mask, tgt_is_causal))
            x = self.norm2(x + self._mha_block(x, memory, memory_mask, memory_key_padding_mask,
                                               memory_is_causal))
            x = self.norm3(x + self._ff_block(x))
        return x

    _sa_block = _sa_block

    def _mha_block(self, x, mem, attn_mask, key_padding_mask, is_causal: bool = False):
        x = self.multihead_attn(x, mem, mem, attn_mask=attn_mask,
                                key_padding_mask=key_padding_mask, is_causal=is_causal,
                                need_weights=False)[0]
        return self.dropout2(x)

    def _ff_block(self, x):
        x = self.linear2(self.dropout(self.activation(self.linear1(x))))
        return self.dropout3(x)


class TransformerDecoder(Module):
    """A stack of ``num_layers`` deep copies of ``decoder_layer``, then ``norm`` if given
    (``torch.nn.TransformerDecoder``). ``forward(tgt, memory, tgt_mask=None, memory_mask=None,
    tgt_key_padding_mask=None, memory_key_padding_mask=None, tgt_is_causal=None,
    memory_is_causal=False)``; ``tgt_is_causal=None`` detects a causal ``tgt_mask``.

    Example::

        >>> dec = glassgrad.nn.TransformerDecoder(glassgrad.nn.TransformerDecoderLayer(8, 2), 2)
        >>> out = dec(glassgrad.randn(4, 3, 8), glassgrad.randn(6, 3, 8))  # (4, 3, 8)
    """

    def __init__(self, decoder_layer, num_layers: int, norm: Module | None = None) -> None:
        super().__init__()
        self.layers = _get_clones(decoder_layer, num_layers)
        self.num_layers = num_layers
        self.norm = norm

    def forward(self, tgt, memory, tgt_mask=None, memory_mask=None, tgt_key_padding_mask=None,
                memory_key_padding_mask=None, tgt_is_causal: bool | None = None,
                memory_is_causal: bool = False):
        output = tgt
        seq_len = _get_seq_len(tgt, self.layers[0].self_attn.batch_first)
        tgt_is_causal = _detect_is_causal_mask(tgt_mask, tgt_is_causal, seq_len)
        for mod in self.layers:
            output = mod(output, memory, tgt_mask=tgt_mask, memory_mask=memory_mask,
                         tgt_key_padding_mask=tgt_key_padding_mask,
                         memory_key_padding_mask=memory_key_padding_mask,
                         tgt_is_causal=tgt_is_causal, memory_is_causal=memory_is_causal)
        if self.norm is not None:
            output = self.norm(output)
        return output


class Transformer(Module):
    """The encoder-decoder Transformer of "Attention Is All You Need" (``torch.nn.Transformer``):
    ``encoder`` (a TransformerEncoder with a final LayerNorm, or ``custom_encoder``) and
    ``decoder`` likewise; every parameter with more than one dim is then xavier_uniform_ in
    parameter order, as PyTorch does.

    ``forward(src (S, N, E), tgt (T, N, E), src_mask, tgt_mask, memory_mask, src_key_padding_mask,
    tgt_key_padding_mask, memory_key_padding_mask, src_is_causal=None, tgt_is_causal=None,
    memory_is_causal=False)`` -> ``(T, N, E)``. Raises RuntimeError when the batch sizes differ
    or a feature size is not ``d_model``.

    Example::

        >>> model = glassgrad.nn.Transformer(d_model=8, nhead=2, num_encoder_layers=1,
        ...                                  num_decoder_layers=1, dim_feedforward=16)
        >>> out = model(glassgrad.randn(5, 3, 8), glassgrad.randn(4, 3, 8))  # (4, 3, 8)
    """

    def __init__(self, d_model: int = 512, nhead: int = 8, num_encoder_layers: int = 6,
                 num_decoder_layers: int = 6, dim_feedforward: int = 2048,
                 dropout: float = 0.1, activation=F.relu, custom_encoder=None,
                 custom_decoder=None, layer_norm_eps: float = 1e-5, batch_first: bool = False,
                 norm_first: bool = False, bias: bool = True, device=None, dtype=None) -> None:
        factory = {"device": device, "dtype": dtype}
        super().__init__()
        layer_args = (d_model, nhead, dim_feedforward, dropout, activation, layer_norm_eps,
                      batch_first, norm_first, bias)
        if custom_encoder is not None:
            self.encoder = custom_encoder
        else:
            norm = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **factory)
            self.encoder = TransformerEncoder(TransformerEncoderLayer(*layer_args, **factory),
                                              num_encoder_layers, norm)
        if custom_decoder is not None:
            self.decoder = custom_decoder
        else:
            norm = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **factory)
            self.decoder = TransformerDecoder(TransformerDecoderLayer(*layer_args, **factory),
                                              num_decoder_layers, norm)
        self._reset_parameters()
        self.d_model = d_model
        self.nhead = nhead
        self.batch_first = batch_first

    def forward(self, src, tgt, src_mask=None, tgt_mask=None, memory_mask=None,
                src_key_padding_mask=None, tgt_key_padding_mask=None,
                memory_key_padding_mask=None, src_is_causal: bool | None = None,
                tgt_is_causal: bool | None = None, memory_is_causal: bool = False):
        if src.dim() == 3 and src.shape[1 - self.batch_first] != tgt.shape[1 - self.batch_first]:
            raise RuntimeError("the batch number of src and tgt must be equal")
        if src.shape[-1] != self.d_model or tgt.shape[-1] != self.d_model:
            raise RuntimeError("the feature number of src and tgt must be equal to d_model")
        memory = self.encoder(src, mask=src_mask, src_key_padding_mask=src_key_padding_mask,
                              is_causal=src_is_causal)
        return self.decoder(tgt, memory, tgt_mask=tgt_mask, memory_mask=memory_mask,
                            tgt_key_padding_mask=tgt_key_padding_mask,
                            memory_key_padding_mask=memory_key_padding_mask,
                            tgt_is_causal=tgt_is_causal, memory_is_causal=memory_is_causal)

    @staticmethod
    def generate_square_subsequent_mask(sz: int, device=None, dtype=None):
        """The ``(sz, sz)`` causal mask: ``-inf`` above the diagonal, 0 elsewhere
        (``torch.nn.Transformer.generate_square_subsequent_mask``)."""
        return _generate_square_subsequent_mask(sz, device=device, dtype=dtype)

    def _reset_parameters(self) -> None:
        for p in self.parameters():
            if p.dim() > 1:
                xavier_uniform_(p)
