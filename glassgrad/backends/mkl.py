"""``glassgrad.backends.mkl``: whether NumPy's BLAS is Intel MKL (``torch.backends.mkl``)."""

from ._blas import loaded_pools


def is_available() -> bool:
    """True when the BLAS NumPy loaded is MKL (threadpoolctl's report); torch's CPU wheels answer
    for their own bundled MKL, glassgrad for the library its matmuls really call."""
    import numpy  # noqa: F401 - NumPy's BLAS must be loaded to be seen

    return any(pool.get("internal_api") == "mkl" for pool in loaded_pools())
