"""The generic in-place and *_copy variants (issue 15, lane ops) against torch: the in-place
checks (leaf, dtype, saved tensors), PyTorch's missing derivatives, and Tensor.unfold's view."""

import numpy as np
import pytest
import torch

import glassgrad
from tests.ops_errors import same_error


@pytest.mark.parametrize("name", ["log2_", "square_", "erfc_", "tril_", "t_", "cumsum_"])
def test_inplace_on_leaf_that_requires_grad(name):
    args = (0,) if name == "cumsum_" else ()
    same_error(lambda lib: getattr(lib.ones(2, 2, requires_grad=True), name)(*args),
                "a leaf Variable that requires grad is being used in an in-place operation")


@pytest.mark.parametrize("name", ["sqrt_", "log2_", "acosh_"])
def test_integer_result_cast_error(name):
    same_error(lambda lib: getattr(lib, name)(lib.tensor([1, 2])),
                "result type Float can't be cast to the desired output type Long")


def test_saved_tensor_modified_by_a_variant():
    def fn(lib):
        y = lib.tensor([0.5, 1.5], requires_grad=True).clone()
        z = y.sin()
        y.log2_()
        z.sum().backward()

    same_error(fn, "one of the variables needed for gradient computation has been modified")


@pytest.mark.parametrize("name", ["acosh_", "asinh_", "atanh_", "arcsinh_"])
def test_writes_without_derivative(name):
    def fn(lib):
        x = lib.tensor([1.5, 2.5], requires_grad=True)
        y = x.clone() * 0.3 + 1.0 if name == "acosh_" else x.clone() * 0.3
        getattr(y, name)()
        assert y.requires_grad
        y.sum().backward()

    same_error(fn, "is not implemented")
    x = glassgrad.tensor([1.5, 2.5], dtype=glassgrad.float64)
    t = torch.tensor([1.5, 2.5], dtype=torch.float64)
    y, u = (x * 0.3 + 1.0, t * 0.3 + 1.0)
    np.testing.assert_allclose(getattr(y, name)().numpy(), getattr(u, name)().numpy())


def test_detach_copy_backward_raises():
    def fn(lib):
        y = lib.detach_copy(lib.ones(3, requires_grad=True))
        assert y.requires_grad
        y.sum().backward()

    same_error(fn, "derivative for aten::detach_copy is not implemented")


def test_cumsum_inplace_dtype_must_match():
    same_error(lambda lib: lib.ones(3).cumsum_(0, dtype=lib.float64), "Bad in-place call")


@pytest.mark.parametrize("args,phrase", [((1, 5, 1), "maximum size for tensor at dimension 1"),
                                         ((1, 2, 0), "step is 0 but must be > 0"),
                                         ((2, 1, 1), "Dimension out of range")])
def test_unfold_errors(args, phrase):
    same_error(lambda lib: lib.ones(3, 4).unfold(*args), phrase)


def test_unfold_is_a_view_and_copies_are_not():
    for lib in (glassgrad, torch):
        x = lib.zeros(2, 6)
        w = x.unfold(1, 2, 2)
        w[0, 1, 0] = 5.0
        assert x[0, 2].item() == 5.0
        c = lib.unfold_copy(x, 1, 2, 2)
        c[0, 0, 0] = 7.0
        assert x[0, 0].item() == 0.0
        s = lib.slice_copy(x, 1, 0, 4, 2)
        s[0, 0] = 9.0
        assert x[0, 0].item() == 0.0


def test_shape_inplace_keeps_identity_and_history():
    for lib in (glassgrad, torch):
        a = lib.arange(6.0, requires_grad=True)
        x = a.reshape(2, 3) * 1.0
        y = x.transpose_(0, 1)
        assert y is x and tuple(x.shape) == (3, 2)
        (x * lib.arange(6.0).reshape(3, 2)).sum().backward()
        assert a.grad.tolist() == [0.0, 2.0, 4.0, 1.0, 3.0, 5.0]


def _both(fn):
    return [fn(lib).tolist() for lib in (glassgrad, torch)]


