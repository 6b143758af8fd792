"""``torch.nn.modules.linear_cross_entropy_options``: the path torch gives the options class."""

from .._functional_linear_ce import LinearCrossEntropyOptions  # noqa: F401

__all__ = ["LinearCrossEntropyOptions"]
