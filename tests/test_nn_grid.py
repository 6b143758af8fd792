"""grid_sample / affine_grid beyond the op table (issue 16, lane grid): the mode dicts, warnings,
errors (type and key phrase as torch's), dtypes, empty batches, the identity round trip and
grid positions outside the image. Values and gradients of every mode are in tests/op_db."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import torch

import glassgrad
from tests.oracle import assert_close, assert_same_dtype

GF, TF = glassgrad.nn.functional, torch.nn.functional


def _both(fn, *arrays, dtype=np.float64):
    return [fn(lib, *(lib.tensor(a.astype(dtype)) for a in arrays)) for lib in (glassgrad, torch)]


def test_mode_dicts_match_torch():
    assert GF.GRID_SAMPLE_INTERPOLATION_MODES == TF.GRID_SAMPLE_INTERPOLATION_MODES
    assert GF.GRID_SAMPLE_PADDING_MODES == TF.GRID_SAMPLE_PADDING_MODES


@pytest.mark.parametrize("dtype", [np.float32, np.float16])
@pytest.mark.parametrize("mode", ["bilinear", "nearest", "bicubic"])
def test_dtype_and_values_low_precision(mode, dtype):
    rng = np.random.default_rng(0)
    x, g = rng.standard_normal((2, 3, 5, 4)), rng.uniform(-1.2, 1.2, (2, 3, 2, 2))

    def f(lib, x, g):
        return lib.nn.functional.grid_sample(x, g, mode=mode, padding_mode="reflection",
                                             align_corners=True)

    ours, theirs = _both(f, x, g, dtype=dtype)
    assert_same_dtype(ours, theirs)
    assert ours.is_contiguous()
    tol = 1e-5 if dtype == np.float32 else 2e-2
    assert_close(ours, theirs, atol=tol, rtol=tol)


def test_identity_affine_round_trip():
    """affine_grid of the identity then grid_sample reproduces the input (both libraries)."""
    rng = np.random.default_rng(1)
    x = rng.standard_normal((2, 3, 4, 5))
    theta = np.tile(np.array([[1.0, 0, 0], [0, 1, 0]]), (2, 1, 1))
    for align in (False, True):
        for lib in (glassgrad, torch):
            grid = lib.nn.functional.affine_grid(lib.tensor(theta), [2, 3, 4, 5],
                                                 align_corners=align)
            out = lib.nn.functional.grid_sample(lib.tensor(x), grid, align_corners=align)
            np.testing.assert_allclose(out.numpy(), x, atol=1e-12)


def test_far_outside_and_nan_positions():
    """Positions far outside the image read zeros / the border / the reflection, and a NaN
    position gives what torch gives (NaN through the weights, 0 for nearest)."""
    x = np.arange(12.0).reshape(1, 1, 3, 4)
    g = np.array([[[[1e9, -1e9], [-30.0, 2.5]], [[np.nan, 0.2], [0.1, -7.3]]]])
    for pad in ("zeros", "border", "reflection"):
        for mode in ("bilinear", "nearest", "bicubic"):
            def f(lib, x, g):
                return lib.nn.functional.grid_sample(x, g, mode=mode, padding_mode=pad,
                                                     align_corners=False)

            ours, theirs = _both(f, x, g)
            finite = np.isfinite(theirs.numpy())
            assert (np.isfinite(ours.numpy()) == finite).all(), (pad, mode)
            assert_close(ours, theirs, atol=1e-12, rtol=0)


def test_empty_batch_channels_and_output():
    for xs, gs in [((0, 2, 3, 3), (0, 2, 2, 2)), ((1, 0, 3, 3), (1, 2, 2, 2)),
                   ((1, 2, 3, 3), (1, 0, 2, 2)), ((1, 2, 2, 3, 3), (1, 2, 0, 2, 3))]:
        ours, theirs = _both(lambda lib, x, g: lib.grid_sampler(x, g, 0, 0, False),
                             np.ones(xs), np.zeros(gs))
        assert tuple(ours.shape) == tuple(theirs.shape)


def test_align_corners_none_warns():
    x, g, theta = glassgrad.ones(1, 1, 2, 2), glassgrad.zeros(1, 1, 1, 2), glassgrad.eye(2, 3)
    for call in (lambda: GF.grid_sample(x, g), lambda: GF.affine_grid(theta[None], [1, 1, 2, 2])):
        with pytest.warns(UserWarning, match="Default grid_sample and affine_grid behavior"):
            call()
    with pytest.warns(UserWarning, match="affine_grid behavior has changed for unit-size grids"):
        GF.affine_grid(theta[None], [1, 1, 1, 2], align_corners=True)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        GF.grid_sample(x, g, align_corners=False)


def _error(lib, call):
    try:
        call(lib)
    except Exception as e:  # noqa: BLE001 - the type is compared with torch's
        return type(e), str(e)
    return None, ""


_X, _G = np.ones((1, 2, 4, 5)), np.zeros((1, 3, 3, 2))
_ERRORS = [
    ("bad mode", lambda m: m.nn.functional.grid_sample(m.tensor(_X), m.tensor(_G), mode="area",
                                                       align_corners=False),
     "expected mode to be 'bilinear', 'nearest' or 'bicubic'"),
    ("bad padding", lambda m: m.nn.functional.grid_sample(m.tensor(_X), m.tensor(_G),
                                                          padding_mode="wrap",
                                                          align_corners=False),
     "expected padding_mode to be 'zeros', 'border', or 'reflection'"),
    ("dtype", lambda m: m.grid_sampler(m.tensor(_X).float(), m.tensor(_G), 0, 0, False),
     "expected scalar type Float but found Double"),
    ("last dim", lambda m: m.grid_sampler(m.tensor(_X), m.tensor(_G[..., :1]), 0, 0, False),
     "expected grid to have size 2 in last dimension"),
    ("batch", lambda m: m.grid_sampler(m.tensor(_X), m.tensor(np.zeros((2, 3, 3, 2))), 0, 0,
                                       False), "expected grid and input to have same batch size"),
    ("rank", lambda m: m.grid_sampler(m.tensor(_X), m.tensor(_G[None]), 0, 0, False),
     "expected 4D input and grid with same number of dimensions"),
    ("2d of 3d", lambda m: m.grid_sampler_2d(m.tensor(np.ones((1, 2, 3, 4, 5))),
                                             m.tensor(np.zeros((1, 2, 2, 2, 3))), 0, 0, False),
     "expected 4D input and grid with same number of dimensions"),
    ("3d of 2d", lambda m: m.grid_sampler_3d(m.tensor(_X), m.tensor(_G), 0, 0, False),
     "expected 5D input and grid with same number of dimensions"),
    ("bicubic 3d", lambda m: m.grid_sampler(m.tensor(np.ones((1, 2, 3, 4, 5))),
                                            m.tensor(np.zeros((1, 2, 2, 2, 3))), 2, 0, False),
     "bicubic interpolation only supports 4D input"),
    ("empty spatial", lambda m: m.grid_sampler(m.tensor(np.ones((1, 2, 0, 5))), m.tensor(_G),
                                               0, 0, False),
     "expected input to have non-empty spatial dimensions"),
    ("integer", lambda m: m.grid_sampler(m.tensor(_X).long(), m.tensor(_G).long(), 0, 0, False),
     "not implemented for 'Long'"),
    ("theta dtype", lambda m: m.nn.functional.affine_grid(m.zeros(1, 2, 3, dtype=m.int64),
                                                          [1, 1, 2, 2], align_corners=False),
     "Expected theta to have floating point type"),
    ("theta shape", lambda m: m.nn.functional.affine_grid(m.zeros(1, 3, 3), [1, 1, 2, 2],
                                                          align_corners=False),
     "Expected a batch of 2D affine matrices of shape Nx2x3 for size [1, 1, 2, 2]"),
    ("theta shape 3d", lambda m: m.nn.functional.affine_grid(m.zeros(1, 2, 3), [1, 1, 2, 2, 2],
                                                             align_corners=False),
     "Expected a batch of 3D affine matrices of shape Nx3x4"),
    ("size rank", lambda m: m.nn.functional.affine_grid(m.zeros(1, 2, 3), [1, 1, 2],
                                                        align_corners=False),
     "affine_grid only supports 4D and 5D sizes"),
    ("empty size", lambda m: m.nn.functional.affine_grid(m.zeros(1, 2, 3), [1, 1, 0, 2],
                                                         align_corners=False),
     "Expected non-zero, positive output size"),
    ("generator rank", lambda m: m.affine_grid_generator(m.zeros(1, 2, 3), [1, 2, 3], False),
     "AffineGridGenerator needs 4d (spatial) or 5d (volumetric) inputs"),
    ("generator batch", lambda m: m.affine_grid_generator(m.zeros(2, 2, 3), [3, 1, 2, 2], False),
     "Expected size for first two dimensions of batch2 tensor to be: [3, 3] but got: [2, 3]"),
]


@pytest.mark.parametrize("call,phrase", [e[1:] for e in _ERRORS], ids=[e[0] for e in _ERRORS])
def test_errors_match_torch(call, phrase):
    ours, theirs = _error(glassgrad, call), _error(torch, call)
    assert theirs[0] is not None and phrase in theirs[1], theirs
    assert ours[0] is theirs[0] and phrase in ours[1], ours


_W, _B = np.ones((3, 3, 4)), np.ones(4)
_EXTRA_ERRORS = [
    ("tbc input rank", lambda m: m.conv_tbc(m.ones(2, 3), m.tensor(_W), m.tensor(_B)),
     "Input must have 3 dims: time, batch, in_channel"),
    ("tbc weight rank", lambda m: m.conv_tbc(m.ones(5, 2, 3, dtype=m.float64), m.ones(3, 4),
                                             m.tensor(_B)), "Weight tensor must have 3 dims"),
    ("tbc bias rank", lambda m: m.conv_tbc(m.ones(5, 2, 3, dtype=m.float64), m.tensor(_W),
                                           m.ones(1, 4)), "Bias must be 1-D"),
    ("tbc channels", lambda m: m.conv_tbc(m.ones(5, 2, 2, dtype=m.float64), m.tensor(_W),
                                          m.tensor(_B)), "Input dim 2 (input channels) is not =="),
    ("tbc bias size", lambda m: m.conv_tbc(m.ones(5, 2, 3, dtype=m.float64), m.tensor(_W),
                                           m.ones(3, dtype=m.float64)),
     "Bias size must equal dim 2 in the weight tensor"),
    ("tbc dtypes", lambda m: m.conv_tbc(m.ones(5, 2, 3), m.tensor(_W), m.tensor(_B)),
     "self and mat2 must have the same dtype, but got Float and Double"),
    ("tbc too short", lambda m: m.conv_tbc(m.ones(1, 2, 3, dtype=m.float64), m.tensor(_W),
                                           m.tensor(_B)), "Trying to create tensor with negative"),
]


@pytest.mark.parametrize("call,phrase", [e[1:] for e in _EXTRA_ERRORS],
                         ids=[e[0] for e in _EXTRA_ERRORS])
def test_extra_errors_match_torch(call, phrase):
    test_errors_match_torch(call, phrase)


def test_deprecation_warnings_match_torch():
    x = np.ones((1, 1, 2, 2))
    for lib in (glassgrad, torch):
        for name in ("upsample_bilinear", "upsample_nearest", "upsample"):
            with pytest.warns(UserWarning, match=f"`nn.functional.{name}` is deprecated"):
                getattr(lib.nn.functional, name)(lib.tensor(x), scale_factor=2)
        with pytest.warns(UserWarning, match="`eps` parameter is deprecated and has no effect"):
            lib.nn.functional.gumbel_softmax(lib.tensor(x), eps=1e-3)


def test_gumbel_hard_is_one_hot_with_soft_gradient():
    """hard=True: exactly one 1 per row (at the soft sample's argmax) and the soft sample's
    gradient, on both libraries from the same seed."""
    logits = np.random.default_rng(3).standard_normal((6, 4))
    outs = []
    for lib in (glassgrad, torch):
        lib.manual_seed(11)
        x = lib.tensor(logits, requires_grad=True)
        y = lib.nn.functional.gumbel_softmax(x, tau=0.3, hard=True)
        (y * lib.arange(4.0, dtype=lib.float64)).sum().backward()
        outs.append((y.detach().numpy(), x.grad.numpy()))
    (ya, ga), (yb, gb) = outs
    np.testing.assert_array_equal(ya, yb)
    assert (ya.sum(1) == 1).all() and set(np.unique(ya)) == {0.0, 1.0}
    np.testing.assert_allclose(ga, gb, atol=1e-10)


def test_functional_pdist_is_torch_pdist():
    assert GF.pdist is glassgrad.pdist and TF.pdist is torch.pdist
    x = np.random.default_rng(4).standard_normal((5, 3))
    grads = []
    for lib in (glassgrad, torch):
        t = lib.tensor(x, requires_grad=True)
        lib.nn.functional.pdist(t, p=1.5).sum().backward()
        grads.append(t.grad)
    assert_close(grads[0], grads[1], atol=1e-10, rtol=1e-8)


def test_functional_helper_names_are_torchs_kinds():
    import typing

    assert GF.Tensor is glassgrad.Tensor and GF.DType is TF.DType is int
    assert GF.Callable is TF.Callable and GF.Optional is TF.Optional is typing.Optional
    assert GF.TYPE_CHECKING is TF.TYPE_CHECKING is False
    for n in ("BroadcastingList1", "BroadcastingList2", "BroadcastingList3"):
        assert getattr(GF, n)[int] is getattr(TF, n)[int] is None
    for a, b in ((GF.reproducibility_notes, TF.reproducibility_notes),
                 (GF.tf32_notes, TF.tf32_notes)):
        assert a.keys() == b.keys() and all(isinstance(v, str) for v in a.values())
        "{tf32_note}{forward_reproducibility_note}".format(**GF.tf32_notes,
                                                           **GF.reproducibility_notes)


def test_torch_function_checks_match_torch():
    class Mine:
        @classmethod
        def __torch_function__(cls, func, types, args=(), kwargs=None):
            return "handled"

    m = Mine()
    for F, lib in ((GF, glassgrad), (TF, torch)):
        t = lib.ones(2)
        assert not F.has_torch_function((t,)) and not F.has_torch_function_unary(t)
        assert not F.has_torch_function_variadic(t, 1)
        assert F.has_torch_function_unary(m) and F.has_torch_function_variadic(t, m)
        assert F.handle_torch_function(F.relu, (m,), m) == "handled"


def test_boolean_dispatch_and_assert_int_or_pair_match_torch():
    def yes(x, flag=False):
        """doc"""
        return ("yes", x)

    def no(x, flag=False):
        return ("no", x)

    for F in (GF, TF):
        fn = F.boolean_dispatch("flag", 1, False, yes, no, "m", "pick")
        assert fn(1) == ("no", 1) and fn(1, True) == ("yes", 1) and fn(1, flag=True)[0] == "yes"
        assert (fn.__doc__, fn.__name__, fn.__module__, no.__doc__) == ("doc", "pick", "m", "doc")
        no.__doc__ = None
        F.assert_int_or_pair(3, "k", "{} bad")
        F.assert_int_or_pair([1, 2], "k", "{} bad")
        with pytest.raises(AssertionError, match="k bad"):
            F.assert_int_or_pair([1, 2, 3], "k", "{} bad")


@pytest.mark.parametrize("nd", [1, 2, 3])
def test_nn_grad_conv_input_weight_match_torch(nd):
    """torch.nn.grad.conv*d_input / _weight: values, and their own gradient w.r.t. weight /
    grad_output (they are differentiable), with stride, padding, dilation and groups."""
    import inspect

    for which in ("input", "weight"):
        name = f"conv{nd}d_{which}"
        assert inspect.signature(getattr(glassgrad.nn.grad, name)) == inspect.signature(
            getattr(torch.nn.grad, name))
    rng = np.random.default_rng(nd)
    xs, ws = (2, 4) + (6,) * nd, (6, 2) + (3,) * nd
    x, w = rng.standard_normal(xs), rng.standard_normal(ws)
    kw = dict(stride=2, padding=1, dilation=(1,) * (nd - 1) + (2,), groups=2)
    out = getattr(TF, f"conv{nd}d")(torch.tensor(x), torch.tensor(w), None, **kw)
    go = rng.standard_normal(tuple(out.shape))
    results = []
    for lib in (glassgrad, torch):
        wt, got = lib.tensor(w, requires_grad=True), lib.tensor(go, requires_grad=True)
        gi = getattr(lib.nn.grad, f"conv{nd}d_input")(xs, wt, got, **kw)
        gw = getattr(lib.nn.grad, f"conv{nd}d_weight")(lib.tensor(x), ws, got, **kw)
        second = lib.autograd.grad((gi ** 2).sum() + (gw ** 2).sum(), (wt, got))
        results.append([gi, gw, *second])
    for a, b in zip(*results):
        assert tuple(a.shape) == tuple(b.shape)
        assert_close(a, b, atol=1e-9, rtol=1e-9)
