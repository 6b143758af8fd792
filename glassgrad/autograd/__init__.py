"""``glassgrad.autograd``: backward, grad, grad modes, custom Functions, gradcheck (``torch.autograd``)."""

from . import graph  # noqa: F401
from .engine import backward, grad  # noqa: F401
from .grad_mode import (  # noqa: F401
    enable_grad,
    inference_mode,
    is_grad_enabled,
    no_grad,
    set_grad_enabled,
)
from .gradcheck import GradcheckError, gradcheck, gradgradcheck  # noqa: F401,E402
