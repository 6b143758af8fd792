"""``grad_fn._saved_self`` & co. (PyTorch's saved-tensor attributes on graph nodes), against torch:
the saved values, the attributes, and the error once backward has freed them."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import glassgrad

CASES = {  # op -> the _saved_* names torch and glassgrad both answer
    "exp": (lambda x: x.exp(), ["result"]),
    "tanh": (lambda x: x.tanh(), ["result"]),
    "pow": (lambda x: x**3, ["self", "exponent"]),
    "mul": (lambda x: x * x.flip(0), ["self", "other"]),
    "div": (lambda x: x / (x + 3), ["self", "other"]),
    "log": (lambda x: x.log(), ["self"]),
    "sum_dim": (lambda x: x.sum(0, keepdim=True), ["keepdim"]),
}


def _value(v):
    return v.detach().numpy() if hasattr(v, "detach") else v


@pytest.mark.parametrize("case", sorted(CASES))
def test_saved_attributes_match_torch(case):
    fn, keys = CASES[case]
    data = np.array([0.5, 1.5, 2.5])
    for key in keys:
        ours = fn(glassgrad.tensor(data, requires_grad=True)).grad_fn
        theirs = fn(torch.tensor(data, requires_grad=True)).grad_fn
        a, b = _value(getattr(ours, "_saved_" + key)), _value(getattr(theirs, "_saved_" + key))
        np.testing.assert_allclose(a, b, rtol=1e-12)
        assert "_saved_" + key in dir(ours)


def test_saved_output_is_the_output_and_freed_after_backward():
    for lib in (glassgrad, torch):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        y = x.exp()
        saved = y.grad_fn._saved_result
        assert saved.grad_fn is y.grad_fn or lib is torch  # torch re-attaches it too
        np.testing.assert_allclose(saved.detach().numpy(), y.detach().numpy())
        y.sum().backward()
        with pytest.raises(RuntimeError, match="directly access saved tensors after they have"):
            _ = y.grad_fn._saved_result


def test_unknown_saved_name_is_an_attribute_error():
    y = glassgrad.tensor([1.0], requires_grad=True).exp()
    with pytest.raises(AttributeError, match="_saved_nothing"):
        _ = y.grad_fn._saved_nothing
    assert not hasattr(y.grad_fn, "_saved_other")
