"""``DataLoader`` and ``default_collate`` (``torch.utils.data.dataloader``, ``..._utils.collate``).

``num_workers=0`` fetches in this process; ``num_workers > 0`` starts worker processes (NOTE
[Worker processes] in ``_worker.py``, the main side in ``_multiprocess_iter.py``). A TensorDataset
is batched by fancy indexing either way (NOTE [Batch fast path] in ``_fetch.py``).
"""

from __future__ import annotations

import collections
import copy
import math
import multiprocessing
import os
import re
from ..._user_warning import warn_user
from collections.abc import Callable

import numpy as np

from ... import _factories, dtypes
from ...ops import shape as _shape_ops
from ...tensor import Tensor
from ._base_iter import BaseDataLoaderIter
from ._fetch import create_fetcher
from ._worker import WorkerInfo, get_worker_info
from .dataset import IterableDataset
from .sampler import BatchSampler, RandomSampler, Sampler, SequentialSampler

__all__ = ["DataLoader", "WorkerInfo", "default_collate", "default_convert", "get_worker_info"]

_np_str_obj_array_pattern = re.compile(r"[SaUO]")
_default_collate_err_msg_format = (
    "default_collate: batch must contain tensors, numpy arrays, numbers, dicts or lists; found {}"
)


def _as_tensor(value) -> Tensor:
    """A NumPy array or scalar as a tensor of the matching dtype (unsupported unsigned -> int64)."""
    arr = np.asarray(value)
    want = dtypes.from_numpy_dtype(arr.dtype).np
    return Tensor._make(arr if arr.dtype == want else arr.astype(want))


def _stack(batch) -> Tensor:
    first = batch[0]._array
    dt = getattr(first, "dtype", None)
    if not any(t._requires_grad for t in batch) and all(t._array.dtype == dt for t in batch):
        try:
            return Tensor._make(np.stack([t._array for t in batch]))
        except ValueError:
            pass  # shapes differ: let stack raise PyTorch's error
    return _shape_ops.stack(batch, 0)


def _is_numpy(value) -> bool:
    kind = type(value)
    return kind.__module__ == "numpy" and kind.__name__ not in ("str_", "string_", "bytes_")


def default_convert(data):
    """Convert NumPy arrays and scalars inside ``data`` to tensors, keeping the structure; what the
    ``DataLoader`` applies when ``batch_size=None`` (``torch.utils.data.default_convert``)."""
    elem_type = type(data)
    if isinstance(data, Tensor):
        return data
    if _is_numpy(data):
        if isinstance(data, np.ndarray) and _np_str_obj_array_pattern.search(data.dtype.str):
            return data
        return _as_tensor(data)
    if isinstance(data, collections.abc.Mapping):
        try:
            if isinstance(data, collections.abc.MutableMapping):
                clone = copy.copy(data)
                clone.update({key: default_convert(data[key]) for key in data})
                return clone
            return elem_type({key: default_convert(data[key]) for key in data})
        except TypeError:
            return {key: default_convert(data[key]) for key in data}
    if isinstance(data, tuple) and hasattr(data, "_fields"):
        return elem_type(*(default_convert(d) for d in data))
    if isinstance(data, tuple):
        return [default_convert(d) for d in data]
    if isinstance(data, collections.abc.Sequence) and not isinstance(data, (str, bytes)):
        try:
            if isinstance(data, collections.abc.MutableSequence):
                clone = copy.copy(data)
                for i, d in enumerate(data):
                    clone[i] = default_convert(d)
                return clone
            return elem_type([default_convert(d) for d in data])
        except TypeError:
            return [default_convert(d) for d in data]
    return data


