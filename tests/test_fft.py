"""glassgrad.fft against torch.fft: dtypes, sizes, norms, out=, the frequency and shift helpers,
and torch's errors (values and derivatives of every transform are in tests/op_db/fft_ops.py)."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import glassgrad
from tests.error_oracle import assert_raises_like_torch, first_line

_X = np.random.default_rng(0).standard_normal((4, 6))


def _same(a, b, tol=1e-5):
    assert str(a.dtype).split(".")[-1] == str(b.dtype).split(".")[-1]
    assert tuple(a.shape) == tuple(b.shape)
    np.testing.assert_allclose(a.detach().resolve_conj().numpy(),
                               b.detach().resolve_conj().numpy(), rtol=tol, atol=tol)


@pytest.mark.parametrize("make", [
    lambda m: m.fft.fft(m.tensor(_X, dtype=m.float32)),
    lambda m: m.fft.fft(m.arange(6)),
    lambda m: m.fft.rfft(m.tensor(_X, dtype=m.float32), n=5, dim=0),
    lambda m: m.fft.irfft(m.fft.rfft(m.tensor(_X, dtype=m.float32))),
    lambda m: m.fft.hfft(m.tensor(_X, dtype=m.float32) * 1j, n=6),
    lambda m: m.fft.ihfft(m.tensor(_X)),
    lambda m: m.fft.fftn(m.tensor(3.0)),
    lambda m: m.fft.fftn(m.tensor(_X), s=(2, -1)),
    lambda m: m.fft.fft2(m.tensor(_X), norm="ortho"),
    lambda m: m.fft.irfftn(m.tensor(_X) + 0j, s=(3, 7), norm="forward"),
    lambda m: m.fft.fftfreq(5),
    lambda m: m.fft.fftfreq(6, 0.25, dtype=m.float64),
    lambda m: m.fft.rfftfreq(7, d=2.0),
    lambda m: m.fft.fftshift(m.arange(6).reshape(2, 3)),
    lambda m: m.fft.fftshift(m.arange(6).reshape(2, 3), dim=1),
    lambda m: m.fft.ifftshift(m.arange(5), dim=(0,)),
])
def test_values_and_dtypes(make):
    _same(make(glassgrad), make(torch))


def test_ihfft_is_a_conjugate_and_freq_requires_grad():
    for m in (glassgrad, torch):
        assert m.fft.ihfft(m.ones(4)).is_conj()
        assert m.fft.fftfreq(4, requires_grad=True).requires_grad
        assert m.fft.Tensor is m.Tensor
        assert set(m.fft.common_args) <= set(m.fft.factory_common_args)


def test_out():
    results = []
    for m in (glassgrad, torch):
        out = m.empty(4, dtype=m.cfloat)
        r = m.fft.fft(m.ones(4), out=out)
        assert r is out
        with pytest.warns(UserWarning, match="resized"):
            small = m.fft.rfft(m.ones(6), out=m.empty(2, dtype=m.cfloat))
        results.append((out, small))
    _same(results[0][0], results[1][0])
    _same(results[0][1], results[1][1])


@pytest.mark.parametrize("bad", [
    lambda m: m.fft.fft(m.ones(4), norm="bad"),
    lambda m: m.fft.rfft(m.ones(4, dtype=m.cfloat)),
    lambda m: m.fft.ihfft(m.ones(4, dtype=m.cfloat)),
    lambda m: m.fft.fft(m.ones(4), n=0),
    lambda m: m.fft.fft(m.ones(4), dim=3),
    lambda m: m.fft.fft(m.ones(())),
    lambda m: m.fft.fftn(m.ones(4, 4), s=(2,), dim=(0, 1)),
    lambda m: m.fft.fftn(m.ones(4, 4), dim=(0, 0)),
    lambda m: m.fft.irfft(m.ones(1, dtype=m.cfloat)),
    lambda m: m.fft.fft(m.ones(4, dtype=m.float16)),
    lambda m: m.fft.fft(m.ones(4), out=m.empty(4)),
    lambda m: m.fft.fft(m.ones(4, requires_grad=True), out=m.empty(4, dtype=m.cfloat)),
])
def test_errors(bad):
    # (torch names its kernel, _fft_r2c(), where glassgrad names the function: past it)
    assert_raises_like_torch(bad, lambda msg: first_line(msg).split("_fft_r2c(): ")[-1])


def test_round_trips_and_gradient_of_real_input():
    x = glassgrad.tensor(_X, requires_grad=True)
    y = glassgrad.fft.irfft(glassgrad.fft.rfft(x, norm="ortho"), n=6, norm="ortho")
    np.testing.assert_allclose(y.detach().numpy(), _X, atol=1e-12)
    (glassgrad.fft.fft(x).abs() ** 2).sum().backward()
    t = torch.tensor(_X, requires_grad=True)
    (torch.fft.fft(t).abs() ** 2).sum().backward()
    assert x.grad.dtype is glassgrad.float64
    np.testing.assert_allclose(x.grad.numpy(), t.grad.numpy(), rtol=1e-10)
