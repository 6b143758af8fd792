"""Window functions and stft/istft against torch: values, dtypes, flags, warnings and errors
(the derivatives of stft/istft are in tests/op_db/fft_ops.py)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import torch

import glassgrad
from tests.error_oracle import assert_raises_like_torch, first_line

_X = np.random.default_rng(0).standard_normal(40)
_XB = np.random.default_rng(1).standard_normal((2, 33))


def _same(a, b, tol=1e-6):
    assert str(a.dtype).split(".")[-1] == str(b.dtype).split(".")[-1]
    assert tuple(a.shape) == tuple(b.shape) and a.requires_grad == b.requires_grad
    np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=tol, atol=tol)


def _hann(m, n=8):
    return m.hann_window(n, dtype=m.float64)


@pytest.mark.parametrize("make", [
    lambda m: m.hann_window(7), lambda m: m.hann_window(7, periodic=False),
    lambda m: m.hamming_window(6), lambda m: m.hamming_window(6, False, 0.5, 0.5),
    lambda m: m.blackman_window(9, dtype=m.float64), lambda m: m.bartlett_window(6, False),
    lambda m: m.bartlett_window(5), lambda m: m.kaiser_window(7), lambda m: m.kaiser_window(
        7, False, 5.0), lambda m: m.hann_window(1), lambda m: m.kaiser_window(0),
    lambda m: m.hann_window(4, requires_grad=True),
])
def test_windows(make):
    _same(make(glassgrad), make(torch))


@pytest.mark.parametrize("make", [
    lambda m: m.view_as_real(m.stft(m.tensor(_X), 8, return_complex=True)),
    lambda m: m.view_as_real(m.stft(m.tensor(_X), 8, 3, 6, m.hann_window(6, dtype=m.float64),
                                    normalized=True, return_complex=True)),
    lambda m: m.stft(m.tensor(_XB), 8, 2, window=_hann(m), return_complex=False,
                     pad_mode="constant"),
    lambda m: m.view_as_real(m.stft(m.tensor(_X), 8, 2, 5, m.ones(5, dtype=m.float64),
                                    center=False, onesided=False, return_complex=True)),
    lambda m: m.view_as_real(m.stft(m.tensor(_X), 8, 2, 5, m.ones(5, dtype=m.float64),
                                    center=False, align_to_window=True, return_complex=True)),
    lambda m: m.view_as_real(m.stft(m.tensor(_X[:20] + 1j * _X[20:]), 8, 2,
                                    return_complex=True)),
    lambda m: m.istft(m.stft(m.tensor(_X), 8, 2, window=_hann(m), return_complex=True), 8, 2,
                      window=_hann(m)),
    lambda m: m.istft(m.stft(m.tensor(_XB), 8, 2, window=_hann(m), return_complex=True)
                      * (1 + 1j), 8, 2, window=_hann(m), length=40),
    lambda m: m.view_as_real(m.istft(m.stft(m.tensor(_X), 8, 2, return_complex=True,
                                            onesided=False),
                                     8, 2, return_complex=True, normalized=True, length=30)),
])
def test_stft_istft(make):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ours, theirs = make(glassgrad), make(torch)
    _same(ours, theirs)


def test_round_trip_and_warnings():
    x = glassgrad.tensor(_X)
    with pytest.warns(UserWarning, match="A window was not provided"):
        spec = glassgrad.stft(x, 16, 4, return_complex=True)
    with pytest.warns(UserWarning, match="return_complex=False is deprecated"):
        glassgrad.stft(x, 16, 4, window=glassgrad.hann_window(16, dtype=glassgrad.float64),
                       return_complex=False)
    with pytest.warns(UserWarning, match="A window was not provided"):
        back = spec.istft(16, 4, length=40)
    np.testing.assert_allclose(back.numpy(), _X, atol=1e-10)


@pytest.mark.parametrize("bad", [
    lambda m: m.hann_window(4, dtype=m.int64),
    lambda m: m.blackman_window(-1),
    lambda m: m.stft(m.ones(10), 4),
    lambda m: m.stft(m.ones(10), 4, window=m.ones(3), return_complex=True),
    lambda m: m.stft(m.ones(2, 2, 10), 4, window=m.ones(4), return_complex=True),
    lambda m: m.stft(m.ones(10), 4, window=m.ones(4), align_to_window=True,
                     return_complex=True),
    lambda m: m.stft(m.ones(10), 40, window=m.ones(40), center=False, return_complex=True),
    lambda m: m.istft(m.ones(3, 4), 4),
    lambda m: m.istft(m.zeros(3, 4, dtype=m.cfloat), 4, window=m.zeros(4)),
])
def test_errors(bad):
    # (past torch's echo of the call, and its min: the overlap-add's minimum is printed oddly)
    assert_raises_like_torch(bad, lambda msg: first_line(msg).split(" : ")[-1].split(") ")[-1]
                             .split(" min:")[0])
