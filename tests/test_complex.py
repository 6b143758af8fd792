"""Complex tensors against torch: dtypes and promotion, printing, real/imag views, conj bits,
view_as_real/complex, errors, and the gradient convention of backward."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import glassgrad
from tests.error_oracle import assert_raises_like_torch


def _both(fn):
    return fn(glassgrad), fn(torch)


def _same(a, b):
    assert str(a.dtype).split(".")[-1] == str(b.dtype).split(".")[-1]
    np.testing.assert_allclose(a.detach().resolve_conj().numpy(),
                               b.detach().resolve_conj().numpy(), rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("make", [
    lambda m: m.tensor([1 + 2j, 3.5 - 1j]),
    lambda m: m.tensor([1, 2j]),
    lambda m: m.zeros(2, 3, dtype=m.cfloat),
    lambda m: m.ones(2) + m.tensor([1j, 2]),
    lambda m: m.ones(2, dtype=m.float64) + m.tensor([1j, 2]),
    lambda m: m.ones(2, dtype=m.float64) * 1j,
    lambda m: m.ones(2, dtype=m.float64) + m.tensor(1j),
    lambda m: m.ones(2) + m.tensor(1j, dtype=m.cdouble),
    lambda m: m.arange(3) * (1 + 1j),
    lambda m: m.ones(2).cfloat() + m.ones(2).cdouble(),
    lambda m: m.complex(m.ones(2), m.zeros(2)),
    lambda m: m.polar(m.tensor([2.0, 1.0]), m.tensor([0.5, -1.0])),
    lambda m: m.view_as_complex(m.arange(6.0).reshape(3, 2)),
    lambda m: m.view_as_real(m.tensor([1 + 2j, 3j])),
    lambda m: m.tensor([1 + 2j, -3j]).abs(),
    lambda m: m.tensor([1 + 2j, -3j]).angle(),
    lambda m: m.tensor([-1.0, 2.0]).angle(),
    lambda m: m.tensor([1 + 2j, 0j]).sgn(),
    lambda m: m.tensor([1 + 2j]).conj() * 2,
    lambda m: m.tensor([[1 + 2j, 3j]]).mH,
])
def test_values_and_dtypes(make):
    _same(*_both(make))


def test_dtype_attributes():
    for name in ("complex64", "complex128"):
        ours, theirs = getattr(glassgrad, name), getattr(torch, name)
        assert (ours.is_complex, ours.is_floating_point, ours.itemsize) == (
            theirs.is_complex, theirs.is_floating_point, theirs.itemsize)
        assert ours.to_real().name == str(theirs.to_real()).split(".")[-1]
    assert glassgrad.cfloat is glassgrad.complex64 and glassgrad.cdouble is glassgrad.complex128
    assert glassgrad.float64.to_complex() is glassgrad.complex128
    assert glassgrad.promote_types(glassgrad.float16, glassgrad.complex64) is glassgrad.complex64
    x = glassgrad.ones(2, dtype=glassgrad.cfloat)
    assert x.type() == torch.ones(2, dtype=torch.cfloat).type()
    glassgrad.set_default_dtype(glassgrad.float64)
    try:
        assert glassgrad.tensor([1j]).dtype is glassgrad.complex128
    finally:
        glassgrad.set_default_dtype(glassgrad.float32)


@pytest.mark.parametrize("make", [
    lambda m: m.tensor([1 + 2j, 3.5 - 1j]),
    lambda m: m.tensor(1 + 2j),
    lambda m: m.tensor([[1e10 + 1j, 2]]),
    lambda m: m.tensor([1 + 2j], dtype=m.cdouble, requires_grad=True),
    lambda m: m.tensor([-0.0 - 0.0j, 1.5 - 2.25j, float("nan") + 1j]),
    lambda m: m.tensor(np.arange(30) * (1 + 0.5j)).reshape(3, 10),
])
def test_repr(make):
    ours, theirs = _both(lambda m: repr(make(m)))
    assert ours.replace("glassgrad.", "torch.") == theirs


def test_real_imag_are_views():
    for m in (glassgrad, torch):
        x = m.tensor([1 + 2j, 3 - 1j])
        x.real.mul_(2)
        x.imag[0] = 5.0
        x.real = m.tensor([7.0, 8.0])
        assert x.tolist() == [7 + 5j, 8 - 1j]
        r = m.view_as_real(x)
        r[1, 1] = 4.0
        assert x.tolist() == [7 + 5j, 8 + 4j]


def test_conj_bits():
    for m in (glassgrad, torch):
        x = m.tensor([1 + 2j])
        y = x.conj()
        assert y.is_conj() and not m.resolve_conj(y).is_conj() and not y.conj().is_conj()
        assert not m.conj_physical(x).is_conj() and not x.is_neg() and not y.is_neg()
        r = m.ones(2)
        assert r.conj() is r and r.real is r and m.resolve_neg(r) is r
        assert m.is_complex(x) and not r.is_complex()
        z = x.clone()
        z.conj_physical_()
        assert z.tolist() == [1 - 2j]
        s = m.tensor([3 - 4j])
        s.sgn_()
        np.testing.assert_allclose(s.numpy(), [0.6 - 0.8j], rtol=1e-6)


@pytest.mark.parametrize("bad", [
    lambda m: m.ones(2).imag,
    lambda m: m.tensor([1j]) < m.tensor([2j]),
    lambda m: m.tensor([1j]) >= 1,
    lambda m: m.view_as_complex(m.ones(2, 3)),
    lambda m: m.view_as_complex(m.ones(2, 2).t()),
    lambda m: m.view_as_complex(m.ones(2, 2, dtype=m.int64)),
    lambda m: m.view_as_real(m.ones(2)),
    lambda m: m.view_as_real(m.tensor([1j]).conj()),
    lambda m: m.complex(m.ones(2), m.ones(2, dtype=m.float64)),
    lambda m: m.complex(m.ones(2, dtype=m.int64), m.ones(2, dtype=m.int64)),
    lambda m: m.tensor(1j, requires_grad=True).backward(),
    lambda m: m.tensor([1j]).bitwise_and(m.tensor([1j])),
])
def test_errors(bad):
    assert_raises_like_torch(bad)


def test_complex_to_real_warns_and_keeps_real_part():
    with pytest.warns(UserWarning, match="discards the imaginary part"):
        y = glassgrad.tensor([1 + 2j]).float()
    assert y.tolist() == [1.0]


def test_gradient_convention():
    """z.grad is dL/dx + i dL/dy for a real loss: the same numbers as torch, a real input's
    gradient is the real part, and gradcheck's finite differences agree."""
    rng = np.random.default_rng(0)
    a = rng.standard_normal(4) + 1j * rng.standard_normal(4)
    w = rng.standard_normal(4)
    grads = []
    for m in (glassgrad, torch):
        z = m.tensor(a, requires_grad=True)
        r = m.tensor(w, requires_grad=True)
        loss = (z * z.conj() * r + z.exp() * 1j).abs().sum() + (z * r).imag.sum()
        loss.backward()
        grads.append((z.grad.numpy(), r.grad.numpy(), str(z.grad.dtype), str(r.grad.dtype)))
    (gz, gr, dz, dr), (tz, tr, ez, er) = grads
    np.testing.assert_allclose(gz, tz, rtol=1e-10)
    np.testing.assert_allclose(gr, tr, rtol=1e-10)
    assert dz.split(".")[-1] == ez.split(".")[-1] and dr.split(".")[-1] == er.split(".")[-1]

    def f(x):
        return glassgrad.view_as_real((x * x + x.conj() * 2).exp())

    x = glassgrad.tensor(a * 0.3, requires_grad=True)
    z = glassgrad.tensor(a.real * 0.3, requires_grad=True)
    assert glassgrad.autograd.gradcheck(lambda t: f(glassgrad.complex(t, t * 2)), (z,))
    assert glassgrad.autograd.gradgradcheck(lambda t: f(glassgrad.complex(t, t * 2)), (z,))
    assert x.grad is None


