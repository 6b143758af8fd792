"""``skip_init``: build a module without running its parameter initialisation
(``torch.nn.utils.init.skip_init``)."""

from __future__ import annotations

import inspect

from ..._generator import default_generator
from ..module import Module

__all__ = ["skip_init"]


def skip_init(module_cls, *args, **kwargs):
    """``module_cls(*args, **kwargs)`` with its parameters and buffers left uninitialised
    (``torch.nn.utils.init.skip_init``): their values are unspecified and the random stream is
    untouched, as if nothing had been drawn. RuntimeError when ``module_cls`` is not a Module
    class or takes no ``device`` argument (torch builds it on the meta device).

    NOTE: glassgrad has no meta device, so the module is built normally, the generator state is
    put back and every parameter and buffer gets fresh uninitialised storage (``to_empty``):
    the stream (what later ``randn`` calls give) and the state match torch's; the
    construction time does not shrink."""
    if not (isinstance(module_cls, type) and issubclass(module_cls, Module)):
        raise RuntimeError(f"Expected a Module; got {module_cls}")
    if "device" not in inspect.signature(module_cls).parameters:
        raise RuntimeError("Module must support a 'device' arg to skip initialization")
    final_device = kwargs.pop("device", "cpu")
    kwargs["device"] = final_device
    state = default_generator.get_state()
    try:
        module = module_cls(*args, **kwargs)
    finally:
        default_generator.set_state(state)
    return module.to_empty(device=final_device)
