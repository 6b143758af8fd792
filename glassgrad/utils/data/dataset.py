"""Datasets (``torch.utils.data.dataset``): map-style and iterable-style, and ways to combine them.

A map-style dataset answers ``len(ds)`` and ``ds[i]``; an iterable-style one is iterated. Samples
are whatever ``__getitem__`` returns, usually a tuple of tensors. ``TensorDataset`` and ``Subset``
also know how to gather a whole batch with one fancy index per tensor (``_batch_gather``), the fast
path the ``DataLoader`` takes when the default collate would only stack their samples.
"""

from __future__ import annotations

import bisect
import itertools
import math
from collections.abc import Iterable, Sequence

import numpy as np

from ... import _factories
from ...tensor import Tensor
from ..._user_warning import warn_user

__all__ = [
    "ChainDataset", "ConcatDataset", "Dataset", "IterableDataset", "StackDataset", "Subset",
    "TensorDataset", "random_split",
]


class Dataset:
    """A map-style dataset: subclasses define ``__getitem__(index)`` and usually ``__len__``
    (``torch.utils.data.Dataset``). ``a + b`` concatenates two datasets."""

    def __getitem__(self, index):
        raise NotImplementedError("Subclasses of Dataset should implement __getitem__.")

    def __add__(self, other: Dataset) -> ConcatDataset:
        return ConcatDataset([self, other])


class IterableDataset(Dataset):
    """A dataset of samples produced by ``__iter__`` (``torch.utils.data.IterableDataset``).

    The ``DataLoader`` rejects ``shuffle``/``sampler`` for it; ``a + b`` chains two of them.
    """

    def __iter__(self):
        raise NotImplementedError("Subclasses of IterableDataset should implement __iter__.")

    def __add__(self, other: Dataset) -> ChainDataset:
        return ChainDataset([self, other])


def _first_dim(t) -> int:
    return t.size(0) if isinstance(t, Tensor) else len(t)


class TensorDataset(Dataset):
    """Samples are ``tuple(t[i] for t in tensors)``; all tensors share their first dimension
    (``torch.utils.data.TensorDataset``).

    Raises AssertionError "Size mismatch between tensors" when the first dimensions differ.

    Example::

        >>> ds = TensorDataset(glassgrad.randn(100, 3), glassgrad.arange(100))
        >>> x, y = ds[0]; len(ds)
        100
    """

    def __init__(self, *tensors: Tensor) -> None:
        sizes = [_first_dim(t) for t in tensors]
        if any(s != sizes[0] for s in sizes):
            shapes = ", ".join(str(list(t.shape)) if isinstance(t, Tensor) else str(len(t))
                               for t in tensors)
            raise AssertionError(
                "Size mismatch between tensors\n"
                f"glassgrad: TensorDataset needs equal first dimensions, got shapes {shapes}."
            )
        self.tensors = tuple(tensors)

    def __getitem__(self, index):
        return tuple(tensor[index] for tensor in self.tensors)

    def __len__(self) -> int:
        return _first_dim(self.tensors[0])

    def _batch_gather(self):
        """``gather(indices) -> [t[indices] for t in tensors]``, the collated batch, or None when
        a subclass changed how samples are made (then the generic path must run)."""
        cls = type(self)
        if cls.__getitem__ is not TensorDataset.__getitem__ or hasattr(cls, "__getitems__"):
            return None
        if not all(isinstance(t, Tensor) for t in self.tensors):
            return None
        return self._gather

    def _gather(self, indices: np.ndarray) -> list:
        out = []
        for t in self.tensors:
            if t._requires_grad:
                out.append(t[Tensor._make(indices)])
            else:
                out.append(Tensor._make(np.asarray(t._array)[indices]))
        return out


class StackDataset(Dataset):
    """Samples of several datasets side by side, as a tuple (positional) or a dict (keywords)
    (``torch.utils.data.StackDataset``). All datasets must have the same length (ValueError)."""

    def __init__(self, *args: Dataset, **kwargs: Dataset) -> None:
        if args:
            if kwargs:
                raise ValueError(
                    "Supported either ``tuple``- (via ``args``) or``dict``- (via ``kwargs``) like "
                    "input/output, but both types are given."
                )
            self._length = len(args[0])
            if any(self._length != len(dataset) for dataset in args):
                raise ValueError("Size mismatch between datasets")
            self.datasets = args
        elif kwargs:
            tmp = list(kwargs.values())
            self._length = len(tmp[0])
            if any(self._length != len(dataset) for dataset in tmp):
                raise ValueError("Size mismatch between datasets")
            self.datasets = kwargs
        else:
            raise ValueError("At least one dataset should be passed")

    def __getitem__(self, index):
        if isinstance(self.datasets, dict):
            return {k: dataset[index] for k, dataset in self.datasets.items()}
        return tuple(dataset[index] for dataset in self.datasets)

    def __len__(self) -> int:
        return self._length