_Z = np.array([[1 + 2j, -0.5 + 1j, 3 - 1j], [0.25 - 2j, -1 - 1j, 2 + 0.5j]], dtype=np.complex64)


@pytest.mark.parametrize("bad", [  # NOTE [Complex refusals]: torch's exception and key phrase
    lambda m, x: m.relu(x), lambda m, x: x.clamp(0, 1), lambda m, x: x.floor(),
    lambda m, x: x.ceil(), lambda m, x: x.trunc(), lambda m, x: x.round(), lambda m, x: x.frac(),
    lambda m, x: x.sign(), lambda m, x: m.atan2(x, x), lambda m, x: x % 2,
    lambda m, x: m.fmod(x, 2), lambda m, x: x // 2, lambda m, x: x.erf(),
    lambda m, x: m.maximum(x, x), lambda m, x: m.minimum(x, x), lambda m, x: x.max(),
    lambda m, x: x.min(0), lambda m, x: x.amax(), lambda m, x: x.argmax(),
    lambda m, x: x.argmin(0), lambda m, x: x.sort(), lambda m, x: x.topk(2),
    lambda m, x: m.unique(x), lambda m, x: m.softmax(x, 0), lambda m, x: m.log_softmax(x, -1),
    lambda m, x: m.signbit(x), lambda m, x: x.clone().abs_(), lambda m, x: m.arange(
        3, dtype=m.cfloat), lambda m, x: float(x[0, 0]), lambda m, x: int(x[0, 0]),
    lambda m, x: m.zeros(2).fill_(1j), lambda m, x: m.full((2,), 1j, dtype=m.float32),
])
def test_refusals(bad):
    assert_raises_like_torch(lambda m: bad(m, m.tensor(_Z)))


