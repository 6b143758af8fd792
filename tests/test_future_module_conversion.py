"""``torch.__future__``'s conversion switches: with overwrite on, ``module.double()`` puts new
Parameter objects (and grads) in the module, as torch does; swap (which takes precedence) and
the default keep the objects."""

import pytest
import torch

import glassgrad


@pytest.mark.parametrize("overwrite,swap", [(False, False), (True, False), (True, True),
                                            (False, True)])
def test_conversion_identity_matches_torch(overwrite, swap):
    seen = []
    for lib in (torch, glassgrad):
        fut = __import__(lib.__name__ + ".__future__", fromlist=["x"])
        assert fut.get_overwrite_module_params_on_conversion() is False
        fut.set_overwrite_module_params_on_conversion(overwrite)
        fut.set_swap_module_params_on_conversion(swap)
        try:
            m = lib.nn.Linear(3, 2)
            m(lib.ones(1, 3)).sum().backward()
            w, g = m.weight, m.weight.grad
            m.double()
            seen.append((m.weight is w, m.weight.grad is g, m.weight.dtype == lib.float64,
                         m.weight.grad.dtype == lib.float64, type(m.weight).__name__,
                         m.weight.requires_grad, w.dtype == lib.float64,
                         fut.get_overwrite_module_params_on_conversion(),
                         fut.get_swap_module_params_on_conversion()))
        finally:
            fut.set_overwrite_module_params_on_conversion(False)
            fut.set_swap_module_params_on_conversion(False)
    print(seen)
    assert seen[1] == seen[0]
