"""``glassgrad.nn``: modules, parameters, init and functional (``torch.nn``). Re-exports only."""

from . import (  # noqa: F401
    functional,
    init,
    modules,
    utils,
)
from .module import Module  # noqa: F401
from .modules import *
from .parameter import Parameter  # noqa: F401
