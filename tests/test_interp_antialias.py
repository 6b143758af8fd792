"""F.interpolate(antialias=True) against torch: float values and gradients, uint8 bytes, and the
cases glassgrad refuses (scale_factor, an output dim of 1 beside another resized dim)."""

import numpy as np
import pytest
import torch

import glassgrad

CASES = [((9, 7), (4, 3)), ((5, 6), (12, 13)), ((17, 4), (6, 9)), ((3, 7), (3, 1)),
         ((20, 11), (20, 5)), ((8, 30), (29, 7))]


@pytest.mark.parametrize("mode", ["bilinear", "bicubic"])
@pytest.mark.parametrize("align_corners", [False, True])
@pytest.mark.parametrize("shapes", CASES, ids=str)
def test_float_values_and_grads_match_torch(mode, align_corners, shapes):
    (ih, iw), size = shapes
    x = np.random.default_rng(ih * 31 + iw).standard_normal((2, 3, ih, iw))
    g = np.random.default_rng(7).standard_normal((2, 3) + size)
    out = {}
    for lib in (torch, glassgrad):
        t = lib.tensor(x, requires_grad=True)
        y = lib.nn.functional.interpolate(t, size=size, mode=mode, align_corners=align_corners,
                                          antialias=True)
        y.backward(lib.tensor(g))
        out[lib.__name__] = (y.detach().numpy(), t.grad.numpy())
    np.testing.assert_allclose(out["glassgrad"][0], out["torch"][0], rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(out["glassgrad"][1], out["torch"][1], rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("mode", ["bilinear", "bicubic"])
@pytest.mark.parametrize("align_corners", [False, True])
@pytest.mark.parametrize("shapes", CASES, ids=str)
def test_uint8_bytes_match_torch(mode, align_corners, shapes):
    (ih, iw), size = shapes
    x = np.random.default_rng(ih + iw).integers(0, 256, (1, 3, ih, iw)).astype(np.uint8)
    a = torch.nn.functional.interpolate(torch.tensor(x), size=size, mode=mode,
                                        align_corners=align_corners, antialias=True).numpy()
    b = glassgrad.nn.functional.interpolate(glassgrad.tensor(x), size=size, mode=mode,
                                            align_corners=align_corners, antialias=True).numpy()
    assert b.dtype == np.uint8
    np.testing.assert_array_equal(b, a)


@pytest.mark.parametrize("mode", ["bilinear", "bicubic"])
def test_gradcheck_and_gradgradcheck(mode):
    x = glassgrad.tensor(np.random.default_rng(0).standard_normal((1, 2, 7, 5)),
                         requires_grad=True)

    def f(t):
        return glassgrad.nn.functional.interpolate(t, size=(3, 4), mode=mode, antialias=True)

    assert glassgrad.autograd.gradcheck(f, (x,))
    assert glassgrad.autograd.gradgradcheck(f, (x,))


@pytest.mark.parametrize("kwargs", [{"scale_factor": 0.5}, {"size": (3, 1)}], ids=str)
def test_unpinned_cases_refuse_where_torch_computes(kwargs):
    x = np.random.default_rng(1).standard_normal((1, 1, 8, 6))
    torch.nn.functional.interpolate(torch.tensor(x), mode="bilinear", antialias=True, **kwargs)
    with pytest.raises(NotImplementedError, match="antialias=True"):
        glassgrad.nn.functional.interpolate(glassgrad.tensor(x), mode="bilinear",
                                            antialias=True, **kwargs)


@pytest.mark.parametrize("shapes", CASES, ids=str)
def test_uint8_bilinear_align_corners_without_antialias_matches_torch(shapes):
    (ih, iw), size = shapes
    x = np.random.default_rng(ih * iw).integers(0, 256, (1, 3, ih, iw)).astype(np.uint8)
    a = torch.nn.functional.interpolate(torch.tensor(x), size=size, mode="bilinear",
                                        align_corners=True).numpy()
    b = glassgrad.nn.functional.interpolate(glassgrad.tensor(x), size=size, mode="bilinear",
                                            align_corners=True).numpy()
    np.testing.assert_array_equal(b, a)
