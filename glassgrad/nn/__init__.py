"""``glassgrad.nn``: modules, parameters, init and functional (``torch.nn``). Re-exports only."""

from . import (  # noqa: F401
    functional,
    init,
    modules,
    parallel,
    utils,
)
from .module import Module  # noqa: F401
from .modules import *
from .parameter import Parameter  # noqa: F401
from .parallel import DataParallel  # noqa: F401 - issue 14, lane runtime

# issue 16, lane module
from ._factory_kwargs import factory_kwargs  # noqa: F401
from .parameter import Buffer, UninitializedBuffer, UninitializedParameter  # noqa: F401
# issue 16, lane grid
from . import grad  # noqa: E402,F401 - torch.nn.grad
