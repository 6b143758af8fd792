"""Dense layers: ``Identity``, ``Linear``, ``Bilinear`` (``torch.nn.Linear`` ...) and
``NonDynamicallyQuantizableLinear`` (``torch.nn.modules.linear``)."""

from __future__ import annotations

import math

from ... import dtypes
from ..._factories import empty
from .. import functional as F
from .. import init
from ..module import Module
from ..parameter import Parameter


def _empty(shape, dtype):
    return empty(*shape, dtype=dtype if dtype is not None else dtypes.get_default_dtype())


class Identity(Module):
    """Returns its input unchanged; accepts and ignores any constructor arguments
    (``torch.nn.Identity``)."""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__()

    def forward(self, input):
        return input


class Linear(Module):
    """``y = x W^T + b``: ``(*, in_features) -> (*, out_features)`` (``torch.nn.Linear``).

    ``weight (out_features, in_features)`` ~ kaiming_uniform(a=sqrt(5)), i.e.
    U(-1/sqrt(in), 1/sqrt(in)); ``bias (out_features,)`` ~ U(-1/sqrt(in), 1/sqrt(in)).
    """

    def __init__(self, in_features: int, out_features: int, bias: bool = True, device=None,
                 dtype=None) -> None:
        super().__init__()
        self.in_features = in_features
        self.out_features = out_features
        self.weight = Parameter(_empty((out_features, in_features), dtype))
        if bias:
            self.bias = Parameter(_empty((out_features,), dtype))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        init.kaiming_uniform_(self.weight, a=math.sqrt(5))
        if self.bias is not None:
            fan_in, _ = init._calculate_fan_in_and_fan_out(self.weight)
            bound = 1 / math.sqrt(fan_in) if fan_in > 0 else 0
            init.uniform_(self.bias, -bound, bound)

    def forward(self, input):
        # NOTE [Hot path]: a plain Linear reads its weights straight from ``_parameters`` (each
        # ``self.weight`` is a Module.__getattr__ call, ~0.5 us); a subclass (which may define
        # them as properties) and a weight moved out of ``_parameters`` go through getattr.
        params = self._parameters
        if type(self) is Linear and "weight" in params and "bias" in params:
            return F.linear(input, params["weight"], params["bias"])
        return F.linear(input, self.weight, self.bias)

    def extra_repr(self) -> str:
        return (f"in_features={self.in_features}, out_features={self.out_features}, "
                f"bias={self.bias is not None}")


class NonDynamicallyQuantizableLinear(Linear):
    """``MultiheadAttention.out_proj``
    (``torch.nn.modules.linear.NonDynamicallyQuantizableLinear``): a plain ``Linear`` under
    PyTorch's class name, so the repr and state-dict keys (``out_proj.weight``, ``out_proj.bias``)
    match."""


class Bilinear(Module):
    """``y = x1^T A x2 + b``: ``(*, in1), (*, in2) -> (*, out)`` (``torch.nn.Bilinear``);
    weight and bias ~ U(-1/sqrt(in1), 1/sqrt(in1))."""

    def __init__(self, in1_features: int, in2_features: int, out_features: int,
                 bias: bool = True, device=None, dtype=None) -> None:
        super().__init__()
        self.in1_features = in1_features
        self.in2_features = in2_features
        self.out_features = out_features
        self.weight = Parameter(_empty((out_features, in1_features, in2_features), dtype))
        if bias:
            self.bias = Parameter(_empty((out_features,), dtype))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        bound = 1 / math.sqrt(self.weight.size(1))
        init.uniform_(self.weight, -bound, bound)
        if self.bias is not None:
            init.uniform_(self.bias, -bound, bound)

    def forward(self, input1, input2):
        return F.bilinear(input1, input2, self.weight, self.bias)

    def extra_repr(self) -> str:
        return (f"in1_features={self.in1_features}, in2_features={self.in2_features}, "
                f"out_features={self.out_features}, bias={self.bias is not None}")
