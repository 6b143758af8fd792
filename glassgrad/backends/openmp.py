"""``glassgrad.backends.openmp``: whether an OpenMP runtime is loaded
(``torch.backends.openmp``)."""

from ._blas import loaded_pools


def is_available() -> bool:
    """True when threadpoolctl sees an OpenMP runtime in the process (NumPy's pip OpenBLAS uses
    pthreads, so usually False; torch answers for the OpenMP it is built with)."""
    import numpy  # noqa: F401 - NumPy's BLAS must be loaded to be seen

    return any(pool.get("user_api") == "openmp" for pool in loaded_pools())
