"""torch.distributed's exception types (``DistError`` and its subclasses)."""

__all__ = ["DistBackendError", "DistError", "DistNetworkError", "DistStoreError"]


class DistError(RuntimeError):
    """Base of distributed errors (``torch.distributed.DistError``)."""


class DistBackendError(DistError):
    """A backend (here MPI) operation failed (``torch.distributed.DistBackendError``)."""


class DistNetworkError(DistError):
    """A network failure (``torch.distributed.DistNetworkError``)."""


class DistStoreError(DistError):
    """A store failure (``torch.distributed.DistStoreError``)."""
