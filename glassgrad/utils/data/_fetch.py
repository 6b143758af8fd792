"""Turning indices into batches, the same in the main process and in workers
(``torch.utils.data._utils.fetch``).

NOTE [Batch fast path]: with the default collate, a ``TensorDataset`` (or a ``Subset`` of one) is
batched with one fancy index per tensor instead of one ``__getitem__`` per sample plus a stack; the
result is the same list ``[x_batch, y_batch]`` default_collate would build. The sampler then hands
over index arrays (``BatchSampler._index_batches``) instead of lists.
"""

from __future__ import annotations

import dataclasses
import itertools

import numpy as np

from .sampler import BatchSampler


@dataclasses.dataclass
class FetchSpec:
    """What a fetcher needs from the loader; picklable (a worker started by ``spawn`` gets a
    copy) as long as the dataset, collate_fn and worker_init_fn are."""

    dataset: object
    iterable: bool
    auto_collation: bool
    collate_fn: object
    drop_last: bool
    fast_path: bool
    num_workers: int = 0
    worker_init_fn: object = None


def fast_path(loader) -> bool:
    """Whether batches can be gathered by fancy indexing (NOTE [Batch fast path])."""
    from .dataloader import default_collate

    gather = getattr(loader.dataset, "_batch_gather", None)
    return (loader.collate_fn is default_collate and gather is not None
            and isinstance(loader.batch_sampler, BatchSampler) and gather() is not None)


def index_iter(index_sampler, spec: FetchSpec):
    """One pass of what the fetcher takes: index arrays on the fast path (``index_sampler`` is
    then a BatchSampler), else the index sampler's items."""
    if spec.fast_path:
        batches = index_sampler._index_batches()
        if batches is not None:
            return batches
    return iter(index_sampler)


class _MapFetcher:
    def __init__(self, spec: FetchSpec) -> None:
        self.dataset, self.collate_fn = spec.dataset, spec.collate_fn
        self.auto_collation = spec.auto_collation
        self.gather = spec.dataset._batch_gather() if spec.fast_path else None
        self.getitems = getattr(spec.dataset, "__getitems__", None)

    def fetch(self, index):
        if not self.auto_collation:
            return self.collate_fn(self.dataset[index])
        if isinstance(index, np.ndarray):
            if self.gather is not None and index.dtype.kind in "iu" and index.ndim == 1:
                return self.gather(index.astype(np.int64, copy=False))
            index = index.tolist()
        if self.getitems:
            return self.collate_fn(self.getitems(index))
        return self.collate_fn([self.dataset[i] for i in index])


class _IterableFetcher:
    def __init__(self, spec: FetchSpec) -> None:
        self.samples, self.ended = iter(spec.dataset), False
        self.collate_fn, self.auto_collation = spec.collate_fn, spec.auto_collation
        self.drop_last = spec.drop_last

    def fetch(self, index):
        if self.ended:
            raise StopIteration
        if not self.auto_collation:
            return self.collate_fn(next(self.samples))
        data = list(itertools.islice(self.samples, len(index)))
        if len(data) < len(index):
            self.ended = True
        if not data or (self.drop_last and len(data) < len(index)):
            raise StopIteration
        return self.collate_fn(data)


def create_fetcher(spec: FetchSpec):
    """A fresh fetcher; for an IterableDataset it starts a new pass (``iter(dataset)``)."""
    return _IterableFetcher(spec) if spec.iterable else _MapFetcher(spec)
