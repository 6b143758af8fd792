"""Samplers (``torch.utils.data.sampler``): which indices a ``DataLoader`` visits, in which order.

Randomness comes from a ``glassgrad.Generator``: pass one to make an order reproducible. Each pass
over a random sampler draws a fresh order, so epochs differ. ``SequentialSampler`` and
``RandomSampler`` can also hand over an epoch as int64 arrays (``_index_chunks``), which the
``DataLoader`` slices into batches without a Python step per sample; a pass is never materialised
whole, so ``RandomSampler(replacement=True, num_samples=int(1e10))`` costs memory for one chunk.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Iterator, Sequence, Sized

import numpy as np

from ... import _factories, dtypes
from ...tensor import Tensor

_CHUNK = 1 << 16  # indices per array handed to the DataLoader's batch slicing
_TORCH_CHUNK = 32  # torch's RandomSampler draws with replacement 32 at a time

__all__ = [
    "BatchSampler", "RandomSampler", "Sampler", "SequentialSampler", "SubsetRandomSampler",
    "WeightedRandomSampler",
]


class Sampler:
    """Base class of samplers: subclasses define ``__iter__`` over indices (or lists of indices)
    and usually ``__len__`` (``torch.utils.data.Sampler``)."""

    def __init__(self, data_source: Sized | None = None) -> None:
        pass

    def __iter__(self) -> Iterator:
        raise NotImplementedError


class SequentialSampler(Sampler):
    """Indices ``0 .. len(data_source) - 1`` in order (``torch.utils.data.SequentialSampler``)."""

    def __init__(self, data_source: Sized) -> None:
        self.data_source = data_source

    def __iter__(self) -> Iterator[int]:
        return iter(range(len(self.data_source)))

    def __len__(self) -> int:
        return len(self.data_source)

    def _index_chunks(self, size: int = _CHUNK) -> Iterator[np.ndarray]:
        n = len(self.data_source)
        for start in range(0, n, size):
            yield np.arange(start, min(n, start + size), dtype=np.int64)


class RandomSampler(Sampler):
    """A random order of the dataset's indices; with ``replacement=True`` ``num_samples`` draws with
    replacement (``torch.utils.data.RandomSampler``).

    Without a ``generator`` each pass seeds a fresh one from the global generator (so
    ``glassgrad.manual_seed`` makes runs reproducible). Raises TypeError for a non-bool
    ``replacement`` and ValueError for a non-positive ``num_samples``.
    """

    def __init__(self, data_source: Sized, replacement: bool = False,
                 num_samples: int | None = None, generator=None) -> None:
        self.data_source = data_source
        self.replacement = replacement
        self._num_samples = num_samples
        self.generator = generator
        if not isinstance(self.replacement, bool):
            raise TypeError(
                f"replacement should be a boolean value, but got replacement={self.replacement}"
            )
        if not isinstance(self.num_samples, int) or self.num_samples <= 0:
            raise ValueError(
                "num_samples should be a positive integer value, but got "
                f"num_samples={self.num_samples}"
            )

    @property
    def num_samples(self) -> int:
        if self._num_samples is None:
            return len(self.data_source)
        return self._num_samples

    def _index_chunks(self, size: int = _CHUNK) -> Iterator[np.ndarray]:
        """One pass of indices as int64 arrays of at most ``size`` (with replacement), drawn
        lazily from the generator as ``__iter__`` draws them."""
        n = len(self.data_source)
        generator = self.generator
        if generator is None:
            seed = int(_factories.empty((), dtype=dtypes.int64).random_().item())  # as torch
            generator = _factories.Generator().manual_seed(seed)
        if self.replacement:
            # NOTE: torch draws 32 at a time; randint spends one word per index whatever the
            # chunk, so any chunk size gives torch's index stream (checked against torch)
            left = self.num_samples
            while left > 0:
                k = min(left, size)
                left -= k
                yield _factories.randint(0, n, (k,), generator=generator)._array
            return
        for _ in range(self.num_samples // n):
            yield _factories.randperm(n, generator=generator)._array
        # torch draws a whole permutation for the remainder, even an empty one
        yield _factories.randperm(n, generator=generator)._array[: self.num_samples % n]

    def __iter__(self) -> Iterator[int]:
        for chunk in self._index_chunks(_TORCH_CHUNK):
            yield from chunk.tolist()

    def __len__(self) -> int:
        return self.num_samples


class SubsetRandomSampler(Sampler):
    """The given ``indices`` in a random order, without replacement
    (``torch.utils.data.SubsetRandomSampler``)."""

    def __init__(self, indices: Sequence[int], generator=None) -> None:
        self.indices = indices
        self.generator = generator

    def __iter__(self) -> Iterator[int]:
        for i in _factories.randperm(len(self.indices), generator=self.generator).tolist():
            yield self.indices[i]

    def __len__(self) -> int:
        return len(self.indices)


class WeightedRandomSampler(Sampler):
    """``num_samples`` indices drawn from ``[0, len(weights))`` with probability proportional to
    ``weights`` (``torch.utils.data.WeightedRandomSampler``).

    Raises ValueError for a non-positive ``num_samples``, a non-bool ``replacement`` or weights that
    are not 1-D.
    """

    def __init__(self, weights: Sequence[float], num_samples: int, replacement: bool = True,
                 generator=None) -> None:
        if not isinstance(num_samples, int) or isinstance(num_samples, bool) or num_samples <= 0:
            raise ValueError(
                f"num_samples should be a positive integer value, but got num_samples={num_samples}"
            )
        if not isinstance(replacement, bool):
            raise ValueError(  # noqa: TRY004 - PyTorch raises ValueError here
                f"replacement should be a boolean value, but got replacement={replacement}"
            )
        if isinstance(weights, Tensor):
            weights_tensor = weights.detach().to(dtypes.float64)
        else:
            weights_tensor = _factories.tensor(np.asarray(weights, dtype=np.float64))
        if len(weights_tensor.shape) != 1:
            raise ValueError(
                "weights should be a 1d sequence but given "
                f"weights have shape {tuple(weights_tensor.shape)}"
            )
        self.weights = weights_tensor
        self.num_samples = num_samples
        self.replacement = replacement
        self.generator = generator

    def __iter__(self) -> Iterator[int]:
        if not self.replacement and self.num_samples > self.weights.shape[0]:
            raise RuntimeError(
                "cannot sample n_sample > prob_dist.size(-1) samples without replacement\n"
                f"glassgrad: num_samples={self.num_samples} but only {self.weights.shape[0]} "
                "weights; use replacement=True or fewer samples."
            )
        rand_tensor = _factories.multinomial(self.weights, self.num_samples, self.replacement,
                                             generator=self.generator)
        yield from iter(rand_tensor.tolist())

    def __len__(self) -> int:
        return self.num_samples


class BatchSampler(Sampler):
    """Groups the indices of ``sampler`` into lists of ``batch_size``; ``drop_last`` drops a short
    last batch (``torch.utils.data.BatchSampler``).

    Raises ValueError for a non-positive ``batch_size`` or a non-bool ``drop_last``.

    Example::

        >>> list(BatchSampler(SequentialSampler(range(10)), batch_size=3, drop_last=False))
        [[0, 1, 2], [3, 4, 5], [6, 7, 8], [9]]
    """

    def __init__(self, sampler: Sampler | Iterable[int], batch_size: int, drop_last: bool) -> None:
        if not isinstance(batch_size, int) or isinstance(batch_size, bool) or batch_size <= 0:
            raise ValueError(
                f"batch_size should be a positive integer value, but got batch_size={batch_size}"
            )
        if not isinstance(drop_last, bool):
            raise ValueError(  # noqa: TRY004 - PyTorch raises ValueError here
                f"drop_last should be a boolean value, but got drop_last={drop_last}"
            )
        self.sampler = sampler
        self.batch_size = batch_size
        self.drop_last = drop_last

    def __iter__(self) -> Iterator[list[int]]:
        sampler_iter = iter(self.sampler)
        if self.drop_last:
            args = [sampler_iter] * self.batch_size
            for batch_droplast in zip(*args):
                yield [*batch_droplast]
        else:
            batch = [*itertools.islice(sampler_iter, self.batch_size)]
            while batch:
                yield batch
                batch = [*itertools.islice(sampler_iter, self.batch_size)]

    def __len__(self) -> int:
        if self.drop_last:
            return len(self.sampler) // self.batch_size
        return (len(self.sampler) + self.batch_size - 1) // self.batch_size

    def _index_batches(self):
        """Batches as int64 arrays, drawn exactly as ``__iter__`` draws them, or None when the
        inner sampler cannot give a whole pass as an array."""
        if type(self) is not BatchSampler or type(self.sampler) not in (SequentialSampler,
                                                                        RandomSampler):
            return None
        return self._slices()

    def _slices(self):
        b, pending = self.batch_size, None
        for chunk in self.sampler._index_chunks():
            if pending is not None and len(pending):
                chunk = np.concatenate([pending, chunk])
            stop = len(chunk) - len(chunk) % b
            for start in range(0, stop, b):
                yield chunk[start : start + b]
            pending = chunk[stop:]
        if pending is not None and len(pending) and not self.drop_last:
            yield pending
