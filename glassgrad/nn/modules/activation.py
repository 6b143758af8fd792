"""Activation modules (``torch.nn.ReLU`` ...): thin wrappers over ``nn.functional``.

``inplace=True`` writes the result into the input and returns it, as PyTorch does (the input's
version bumps; a leaf that requires grad is refused).
"""

from __future__ import annotations

from ... import dtypes
from ..._factories import empty
from .. import functional as F
from .. import init
from ..module import Module
from ..parameter import Parameter


def _inplace_suffix(inplace: bool) -> str:
    return ", inplace=True" if inplace else ""


class ReLU(Module):
    """``max(x, 0)`` elementwise, any shape (``torch.nn.ReLU``)."""

    def __init__(self, inplace: bool = False) -> None:
        super().__init__()
        self.inplace = inplace

    def forward(self, input):
        return F.relu(input, inplace=self.inplace)

    def extra_repr(self) -> str:
        return "inplace=True" if self.inplace else ""


class Hardtanh(Module):
    """``clamp(x, min_val, max_val)`` (``torch.nn.Hardtanh``)."""

    def __init__(self, min_val: float = -1.0, max_val: float = 1.0, inplace: bool = False,
                 min_value=None, max_value=None) -> None:
        super().__init__()
        self.min_val = min_val if min_value is None else min_value
        self.max_val = max_val if max_value is None else max_value
        self.inplace = inplace
        if self.max_val <= self.min_val:
            raise AssertionError("glassgrad: Hardtanh needs max_val > min_val")

    def forward(self, input):
        return F.hardtanh(input, self.min_val, self.max_val, self.inplace)

    def extra_repr(self) -> str:
        return f"min_val={self.min_val}, max_val={self.max_val}{_inplace_suffix(self.inplace)}"


class ReLU6(Hardtanh):
    """``min(max(x, 0), 6)`` (``torch.nn.ReLU6``)."""

    def __init__(self, inplace: bool = False) -> None:
        super().__init__(0.0, 6.0, inplace)

    def extra_repr(self) -> str:
        return "inplace=True" if self.inplace else ""


class LeakyReLU(Module):
    """``x`` for ``x > 0`` else ``negative_slope * x`` (``torch.nn.LeakyReLU``)."""

    def __init__(self, negative_slope: float = 0.01, inplace: bool = False) -> None:
        super().__init__()
        self.negative_slope = negative_slope
        self.inplace = inplace

    def forward(self, input):
        return F.leaky_relu(input, self.negative_slope, self.inplace)

    def extra_repr(self) -> str:
        return f"negative_slope={self.negative_slope}{_inplace_suffix(self.inplace)}"


class ELU(Module):
    """``x`` for ``x > 0`` else ``alpha (exp(x) - 1)`` (``torch.nn.ELU``)."""

    def __init__(self, alpha: float = 1.0, inplace: bool = False) -> None:
        super().__init__()
        self.alpha = alpha
        self.inplace = inplace

    def forward(self, input):
        return F.elu(input, self.alpha, self.inplace)

    def extra_repr(self) -> str:
        return f"alpha={self.alpha}{_inplace_suffix(self.inplace)}"


class CELU(ELU):
    """``max(0, x) + min(0, alpha (exp(x / alpha) - 1))`` (``torch.nn.CELU``)."""

    def forward(self, input):
        return F.celu(input, self.alpha, self.inplace)


class SELU(Module):
    """Scaled ELU with the self-normalising constants (``torch.nn.SELU``)."""

    def __init__(self, inplace: bool = False) -> None:
        super().__init__()
        self.inplace = inplace

    def forward(self, input):
        return F.selu(input, self.inplace)

    def extra_repr(self) -> str:
        return "inplace=True" if self.inplace else ""


class GELU(Module):
    """``x * Phi(x)``, exact or ``approximate='tanh'`` (``torch.nn.GELU``)."""

    def __init__(self, approximate: str = "none") -> None:
        super().__init__()
        self.approximate = approximate

    def forward(self, input):
        return F.gelu(input, approximate=self.approximate)

    def extra_repr(self) -> str:
        return f"approximate={self.approximate!r}"


class SiLU(SELU):
    """``x * sigmoid(x)`` (``torch.nn.SiLU``)."""

    def forward(self, input):
        return F.silu(input, self.inplace)


class Mish(SELU):
    """``x * tanh(softplus(x))`` (``torch.nn.Mish``)."""

    def forward(self, input):
        return F.mish(input, self.inplace)


class Hardsigmoid(Module):
    """``relu6(x + 3) / 6`` (``torch.nn.Hardsigmoid``)."""

    def __init__(self, inplace: bool = False) -> None:
        super().__init__()
        self.inplace = inplace

    def forward(self, input):
        return F.hardsigmoid(input, self.inplace)


class Hardswish(Hardsigmoid):
    """``x * relu6(x + 3) / 6`` (``torch.nn.Hardswish``)."""

    def forward(self, input):
        return F.hardswish(input, self.inplace)


