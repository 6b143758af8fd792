"""``glassgrad.autograd``: backward, grad, grad modes, custom Functions, anomaly detection,
functional jacobian/hessian, gradcheck (``torch.autograd``)."""

from . import (  # noqa: F401
    _gradcheck_forward,
    forward_ad,
    function,
    functional,
    graph,
)
from .anomaly import (  # noqa: F401
    detect_anomaly,
    is_anomaly_check_nan_enabled,
    is_anomaly_enabled,
    set_detect_anomaly,
)
from .engine import backward, grad  # noqa: F401
from .function import Function, FunctionCtx, once_differentiable  # noqa: F401
from .grad_mode import (  # noqa: F401
    enable_grad,
    inference_mode,
    is_grad_enabled,
    is_inference_mode_enabled,
    no_grad,
    set_grad_enabled,
)
from .gradcheck import GradcheckError, gradcheck, gradgradcheck  # noqa: F401
from .variable import Variable  # noqa: F401
# issue 15, lane agrad
from collections.abc import Mapping, Sequence  # noqa: F401,E402 - as torch.autograd's imports
from typing import cast, overload  # noqa: F401,E402 - (torch's module namespace has them too)

from ._autograd_names import (  # noqa: F401,E402
    SavedTensor,
    handle_torch_function,
    has_torch_function,
    is_multithreading_enabled,
    is_tensor_like,
    is_view_replay_enabled,
    kineto_available,
    set_multithreading_enabled,
)
import glassgrad as torch  # noqa: E402,F401 - torch.autograd.torch, as in torch's namespace
from ._grad_layout import enforce_grad_layout_policy  # noqa: E402,F401
# issue 15, lane prof
from . import profiler, profiler_util  # noqa: F401,E402
from .profiler import ProfilerActivity, ProfilerConfig, ProfilerState  # noqa: F401,E402
from .profiler_util import DeviceType  # noqa: F401,E402
# issue 15: the legacy nested-I/O function (torch's own instances cannot be called in 2.x)
from ._nested_io import NestedIOFunction  # noqa: F401,E402
# issue 19, lane whynone: why is .grad None
from .why_none import explain_grad, GradExplanation  # noqa: F401,E402
