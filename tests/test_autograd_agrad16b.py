"""More of issue 15's autograd remainder against torch: a grad_fn called with the wrong number
of gradients, the deleters and readers of ``requires_grad`` / ``_grad_fn`` / ``_backward_hooks``,
``InplaceFunction``, inference_mode's view+inplace errors and ``resize_`` inside inference_mode."""

from __future__ import annotations

import pytest

from tests.autograd_oracle import same, same_error


@pytest.mark.parametrize("n", [0, 2])
def test_grad_fn_call_checks_the_number_of_gradients(n):
    def run(torch):
        x = torch.ones(1, requires_grad=True)
        y = x**2
        y.grad_fn(*[x.detach()] * n)

    same_error(run, TypeError, f"expected 1 arguments, got {n} instead")


def test_grad_fn_call_with_one_gradient_runs_the_backward():
    def run(torch):
        x = torch.tensor([1.5], requires_grad=True)
        return (x**2).grad_fn(torch.tensor([2.0]))

    same(run)

