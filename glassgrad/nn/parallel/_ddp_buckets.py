"""Gradient buckets of ``DistributedDataParallel``: which parameters share one all-reduce, and the
flat buffer each bucket reduces.

The assignment is PyTorch's ``torch.distributed._compute_bucket_assignment_by_size``: walk the
parameters in the order given, one open bucket per dtype, close a bucket once its bytes reach the
current limit, then move that dtype on to the next limit (so a small first bucket, then
``bucket_cap_mb``); without ``tensor_indices`` the buckets are sorted by their smallest index.
"""

from __future__ import annotations

import numpy as np

from ...autograd.grad_mode import no_grad

# torch.distributed._DEFAULT_FIRST_BUCKET_BYTES and DDP's default bucket_cap_mb
DEFAULT_FIRST_BUCKET_BYTES = 1024 * 1024
DEFAULT_BUCKET_CAP_MB = 25
_MB = 1024 * 1024


def compute_bucket_assignment_by_size(tensors, bucket_size_limits, expect_sparse_gradient=(),
                                      tensor_indices=()):
    """Group ``tensors`` into buckets; returns ``(bucket_indices, per_bucket_size_limits)`` as
    ``torch.distributed._compute_bucket_assignment_by_size``.

    ``tensors``: sequence of Tensors (in the order to bucket them); ``bucket_size_limits``: byte
    limits, the first for each dtype's first bucket, the last for all later ones;
    ``tensor_indices``: the index to record for each tensor (default its position; when given, the
    order is the gradient-ready order and buckets are not re-sorted)."""
    if not bucket_size_limits:
        raise ValueError("compute_bucket_assignment_by_size: bucket_size_limits must not be empty")
    open_buckets: dict = {}  # dtype -> [indices, bytes, limit]
    limit_at: dict = {}  # dtype -> position in bucket_size_limits
    result = []
    for i, t in enumerate(tensors):
        index = tensor_indices[i] if len(tensor_indices) else i
        if len(expect_sparse_gradient) and expect_sparse_gradient[index]:
            result.append(([index], float("inf")))
            continue
        key = t.dtype
        bucket = open_buckets.setdefault(key, [[], 0, 0])
        bucket[0].append(index)
        bucket[1] += t.numel() * t.element_size()
        at = limit_at.setdefault(key, 0)
        bucket[2] = bucket_size_limits[at]
        if bucket[1] >= bucket[2]:
            result.append((bucket[0], bucket[2]))
            open_buckets[key] = [[], 0, 0]
            limit_at[key] = min(at + 1, len(bucket_size_limits) - 1)
    # NOTE: PyTorch keeps the open buckets in a std::unordered_map, which libstdc++ walks in
    # reverse order of first insertion: the order its leftover buckets come out in
    result.extend((b[0], b[2]) for b in reversed(open_buckets.values()) if b[0])
    if not len(tensor_indices):
        result.sort(key=lambda entry: min(entry[0]))
    return [list(b) for b, _ in result], [limit for _, limit in result]


class Bucket:
    """One all-reduce: a flat buffer holding the gradients of ``indices`` (parameter indices) back
    to back, and a view of it shaped like each parameter."""

    __slots__ = ("index", "indices", "flat", "views", "pending", "work", "nbytes")

    def __init__(self, index: int, indices, params) -> None:
        from ... import _factories

        self.index = index
        self.indices = list(indices)
        dtype = params[self.indices[0]].dtype
        sizes = [params[i].numel() for i in self.indices]
        self.flat = _factories.zeros(sum(sizes), dtype=dtype)
        self.views = []
        offset = 0
        for i, size in zip(self.indices, sizes):
            self.views.append(self.flat[offset:offset + size].view(params[i].shape))
            offset += size
        self.nbytes = self.flat.numel() * self.flat.element_size()
        self.pending = len(self.indices)
        self.work = None

    def holds(self, grad) -> bool:
        """True when ``grad`` is (a view of) this bucket's buffer (``gradient_as_bucket_view``)."""
        return grad is not None and np.may_share_memory(grad._array, self.flat._array)


def build_buckets(bucket_indices, params) -> tuple[list, dict]:
    """Buckets for ``bucket_indices`` and ``{param index: (bucket, position in it)}``."""
    buckets = [Bucket(k, indices, params) for k, indices in enumerate(bucket_indices)]
    where = {i: (b, pos) for b in buckets for pos, i in enumerate(b.indices)}
    return buckets, where


def copy_grads_into(buckets, params) -> None:
    """Seed new buckets with the gradients the parameters hold now (a rebuild keeps them)."""
    with no_grad():
        for b in buckets:
            for i, view in zip(b.indices, b.views):
                if params[i].grad is not None:
                    view.copy_(params[i].grad)
