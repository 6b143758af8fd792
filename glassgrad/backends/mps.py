"""``glassgrad.backends.mps``: Apple's Metal backend is not built in (``torch.backends.mps``)."""


def is_available() -> bool:
    """False: no MPS device (``torch.backends.mps.is_available``)."""
    return False


def is_built() -> bool:
    """False: glassgrad is not built with MPS (``torch.backends.mps.is_built``)."""
    return False
