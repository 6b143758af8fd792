"""What every pass over a ``DataLoader`` shares, in one process or with workers
(torch's ``_BaseDataLoaderIter``)."""

from __future__ import annotations

from ..._user_warning import warn_user

from ... import _factories, dtypes
from ._fetch import FetchSpec, fast_path, index_iter
from .dataset import IterableDataset


class BaseDataLoaderIter:
    """One pass over a DataLoader (``for batch in loader``); ``len()`` is the number of batches."""

    def __init__(self, loader) -> None:
        from ... import accelerator

        # NOTE: no reference to the loader: a persistent loader holds its iterator, and the
        # iterator's finalizer should run as soon as the loader is dropped, without a GC cycle
        self._dataset, self._index_sampler = loader.dataset, loader._index_sampler
        self._num_workers = loader.num_workers
        self._timeout = loader.timeout
        self._spec = FetchSpec(
            dataset=loader.dataset, iterable=isinstance(loader.dataset, IterableDataset),
            auto_collation=loader._auto_collation, collate_fn=loader.collate_fn,
            drop_last=loader.drop_last, fast_path=fast_path(loader),
            num_workers=loader.num_workers, worker_init_fn=loader.worker_init_fn)
        if loader.pin_memory and not accelerator.is_available():
            warn_user("'pin_memory' argument is set as true but no accelerator is found, then "
                          "device pinned memory won't be used.", stacklevel=3)
        self._sampler_iter = index_iter(self._index_sampler, self._spec)
        # torch: empty((), dtype=int64).random_(generator=loader.generator), one random64
        seed = _factories.empty((), dtype=dtypes.int64).random_(generator=loader.generator)
        self._base_seed = int(seed.item())
        self._num_yielded = 0
        self._len_called = loader._IterableDataset_len_called

    def __iter__(self):
        return self

    def __len__(self) -> int:
        return len(self._index_sampler)

    def _reset(self, loader) -> None:
        self._sampler_iter = index_iter(self._index_sampler, self._spec)
        self._num_yielded = 0
        self._len_called = loader._IterableDataset_len_called

    def _next_data(self):
        raise NotImplementedError

    def __next__(self):
        data = self._next_data()
        self._num_yielded += 1
        if self._spec.iterable and self._len_called is not None \
                and self._num_yielded > self._len_called:
            msg = (f"Length of IterableDataset {self._dataset} was reported to be "
                   f"{self._len_called}(when accessing len(dataloader)), but "
                   f"{self._num_yielded} samples have been fetched. ")
            if self._num_workers > 0:
                msg += ("For multiprocessing data-loading, this could be caused by not properly "
                        "configuring the IterableDataset replica at each worker. Please see "
                        "https://pytorch.org/docs/stable/data.html#torch.utils.data.IterableDataset"
                        " for examples.")
            warn_user(msg, stacklevel=2)
        return data

    def __getstate__(self):
        raise NotImplementedError(f"{type(self).__name__} cannot be pickled")
