"""``DataLoader`` and ``default_collate`` (``torch.utils.data.dataloader``, ``..._utils.collate``).

NOTE [In-process workers]: glassgrad never starts worker processes. ``num_workers=N > 0`` is
accepted and runs in this process as torch's N workers would for a map-style dataset: batch k is
fetched by worker ``k % N`` (torch's round-robin), whose ``get_worker_info()`` is worker i of N and
whose global random stream is its own, seeded with the pass's ``base_seed + i`` as in torch's
worker i, so a dataset's random augmentations are torch's and the main stream is untouched;
``worker_init_fn(i)`` is called for each worker when a pass starts (once per loader with
``persistent_workers``). An IterableDataset runs as one worker (0 of 1): torch would give each of
N workers its own replica of the stream. Python's ``random`` and NumPy's global state are not
reseeded. ``pin_memory``, ``timeout``,
``prefetch_factor``, ``multiprocessing_context`` and ``in_order`` are accepted and have no effect.

NOTE [Batch fast path]: with the default collate, a ``TensorDataset`` (or a ``Subset`` of one) is
batched with one fancy index per tensor instead of one ``__getitem__`` per sample plus a stack; the
result is the same list ``[x_batch, y_batch]`` default_collate would build.
"""

from __future__ import annotations

import collections
import copy
import itertools
import math
import re
from collections.abc import Callable

import numpy as np

from ... import _factories, dtypes
from ...ops import shape as _shape_ops
from ...tensor import Tensor
from .dataset import IterableDataset
from .sampler import BatchSampler, RandomSampler, Sampler, SequentialSampler
from ..._user_warning import warn_user

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


class WorkerInfo:
    """What ``get_worker_info()`` returns inside a worker: ``id``, ``num_workers``, ``seed``,
    ``dataset`` (``torch.utils.data.WorkerInfo``); read-only."""

    __initialized = False

    def __init__(self, **kwargs) -> None:
        for k, v in kwargs.items():
            setattr(self, k, v)
        self.__keys = tuple(kwargs.keys())
        self.__initialized = True

    def __setattr__(self, key, val) -> None:
        if self.__initialized:
            raise RuntimeError(f"Cannot assign attributes to {self.__class__.__name__} objects")
        return super().__setattr__(key, val)

    def __repr__(self) -> str:
        items = [f"{k}={getattr(self, k)}" for k in self.__keys]
        return f"{self.__class__.__name__}({', '.join(items)})"


_worker_info: WorkerInfo | None = None


def get_worker_info() -> WorkerInfo | None:
    """Worker information while a ``DataLoader`` with ``num_workers > 0`` runs the dataset, else
    None (``torch.utils.data.get_worker_info``). See NOTE [In-process workers]."""
    return _worker_info


class _InfiniteConstantSampler(Sampler):
    """The index source of an IterableDataset: ``None`` forever."""

    def __iter__(self):
        while True:
            yield None


class _Worker:
    """The state of the in-process worker: its WorkerInfo and its own global random stream."""

    def __init__(self, loader: DataLoader, base_seed: int, wid: int = 0, num: int = 1) -> None:
        seed = base_seed + wid
        self.info = WorkerInfo(id=wid, num_workers=num, seed=seed, dataset=loader.dataset)
        self.seed, self.rng = seed, _factories.Generator().manual_seed(seed)._rng
        if loader.worker_init_fn is not None:
            with self:
                loader.worker_init_fn(wid)

    def __enter__(self):
        global _worker_info
        gen = _factories.default_generator
        self._saved = _worker_info, gen._rng, gen._seed
        _worker_info = self.info
        gen._rng, gen._seed = self.rng, self.seed

    def __exit__(self, *exc):
        global _worker_info
        gen = _factories.default_generator
        self.rng, self.seed = gen._rng, gen._seed
        _worker_info, gen._rng, gen._seed = self._saved

    @staticmethod
    def main_stream(pass_, indices):
        """Advance ``indices`` (the sampler) outside the worker of the batch being fetched
        (``pass_._worker``), on the main stream, as torch's sampler runs in the main process while
        only fetching runs in the workers."""
        it = iter(indices)
        while True:
            worker = pass_._worker
            worker.__exit__()
            try:
                item = next(it)
            except StopIteration:
                return
            finally:
                worker.__enter__()
            yield item


def _workers(loader: DataLoader, base_seed: int) -> list:
    """The pass's in-process workers: N for a map-style dataset, one for an IterableDataset."""
    if isinstance(loader.dataset, IterableDataset):
        return [_Worker(loader, base_seed)]
    return [_Worker(loader, base_seed, i, loader.num_workers) for i in range(loader.num_workers)]


