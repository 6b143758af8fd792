"""``torch.special`` as a namespace (issue 15, lane special): every public name torch has,
its data (``Tensor``, ``common_args``, ``multi_dim_common``), and the functions PyTorch does not
differentiate (their results do not require grad, on both libraries)."""

from __future__ import annotations

import types

import numpy as np
import pytest
import torch

import glassgrad
from tests.autograd_oracle import same_error

PUBLIC = sorted(n for n in dir(torch.special) if not n.startswith("_")
                and not isinstance(getattr(torch.special, n), types.ModuleType))


def test_every_torch_special_name_exists():
    missing = [n for n in PUBLIC if not hasattr(glassgrad.special, n)]
    assert not missing, missing


def test_data_names():
    assert glassgrad.special.Tensor is glassgrad.Tensor and torch.special.Tensor is torch.Tensor
    for name in ("common_args", "multi_dim_common"):
        ours, theirs = getattr(glassgrad.special, name), getattr(torch.special, name)
        assert ours.keys() == theirs.keys()
        assert all(isinstance(v, str) and v for v in ours.values())
    # docstring templates written against torch's keys format with glassgrad's
    template = "Args:\n    {input}\n    {dim}\n    {keepdim}"
    assert "dim" in template.format(**glassgrad.special.multi_dim_common)


NONDIFF = ["airy_ai", "bessel_j0", "bessel_j1", "bessel_y0", "bessel_y1", "modified_bessel_i0",
           "modified_bessel_i1", "modified_bessel_k0", "modified_bessel_k1",
           "scaled_modified_bessel_k0", "scaled_modified_bessel_k1", "spherical_bessel_j0"]


@pytest.mark.parametrize("name", NONDIFF + ["chebyshev_polynomial_t", "hermite_polynomial_h",
                                            "legendre_polynomial_p", "laguerre_polynomial_l"])
def test_not_differentiable_as_in_torch(name):
    def run(lib):
        x = lib.tensor([0.3, 0.7], dtype=lib.float64, requires_grad=True)
        fn = getattr(lib.special, name)
        out = fn(x) if name in NONDIFF else fn(x, 3)
        assert not out.requires_grad and out.grad_fn is None
        out.sum().backward()

    same_error(run, RuntimeError, "element 0 of tensors does not require grad")


@pytest.mark.parametrize("name", ["bessel_j0", "chebyshev_polynomial_u"])
def test_not_differentiable_half_refused(name):
    def run(lib):
        x = lib.tensor([0.3, 0.7], dtype=lib.float16)
        fn = getattr(lib.special, name)
        return fn(x) if name == "bessel_j0" else fn(x, 2)

    same_error(run, NotImplementedError, f'"{name}_cpu" not implemented for \'Half\'')


def test_bessel_accuracy_beyond_torch():
    """Where torch's float64 Bessel kernels are off by ~3e-7, glassgrad (SciPy) is exact to
    rounding: the value of J0 at 5.18270129 from mpmath, -0.116220836258601."""
    mpmath = pytest.importorskip("mpmath")
    x = 5.18270129
    ours = glassgrad.special.bessel_j0(glassgrad.tensor(x, dtype=glassgrad.float64)).item()
    assert abs(ours - float(mpmath.besselj(0, x))) < 1e-15
    theirs = torch.special.bessel_j0(torch.tensor(x, dtype=torch.float64)).item()
    np.testing.assert_allclose(ours, theirs, atol=1e-6)


def test_ldexp_gradient_negative_integer_exponent():
    """torch's LdexpBackward0 computes 2 ** other in integer arithmetic, so a negative integer
    exponent gives a 0 gradient (a silent wrong number); glassgrad gives 2 ** other, the value
    torch gives for the same exponent as a float."""
    x_t = torch.tensor([1.5, -0.5, 2.0], dtype=torch.float64, requires_grad=True)
    (expected,) = torch.autograd.grad(torch.ldexp(x_t, torch.tensor([-2.0, 3.0, -1.0],
                                                                     dtype=torch.float64)).sum(),
                                      x_t)
    x = glassgrad.tensor([1.5, -0.5, 2.0], dtype=glassgrad.float64, requires_grad=True)
    out = glassgrad.ldexp(x, glassgrad.tensor([-2, 3, -1]))
    (ours,) = glassgrad.autograd.grad(out.sum(), x)
    np.testing.assert_allclose(ours.numpy(), expected.numpy())
    assert out.dtype == glassgrad.float64


def test_frexp_named_tuple():
    x = [0.0, -3.5, 1e-300, 7.0]
    for lib in (torch, glassgrad):
        result = lib.frexp(lib.tensor(x, dtype=lib.float64))
        assert len(result) == 2 and result[0] is result.mantissa
        assert result.exponent.dtype == lib.int32
    ours, theirs = glassgrad.frexp(glassgrad.tensor(x, dtype=glassgrad.float64)), torch.frexp(
        torch.tensor(x, dtype=torch.float64))
    np.testing.assert_array_equal(ours.exponent.numpy(), theirs.exponent.numpy())
    np.testing.assert_array_equal(ours.mantissa.numpy(), theirs.mantissa.numpy())


# expression on `m` (the library), x (float64, requires grad) and y (float64)
GRAD_FN = [
    "m.lgamma(x)", "m.digamma(x)", "m.polygamma(2, x)", "m.polygamma(1, x)", "m.mvlgamma(x + 2, 2)",
    "m.igamma(y, x)", "m.special.gammaincc(y, x)", "m.special.zeta(y + 1, x)", "m.i0(x)",
    "m.special.i0e(x)", "m.special.i1(x)", "m.special.i1e(x)", "m.special.ndtri(x / 3)",
    "m.special.log_ndtr(x)", "m.special.erfcx(x)", "m.special.entr(x)", "m.sinc(x)", "m.exp2(x)",
    "m.special.xlog1py(x, x)", "m.logaddexp(x, y)", "m.logaddexp2(x, y)", "m.hypot(x, y)",
    "m.copysign(x, y)", "m.copysign(x, -1.0)", "m.heaviside(x, x)", "m.nextafter(x, y)",
    "m.fmax(x, y)", "m.fmin(x, y)", "m.nan_to_num(x)", "m.frexp(x)[0]", "m.float_power(x, 2)",
    "m.ldexp(x, y)", "m.deg2rad(x)", "m.rad2deg(x)", "m.special.multigammaln(x + 2, 2)",
]


def test_grad_fn_names_match_torch():
    """The nodes a user prints read as torch's (``special.ndtr`` excepted: torch's composite ends
    in MulBackward1, its Scalar overload of mul, glassgrad's in MulBackward0)."""
    for expr in GRAD_FN:
        names = []
        for m in (torch, glassgrad):
            x = m.tensor([0.3, 0.7], dtype=m.float64, requires_grad=True)
            y = m.tensor([1.3, 2.0], dtype=m.float64)
            names.append(type(eval(expr, {"m": m, "x": x, "y": y}).grad_fn).__name__)
        assert names[1] == names[0], expr
