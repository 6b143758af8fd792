"""Results whose derivative PyTorch does not define (``x.acosh_()``, ``x.asinh_()``,
``x.atanh_()``, ``torch.detach_copy``): recorded like any op, so the version counter and leaf
checks hold, and backward through them raises PyTorch's error."""

from __future__ import annotations

from .primitive import Primitive


class NoDerivative(Primitive):
    """Writes the precomputed ``value``; backward raises "the derivative for '<what>' is not
    implemented." (PyTorch's NotImplemented node)."""

    node_name = "NotImplemented"

    @staticmethod
    def forward(xp, x, *, value, what):
        return value

    @staticmethod
    def backward(grad, *, value, what):
        if what.startswith("aten::"):  # PyTorch's wording for a functional op without formula
            raise RuntimeError(f"derivative for {what} is not implemented\nglassgrad: as in "
                               "PyTorch; use x.detach().clone() for a copy outside the graph.")
        raise NotImplementedError(
            f"the derivative for '{what}' is not implemented.\nglassgrad: PyTorch defines no "
            "gradient for this in-place op; use the out-of-place form (y = x.acosh()) instead."
        )


class UnsupportedBackward(Primitive):
    """The identity, whose backward raises RuntimeError ``message``: marks a gradient PyTorch
    computes but refuses to differentiate again (scatter_reduce prod with repeated zeros)."""

    @staticmethod
    def forward(xp, x, *, message):
        return x

    @staticmethod
    def backward(grad, *, message):
        raise RuntimeError(message)
