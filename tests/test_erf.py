"""The vectorised erf/erfc (glassgrad/ops/_special.py, NOTE [Cody's erf]) and exact GELU against
torch: float64 to a few ulp on grids with tails (|x| up to 30), special values and random points;
float32/float16 to torch's rounding; gradients first and second order; 0-d, empty, scalar and
non-contiguous inputs."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import glassgrad
from glassgrad.ops import _special

EPS = np.finfo(np.float64).eps
TINY = np.finfo(np.float64).tiny
SUBNORMAL = 2.0**-1074


def _grid():
    rng = np.random.default_rng(0)
    edges = np.array([0.46875, 4.0, 26.5, 27.0, 27.3, 30.0])
    positive = np.concatenate(
        [
            np.geomspace(1e-300, 30.0, 4001),
            edges,
            np.nextafter(edges, 0.0),
            np.nextafter(edges, np.inf),
            np.abs(rng.standard_normal(20000)) * 3.0,
            rng.uniform(0.0, 30.0, 20000),
        ]
    )
    return np.concatenate([np.linspace(-30.0, 30.0, 12001), positive, -positive])


SPECIAL = np.array(
    [
        0.0,
        -0.0,
        np.nan,
        np.inf,
        -np.inf,
        1e308,
        -1e308,
        SUBNORMAL,
        -SUBNORMAL,
        1e-200,
        -1e-200,
        5.0,
        -5.0,
        1e8,
        -1e8,
    ]
)


def _rel_error_eps(got, ref):
    """Worst ``|got - ref| / |ref|`` in units of float64 eps over normal ``ref``; subnormal refs
    (erfc beyond ~26.5) must agree to a few units of the smallest subnormal."""
    got, ref = np.asarray(got, np.float64), np.asarray(ref, np.float64)
    normal = np.abs(ref) >= TINY
    assert np.abs(got - ref)[~normal].max(initial=0.0) <= 4 * SUBNORMAL
    return (np.abs(got - ref)[normal] / np.abs(ref[normal])).max() / EPS


@pytest.mark.parametrize("name, bound", [("erf", 4.0), ("erfc", 6.0)])
def test_float64_grid_matches_torch_to_few_ulp(name, bound):
    x = _grid()
    got = getattr(_special, name)(x)
    ref = getattr(torch, name)(torch.from_numpy(x)).numpy()
    assert got.dtype == np.float64 and got.shape == x.shape
    assert _rel_error_eps(got, ref) <= bound


@pytest.mark.parametrize("name", ["erf", "erfc"])
def test_special_values_match_torch(name):
    got = getattr(_special, name)(SPECIAL)
    ref = getattr(torch, name)(torch.from_numpy(SPECIAL)).numpy()
    np.testing.assert_array_equal(np.isnan(got), np.isnan(ref))
    np.testing.assert_array_equal(np.signbit(got), np.signbit(ref))  # -0.0 stays -0.0
    finite = ~np.isnan(ref)
    np.testing.assert_allclose(got[finite], ref[finite], rtol=4 * EPS, atol=0)


@pytest.mark.parametrize("dtype", [np.float32, np.float16])
@pytest.mark.parametrize("name", ["erf", "erfc"])
def test_low_precision_matches_torch(name, dtype):
    specials = [0.0, -0.0, np.nan, np.inf, -np.inf, np.finfo(dtype).max, np.finfo(dtype).tiny]
    x = np.concatenate([np.linspace(-12, 12, 20001), specials]).astype(dtype)
    got = getattr(_special, name)(x)
    ref = getattr(torch, name)(torch.from_numpy(x)).numpy()
    assert got.dtype == dtype
    finite = np.isfinite(ref)
    np.testing.assert_array_equal(np.isnan(got), np.isnan(ref))
    ulp = np.spacing(np.abs(ref[finite]).astype(dtype)).astype(np.float64)
    diff = np.abs(got[finite].astype(np.float64) - ref[finite].astype(np.float64))
    assert (diff <= ulp).all()  # torch's float32 kernel is within 1 ulp of the rounded value


def test_layouts_scalars_and_empty():
    a = np.random.default_rng(1).standard_normal((40, 30)) * 3
    ref = torch.erf(torch.from_numpy(a)).numpy()
    np.testing.assert_array_equal(_special.erf(a.T), _special.erf(a).T)
    np.testing.assert_allclose(_special.erf(a[::3, ::2]), ref[::3, ::2], rtol=4 * EPS)
    big = np.random.default_rng(2).standard_normal(3 * _special._BLOCK + 5) * 4  # several blocks
    np.testing.assert_allclose(
        _special.erfc(big), torch.erfc(torch.from_numpy(big)).numpy(), rtol=6 * EPS
    )
    scalar = _special.erf(np.float32(0.75))
    assert type(scalar) is np.float32
    assert scalar == torch.erf(torch.tensor(0.75, dtype=torch.float32)).item()
    zero_d = _special.erfc(np.array(-1.5))
    assert isinstance(zero_d, np.ndarray) and zero_d.shape == ()
    assert zero_d == pytest.approx(
        torch.erfc(torch.tensor(-1.5, dtype=torch.float64)).item(), rel=4 * EPS
    )
    for shape in [(0,), (0, 3)]:
        empty = _special.erf(np.zeros(shape, np.float32))
        assert empty.shape == shape and empty.dtype == np.float32


def _both(x, fn_name, **kw):
    """Forward values and first/second-order input gradients of ``fn_name`` on both libraries."""
    out = {}
    for lib in (torch, glassgrad):
        t = lib.tensor(x, requires_grad=True)
        y = lib.erf(t) if fn_name == "erf" else lib.nn.functional.gelu(t, **kw)
        (g,) = lib.autograd.grad(y.sum(), t, create_graph=True)
        (gg,) = lib.autograd.grad(g.sum(), t)
        out[lib.__name__] = [np.asarray(v.detach().numpy(), np.float64) for v in (y, g, gg)]
    return out["glassgrad"], out["torch"], np.abs(np.asarray(x, np.float64))


def test_erf_tensor_values_and_gradients_float64():
    # (not +-1e308: x * x overflows in the second derivative, nan vs 0 depends on the formula)
    moderate = SPECIAL[np.abs(SPECIAL) < 1e100]
    x = np.concatenate([np.linspace(-30.0, 30.0, 6001), moderate])
    (y, g, gg), (ty, tg, tgg), _ = _both(x, "erf")
    assert _rel_error_eps(y, ty) <= 4.0
    # the gradient 2/sqrt(pi) exp(-x^2) is the same formula on both sides
    np.testing.assert_allclose(g, tg, rtol=8 * EPS, atol=4 * SUBNORMAL)
    np.testing.assert_allclose(gg, tgg, rtol=8 * EPS, atol=4 * SUBNORMAL)


def test_gelu_exact_values_and_gradients_float64():
    rng = np.random.default_rng(3)
    x = np.concatenate(
        [
            np.linspace(-30.0, 30.0, 6001),
            rng.standard_normal(4000) * 2,
            SPECIAL[np.abs(SPECIAL) < 1e100],
        ]
    )
    (y, g, gg), (ty, tg, tgg), ax = _both(x, "gelu", approximate="none")
    # x * 0.5 * (1 + erf(x / sqrt2)) on both sides: 1 + erf(.) rounds at 1's scale, hence |x| eps
    assert (np.abs(y - ty) <= 4 * EPS * (ax + np.abs(ty))).all()
    assert (np.abs(g - tg) <= 8 * EPS * (1.0 + ax)).all()
    assert (np.abs(gg - tgg) <= 16 * EPS * (1.0 + ax * ax)).all()


def test_gelu_and_erf_float32_match_torch():
    x = (np.random.default_rng(4).standard_normal((64, 96)) * 3).astype(np.float32)
    eps32 = float(np.finfo(np.float32).eps)
    (y, g, _), (ty, tg, _), _ = _both(x, "erf")
    assert (np.abs(y - ty) <= np.spacing(np.abs(ty).astype(np.float32))).all()  # <= 1 ulp
    np.testing.assert_allclose(g, tg, rtol=4 * eps32, atol=0)
    # gelu: 1 + erf(x / sqrt2) rounds at 1's scale in float32 on both sides, hence |x| eps32
    (y, g, _), (ty, tg, _), ax = _both(x, "gelu")
    assert (np.abs(y - ty) <= 4 * eps32 * (ax + np.abs(ty))).all()
    assert (np.abs(g - tg) <= 8 * eps32 * (1.0 + ax)).all()


def test_erf_tensor_zero_dim_empty_and_non_contiguous():
    base = np.random.default_rng(5).standard_normal((6, 8)) * 2
    for make in (
        lambda lib: lib.tensor(base).t(),
        lambda lib: lib.tensor(base)[::2, 1::3],
        lambda lib: lib.tensor(0.3),
        lambda lib: lib.zeros(0, 4),
    ):
        ours, theirs = glassgrad.erf(make(glassgrad)), torch.erf(make(torch))
        assert tuple(ours.shape) == tuple(theirs.shape)
        np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=4 * EPS, atol=0)
