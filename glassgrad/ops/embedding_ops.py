"""``EmbeddingRows``: rows of an embedding table whose gradient is shaped by the call
(``torch.nn.functional.embedding`` with ``scale_grad_by_freq=True`` or ``sparse=True``; the plain
lookup is indexing).

The forward is ``weight[indices]``; the backward sums the incoming rows into the table with
``index_add`` (a differentiable op, so double backward works), each row divided by how often its
index occurs in this call's ``indices`` when ``scale_grad_by_freq``, and nothing for the
``padding_idx`` row, as ATen's ``embedding_dense_backward``. With ``sparse`` the gradient is a
sparse COO tensor instead, uncoalesced, one entry per looked-up index other than ``padding_idx``
(ATen's ``embedding_sparse_backward``; NOTE [Sparse gradients] in sparse/_coo.py).
"""

from __future__ import annotations

import numpy as np

from . import primitive
from .gather import index_add
from .primitive import Primitive


def row_scale(flat: np.ndarray, num: int, padding_idx, scale_grad_by_freq: bool, dtype):
    """Each position's factor in the table's gradient: 1 / count of its index (or 1), 0 at
    ``padding_idx``; an ``(n, 1)`` array of ``dtype``, or None when every factor is 1."""
    if not scale_grad_by_freq and padding_idx is None:
        return None
    scale = np.ones(flat.shape[0], dtype)
    if scale_grad_by_freq:
        scale /= np.bincount(flat, minlength=num)[flat]
    if padding_idx is not None:
        scale[flat == padding_idx] = 0
    return scale[:, None]


class EmbeddingRows(Primitive):
    """``weight (num, dim)`` at integer ``indices (*)`` -> ``(*, dim)``."""

    node_name = "EmbeddingBackward0"

    @staticmethod
    def forward(xp, weight, indices, padding_idx, scale_grad_by_freq, num_weights, sparse=False):
        return weight[indices]

    @staticmethod
    def backward(grad, indices, padding_idx, scale_grad_by_freq, num_weights, sparse=False):
        flat = indices.reshape(-1)
        rows = grad.reshape(flat.shape[0], grad.shape[-1])
        if sparse:
            return (_sparse_grad(rows, flat, padding_idx, scale_grad_by_freq, num_weights),)
        scale = row_scale(flat, num_weights, padding_idx, scale_grad_by_freq,
                          rows._array.dtype)
        if scale is not None:
            rows = rows * primitive._make(scale)
        table = rows.new_zeros((num_weights, grad.shape[-1]))
        return (index_add(table, 0, primitive._make(flat), rows),)


def _sparse_grad(rows, flat, padding_idx, scale_grad_by_freq, num_weights):
    if scale_grad_by_freq:
        raise RuntimeError("embedding_backward: scale_grad_by_freq not supported with sparse "
                           "gradients")
    from ..autograd.grad_mode import is_grad_enabled
    from ..autograd.graph import _Anomaly
    from ..sparse._coo import SparseCOOTensor, sparse_gradient

    if is_grad_enabled() or _Anomaly.enabled:
        raise RuntimeError(
            "glassgrad: embedding(sparse=True) gives its sparse gradient in first-order backward "
            "only; with create_graph=True or anomaly detection use sparse=False (the gradient is "
            "then dense) (NOTE [Sparse gradients] in glassgrad/sparse/_coo.py)")

    if padding_idx is not None:
        keep = np.flatnonzero(flat != padding_idx)
        flat, rows = flat[keep], rows[primitive._make(keep)]
    entries = SparseCOOTensor._build(np.ascontiguousarray(flat[None, :], np.int64), rows,
                                     (num_weights, rows.shape[-1]), flat.shape[0] <= 1)
    return sparse_gradient(entries)