def default_collate(batch):
    """Merge a list of samples into a batch (``torch.utils.data.default_collate``).

    Tensors are stacked along a new dim 0 ``(B, *)``; NumPy arrays become tensors and are stacked;
    NumPy scalars keep their dtype; Python floats become float64, ints int64, bools bool; strings
    and bytes stay a sequence; dicts, namedtuples and lists are collated field by field (a tuple
    sample gives a list). Raises TypeError for other types and RuntimeError for lists of unequal
    length.

    Example::

        >>> default_collate([(glassgrad.zeros(3), 0), (glassgrad.ones(3), 1)])
        [tensor([[0., 0., 0.], [1., 1., 1.]]), tensor([0, 1])]
    """
    elem = batch[0]
    elem_type = type(elem)
    if isinstance(elem, Tensor):
        return _stack(batch)
    if isinstance(elem, np.ndarray):
        if _np_str_obj_array_pattern.search(elem.dtype.str) is not None:
            raise TypeError(_default_collate_err_msg_format.format(elem.dtype))
        return default_collate([_as_tensor(b) for b in batch])
    if isinstance(elem, (np.bool_, np.number, np.object_)):
        return _as_tensor(np.asarray(batch))
    if isinstance(elem, float):
        return _factories.tensor(batch, dtype=dtypes.float64)
    if isinstance(elem, int):
        return _factories.tensor(batch)
    if isinstance(elem, (str, bytes)):
        return batch
    if isinstance(elem, collections.abc.Mapping):
        fields = {key: default_collate([d[key] for d in batch]) for key in elem}
        try:
            if isinstance(elem, collections.abc.MutableMapping):
                clone = copy.copy(elem)
                clone.update(fields)
                return clone
            return elem_type(fields)
        except TypeError:
            return fields
    if isinstance(elem, tuple) and hasattr(elem, "_fields"):
        return elem_type(*(default_collate(samples) for samples in zip(*batch)))
    if isinstance(elem, collections.abc.Sequence):
        elem_size = len(elem)
        if not all(len(e) == elem_size for e in batch):
            raise RuntimeError("each element in list of batch should be of equal size")
        transposed = list(zip(*batch))
        if isinstance(elem, tuple):
            return [default_collate(samples) for samples in transposed]
        try:
            if isinstance(elem, collections.abc.MutableSequence):
                clone = copy.copy(elem)
                for i, samples in enumerate(transposed):
                    clone[i] = default_collate(samples)
                return clone
            return elem_type([default_collate(samples) for samples in transposed])
        except TypeError:
            return [default_collate(samples) for samples in transposed]
    raise TypeError(_default_collate_err_msg_format.format(elem_type))


class _InfiniteConstantSampler(Sampler):
    """The index source of an IterableDataset: ``None`` forever."""

    def __iter__(self):
        while True:
            yield None


class _SingleProcessDataLoaderIter(BaseDataLoaderIter):
    """A pass fetched in this process (``num_workers=0``)."""

    def __init__(self, loader: DataLoader) -> None:
        super().__init__(loader)
        if self._timeout != 0:
            raise AssertionError("_SingleProcessDataLoaderIter requires timeout == 0\n"
                                 "glassgrad: timeout applies to worker processes; set "
                                 "num_workers > 0 or timeout=0.")
        self._fetcher = create_fetcher(self._spec)

    def _next_data(self):
        return self._fetcher.fetch(next(self._sampler_iter))


