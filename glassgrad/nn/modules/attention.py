"""Attention: ``scaled_dot_product_attention``, ``multi_head_attention_forward`` and
``MultiheadAttention`` (``torch.nn.functional.scaled_dot_product_attention``,
``torch.nn.MultiheadAttention``).

Composed from matmul, softmax pieces, masking and reshapes: no derivative code, so attention is
differentiable to any order. Mask conventions differ between the two PyTorch APIs and are kept:
in ``scaled_dot_product_attention`` a boolean ``attn_mask`` is True where attention is *allowed*;
in ``MultiheadAttention`` boolean masks are True where attention is *blocked*. Float masks are
added to the scores in both.

NOTE [Fully masked rows]: a query that may attend to nothing gets all ``-inf`` scores. PyTorch's
``scaled_dot_product_attention`` (and so ``MultiheadAttention(need_weights=False)``) returns zeros
for such rows, with zero gradients; ``MultiheadAttention(need_weights=True)`` uses a plain softmax
and returns NaN. So do PyTorch's fused inference kernels (``_native_multi_head_attention``,
``_transformer_encoder_layer_fwd``), taken in eval mode without grad for batch-first
self-attention, even with ``need_weights=False``; they also ignore ``is_causal``. All of it is
reproduced: ``MultiheadAttention._native_path`` and ``TransformerEncoderLayer._fused_path`` say
when PyTorch would take those kernels.
"""

from __future__ import annotations

import math

import numpy as np

from ... import dtypes
from ..._factories import empty, zeros
from ...amp.autocast import is_autocast_enabled
from ...autograd.grad_mode import is_grad_enabled
from ...functional import softmax
from ...ops.elementwise import exp, where
from ...ops.linalg import matmul
from ...ops.reduction import mean
from ...ops.shape import cat
from ...tensor import Tensor
from .. import init
from ..module import Module
from ..parameter import Parameter
from .linear import NonDynamicallyQuantizableLinear
from .rnn_cells import linear
from ..._user_warning import warn_user

# NOTE: only the module: the two functions belong to nn.functional, which re-exports them
__all__ = ["MultiheadAttention"]

# c10's dtype names, as PyTorch's attention errors print them
_C10_NAMES = {"float32": "float", "float64": "double", "float16": "c10::Half",
              "bfloat16": "c10::BFloat16", "int64": "long int", "int32": "int", "int16": "short int",
              "int8": "signed char", "uint8": "unsigned char", "bool": "bool"}


def _c10(t) -> str:
    name = str(t.dtype).split(".")[-1]
    return _C10_NAMES.get(name, name)


def _safe_softmax(scores):
    """Softmax over the last dim that gives 0 (not NaN) on rows that are all ``-inf``
    (NOTE [Fully masked rows]). The shift is a constant: softmax does not depend on it."""
    shift = scores._array.max(-1, keepdims=True) if scores._array.size else 0.0
    if isinstance(shift, np.ndarray):
        shift = np.where(np.isfinite(shift), shift, 0).astype(scores._array.dtype)
    if not isinstance(shift, np.ndarray):  # NOTE: no np.asarray on arrays (vmap's batched ones)
        shift = np.asarray(shift, dtype=scores._array.dtype)
    e = exp(scores - Tensor._make(shift))
    total = e.sum(-1, keepdim=True)
    return e / where(total._array == 0, 1.0, total)


def _neg_inf_where(mask: np.ndarray, dtype) -> Tensor:
    """A float mask: ``-inf`` where ``mask`` is True, 0 elsewhere."""
    return Tensor._make(np.where(mask, -np.inf, 0).astype(dtype.np))


