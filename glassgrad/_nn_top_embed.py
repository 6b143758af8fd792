"""torch's top-level embedding functions (issue 16, lane embed): ``torch.embedding_bag`` with
ATen's signature and 4-tuple result, and ``torch.embedding_renorm_``."""

from __future__ import annotations

from ._nn_top import _tensor_args
from .nn._functional_embedding_bag import _embedding_bag, embedding_renorm_

__all__ = ["embedding_bag", "embedding_renorm_"]


def embedding_bag(weight, indices, offsets, scale_grad_by_freq: bool = False, mode: int = 0,
                  sparse: bool = False, per_sample_weights=None,
                  include_last_offset: bool = False, padding_idx=None):
    """``torch.embedding_bag``: 1-D ``indices`` in bags starting at ``offsets``, ``mode`` 0 sum,
    1 mean, 2 max -> ``(output (B, D), offset2bag, bag_size, max_indices)``, the int tensors as
    ATen's CPU kernel returns them (``F.embedding_bag`` returns ``output`` alone). RuntimeError
    for out-of-range indices, bad offsets or dtypes (ATen's text); TypeError for a non-Tensor."""
    _tensor_args("embedding_bag", weight=(1, weight), indices=(2, indices), offsets=(3, offsets),
                 per_sample_weights=(7, per_sample_weights))
    if mode not in (0, 1, 2):
        raise RuntimeError(f"Unknown mode for embedding_bag_backward with mode = {mode}\n"
                           "glassgrad: mode is 0 (sum), 1 (mean) or 2 (max)")
    return _embedding_bag(weight, indices, offsets, scale_grad_by_freq, mode, sparse,
                          per_sample_weights, include_last_offset, padding_idx)
