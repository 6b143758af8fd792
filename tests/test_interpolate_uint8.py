"""uint8 ``interpolate`` (bilinear and bicubic, with and without antialias, by size or by
scale_factor) equals torch's fixed-point CPU kernel byte for byte (width pass then height pass,
int16 weights, rounding between passes); the dtypes torch has no kernel for raise torch's
"not implemented for" error; the one case where torch's kernel repeats its first row refuses."""

import itertools

import numpy as np
import pytest
import torch

import glassgrad


@pytest.mark.parametrize("shape,kw", [
    ((2, 3, 64, 64), {"size": (10, 10)}),
    ((1, 2, 10, 12), {"size": (23, 31)}),
    ((1, 1, 33, 17), {"size": (5, 40)}),
    ((2, 1, 1, 8), {"size": (3, 8)}),
])
def test_uint8_bilinear_is_torch_exact(shape, kw):
    a = np.random.default_rng(sum(shape)).integers(0, 256, shape).astype(np.uint8)
    theirs = torch.nn.functional.interpolate(torch.tensor(a), mode="bilinear", **kw)
    ours = glassgrad.nn.functional.interpolate(glassgrad.tensor(a), mode="bilinear", **kw)
    assert ours.dtype == glassgrad.uint8 and tuple(ours.shape) == tuple(theirs.shape)
    np.testing.assert_array_equal(ours.numpy(), theirs.numpy())


RESIZES = [((9, 7), {"size": (4, 3)}), ((5, 6), {"size": (12, 13)}),
           ((17, 4), {"size": (6, 9)}), ((20, 11), {"size": (20, 5)}),
           ((13, 15), {"scale_factor": (2.289, 1.328)}), ((24, 3), {"scale_factor": (2.3055, 1.18)}),
           ((10, 12), {"scale_factor": (1.01, 0.999)}), ((8, 9), {"scale_factor": 0.5}),
           ((7, 11), {"scale_factor": (0.37, 2.9)}), ((1, 5), {"size": (1, 9)})]


@pytest.mark.parametrize("mode,antialias,align_corners",
                         list(itertools.product(["bilinear", "bicubic"], [False, True],
                                                [False, True])))
@pytest.mark.parametrize("channels", [3, 5])  # torch: AVX kernel up to 4 channels, generic above
@pytest.mark.parametrize("shape,kw", RESIZES, ids=str)
def test_uint8_resize_is_torch_exact(mode, antialias, align_corners, channels, shape, kw):
    a = np.random.default_rng(sum(shape) + channels).integers(0, 256, (2, channels) + shape)
    a = a.astype(np.uint8)
    args = dict(mode=mode, antialias=antialias, align_corners=align_corners, **kw)
    theirs = torch.nn.functional.interpolate(torch.tensor(a), **args).numpy()
    ours = glassgrad.nn.functional.interpolate(glassgrad.tensor(a), **args).numpy()
    assert ours.dtype == np.uint8
    np.testing.assert_array_equal(ours, theirs)


@pytest.mark.parametrize("mode", ["bilinear", "bicubic"])
def test_uint8_resize_of_a_strided_view_is_torch_exact(mode):
    a = np.random.default_rng(5).integers(30, 220, (1, 3, 40, 40)).astype(np.uint8)
    theirs = torch.nn.functional.interpolate(torch.tensor(a)[:, :, ::2, 3:-3], size=(11, 25),
                                             mode=mode).numpy()
    ours = glassgrad.nn.functional.interpolate(glassgrad.tensor(a)[:, :, ::2, 3:-3],
                                               size=(11, 25), mode=mode).numpy()
    np.testing.assert_array_equal(ours, theirs)


@pytest.mark.parametrize("antialias", [False, True])
@pytest.mark.parametrize("mode", ["bilinear", "bicubic"])
def test_output_width_1_refuses_where_torch_repeats_its_first_row(mode, antialias):
    a = np.random.default_rng(2).integers(0, 256, (1, 5, 9, 6)).astype(np.uint8)
    args = dict(size=(4, 1), mode=mode, antialias=antialias)
    theirs = torch.nn.functional.interpolate(torch.tensor(a), **args).numpy()
    # the reason for refusing: torch's generic kernel (more than 4 channels) copies row 0 down
    assert (theirs == theirs[:, :, :1]).all()
    assert not (torch.nn.functional.interpolate(torch.tensor(a).double(), **args).numpy()
                == theirs[:, :, :1]).all()
    with pytest.raises(NotImplementedError, match="repeats the first output row"):
        glassgrad.nn.functional.interpolate(glassgrad.tensor(a), **args)
    with pytest.raises(NotImplementedError, match="repeats the first output row"):
        glassgrad.nn.functional.interpolate(glassgrad.tensor(a).double(), size=(4, 1), mode=mode,
                                            antialias=True)
    # with up to 4 channels torch's AVX kernel is right, and so is glassgrad
    three = np.ascontiguousarray(a[:, :3])
    np.testing.assert_array_equal(
        glassgrad.nn.functional.interpolate(glassgrad.tensor(three), **args).numpy(),
        torch.nn.functional.interpolate(torch.tensor(three), **args).numpy())


CASES = [(mode, shape, aa) for mode, shape in [
    ("nearest", (1, 3, 4)), ("linear", (1, 3, 4)), ("nearest", (1, 3, 4, 4)),
    ("nearest-exact", (1, 3, 4, 4)), ("bilinear", (1, 3, 4, 4)), ("bicubic", (1, 3, 4, 4)),
    ("area", (1, 3, 4)), ("area", (1, 3, 4, 4)), ("area", (1, 3, 4, 4, 4)),
    ("nearest", (1, 3, 4, 4, 4)), ("trilinear", (1, 3, 4, 4, 4))] for aa in (False, True)
    if not aa or mode in ("bilinear", "bicubic")]


@pytest.mark.parametrize("dtype", ["uint8", "int8", "int16", "int32", "int64", "bool",
                                   "float16", "bfloat16"])
@pytest.mark.parametrize("mode,shape,antialias", CASES, ids=str)
@pytest.mark.parametrize("scale", [2, 40])
def test_integer_dtypes_raise_torchs_error_where_torch_has_no_kernel(dtype, mode, shape,
                                                                     antialias, scale):
    def run(lib):
        x = lib.ones(*shape, dtype=getattr(lib, dtype))
        return lib.nn.functional.interpolate(x, scale_factor=scale, mode=mode,
                                             antialias=antialias)

    try:
        expected = run(torch)
    except NotImplementedError as e:
        with pytest.raises(NotImplementedError) as info:
            run(glassgrad)
        assert str(info.value).startswith(str(e))
        assert isinstance(info.value, RuntimeError)  # what PyTorch's tests catch
    else:
        ours = run(glassgrad)
        assert tuple(ours.shape) == tuple(expected.shape)
        if dtype not in ("float16", "bfloat16"):  # (16-bit values: other tests' business)
            np.testing.assert_array_equal(ours.numpy(), expected.numpy())
