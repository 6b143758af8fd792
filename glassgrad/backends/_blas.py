"""What threadpoolctl sees loaded in this process: NumPy's BLAS and any OpenMP runtime."""

from __future__ import annotations


def loaded_pools() -> list[dict]:
    """threadpoolctl's ``threadpool_info()``, or ``[]`` without threadpoolctl."""
    try:
        from threadpoolctl import threadpool_info
    except ImportError:
        return []
    return threadpool_info()
