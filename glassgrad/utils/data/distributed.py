"""``DistributedSampler``: each rank's share of a dataset's indices
(``torch.utils.data.distributed.DistributedSampler``)."""

from __future__ import annotations

import math
from collections.abc import Iterator

import numpy as np

from ... import _factories
from .sampler import Sampler

__all__ = ["DistributedSampler"]


class DistributedSampler(Sampler):
    """The indices of ``dataset`` that rank ``rank`` of ``num_replicas`` loads; the ranks'
    shares are disjoint and cover the epoch (``torch.utils.data.distributed.DistributedSampler``).

    With ``shuffle`` (default) the epoch's order is ``randperm(len(dataset))`` from a generator
    seeded with ``seed + epoch``: the same on every rank and the same as torch's; call
    ``set_epoch(epoch)`` before each epoch for a new order. Each rank takes every
    ``num_replicas``-th index starting at ``rank``. Without ``drop_last`` the order is padded by
    repeating it from its start until the ranks get ``ceil(len / num_replicas)`` indices each;
    with it the tail is dropped to ``floor``. ``num_replicas`` and ``rank`` default to the
    default process group's (``glassgrad.distributed``). Raises ValueError for a rank outside
    ``[0, num_replicas - 1]``, and the process group's ValueError when it is needed and not
    initialised.

    Example::

        >>> sampler = DistributedSampler(dataset, num_replicas=2, rank=0, seed=1)
        >>> loader = DataLoader(dataset, batch_size=8, sampler=sampler)
        >>> for epoch in range(3):
        ...     sampler.set_epoch(epoch)
        ...     for batch in loader: ...
    """

    def __init__(self, dataset, num_replicas: int | None = None, rank: int | None = None,
                 shuffle: bool = True, seed: int = 0, drop_last: bool = False) -> None:
        if num_replicas is None or rank is None:
            from ... import distributed as dist

            if not dist.is_available():
                raise RuntimeError("Requires distributed package to be available")
            num_replicas = dist.get_world_size() if num_replicas is None else num_replicas
            rank = dist.get_rank() if rank is None else rank
        if rank >= num_replicas or rank < 0:
            raise ValueError(
                f"Invalid rank {rank}, rank should be in the interval [0, {num_replicas - 1}]")
        self.dataset = dataset
        self.num_replicas = num_replicas
        self.rank = rank
        self.epoch = 0
        self.drop_last = drop_last
        n = len(dataset)
        if drop_last and n % num_replicas:
            self.num_samples = math.ceil((n - num_replicas) / num_replicas)
        else:
            self.num_samples = math.ceil(n / num_replicas)
        self.total_size = self.num_samples * num_replicas
        self.shuffle = shuffle
        self.seed = seed

    def _epoch_order(self) -> np.ndarray:
        n = len(self.dataset)
        if not self.shuffle:
            return np.arange(n)
        generator = _factories.Generator()
        generator.manual_seed(self.seed + self.epoch)
        return _factories.randperm(n, generator=generator)._array

    def __iter__(self) -> Iterator[int]:
        order = self._epoch_order()
        if self.drop_last:
            order = order[:self.total_size]
        elif len(order) and len(order) < self.total_size:
            order = np.resize(order, self.total_size)  # NOTE: repeats from the start, as torch pads
        return iter(order[self.rank:self.total_size:self.num_replicas].tolist())

    def __len__(self) -> int:
        return self.num_samples

    def set_epoch(self, epoch: int) -> None:
        """Make the next pass use the order of ``epoch`` (seeded ``seed + epoch``)."""
        self.epoch = epoch
