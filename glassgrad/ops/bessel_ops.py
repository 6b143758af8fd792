"""Modified Bessel functions of the first kind with derivatives: ``torch.i0``,
``torch.special.i0e``, ``i1``, ``i1e`` (the ``e`` forms scaled by exp(-|x|)).

Forwards are scipy.special's Cephes kernels; backwards are PyTorch's rules (derivatives.yaml):
i0' = i1, i1' = i0 - i1/x (1/2 at 0), and for the scaled forms the extra -sgn(x) term.
"""

from __future__ import annotations


from . import _scipy_kernel as _k
from ._scipy_kernel import sc
from .elementwise import _unary, where
from .piecewise import Sign


I0 = _unary("I0", lambda xp, x: _k.run(sc.i0, x), lambda g, x: (g * I1.apply(x),))
I0e = _unary("I0e", lambda xp, x: _k.run(sc.i0e, x),
             lambda g, x, r: (g * (I1e.apply(x) - Sign.apply(x) * r),), ("x", "result"),
             node_name="SpecialI0EBackward0")
# NOTE: i1(x)/x -> 1/2 at 0, where the formulas are 0/0
I1 = _unary("I1", lambda xp, x: _k.run(sc.i1, x),
            lambda g, x, r: (g * where(x == 0, 0.5, I0.apply(x) - r / x),), ("x", "result"),
            node_name="SpecialI1Backward0")
I1e = _unary("I1e", lambda xp, x: _k.run(sc.i1e, x),
             lambda g, x, r: (g * where(x == 0, 0.5, I0e.apply(x) - r * (Sign.apply(x) + 1 / x)),),
             ("x", "result"), node_name="SpecialI1EBackward0")


def _bessel_fn(prim, name, kernel, torch_name):
    def fn(input, *, out=None):
        return _k.with_out(prim.apply(_k.float_input(input, name, kernel)), out, name)

    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = (f"``{torch_name}`` elementwise, differentiable to any order; any shape, "
                  "integer/bool input -> default float dtype; complex raises NotImplementedError.")
    return fn


i0 = _bessel_fn(I0, "i0", "i0_vml_cpu", "torch.i0")
i0e = _bessel_fn(I0e, "special_i0e", "i0e_cpu", "torch.special.i0e")
i1 = _bessel_fn(I1, "special_i1", "i1_cpu", "torch.special.i1")
i1e = _bessel_fn(I1e, "special_i1e", "i1e_cpu", "torch.special.i1e")