class _DataLoaderIter:
    """One pass over a DataLoader (``for batch in loader``); ``len()`` is the number of batches."""

    def __init__(self, loader: DataLoader) -> None:
        self._loader = loader
        self._num_yielded = 0
        self._len_called = loader._IterableDataset_len_called
        self._worker, self._workers = None, None
        reused = loader.num_workers > 0 and loader.persistent_workers and loader._workers
        if reused:  # torch resets its persistent iterator: no new base seed is drawn
            self._workers = loader._workers
        else:
            # torch: empty((), dtype=int64).random_(generator=loader.generator), one random64
            seed = _factories.empty((), dtype=dtypes.int64).random_(generator=loader.generator)
            self._base_seed = int(seed.item())
        if loader.num_workers > 0:
            if loader.persistent_workers:
                if loader._workers is None:
                    loader._workers = _workers(loader, self._base_seed)
                self._workers = loader._workers
            else:
                self._workers = _workers(loader, self._base_seed)
            self._worker = self._workers[0]
        self._batches = self._generate()

    def __iter__(self):
        return self

    def __len__(self) -> int:
        return len(self._loader._index_sampler)

    def __next__(self):
        if self._worker is None:
            data = next(self._batches)
        else:
            self._worker = self._workers[self._num_yielded % len(self._workers)]
            with self._worker:
                data = next(self._batches)
        self._num_yielded += 1
        if self._len_called is not None and self._num_yielded > self._len_called:
            warn_user(
                f"Length of IterableDataset {self._loader.dataset} was reported to be "
                f"{self._len_called}(when accessing len(dataloader)), but {self._num_yielded} "
                "samples have been fetched. ",
                stacklevel=2,
            )
        return data

    def _generate(self):
        loader = self._loader
        dataset, collate_fn = loader.dataset, loader.collate_fn
        if isinstance(dataset, IterableDataset):
            samples = iter(dataset)
            if loader.batch_size is None:
                for sample in samples:
                    yield collate_fn(sample)
                return
            while True:
                data = list(itertools.islice(samples, loader.batch_size))
                if not data or (loader.drop_last and len(data) < loader.batch_size):
                    return
                yield collate_fn(data)
        main = ((lambda it: it) if self._worker is None
                else (lambda it: _Worker.main_stream(self, it)))
        if not loader._auto_collation:
            for index in main(loader.sampler):
                yield collate_fn(dataset[index])
            return
        gather = None
        if collate_fn is default_collate and hasattr(dataset, "_batch_gather"):
            gather = dataset._batch_gather()
        batches = None
        if gather is not None and isinstance(loader.batch_sampler, BatchSampler):
            batches = loader.batch_sampler._index_batches()
        if batches is None:
            batches = iter(loader.batch_sampler)
        getitems = getattr(dataset, "__getitems__", None)
        for indices in main(batches):
            if gather is not None:
                index_array = np.asarray(indices)
                if index_array.dtype.kind in "iu" and index_array.ndim == 1:
                    yield gather(index_array.astype(np.int64, copy=False))
                    continue
                indices = index_array.tolist()
            if getitems:
                yield collate_fn(getitems(indices))
            else:
                yield collate_fn([dataset[i] for i in indices])


class DataLoader:
    """Iterates a dataset in batches (``torch.utils.data.DataLoader``).

    Each pass (``for batch in loader``) draws indices from the sampler (``shuffle=True``: a
    ``RandomSampler`` seeded from ``generator``, a new order every pass), fetches the samples and
    merges them with ``collate_fn`` (default: ``default_collate``; with ``batch_size=None``,
    ``default_convert`` per sample). ``len(loader)`` is the number of batches. Argument errors
    (ValueError) are PyTorch's. ``num_workers > 0`` runs in this process: see NOTE [In-process
    workers]; a TensorDataset is batched by fancy indexing: NOTE [Batch fast path].

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
        if multiprocessing_context is not None and num_workers == 0:
            raise ValueError(
                "multiprocessing_context can only be used with multi-process loading "
                f"(num_workers > 0), but got num_workers={num_workers}"
            )
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
        self._workers = None
        self._IterableDataset_len_called = None
        self.__initialized = True

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

    def __iter__(self) -> _DataLoaderIter:
        return _DataLoaderIter(self)

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
        """No-op: glassgrad starts no worker processes (NOTE [In-process workers])."""