def scaled_dot_product_attention(query, key, value, attn_mask=None, dropout_p: float = 0.0,
                                 is_causal: bool = False, scale: float | None = None,
                                 enable_gqa: bool = False):
    """``softmax(Q K^T * scale + mask) V`` over the last two dims
    (``torch.nn.functional.scaled_dot_product_attention``).

    ``query (..., L, E)``, ``key (..., S, E)``, ``value (..., S, Ev)`` -> ``(..., L, Ev)``;
    ``attn_mask`` broadcasts to ``(..., L, S)``: bool (True = may attend) or float (added);
    ``is_causal`` masks ``j > i``; ``scale`` defaults to ``1/sqrt(E)``; ``enable_gqa`` repeats
    key/value heads (dim -3) to match the query's. Rows with nothing to attend give zeros.
    Raises RuntimeError for mismatched dtypes, inputs below 2-D, a mask of another dtype, or
    ``attn_mask`` together with ``is_causal``.

    Example::

        >>> q = k = v = glassgrad.randn(2, 4, 8)
        >>> out = scaled_dot_product_attention(q, k, v, is_causal=True)  # (2, 4, 8)
    """
    if query.dim() < 2 or key.dim() < 2 or value.dim() < 2:
        raise RuntimeError(
            "Expected query, key, and value to all be  at least 2 dimensional, but got query.dim: "
            f"{query.dim()} key.dim: {key.dim()} and value.dim: {value.dim()} instead."
        )
    if not (query.dtype == key.dtype == value.dtype):
        raise RuntimeError(
            "Expected query, key, and value to have the same dtype, but got query.dtype: "
            f"{_c10(query)} key.dtype: {_c10(key)} and value.dtype: {_c10(value)} instead."
        )
    # NOTE: "float" is float32, allowed with any query dtype; the scores keep the query's dtype
    if attn_mask is not None and attn_mask.dtype not in (dtypes.bool, dtypes.float32, query.dtype):
        raise RuntimeError(
            "Expected attn_mask dtype to be bool or float or to match query dtype, but got "
            f"attn_mask.dtype: {_c10(attn_mask)} and  query.dtype: {_c10(query)} instead."
        )
    if is_causal and attn_mask is not None:
        raise RuntimeError(
            "_scaled_dot_product_attention: Explicit attn_mask should not be set when "
            "is_causal=True"
        )
    n_query, n_key = query.shape[-2], key.shape[-2]
    if scale is None:
        scale = 1.0 / math.sqrt(query.shape[-1])
    if enable_gqa and query.dim() >= 3 and key.shape[-3] != query.shape[-3]:
        key, value = _repeat_heads(key, query.shape[-3]), _repeat_heads(value, query.shape[-3])
    scores = matmul(query * scale, key.transpose(-2, -1))
    if is_causal:
        scores = scores + _neg_inf_where(~np.tri(n_query, n_key, dtype=bool), query.dtype)
    if attn_mask is not None:
        if attn_mask.dtype == dtypes.bool:
            scores = scores + _neg_inf_where(~attn_mask._array, query.dtype)
        else:
            scores = scores + attn_mask.to(query.dtype)
    weights = _safe_softmax(scores)
    if dropout_p > 0.0:
        from .. import functional as F

        weights = F.dropout(weights, dropout_p, True)
    return matmul(weights, value)


