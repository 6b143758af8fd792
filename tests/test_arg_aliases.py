"""torch's keyword aliases ``axis=`` (of ``dim=``) and ``keepdims=`` (of ``keepdim=``) on the
functions and Tensor methods torch's argument parser reads, compared with torch (values,
gradients, the errors), and the zero-cost claim of NOTE [Alias code]."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import glassgrad
from glassgrad import _arg_alias

X = np.random.default_rng(0).standard_normal((3, 4, 2))

CALLS = [  # (function or method, positional args after the input, alias kwargs)
    ("sum", (), {"axis": 1}), ("sum", (), {"axis": (0, 2), "keepdims": True}),
    ("mean", (), {"axis": (1, 2)}), ("prod", (), {"axis": 1, "keepdim": True}),
    ("nansum", (), {"axis": 0}), ("amax", (), {"axis": 1, "keepdims": True}),
    ("amin", (), {"axis": (0, 1)}), ("max", (), {"axis": 1}), ("min", (), {"axis": 2}),
    ("argmax", (), {"axis": 1, "keepdims": True}), ("argmin", (), {"axis": 0}),
    ("std", (), {"axis": (1, 2)}), ("var", (), {"axis": 1, "keepdims": True}),
    ("std_mean", (), {"axis": 1}), ("var_mean", (), {"axis": (0, 2), "keepdims": True}),
    ("logsumexp", (), {"axis": 1}), ("cumsum", (), {"axis": 1}), ("cumprod", (), {"axis": 2}),
    ("logcumsumexp", (), {"axis": 0}), ("softmax", (), {"axis": 1}),
    ("log_softmax", (), {"axis": 2}), ("unsqueeze", (), {"axis": 0}),
    ("squeeze", (), {"axis": 0}), ("aminmax", (), {"axis": 1, "keepdims": True}),
    ("all", (), {"axis": 1}), ("any", (), {"axis": 2, "keepdims": True}),
]


def _call(lib, where, name, x, args, kwargs):
    return getattr(x, name)(*args, **kwargs) if where == "method" else \
        getattr(lib, name)(x, *args, **kwargs)


def _flat(out):
    return [o for o in (out if isinstance(out, tuple) else (out,))]


@pytest.mark.parametrize("where", ["function", "method"])
@pytest.mark.parametrize("name,args,kwargs", CALLS, ids=[f"{c[0]}-{i}" for i, c in
                                                         enumerate(CALLS)])
def test_alias_matches_torch(where, name, args, kwargs):
    if where == "method" and not hasattr(torch.Tensor, name):
        pytest.skip("torch has no such Tensor method")
    boolean = name in ("all", "any")
    outs, grads = [], []
    for lib in (torch, glassgrad):
        x = lib.tensor(X > 0 if boolean else X, requires_grad=not boolean)
        out = _flat(_call(lib, where, name, x, args, kwargs))
        outs.append([o.detach().numpy() for o in out])
        if not boolean and out[0].dtype.is_floating_point:
            out[0].sum().backward()
            grads.append(x.grad.numpy())
    for t, g in zip(*outs):
        assert g.dtype == t.dtype and g.shape == t.shape
        np.testing.assert_allclose(g, t, rtol=1e-12)
    if grads:
        np.testing.assert_allclose(grads[1], grads[0], rtol=1e-12, atol=1e-14)


def test_cat_and_stack_take_axis():
    for name in ("cat", "concat", "stack"):
        t = getattr(torch, name)([torch.tensor(X)] * 2, axis=1)
        g = getattr(glassgrad, name)([glassgrad.tensor(X)] * 2, axis=1)
        np.testing.assert_array_equal(g.numpy(), t.numpy())


@pytest.mark.parametrize("lib", [torch, glassgrad], ids=["torch", "glassgrad"])
def test_errors_as_torchs(lib):
    x = lib.tensor(X)
    with pytest.raises(TypeError, match="unexpected keyword argument 'axis'"):
        x.sum(axis=1, dim=0)  # both names
    with pytest.raises(TypeError, match="unexpected keyword argument 'axis'"):
        lib.norm(x, axis=1)  # defined in Python in torch: no alias
    with pytest.raises(TypeError, match="unexpected keyword argument 'axis'"):
        lib.split(x, 2, axis=1)
    with pytest.raises(TypeError):
        x.cumsum()  # a required dim stays required


def test_alias_costs_one_test_and_keeps_identity():
    """NOTE [Alias code]: the function object is the same one (no wrapper frame), its code
    carries the alias parameters, and tracebacks still name the original file."""
    import glassgrad.ops.reduction as red

    assert glassgrad.Tensor.sum is red.sum
    code = red.sum.__code__
    assert "axis" in code.co_varnames and code.co_filename == red.__file__
    keys = {k.rsplit(".", 1)[-1] for k in _arg_alias._OPS}
    assert {"sum", "mean", "max", "cumsum", "softmax", "cat", "std_mean"} <= keys
    assert not keys & _arg_alias.PYTHON_LEVEL
