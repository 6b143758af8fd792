"""In-place writes torch refuses on views it cannot rebase (NOTE [View creation] in
glassgrad/ops/_view_meta.py), on views of leaves that require grad after the fact, and
``x.grad = x`` (issue 18.3): the same error, or the same result, on both libraries."""

import pytest
import torch

import glassgrad
from tests.adversarial_util import _same


def _nonleaf(lib, requires_grad=True):
    x = lib.tensor([[0.5, -1.0, 2.0], [1.5, 0.25, -0.75], [-2.0, 3.0, 0.1], [0.7, -0.3, 1.2]],
                   requires_grad=requires_grad)
    return x, x * 1


def _no_grad(lib, fn):
    with lib.no_grad():
        return fn()


def _hooked(lib, after):
    lib.manual_seed(0)
    lin = lib.nn.Linear(3, 3)
    lin.register_full_backward_hook(lambda mod, grad_input, grad_output: None)
    return lin, after(lib, lin)


def _view_of_leaf_after(lib, view):
    a = lib.tensor([1.0, 2.0, 3.0])
    b = view(a)
    a.requires_grad = True
    b.add_(5)


CASES = {
    "unbind": lambda lib, y: y.unbind(0)[0].mul_(2),
    "unbind_dim1_piece1": lambda lib, y: y.unbind(1)[1].add_(1),
    "split": lambda lib, y: y.split(2)[0].add_(1),
    "split_one_piece": lambda lib, y: y.split(4)[0].add_(1),
    "split_sizes": lambda lib, y: y.split([1, 3])[1].add_(1),
    "split_with_sizes": lambda lib, y: y.split_with_sizes([1, 3])[0].add_(1),
    "chunk": lambda lib, y: y.chunk(2)[1].add_(1),
    "unbind_setitem": lambda lib, y: y.unbind(0)[0].__setitem__(0, 5.0),
    "unbind_setitem_slice": lambda lib, y: y.unbind(0)[2].__setitem__(slice(1, None), 5.0),
    "view_of_piece": lambda lib, y: y.unbind(0)[0][1:].add_(1),
    "view_view_of_piece": lambda lib, y: y.unbind(0)[3].view(3).add_(1),
    "piece_of_leaf": lambda lib, y: _nonleaf(lib)[0].unbind(0)[0].mul_(2),
    "piece_of_constant_written_with_grad": lambda lib, y: lib.ones(4, 3).unbind(0)[0].add_(y[0]),
    # allowed
    "unsafe_split": lambda lib, y: y.unsafe_split(2)[0].add_(1),
    # (add_: torch does not rebase the base's history over an unsafe piece's write)
    "unsafe_chunk": lambda lib, y: y.unsafe_chunk(2)[1].add_(3),
    "tensor_split": lambda lib, y: y.tensor_split(2)[0].add_(1),
    "index_instead": lambda lib, y: y[0].mul_(2),
    "piece_under_no_grad": lambda lib, y: _no_grad(lib, lambda: y.unbind(0)[0].mul_(2)),
    "piece_made_under_no_grad": lambda lib, y: _no_grad(lib, lambda: y.unbind(0))[0].mul_(2),
    "piece_of_constant": lambda lib, y: lib.ones(4, 3).unbind(0)[0].mul_(2),
    "detached_piece": lambda lib, y: y.unbind(0)[0].detach().mul_(2),
    "cloned_piece": lambda lib, y: y.unbind(0)[0].clone().mul_(2),
    # views of a leaf that requires grad after the fact
    "view_of_leaf_after": lambda lib, y: _view_of_leaf_after(lib, lambda a: a[:]),
    "slice_of_leaf_after": lambda lib, y: _view_of_leaf_after(lib, lambda a: a[1:]),
    "setitem_view_of_leaf_after": lambda lib, y: _setitem_after(lib),
    # full backward hooks
    "hook_then_relu_inplace": lambda lib, y: _hooked(
        lib, lambda lib, lin: lib.nn.Sequential(lin, lib.nn.ReLU(inplace=True))(
            lib.ones(2, 3)))[1].sum().backward(),
    "hook_then_inplace_on_a_copy": lambda lib, y: _hooked(
        lib, lambda lib, lin: (lin(lib.ones(2, 3)) * 1).relu_())[1].sum().backward(),
    "hook_output_written_under_no_grad": lambda lib, y: _hooked(
        lib, lambda lib, lin: _no_grad(lib, lambda: lin(lib.ones(2, 3)).relu_())),
    "grad_is_self": lambda lib, y: _assign_grad(lib, lambda x: x),
    "grad_is_detached_self": lambda lib, y: _assign_grad(lib, lambda x: x.detach()),
}


def _setitem_after(lib):
    a = lib.tensor([1.0, 2.0, 3.0])
    b = a[1:]
    a.requires_grad = True
    b[0] = 7.0


def _assign_grad(lib, grad_of):
    x = lib.tensor([1.0, 2.0], requires_grad=True)
    x.grad = grad_of(x)
    return x.grad


def _outcome(lib, case):
    x, y = _nonleaf(lib)
    try:
        CASES[case](lib, y)
    except RuntimeError as e:
        return str(e).split("\n")[0], None
    (y * y).sum().backward()
    return None, x.grad


@pytest.mark.parametrize("case", list(CASES))
def test_inplace_on_views_matches_torch(case):
    (ours, our_grad), (theirs, their_grad) = _outcome(glassgrad, case), _outcome(torch, case)
    assert ours == theirs
    if theirs is None:
        _same(our_grad, their_grad, case)
