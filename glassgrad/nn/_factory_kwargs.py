"""``factory_kwargs`` (``torch.nn.factory_kwargs``): the ``device``/``dtype``/``memory_format``
arguments a module passes on to factory functions, checked."""

from __future__ import annotations

_SIMPLE_KEYS = ("device", "dtype", "memory_format")


def factory_kwargs(kwargs) -> dict:
    """A new dict of the factory arguments in ``kwargs`` (``torch.nn.factory_kwargs``).

    ``kwargs`` may hold ``device``, ``dtype``, ``memory_format`` and a ``factory_kwargs`` dict of
    the same (for a signature whose own ``dtype`` means something else). TypeError "unexpected
    kwargs {...}" for any other key, "<key> specified twice, in **kwargs and in factory_kwargs".

    Example::

        >>> glassgrad.nn.factory_kwargs({"dtype": glassgrad.float64})
        {'dtype': glassgrad.float64}
    """
    if kwargs is None:
        return {}
    expected = {*_SIMPLE_KEYS, "factory_kwargs"}
    if not kwargs.keys() <= expected:
        raise TypeError(f"unexpected kwargs {kwargs.keys() - expected}")
    out = dict(kwargs.get("factory_kwargs", {}))
    for key in _SIMPLE_KEYS:
        if key in kwargs:
            if key in out:
                raise TypeError(f"{key} specified twice, in **kwargs and in factory_kwargs")
            out[key] = kwargs[key]
    return out