def _stateless(name, fn, doc):
    return type(name, (Module,), {"forward": lambda self, input: fn(input), "__doc__": doc,
                                  "__module__": __name__})


Sigmoid = _stateless("Sigmoid", F.sigmoid, "``1 / (1 + exp(-x))`` (``torch.nn.Sigmoid``).")
Tanh = _stateless("Tanh", F.tanh, "``tanh(x)`` (``torch.nn.Tanh``).")
LogSigmoid = _stateless("LogSigmoid", F.logsigmoid, "``log(sigmoid(x))`` (``torch.nn.LogSigmoid``).")
Softsign = _stateless("Softsign", F.softsign, "``x / (1 + |x|)`` (``torch.nn.Softsign``).")
Tanhshrink = _stateless("Tanhshrink", F.tanhshrink, "``x - tanh(x)`` (``torch.nn.Tanhshrink``).")


class Softplus(Module):
    """``log(1 + exp(beta x)) / beta``, linear above ``threshold`` (``torch.nn.Softplus``)."""

    def __init__(self, beta: float = 1.0, threshold: float = 20.0) -> None:
        super().__init__()
        self.beta = beta
        self.threshold = threshold

    def forward(self, input):
        return F.softplus(input, self.beta, self.threshold)

    def extra_repr(self) -> str:
        return f"beta={self.beta}, threshold={self.threshold}"


class Threshold(Module):
    """``x`` where ``x > threshold`` else ``value`` (``torch.nn.Threshold``)."""

    def __init__(self, threshold: float, value: float, inplace: bool = False) -> None:
        super().__init__()
        self.threshold = threshold
        self.value = value
        self.inplace = inplace

    def forward(self, input):
        return F.threshold(input, self.threshold, self.value, self.inplace)

    def extra_repr(self) -> str:
        return f"threshold={self.threshold}, value={self.value}{_inplace_suffix(self.inplace)}"


class Softshrink(Module):
    """Soft thresholding by ``lambd`` (``torch.nn.Softshrink``)."""

    def __init__(self, lambd: float = 0.5) -> None:
        super().__init__()
        self.lambd = lambd

    def forward(self, input):
        return F.softshrink(input, self.lambd)

    def extra_repr(self) -> str:
        return str(self.lambd)


class Hardshrink(Softshrink):
    """Hard thresholding by ``lambd`` (``torch.nn.Hardshrink``)."""

    def forward(self, input):
        return F.hardshrink(input, self.lambd)


class _DimModule(Module):
    def __init__(self, dim: int | None = None) -> None:
        super().__init__()
        self.dim = dim

    def __setstate__(self, state) -> None:
        super().__setstate__(state)
        if not hasattr(self, "dim"):
            self.dim = None

    def extra_repr(self) -> str:
        return f"dim={self.dim}"


class Softmax(_DimModule):
    """Probabilities along ``dim`` (``torch.nn.Softmax``)."""

    def forward(self, input):
        return F.softmax(input, self.dim, _stacklevel=5)


class Softmax2d(Module):
    """Softmax over the channels at every spatial position of (N, C, H, W) or (C, H, W), i.e.
    along dim -3 (``torch.nn.Softmax2d``); ValueError for other ranks."""

    def forward(self, input):
        if input.dim() not in (3, 4):
            raise ValueError(
                f"Softmax2d: expected input to be 3D or 4D, got {input.dim()}D instead")
        return F.softmax(input, -3, _stacklevel=5)


class LogSoftmax(_DimModule):
    """Log-probabilities along ``dim`` (``torch.nn.LogSoftmax``)."""

    def forward(self, input):
        return F.log_softmax(input, self.dim, _stacklevel=5)


class Softmin(_DimModule):
    """``softmax(-x)`` along ``dim`` (``torch.nn.Softmin``)."""

    def forward(self, input):
        return F.softmin(input, self.dim, _stacklevel=5)


class GLU(_DimModule):
    """``a * sigmoid(b)`` over the halves of ``dim`` (``torch.nn.GLU``)."""

    def __init__(self, dim: int = -1) -> None:
        super().__init__(dim)

    def forward(self, input):
        return F.glu(input, self.dim)


class PReLU(Module):
    """Leaky ReLU with a learned slope, one per channel or shared (``torch.nn.PReLU``);
    ``weight (num_parameters,)`` initialised to ``init``."""

    def __init__(self, num_parameters: int = 1, init: float = 0.25, device=None,
                 dtype=None) -> None:
        super().__init__()
        self.num_parameters = num_parameters
        self.init = init
        self.weight = Parameter(empty(num_parameters, dtype=dtype or dtypes.get_default_dtype()))
        self.reset_parameters()

    def reset_parameters(self) -> None:
        init.constant_(self.weight, self.init)

    def forward(self, input):
        return F.prelu(input, self.weight)

    def extra_repr(self) -> str:
        return f"num_parameters={self.num_parameters}"


# NOTE: torch.nn.modules.activation holds MultiheadAttention; glassgrad writes it with the rest of
# attention and names it here too.
from .attention import MultiheadAttention  # noqa: F401