def _repeat_heads(x, n_heads: int):
    """``x.repeat_interleave(n_heads // x.size(-3), -3)`` from views and one reshape."""
    groups = x.shape[-3]
    if n_heads % groups:
        raise RuntimeError(
            f"enable_gqa: the query's {n_heads} heads must be a multiple of the key/value's "
            f"{groups} heads"
        )
    lead, (s, e) = tuple(x.shape[:-3]), tuple(x.shape[-2:])
    x = x.unsqueeze(-3).expand(*lead, groups, n_heads // groups, s, e)
    return x.reshape(*lead, n_heads, s, e)


def _canonical_mask(mask, mask_name: str, other, other_name: str, dtype, check_other=True):
    """Bool masks become float (``-inf`` where True); other non-float dtypes are refused."""
    if mask is None:
        return None
    if mask.dtype != dtypes.bool and not mask.is_floating_point():
        raise AssertionError(f"only bool and floating types of {mask_name} are supported")
    if check_other and other is not None and mask.dtype != other.dtype:
        warn_user(
            f"Support for mismatched {mask_name} and {other_name} is deprecated. Use same type "
            "for both instead.",
            stacklevel=4,
        )
    if mask.dtype == dtypes.bool:
        return _neg_inf_where(mask._array, dtype)
    return mask


def _pad_column(mask):
    """``F.pad(mask, (0, 1))``: one more key position, not masked."""
    return cat([mask, zeros(*mask.shape[:-1], 1, dtype=mask.dtype)], -1)


def _shape_check(query, key, value, key_padding_mask, attn_mask, num_heads) -> bool:
    if query.dim() == 3:
        if key.dim() != 3 or value.dim() != 3:
            raise AssertionError(
                "For batched (3-D) `query`, expected `key` and `value` to be 3-D but found "
                f"{key.dim()}-D and {value.dim()}-D tensors respectively"
            )
        if key_padding_mask is not None and key_padding_mask.dim() != 2:
            raise AssertionError(
                "For batched (3-D) `query`, expected `key_padding_mask` to be `None` or 2-D but "
                f"found {key_padding_mask.dim()}-D tensor instead"
            )
        if attn_mask is not None and attn_mask.dim() not in (2, 3):
            raise AssertionError(
                "For batched (3-D) `query`, expected `attn_mask` to be `None`, 2-D or 3-D but "
                f"found {attn_mask.dim()}-D tensor instead"
            )
        return True
    if query.dim() == 2:
        if key.dim() != 2 or value.dim() != 2:
            raise AssertionError(
                "For unbatched (2-D) `query`, expected `key` and `value` to be 2-D but found "
                f"{key.dim()}-D and {value.dim()}-D tensors respectively"
            )
        if key_padding_mask is not None and key_padding_mask.dim() != 1:
            raise AssertionError(
                "For unbatched (2-D) `query`, expected `key_padding_mask` to be `None` or 1-D but "
                f"found {key_padding_mask.dim()}-D tensor instead"
            )
        if attn_mask is not None:
            if attn_mask.dim() not in (2, 3):
                raise AssertionError(
                    "For unbatched (2-D) `query`, expected `attn_mask` to be `None`, 2-D or 3-D "
                    f"but found {attn_mask.dim()}-D tensor instead"
                )
            expected = (num_heads, query.shape[0], key.shape[0])
            if attn_mask.dim() == 3 and tuple(attn_mask.shape) != expected:
                raise AssertionError(
                    f"Expected `attn_mask` shape to be {expected} but got {attn_mask.shape}"
                )
        return False
    raise AssertionError(
        f"query should be unbatched 2D or batched 3D tensor but received {query.dim()}-D query "
        "tensor"
    )


def multi_head_attention_forward(
    query, key, value, embed_dim_to_check: int, num_heads: int, in_proj_weight, in_proj_bias,
    bias_k, bias_v, add_zero_attn: bool, dropout_p: float, out_proj_weight, out_proj_bias,
    training: bool = True, key_padding_mask=None, need_weights: bool = True, attn_mask=None,
    use_separate_proj_weight: bool = False, q_proj_weight=None, k_proj_weight=None,
    v_proj_weight=None, static_k=None, static_v=None, average_attn_weights: bool = True,
    is_causal: bool = False,
):
    """Multi-head attention on ``(L, N, E)`` inputs (``(L, E)`` unbatched), sequence first
    (``torch.nn.functional.multi_head_attention_forward``). Returns ``(output (L, N, E),
    weights (N, L, S) | (N, heads, L, S) | None)``. Raises AssertionError/RuntimeError with
    PyTorch's messages for inconsistent shapes and masks."""
    is_batched = _shape_check(query, key, value, key_padding_mask, attn_mask, num_heads)
    if not is_batched:
        query, key, value = query.unsqueeze(1), key.unsqueeze(1), value.unsqueeze(1)
        if key_padding_mask is not None:
            key_padding_mask = key_padding_mask.unsqueeze(0)
    tgt_len, bsz, embed_dim = query.shape
    src_len = key.shape[0]
    key_padding_mask = _canonical_mask(key_padding_mask, "key_padding_mask", attn_mask,
                                       "attn_mask", query.dtype)
    if is_causal and attn_mask is None:
        raise RuntimeError(
            "Need attn_mask if specifying the is_causal hint. You may use the Transformer module "
            "method `generate_square_subsequent_mask` to create this mask."
        )
    if is_causal and key_padding_mask is None and not need_weights:
        attn_mask = None  # the causal hint replaces the mask on the scaled_dot_product path
    else:
        attn_mask = _canonical_mask(attn_mask, "attn_mask", None, "", query.dtype, False)
        if key_padding_mask is not None:
            is_causal = False
    if embed_dim != embed_dim_to_check:
        raise AssertionError(
            f"was expecting embedding dimension of {embed_dim_to_check}, but got {embed_dim}"
        )
    head_dim = embed_dim // num_heads
    if head_dim * num_heads != embed_dim:
        raise AssertionError(f"embed_dim {embed_dim} not divisible by num_heads {num_heads}")
    if use_separate_proj_weight:
        if tuple(key.shape[:2]) != tuple(value.shape[:2]):
            raise AssertionError(
                f"key's sequence and batch dims {key.shape[:2]} do not match value's "
                f"{value.shape[:2]}"
            )
        b_q, b_k, b_v = (None,) * 3 if in_proj_bias is None else in_proj_bias.chunk(3)
        q = linear(query, q_proj_weight.t(), b_q)
        k = linear(key, k_proj_weight.t(), b_k)
        v = linear(value, v_proj_weight.t(), b_v)
    else:
        if tuple(key.shape) != tuple(value.shape):
            raise AssertionError(f"key shape {key.shape} does not match value shape {value.shape}")
        q, k, v = _in_projection_packed(query, key, value, in_proj_weight, in_proj_bias)
    if attn_mask is not None:
        if attn_mask.dim() == 2:
            if tuple(attn_mask.shape) != (tgt_len, src_len):
                raise RuntimeError(
                    f"The shape of the 2D attn_mask is {attn_mask.shape}, but should be "
                    f"{(tgt_len, src_len)}."
                )
            attn_mask = attn_mask.unsqueeze(0)
        elif tuple(attn_mask.shape) != (bsz * num_heads, tgt_len, src_len):
            raise RuntimeError(
                f"The shape of the 3D attn_mask is {attn_mask.shape}, but should be "
                f"{(bsz * num_heads, tgt_len, src_len)}."
            )
    if bias_k is not None and bias_v is not None:
        if static_k is not None:
            raise AssertionError("bias cannot be added to static key.")
        if static_v is not None:
            raise AssertionError("bias cannot be added to static value.")
        k = cat([k, bias_k.repeat(1, bsz, 1)])
        v = cat([v, bias_v.repeat(1, bsz, 1)])
        attn_mask = None if attn_mask is None else _pad_column(attn_mask)
        key_padding_mask = None if key_padding_mask is None else _pad_column(key_padding_mask)
    elif bias_k is not None or bias_v is not None:
        raise AssertionError("bias_k is set but bias_v is None" if bias_k is not None
                             else "bias_v is set but bias_k is None")
    heads = bsz * num_heads
    q = q.reshape(tgt_len, heads, head_dim).transpose(0, 1)
    k = (k.reshape(k.shape[0], heads, head_dim).transpose(0, 1) if static_k is None else static_k)
    v = (v.reshape(v.shape[0], heads, head_dim).transpose(0, 1) if static_v is None else static_v)
    if add_zero_attn:
        k = cat([k, zeros(heads, 1, head_dim, dtype=k.dtype)], 1)
        v = cat([v, zeros(heads, 1, head_dim, dtype=v.dtype)], 1)
        attn_mask = None if attn_mask is None else _pad_column(attn_mask)
        key_padding_mask = None if key_padding_mask is None else _pad_column(key_padding_mask)
    src_len = k.shape[1]
    if key_padding_mask is not None:
        if key_padding_mask.shape[0] != bsz:
            raise AssertionError(
                f"Expected key_padded_mask.shape[0] to be {bsz}, but got "
                f"{key_padding_mask.shape[0]}"
            )
        if key_padding_mask.shape[1] != src_len:
            raise AssertionError(
                f"Expected key_padded_mask.shape[1] to be {src_len}, but got "
                f"{key_padding_mask.shape[1]}"
            )
        key_padding_mask = key_padding_mask.reshape(bsz, 1, 1, src_len).expand(
            -1, num_heads, -1, -1).reshape(heads, 1, src_len)
        attn_mask = key_padding_mask if attn_mask is None else attn_mask + key_padding_mask
    if not training:
        dropout_p = 0.0
    if need_weights:
        scores = matmul(q * math.sqrt(1.0 / head_dim), k.transpose(-2, -1))
        if attn_mask is not None:
            if attn_mask.dtype != q.dtype:  # PyTorch's baddbmm(attn_mask, q, k^T) refuses it
                raise RuntimeError(
                    f"Input dtypes must be the same, got: input {_c10(attn_mask)}, batch1: "
                    f"{_c10(q)}, batch2: {_c10(k)}"
                )
            scores = attn_mask + scores
        weights = softmax(scores, -1)  # NOTE [Fully masked rows]: NaN here, as in PyTorch
        if dropout_p > 0.0:
            from .. import functional as F

            weights = F.dropout(weights, dropout_p, True)
        out = matmul(weights, v).transpose(0, 1).reshape(tgt_len * bsz, embed_dim)
        out = linear(out, out_proj_weight.t(), out_proj_bias).reshape(tgt_len, bsz, embed_dim)
        weights = weights.reshape(bsz, num_heads, tgt_len, src_len)
        if average_attn_weights:
            weights = mean(weights, 1)
        if not is_batched:
            return out.squeeze(1), weights.squeeze(0)
        return out, weights
    if attn_mask is not None:
        if attn_mask.shape[0] == 1 and attn_mask.dim() == 3:
            attn_mask = attn_mask.unsqueeze(0)
        else:
            attn_mask = attn_mask.reshape(bsz, num_heads, -1, src_len)
    q = q.reshape(bsz, num_heads, tgt_len, head_dim)
    k = k.reshape(bsz, num_heads, src_len, head_dim)
    v = v.reshape(bsz, num_heads, src_len, head_dim)
    out = scaled_dot_product_attention(q, k, v, attn_mask, dropout_p, is_causal)
    out = out.permute(2, 0, 1, 3).reshape(bsz * tgt_len, embed_dim)
    out = linear(out, out_proj_weight.t(), out_proj_bias).reshape(tgt_len, bsz, embed_dim)
    return (out if is_batched else out.squeeze(1)), None


def _in_projection_packed(q, k, v, weight, bias):
    """q, k, v projections from the packed ``(3E, E)`` weight; one matmul when q is k is v."""
    if q is k and k is v:
        return linear(q, weight.t(), bias).chunk(3, -1)
    w_q, w_k, w_v = weight.chunk(3)
    b_q, b_k, b_v = (None,) * 3 if bias is None else bias.chunk(3)
    return linear(q, w_q.t(), b_q), linear(k, w_k.t(), b_k), linear(v, w_v.t(), b_v)


class MultiheadAttention(Module):
    """Multi-head attention ``softmax(Q K^T / sqrt(d)) V`` over ``num_heads`` heads
    (``torch.nn.MultiheadAttention``).

    ``forward(query (L, N, E), key (S, N, kdim), value (S, N, vdim), key_padding_mask (N, S)=None,
    need_weights=True, attn_mask (L, S) or (N*heads, L, S)=None, average_attn_weights=True,
    is_causal=False) -> (output (L, N, E), weights (N, L, S) or None)``; ``(N, L, E)`` with
    batch_first, ``(L, E)`` unbatched. Boolean masks are True where attention is blocked.
    Parameters ``in_proj_weight (3E, E)`` (or ``q/k/v_proj_weight`` when kdim/vdim differ),
    ``in_proj_bias``, ``out_proj.weight``/``bias``, ``bias_k``/``bias_v`` with add_bias_kv.

    Example::

        >>> mha = glassgrad.nn.MultiheadAttention(8, 2)
        >>> x = glassgrad.randn(5, 3, 8)
        >>> out, weights = mha(x, x, x)  # (5, 3, 8), (3, 5, 5)
    """

    def __init__(self, embed_dim: int, num_heads: int, dropout: float = 0.0, bias: bool = True,
                 add_bias_kv: bool = False, add_zero_attn: bool = False, kdim: int | None = None,
                 vdim: int | None = None, batch_first: bool = False, device=None,
                 dtype=None) -> None:
        if embed_dim <= 0 or num_heads <= 0:
            raise ValueError(
                f"embed_dim and num_heads must be greater than 0, got embed_dim={embed_dim} and "
                f"num_heads={num_heads} instead"
            )
        super().__init__()
        self.embed_dim = embed_dim
        self.kdim = kdim if kdim is not None else embed_dim
        self.vdim = vdim if vdim is not None else embed_dim
        self._qkv_same_embed_dim = self.kdim == embed_dim and self.vdim == embed_dim
        self.num_heads = num_heads
        self.dropout = dropout
        self.batch_first = batch_first
        self.head_dim = embed_dim // num_heads
        if self.head_dim * num_heads != embed_dim:
            raise AssertionError("embed_dim must be divisible by num_heads")
        if not self._qkv_same_embed_dim:
            self.q_proj_weight = Parameter(empty(embed_dim, embed_dim, dtype=dtype))
            self.k_proj_weight = Parameter(empty(embed_dim, self.kdim, dtype=dtype))
            self.v_proj_weight = Parameter(empty(embed_dim, self.vdim, dtype=dtype))
            self.register_parameter("in_proj_weight", None)
        else:
            self.in_proj_weight = Parameter(empty(3 * embed_dim, embed_dim, dtype=dtype))
            self.register_parameter("q_proj_weight", None)
            self.register_parameter("k_proj_weight", None)
            self.register_parameter("v_proj_weight", None)
        if bias:
            self.in_proj_bias = Parameter(empty(3 * embed_dim, dtype=dtype))
        else:
            self.register_parameter("in_proj_bias", None)
        self.out_proj = NonDynamicallyQuantizableLinear(embed_dim, embed_dim, bias=bias,
                                                        dtype=dtype)
        if add_bias_kv:
            self.bias_k = Parameter(empty(1, 1, embed_dim, dtype=dtype))
            self.bias_v = Parameter(empty(1, 1, embed_dim, dtype=dtype))
        else:
            self.bias_k = self.bias_v = None
        self.add_zero_attn = add_zero_attn
        self._reset_parameters()

    def _reset_parameters(self) -> None:
        if self._qkv_same_embed_dim:
            init.xavier_uniform_(self.in_proj_weight)
        else:
            init.xavier_uniform_(self.q_proj_weight)
            init.xavier_uniform_(self.k_proj_weight)
            init.xavier_uniform_(self.v_proj_weight)
        if self.in_proj_bias is not None:
            init.constant_(self.in_proj_bias, 0.0)
            init.constant_(self.out_proj.bias, 0.0)
        if self.bias_k is not None:
            init.xavier_normal_(self.bias_k)
        if self.bias_v is not None:
            init.xavier_normal_(self.bias_v)

    def __setstate__(self, state) -> None:
        state.setdefault("_qkv_same_embed_dim", True)
        super().__setstate__(state)

    def _native_path(self, query, key, value, attn_mask, key_padding_mask) -> bool:
        """Whether PyTorch would run ``_native_multi_head_attention`` here (NOTE [Fully masked
        rows]): eval, batched batch-first self-attention, packed weights with biases, bool or
        no masks, an even head count, and nothing that needs a gradient."""
        if ((attn_mask is not None and attn_mask.is_floating_point())
                or (key_padding_mask is not None and key_padding_mask.is_floating_point())
                or self.training or query.dim() != 3 or not (query is key and key is value)
                or not self.batch_first or self.num_heads % 2 or self.bias_k is not None
                or self.bias_v is not None or self.add_zero_attn or self.in_proj_weight is None
                or self.in_proj_bias is None or query.dtype != self.in_proj_weight.dtype
                or query.dtype != self.in_proj_bias.dtype or is_autocast_enabled()
                or not fastpath_enabled()):
            return False
        return not needs_grad((query, self.in_proj_weight, self.in_proj_bias,
                               self.out_proj.weight, self.out_proj.bias))

    def merge_masks(self, attn_mask, key_padding_mask, query):
        """PyTorch's merged mask for its fused kernel: ``(merged, mask_type)`` with type 1 for a
        ``(N, S)`` padding mask alone, 2 when ``attn_mask`` is given (expanded to
        ``(N, heads, L, S)`` and added to the padding mask), ``(None, None)`` without masks
        (``torch.nn.MultiheadAttention.merge_masks``)."""
        mask_type = merged = None
        if key_padding_mask is not None:
            mask_type, merged = 1, key_padding_mask
        if attn_mask is not None:
            batch_size, seq_len, _ = query.shape
            mask_type = 2
            if attn_mask.dim() == 3:
                merged = attn_mask.view(batch_size, -1, seq_len, seq_len)
            else:
                merged = attn_mask.view(1, 1, seq_len, seq_len).expand(
                    batch_size, self.num_heads, -1, -1)
            if key_padding_mask is not None:
                merged = merged + key_padding_mask.view(batch_size, 1, 1, seq_len).expand(
                    -1, self.num_heads, -1, -1)
        return merged, mask_type

    def forward(self, query, key, value, key_padding_mask=None, need_weights: bool = True,
                attn_mask=None, average_attn_weights: bool = True, is_causal: bool = False):
        return_weights = need_weights
        if self._native_path(query, key, value, attn_mask, key_padding_mask):
            need_weights, is_causal = True, False  # NOTE [Fully masked rows]
        is_batched = query.dim() == 3
        if self.batch_first and is_batched:
            # NOTE: keep `query is key is value` true: the projection is then one matmul
            if key is value:
                if query is key:
                    query = key = value = query.transpose(1, 0)
                else:
                    query, key = query.transpose(1, 0), key.transpose(1, 0)
                    value = key
            else:
                query, key, value = (x.transpose(1, 0) for x in (query, key, value))
        separate = not self._qkv_same_embed_dim
        out, weights = multi_head_attention_forward(
            query, key, value, self.embed_dim, self.num_heads, self.in_proj_weight,
            self.in_proj_bias, self.bias_k, self.bias_v, self.add_zero_attn, self.dropout,
            self.out_proj.weight, self.out_proj.bias, training=self.training,
            key_padding_mask=key_padding_mask, need_weights=need_weights, attn_mask=attn_mask,
            use_separate_proj_weight=separate, q_proj_weight=self.q_proj_weight,
            k_proj_weight=self.k_proj_weight, v_proj_weight=self.v_proj_weight,
            average_attn_weights=average_attn_weights, is_causal=is_causal,
        )
        if self.batch_first and is_batched:
            out = out.transpose(1, 0)
        return out, (weights if return_weights else None)


_mha_backend: list = []  # [glassgrad.backends.mha or None], looked up once


def fastpath_enabled() -> bool:
    """``torch.backends.mha.get_fastpath_enabled()`` where glassgrad has it, else True (the
    default): PyTorch's switch for its fused attention kernels."""
    if not _mha_backend:
        try:
            from ...backends import mha
        except ImportError:  # NOTE: once: a failed import searches the path on every call
            mha = None
        _mha_backend.append(mha)
    return _mha_backend[0] is None or _mha_backend[0].get_fastpath_enabled()


def needs_grad(tensors) -> bool:
    """Grad mode is on and one of ``tensors`` (None allowed) requires grad: what keeps PyTorch
    off its fused inference kernels."""
    return is_grad_enabled() and any(t is not None and t.requires_grad for t in tensors)