@pytest.mark.parametrize("make", [
    lambda lib: lib.tensor([1.0, 2.0, 3.0]).apply_(lambda v: v * 2 + 1),
    lambda lib: lib.tensor([1, 2, 3]).apply_(lambda v: v * 2.7),
    lambda lib: lib.tensor([True, False]).apply_(lambda v: not v),
    lambda lib: lib.ones(2, 3).t().apply_(lambda v: v + 1),
    lambda lib: lib.arange(6.0).reshape(2, 3).map_(lib.tensor([1.0, 2.0, 3.0]), lambda a, b: a * b),
    lambda lib: lib.ones(3).map2_(lib.ones(3), lib.tensor(2.0), lambda a, b, c: a + b * c),
])
def test_apply_map_values(make):
    ours, theirs = _both(make)
    assert ours == theirs


@pytest.mark.parametrize("fn,phrase", [
    (lambda lib: lib.ones(2, requires_grad=True).clone().apply_(lambda v: v),
     "Can't call apply_() on Variable that requires grad"),
    (lambda lib: lib.ones(2).map_(lib.ones(2, requires_grad=True), lambda a, b: a),
     "Can't call map_() on Variable that requires grad"),
    (lambda lib: lib.ones(2).apply_(lambda v: "a"), "must be real number, not str"),
    (lambda lib: lib.ones(2).apply_(lambda v: None), "must be real number, not NoneType"),
    (lambda lib: lib.ones(2).apply_(3), "'int' object is not callable"),
    (lambda lib: lib.ones(2).map_(lib.ones(2, dtype=lib.float64), lambda a, b: a),
     "map_: expected torch.FloatTensor for 'other' (got torch.DoubleTensor)"),
    (lambda lib: lib.ones(2).map2_(lib.ones(2), lib.ones(2, dtype=lib.int64), lambda *a: 1),
     "map2_: expected torch.FloatTensor for argument 'y' (got torch.LongTensor)"),
    (lambda lib: lib.ones(2).map_(lib.ones(3), lambda a, b: a), "The expanded size of the"),
])
def test_apply_map_errors(fn, phrase):
    same_error(fn, phrase)


def test_apply_write_is_seen_by_saved_tensor_checks():
    """torch's apply_ leaves the version counter alone, so a node that saved the tensor uses the
    new values silently; glassgrad bumps it (like every in-place write) and raises instead."""
    w = glassgrad.ones(3, requires_grad=True)
    x = glassgrad.ones(3)
    y = (x * w).sum()
    x.apply_(lambda a: a * 2)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.backward()


@pytest.mark.parametrize("name,args", [("transpose_", (0, 1)), ("t_", ()), ("swapdims_", (0, 1))])
def test_shape_inplace_on_inference_tensor(name, args):
    def run(lib):
        with lib.inference_mode():
            c = lib.ones(2, 3)
        getattr(c, name)(*args)

    same_error(run, "Inplace update to inference tensor outside InferenceMode")


_ALIASES = {"absolute_": "abs_", "arccos_": "acos_", "arcsin_": "asin_", "arctan_": "atan_",
            "arccosh_": "acosh_", "arcsinh_": "asinh_", "arctanh_": "atanh_", "fix_": "trunc_",
            "arctan2_": "atan2_", "negative_": "neg_", "greater_": "gt_", "less_equal_": "le_"}


@pytest.mark.parametrize("alias,name", sorted(_ALIASES.items()))
def test_inplace_aliases(alias, name):
    assert getattr(glassgrad.Tensor, alias) is getattr(glassgrad.Tensor, name)
    values = []
    for lib in (glassgrad, torch):
        x = lib.tensor([0.25, 0.5, 0.75], dtype=lib.float64) + (1.5 if "cosh" in alias else 0)
        args = (lib.tensor([0.5, -1.0, 2.0], dtype=lib.float64),) if alias in (
            "arctan2_", "greater_", "less_equal_") else ()
        out = getattr(lib, alias)(x.clone(), *args) if hasattr(torch, alias) else \
            getattr(x.clone(), alias)(*args)
        values.append(out.tolist())
    np.testing.assert_allclose(values[0], values[1], rtol=1e-12)