@pytest.mark.parametrize("make", [
    lambda m, x: x.var(), lambda m, x: x.std(0), lambda m, x: x.norm(),
    lambda m, x: m.var_mean(x, 1)[0], lambda m, x: m.isreal(m.cat([x, x.real.cfloat()])),
    lambda m, x: x.adjoint(), lambda m, x: x.clone().fill_(1j), lambda m, x: m.full((2,), 1j),
    lambda m, x: m.full((2,), 1 + 1j, dtype=m.cdouble), lambda m, x: x.masked_fill(
        x.real > 0, 2 - 1j), lambda m, x: x ** (1 + 1j), lambda m, x: 2 ** x,
    lambda m, x: m.zeros(2).fill_(3 + 0j), lambda m, x: m.tensor(complex(x[0, 0])),
    lambda m, x: m.tensor(float(x[0, 0].real.cfloat())), lambda m, x: m.sum(x, 1, keepdim=True),
    lambda m, x: m.einsum("ij,kj->ik", x, x), lambda m, x: m.where(x.real > 0, x, 0),
])
def test_complex_values_of_real_valued_ops(make):
    _same(make(glassgrad, glassgrad.tensor(_Z)), make(torch, torch.tensor(_Z)))


def test_var_and_norm_gradients():
    grads = []
    for m in (glassgrad, torch):
        z = m.tensor(_Z.astype(np.complex128), requires_grad=True)
        (z.var() + z.norm() + z.std(1).sum()).backward()
        grads.append(z.grad.numpy())
    np.testing.assert_allclose(grads[0], grads[1], rtol=1e-10)


def test_gradcheck_on_complex_inputs_checks_both_parts():
    z = glassgrad.tensor(np.array([1 + 2j, 0.5 - 1j]), requires_grad=True)
    for f in (lambda z: (z * z).abs(), lambda z: z * z.conj() * 1j, glassgrad.fft.fft):
        assert glassgrad.autograd.gradcheck(f, (z,))
        assert glassgrad.autograd.gradgradcheck(f, (z,))

    class MissingConj(glassgrad.autograd.Function):  # d(z^2) without the conjugate: wrong
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * x

        @staticmethod
        def backward(ctx, grad):
            (x,) = ctx.saved_tensors
            return grad * 2 * x

    assert not glassgrad.autograd.gradcheck(MissingConj.apply, (z,), raise_exception=False)
    t = torch.tensor(np.array([1 + 2j, 0.5 - 1j]), requires_grad=True)
    assert torch.autograd.gradcheck(lambda z: (z * z).abs(), (t,))


def test_conj_physical_in_place():
    for m in (glassgrad, torch):
        x = m.tensor([1 + 2j, 3 - 1j])
        assert m.conj_physical_(x) is x and x.tolist() == [1 - 2j, 3 + 1j]
        r = m.ones(2)
        assert m.conj_physical_(r) is r


@pytest.mark.parametrize("n", [3, 20])
def test_complex_random_numbers_are_torchs(n):
    for draw in ("rand", "randn"):
        values = []
        for m in (glassgrad, torch):
            m.manual_seed(0)
            values.append(getattr(m, draw)(n, 2, dtype=m.cfloat))
            m.manual_seed(0)
            values.append(getattr(m, draw)(n, dtype=m.cdouble))
        for ours, theirs in zip(values[:2], values[2:]):
            _same(ours, theirs)


@pytest.mark.parametrize("make", [
    lambda m, z: m.logsumexp(z, 1), lambda m, z: m.logsumexp(z, (0, 1), keepdim=True),
    lambda m, z: z.sigmoid(), lambda m, z: m.sigmoid(z),
])
def test_composed_complex_ops_and_their_gradients(make):
    results = []
    for m in (glassgrad, torch):
        z = m.tensor(_Z.astype(np.complex128), requires_grad=True)
        y = make(m, z)
        (grad,) = m.autograd.grad(m.view_as_real(y).sum() + y.abs().sum(), z)
        results.append((y, grad))
    for ours, theirs in zip(*results):
        _same(ours, theirs)
