"""NOTE [Gathered range] in glassgrad/ops/_special.py: erf/erfc evaluating Cody's large ranges only
on the elements that need them give, bit for bit, the numbers of the whole-block evaluation (the
implementation before the change, still the path for blocks mostly in those ranges), on fixed
inputs covering every range, the tails, special values and float32/float64; and GELU's forward
and backward (which run erf twice) are bit-equal under both paths. torch is the oracle for the
values themselves (tests/test_erf.py); the values are checked against it here too."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import glassgrad
from glassgrad.ops import _special

SPECIAL = [0.0, -0.0, np.nan, -np.nan, np.inf, -np.inf, 0.46875, -0.46875, 4.0, -4.0, 26.5,
           27.3, 40.0, 1e308, -1e308, 2.0**-1074, -(2.0**-1074), 5e-324]


def _inputs(dtype):
    rng = np.random.default_rng(20)
    parts = [rng.standard_normal(70000) * scale for scale in (0.3, 0.7, 1.5, 4.0, 12.0)]
    parts += [np.linspace(-30.0, 30.0, 6001), np.array(SPECIAL * 7)]
    values = np.concatenate(parts)
    rng.shuffle(values)
    with np.errstate(over="ignore"):  # (+-1e308 become +-inf in float32)
        return values.astype(dtype)


def _with_gather(monkeypatch, at_most, fn, *args):
    monkeypatch.setattr(_special, "_GATHER_AT_MOST", at_most)
    return fn(*args)


def _bits(a):
    a = np.asarray(a)
    return a.view(np.uint64 if a.dtype.itemsize == 8 else np.uint32)


@pytest.mark.parametrize("name", ["erf", "erfc"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_gathered_range_is_bit_equal_to_whole_block(monkeypatch, name, dtype):
    fn = getattr(_special, name)
    x = _inputs(dtype)
    # blocks of 16,384 mixing 5-96% large-range elements: both sides of the 3/4 cut are taken
    whole = _with_gather(monkeypatch, -1.0, fn, x)  # never gathers: the previous evaluation
    gathered = _with_gather(monkeypatch, 1.0, fn, x)  # always gathers
    default = _with_gather(monkeypatch, 0.75, fn, x)
    assert whole.dtype == gathered.dtype == default.dtype == dtype
    np.testing.assert_array_equal(_bits(gathered), _bits(whole))
    np.testing.assert_array_equal(_bits(default), _bits(whole))
    expected = getattr(torch, name)(torch.from_numpy(x.astype(np.float64))).numpy().astype(dtype)
    np.testing.assert_allclose(default, expected, rtol=4 * np.finfo(dtype).eps,
                               atol=np.finfo(dtype).tiny, equal_nan=True)


def test_one_element_blocks_and_scalars(monkeypatch):
    for v in SPECIAL + [0.3, -2.5, 5.0]:
        for name in ("erf", "erfc"):
            fn = getattr(_special, name)
            whole = _with_gather(monkeypatch, -1.0, fn, np.float64(v))
            gathered = _with_gather(monkeypatch, 1.0, fn, np.float64(v))
            assert isinstance(gathered, np.float64)
            assert _bits(gathered) == _bits(whole), (name, v)


def _gelu_step(x_np):
    x = glassgrad.from_numpy(x_np.copy()).requires_grad_(True)
    y = glassgrad.nn.functional.gelu(x)
    y.backward(glassgrad.from_numpy(np.linspace(-2.0, 2.0, x_np.size, dtype=x_np.dtype)
                                    .reshape(x_np.shape)))
    return y.detach().numpy(), x.grad.numpy()


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_gelu_forward_and_backward_bit_equal(monkeypatch, dtype):
    rng = np.random.default_rng(9)
    x_np = (rng.standard_normal((1024, 512)) * 1.3).astype(dtype)  # a Transformer MLP's GELU
    whole = _with_gather(monkeypatch, -1.0, _gelu_step, x_np)
    gathered = _with_gather(monkeypatch, 0.75, _gelu_step, x_np)
    for a, b in zip(whole, gathered):
        np.testing.assert_array_equal(_bits(a), _bits(b))
    xt = torch.from_numpy(x_np.copy()).requires_grad_(True)
    yt = torch.nn.functional.gelu(xt)
    yt.backward(torch.from_numpy(np.linspace(-2.0, 2.0, x_np.size, dtype=dtype)
                                 .reshape(x_np.shape)))
    tol = 1e-6 if dtype == np.float32 else 1e-14
    # (float32: 1 + erf(x / sqrt(2)) cancels for x < -3, and the slope cdf + x * pdf near
    # x = -0.75: a few ulp of 1, absolute, in both)
    np.testing.assert_allclose(gathered[0], yt.detach().numpy(), rtol=tol, atol=4 * tol)
    np.testing.assert_allclose(gathered[1], xt.grad.numpy(), rtol=tol, atol=4 * tol)