class ConcatDataset(Dataset):
    """The datasets one after another (``torch.utils.data.ConcatDataset``).

    ``cumulative_sizes[k]`` is the total length of the first k+1 datasets. Raises AssertionError for
    an empty list or an IterableDataset, ValueError for a negative index beyond the length.
    """

    @staticmethod
    def cumsum(sequence) -> list[int]:
        r, s = [], 0
        for e in sequence:
            s += len(e)
            r.append(s)
        return r

    def __init__(self, datasets: Iterable[Dataset]) -> None:
        self.datasets = list(datasets)
        if len(self.datasets) == 0:
            raise AssertionError("datasets should not be an empty iterable")
        for d in self.datasets:
            if isinstance(d, IterableDataset):
                raise AssertionError("ConcatDataset does not support IterableDataset")  # noqa: TRY004 - torch
        self.cumulative_sizes = self.cumsum(self.datasets)

    def __len__(self) -> int:
        return self.cumulative_sizes[-1]

    def __getitem__(self, idx: int):
        if idx < 0:
            if -idx > len(self):
                raise ValueError("absolute value of index should not exceed dataset length")
            idx = len(self) + idx
        dataset_idx = bisect.bisect_right(self.cumulative_sizes, idx)
        if dataset_idx == len(self.datasets):
            raise IndexError(
                f"index {idx} is out of range for a ConcatDataset of length {len(self)}"
            )
        sample_idx = idx if dataset_idx == 0 else idx - self.cumulative_sizes[dataset_idx - 1]
        return self.datasets[dataset_idx][sample_idx]


class ChainDataset(IterableDataset):
    """Iterable datasets chained one after another (``torch.utils.data.ChainDataset``)."""

    def __init__(self, datasets: Iterable[Dataset]) -> None:
        self.datasets = datasets

    def __iter__(self):
        for d in self.datasets:
            if not isinstance(d, IterableDataset):
                raise AssertionError("ChainDataset only supports IterableDataset")  # noqa: TRY004
            yield from d

    def __len__(self) -> int:
        total = 0
        for d in self.datasets:
            if not isinstance(d, IterableDataset):
                raise AssertionError("ChainDataset only supports IterableDataset")  # noqa: TRY004
            total += len(d)
        return total


class Subset(Dataset):
    """The samples of ``dataset`` at ``indices``, in that order (``torch.utils.data.Subset``)."""

    def __init__(self, dataset: Dataset, indices: Sequence[int]) -> None:
        self.dataset = dataset
        self.indices = indices

    def __getitem__(self, idx):
        if isinstance(idx, list):
            return self.dataset[[self.indices[i] for i in idx]]
        return self.dataset[self.indices[idx]]

    def __getitems__(self, indices: list[int]) -> list:
        if callable(getattr(self.dataset, "__getitems__", None)):
            return self.dataset.__getitems__([self.indices[idx] for idx in indices])
        return [self.dataset[self.indices[idx]] for idx in indices]

    def __len__(self) -> int:
        return len(self.indices)

    def _batch_gather(self):
        """Compose the parent's batch gather with this subset's index map (see TensorDataset)."""
        cls = type(self)
        if cls.__getitem__ is not Subset.__getitem__ or cls.__getitems__ is not Subset.__getitems__:
            return None
        inner = getattr(self.dataset, "_batch_gather", None)
        gather = inner() if inner is not None else None
        if gather is None:
            return None
        indices = self.indices
        index_map = indices._array if isinstance(indices, Tensor) else np.asarray(indices)
        if index_map.dtype.kind not in "iu" or index_map.ndim != 1:
            return None
        return lambda batch: gather(index_map[batch])


def random_split(dataset: Dataset, lengths: Sequence[int | float], generator=None) -> list[Subset]:
    """Split ``dataset`` into disjoint random ``Subset``s (``torch.utils.data.random_split``).

    ``lengths`` are sizes summing to ``len(dataset)``, or fractions summing to 1 (floors, then the
    remainder handed out one by one from the first split). The permutation comes from
    ``generator`` (default: the global one). Raises ValueError for a fraction outside [0, 1] or
    lengths that do not add up.
    """
    if generator is None:
        generator = _factories.default_generator
    lengths = list(lengths)
    if math.isclose(sum(lengths), 1) and sum(lengths) <= 1:
        subset_lengths: list[int] = []
        for i, frac in enumerate(lengths):
            if frac < 0 or frac > 1:
                raise ValueError(f"Fraction at index {i} is not between 0 and 1")
            subset_lengths.append(math.floor(len(dataset) * frac))
        remainder = len(dataset) - sum(subset_lengths)
        for i in range(remainder):
            subset_lengths[i % len(subset_lengths)] += 1
        lengths = subset_lengths
        for i, length in enumerate(lengths):
            if length == 0:
                warn_user(
                    f"Length of split at index {i} is 0. This might result in an empty dataset.",
                    stacklevel=2,
                )
    if sum(lengths) != len(dataset):
        raise ValueError(
            "Sum of input lengths does not equal the length of the input dataset!\n"
            f"glassgrad: lengths {lengths} sum to {sum(lengths)}, the dataset has {len(dataset)}."
        )
    indices = _factories.randperm(sum(lengths), generator=generator).tolist()
    return [
        Subset(dataset, indices[offset - length : offset])
        for offset, length in zip(itertools.accumulate(lengths), lengths)
    ]
