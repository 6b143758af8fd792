"""``torch.distributed.nn``: collectives that autograd differentiates (see functional.py)."""

from .functional import all_gather, all_reduce, broadcast, reduce, reduce_scatter

__all__ = ["all_gather", "all_reduce", "broadcast", "reduce", "reduce_scatter"]