class DataLoader:
    """Iterates a dataset in batches (``torch.utils.data.DataLoader``).

    Each pass (``for batch in loader``) draws indices from the sampler (``shuffle=True``: a
    ``RandomSampler`` seeded from ``generator``, a new order every pass), fetches the samples and
    merges them with ``collate_fn`` (default: ``default_collate``; with ``batch_size=None``,
    ``default_convert`` per sample). ``len(loader)`` is the number of batches. Argument errors
    (ValueError) are PyTorch's. ``num_workers > 0`` fetches in that many worker processes, each
    batch from one worker, handed over in the order ``num_workers=0`` gives; at most
    ``prefetch_factor * num_workers`` batches are in flight; ``persistent_workers`` keeps the
    workers between passes; ``worker_init_fn(worker_id)`` runs first in each worker, where
    ``get_worker_info()`` describes it; worker i is seeded with ``base_seed + i`` as in torch;
    ``timeout`` (seconds) bounds each wait for a batch (RuntimeError); a worker's exception is
    raised again here with its id and traceback; a worker that dies raises RuntimeError;
    ``multiprocessing_context`` is a start method name or context. ``pin_memory`` has no effect
    without an accelerator (a warning, as torch). See NOTE [Worker processes].

    Example::

        >>> ds = TensorDataset(glassgrad.randn(10, 3), glassgrad.arange(10))
        >>> loader = DataLoader(ds, batch_size=4, shuffle=True,
        ...                     generator=glassgrad.Generator().manual_seed(0))
        >>> [x.shape[0] for x, y in loader]
        [4, 4, 2]
    """

    __initialized = False

    def __init__(self, dataset, batch_size: int | None = 1, shuffle: bool | None = None,
                 sampler=None, batch_sampler=None, num_workers: int = 0,
                 collate_fn: Callable | None = None, pin_memory: bool = False,
                 drop_last: bool = False, timeout: float = 0, worker_init_fn=None,
                 multiprocessing_context=None, generator=None, *, prefetch_factor=None,
                 persistent_workers: bool = False, pin_memory_device: str = "",
                 in_order: bool = True) -> None:
        if num_workers < 0:
            raise ValueError(
                "num_workers option should be non-negative; "
                "use num_workers=0 to disable multiprocessing."
            )
        if timeout < 0:
            raise ValueError("timeout option should be non-negative")
        if num_workers == 0 and prefetch_factor is not None:
            raise ValueError(
                "prefetch_factor option could only be specified in multiprocessing."
                "let num_workers > 0 to enable multiprocessing, otherwise set prefetch_factor to "
                "None."
            )
        if num_workers > 0 and prefetch_factor is None:
            prefetch_factor = 2
        elif prefetch_factor is not None and prefetch_factor < 0:
            raise ValueError("prefetch_factor option should be non-negative")
        if persistent_workers and num_workers == 0:
            raise ValueError("persistent_workers option needs num_workers > 0")
        self.dataset = dataset
        self.num_workers = num_workers
        self.prefetch_factor = prefetch_factor
        self.pin_memory = pin_memory
        self.pin_memory_device = pin_memory_device
        self.timeout = timeout
        self.worker_init_fn = worker_init_fn
        self.multiprocessing_context = multiprocessing_context
        self.in_order = in_order

        if isinstance(dataset, IterableDataset):
            if shuffle not in {False, None}:
                raise ValueError(
                    "DataLoader with IterableDataset: expected unspecified shuffle option, but got "
                    f"shuffle={shuffle}"
                )
            if sampler is not None:
                raise ValueError(
                    "DataLoader with IterableDataset: expected unspecified sampler option, but got "
                    f"sampler={sampler}"
                )
            if batch_sampler is not None:
                raise ValueError(
                    "DataLoader with IterableDataset: expected unspecified batch_sampler option, "
                    f"but got batch_sampler={batch_sampler}"
                )
        else:
            shuffle = bool(shuffle)
        if sampler is not None and shuffle:
            raise ValueError("sampler option is mutually exclusive with shuffle")
        if batch_sampler is not None:
            if batch_size != 1 or shuffle or sampler is not None or drop_last:
                raise ValueError(
                    "batch_sampler option is mutually exclusive with batch_size, shuffle, "
                    "sampler, and drop_last"
                )
            batch_size = None
            drop_last = False
        elif batch_size is None and drop_last:
            raise ValueError(
                "batch_size=None option disables auto-batching and is mutually exclusive with "
                "drop_last"
            )
        if sampler is None:
            if isinstance(dataset, IterableDataset):
                sampler = _InfiniteConstantSampler()
            elif shuffle:
                sampler = RandomSampler(dataset, generator=generator)
            else:
                sampler = SequentialSampler(dataset)
        if batch_size is not None and batch_sampler is None:
            batch_sampler = BatchSampler(sampler, batch_size, drop_last)

        self.batch_size = batch_size
        self.drop_last = drop_last
        self.sampler = sampler
        self.batch_sampler = batch_sampler
        self.generator = generator
        if collate_fn is None:
            collate_fn = default_collate if self._auto_collation else default_convert
        self.collate_fn = collate_fn
        self.persistent_workers = persistent_workers
        self._iterator = None
        self._IterableDataset_len_called = None
        self.__initialized = True
        self.check_worker_number_rationality()

    @property
    def multiprocessing_context(self):
        """The ``multiprocessing`` context workers start in (None: the default start method)."""
        return self.__multiprocessing_context

    @multiprocessing_context.setter
    def multiprocessing_context(self, multiprocessing_context) -> None:
        if multiprocessing_context is not None:
            if self.num_workers == 0:
                raise ValueError(
                    "multiprocessing_context can only be used with multi-process loading "
                    f"(num_workers > 0), but got num_workers={self.num_workers}"
                )
            if isinstance(multiprocessing_context, str):
                valid = multiprocessing.get_all_start_methods()
                if multiprocessing_context not in valid:
                    raise ValueError(
                        "multiprocessing_context option should specify a valid start method in "
                        f"{valid!r}, but got multiprocessing_context={multiprocessing_context!r}"
                    )
                multiprocessing_context = multiprocessing.get_context(multiprocessing_context)
            if not isinstance(multiprocessing_context, multiprocessing.context.BaseContext):
                raise TypeError(
                    "multiprocessing_context option should be a valid context object or a string "
                    f"specifying the start method, but got multiprocessing_context="
                    f"{multiprocessing_context}"
                )
        self.__multiprocessing_context = multiprocessing_context

    def __setattr__(self, attr, val) -> None:
        if self.__initialized and attr in (
            "batch_size", "batch_sampler", "sampler", "drop_last", "dataset", "persistent_workers",
        ):
            raise ValueError(
                f"{attr} attribute should not be set after {self.__class__.__name__} is initialized"
            )
        super().__setattr__(attr, val)

    @property
    def _auto_collation(self) -> bool:
        return self.batch_sampler is not None

    @property
    def _index_sampler(self):
        return self.batch_sampler if self._auto_collation else self.sampler

    def _get_iterator(self):
        if self.num_workers == 0:
            return _SingleProcessDataLoaderIter(self)
        from ._multiprocess_iter import MultiProcessingDataLoaderIter

        self.check_worker_number_rationality()
        return MultiProcessingDataLoaderIter(self)

    def __iter__(self):
        # persistent workers live in one iterator for the loader's lifetime, reset each pass
        if self.persistent_workers and self.num_workers > 0:
            if self._iterator is None:
                self._iterator = self._get_iterator()
            else:
                self._iterator._reset(self)
            return self._iterator
        return self._get_iterator()

    def __len__(self) -> int:
        if isinstance(self.dataset, IterableDataset):
            length = self._IterableDataset_len_called = len(self.dataset)
            if self.batch_size is not None:
                if self.drop_last:
                    length = length // self.batch_size
                else:
                    length = math.ceil(length / self.batch_size)
            return length
        return len(self._index_sampler)

    def check_worker_number_rationality(self) -> None:
        """Warn (UserWarning, torch's text) when ``num_workers`` exceeds the CPUs this process
        may use."""
        if not self.num_workers:
            return
        cpuset_checked = hasattr(os, "sched_getaffinity")
        cpus = len(os.sched_getaffinity(0)) if cpuset_checked else os.cpu_count()
        if cpus is not None and self.num_workers <= cpus:
            return
        if cpus is None:
            suggestion = ("DataLoader is not able to compute a suggested max number of worker in "
                          "current system.")
        else:
            suggestion = (f"Our suggested max number of worker in current system is {cpus}"
                          f"{'' if cpuset_checked else ' (`cpuset` is not taken into account)'}"
                          ", which is smaller than what this DataLoader is going to create.")
        warn_user(
            f"This DataLoader will create {self.num_workers} worker processes in total. "
            f"{suggestion} Please be aware that excessive worker creation might get DataLoader "
            "running slow or even freeze, lower the worker number to avoid potential "
            "slowness/freeze if necessary.",
            stacklevel=2,
        )
