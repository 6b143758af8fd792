"""Errors of issue 15's lane tnn (einsum diagonals, interpolate's modes, max_unpool), each
against torch's type and key phrase; and the MaxUnpool / UpsamplingBilinear2d modules."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import glassgrad
from tests.error_oracle import assert_raises_like_torch


def _t(m, *shape):
    return m.tensor(np.arange(float(np.prod(shape))).reshape(shape))


def _pooled(m):
    """(values, int64 indices) of a 2x2 max pool of a (1, 2, 4, 6) input."""
    x = _t(m, 1, 2, 4, 6)
    return m.nn.functional.max_pool2d(x, 2, return_indices=True)


BAD = {
    "einsum diagonal sizes": lambda m: m.einsum("ii->i", _t(m, 3, 4)),
    "einsum diagonal size 1": lambda m: m.einsum("ii", _t(m, 1, 3)),
    "einsum diagonal ellipsis": lambda m: m.einsum("...ii->...i", _t(m, 2, 3, 2)),
    "linear needs 3-D": lambda m: m.nn.functional.interpolate(_t(m, 1, 1, 2, 2), size=3,
                                                              mode="linear"),
    "bicubic needs 4-D": lambda m: m.nn.functional.interpolate(_t(m, 1, 1, 2), size=3,
                                                               mode="bicubic"),
    "trilinear needs 5-D": lambda m: m.nn.functional.interpolate(_t(m, 1, 1, 2, 2), size=3,
                                                                 mode="trilinear"),
    "unknown mode": lambda m: m.nn.functional.interpolate(_t(m, 1, 1, 2, 2), size=3, mode="x"),
    "area align_corners": lambda m: m.nn.functional.interpolate(
        _t(m, 1, 1, 2, 2), size=3, mode="area", align_corners=True),
    "nearest-exact align_corners": lambda m: m.nn.functional.interpolate(
        _t(m, 1, 1, 2, 2), size=3, mode="nearest-exact", align_corners=False),
    "recompute with size": lambda m: m.nn.functional.interpolate(
        _t(m, 1, 1, 2, 2), size=3, mode="bilinear", recompute_scale_factor=True),
    "antialias on linear": lambda m: m.nn.functional.interpolate(
        _t(m, 1, 1, 2), size=3, mode="linear", antialias=True),
    "unpool float indices": lambda m: m.nn.functional.max_unpool2d(
        _pooled(m)[0], _pooled(m)[1].double(), 2),
    "unpool index shape": lambda m: m.nn.functional.max_unpool2d(
        _pooled(m)[0], _pooled(m)[1][..., :1], 2),
    "unpool index range": lambda m: m.nn.functional.max_unpool2d(
        _pooled(m)[0], _pooled(m)[1] * 100, 2),
    "unpool 2-D input": lambda m: m.nn.functional.max_unpool2d(
        _pooled(m)[0][0, 0], _pooled(m)[1][0, 0], 2),
    "unpool1d 1-D input": lambda m: m.nn.functional.max_unpool1d(
        _t(m, 3), m.tensor([0, 2, 4]), 2),
    "unpool3d 3-D input": lambda m: m.nn.functional.max_unpool3d(
        _t(m, 1, 1, 2), m.zeros(1, 1, 2, dtype=m.int64), 2),
    "unpool output_size small": lambda m: m.nn.functional.max_unpool2d(
        *_pooled(m), 2, output_size=(2, 6)),
    "unpool output_size large": lambda m: m.nn.functional.max_unpool2d(
        *_pooled(m), 2, output_size=(4, 8)),
    "unpool output_size length": lambda m: m.nn.functional.max_unpool2d(
        *_pooled(m), 2, output_size=(1, 4, 6)),
    "unpool1d index range": lambda m: m.nn.functional.max_unpool1d(
        _t(m, 1, 2, 3), m.tensor([[[0, 2, 40], [1, 3, 5]]]), 2),
}


@pytest.mark.parametrize("name", sorted(BAD))
def test_errors_as_torch(name):
    assert_raises_like_torch(BAD[name])


def test_modules_as_torch():
    x, i = _pooled(torch)
    gx, gi = glassgrad.tensor(x.numpy()), glassgrad.tensor(i.numpy())
    for args in [(2,), (2, 2, 0)]:
        ours, theirs = glassgrad.nn.MaxUnpool2d(*args), torch.nn.MaxUnpool2d(*args)
        assert repr(ours) == repr(theirs)
        np.testing.assert_allclose(ours(gx, gi, output_size=[5, 7]).numpy(),
                                   theirs(x, i, output_size=[5, 7]).numpy())
    for nd, cls in ((1, "MaxUnpool1d"), (3, "MaxUnpool3d")):
        assert repr(getattr(glassgrad.nn, cls)(3, 2, 1)) == repr(getattr(torch.nn, cls)(3, 2, 1))
    a = np.linspace(-1, 1, 12).reshape(1, 1, 3, 4)
    up_t, up_g = torch.nn.UpsamplingBilinear2d(scale_factor=2), glassgrad.nn.UpsamplingBilinear2d(
        scale_factor=2)
    assert repr(up_g) == repr(up_t)
    np.testing.assert_allclose(up_g(glassgrad.tensor(a)).numpy(), up_t(torch.tensor(a)).numpy(),
                               atol=1e-12)


def test_interpolate_float32_source_indices():
    """float32 positions as torch's kernels compute them (a given scale divided in double)."""
    a = np.random.default_rng(0).standard_normal((1, 2, 7)).astype(np.float32)
    for mode in ("linear", "nearest-exact", "nearest"):
        for sf in (1.7, 0.45, 2.3):
            ours = glassgrad.nn.functional.interpolate(glassgrad.tensor(a), scale_factor=sf,
                                                       mode=mode)
            theirs = torch.nn.functional.interpolate(torch.tensor(a), scale_factor=sf, mode=mode)
            assert ours.dtype == glassgrad.float32
            np.testing.assert_allclose(ours.numpy(), theirs.numpy(), atol=1e-6, rtol=1e-6)
