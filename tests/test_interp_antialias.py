"""F.interpolate(antialias=True) against torch: float values and gradients (by size and by
scale_factor), uint8 bytes, and the case glassgrad refuses (an output width of 1 with the height
resized, where torch's kernel repeats its first row)."""

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


def test_output_width_1_with_the_height_resized_refuses_where_torch_repeats_row_0():
    x = np.random.default_rng(1).standard_normal((1, 1, 8, 6))
    theirs = torch.nn.functional.interpolate(torch.tensor(x), size=(3, 1), mode="bilinear",
                                             antialias=True).numpy()
    assert (theirs == theirs[:, :, :1]).all()  # torch's generic kernel copies row 0 down
    with pytest.raises(NotImplementedError, match="antialias=True"):
        glassgrad.nn.functional.interpolate(glassgrad.tensor(x), size=(3, 1), mode="bilinear",
                                            antialias=True)


@pytest.mark.parametrize("mode", ["bilinear", "bicubic"])
@pytest.mark.parametrize("align_corners", [False, True])
@pytest.mark.parametrize("scale", [0.5, (2.3, 1.7), (0.37, 2.9), (1.01, 0.6), (1.0, 3.0)],
                         ids=str)
def test_float_with_scale_factor_matches_torch(mode, align_corners, scale):
    # NOTE: a dim whose size does not change is not resampled, whatever its scale_factor (1.01)
    x = np.random.default_rng(3).standard_normal((2, 3, 10, 9))
    out = {}
    for lib in (torch, glassgrad):
        t = lib.tensor(x, requires_grad=True)
        y = lib.nn.functional.interpolate(t, scale_factor=scale, mode=mode,
                                          align_corners=align_corners, antialias=True)
        g = np.random.default_rng(7).standard_normal(tuple(y.shape))
        y.backward(lib.tensor(g))
        out[lib.__name__] = (y.detach().numpy(), t.grad.numpy())
    np.testing.assert_allclose(out["glassgrad"][0], out["torch"][0], rtol=1e-10, atol=1e-12)
    if scale == (1.01, 0.6) and not align_corners:
        return  # torch's backward is not its forward's derivative here: see the test below
    np.testing.assert_allclose(out["glassgrad"][1], out["torch"][1], rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("mode", ["bilinear", "bicubic"])
def test_unchanged_dim_with_a_scale_factor_gets_the_true_gradient(mode):
    # torch's forward skips the height (10 * 1.01 -> 10) but its one-shot backward still uses
    # 1 / 1.01 there, so torch fails its own gradcheck; glassgrad differentiates the forward
    def f(lib):
        return lambda t: lib.nn.functional.interpolate(t, scale_factor=(1.01, 0.6), mode=mode,
                                                       antialias=True)

    x = np.random.default_rng(4).standard_normal((1, 2, 10, 9))
    assert not torch.autograd.gradcheck(f(torch), (torch.tensor(x, requires_grad=True),),
                                        raise_exception=False)
    assert glassgrad.autograd.gradcheck(f(glassgrad), (glassgrad.tensor(x, requires_grad=True),))


@pytest.mark.parametrize("shapes", CASES, ids=str)
def test_uint8_bilinear_align_corners_without_antialias_matches_torch(shapes):
    (ih, iw), size = shapes
    x = np.random.default_rng(ih * iw).integers(0, 256, (1, 3, ih, iw)).astype(np.uint8)
    a = torch.nn.functional.interpolate(torch.tensor(x), size=size, mode="bilinear",
                                        align_corners=True).numpy()
    b = glassgrad.nn.functional.interpolate(glassgrad.tensor(x), size=size, mode="bilinear",
                                            align_corners=True).numpy()
    np.testing.assert_array_equal(b, a)
