"""glassgrad.utils.data: datasets, samplers and the DataLoader (``torch.utils.data``).

``datasets`` adds real data that needs no download: ``load_digits`` (scikit-learn's 8x8 digits)
and ``MNIST``/``IDXDataset``/``read_idx`` for IDX files in a folder you give.
"""

from . import datasets  # noqa: F401
from .dataloader import (
    DataLoader,
    WorkerInfo,
    default_collate,
    default_convert,
    get_worker_info,
)
from .dataset import (
    ChainDataset,
    ConcatDataset,
    Dataset,
    IterableDataset,
    StackDataset,
    Subset,
    TensorDataset,
    random_split,
)
from .sampler import (
    BatchSampler,
    RandomSampler,
    Sampler,
    SequentialSampler,
    SubsetRandomSampler,
    WeightedRandomSampler,
)

__all__ = [
    "BatchSampler", "ChainDataset", "ConcatDataset", "DataLoader", "Dataset", "IterableDataset",
    "RandomSampler", "Sampler", "SequentialSampler", "StackDataset", "Subset",
    "SubsetRandomSampler", "TensorDataset", "WeightedRandomSampler", "WorkerInfo",
    "default_collate", "default_convert", "get_worker_info", "random_split",
]

# issue 17, lane dist
from . import distributed  # noqa: E402,F401
from .distributed import DistributedSampler  # noqa: E402,F401

__all__ += ["DistributedSampler"]
