"""explain_grad names the user's source line behind each cause (glassgrad/autograd/
why_none_lines.py): the line that made the tensor (and the ``no_grad`` block around it), the
loss's line, the deepcopy that made the model copy. Whether ``.grad`` is None is torch's, run on
the same code."""

from __future__ import annotations

import copy
import inspect
import warnings

import torch

import glassgrad
from glassgrad.autograd import explain_grad


def _line_of(fn, text: str) -> str:
    lines, start = inspect.getsourcelines(fn)
    k = next(i for i, line in enumerate(lines) if text in line)
    return f"{__file__}:{start + k}"


def _grad_is_none_in_both(fn):
    theirs = fn(torch)
    ours = fn(glassgrad)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # (a non-leaf's .grad warns in both)
        assert (ours[-1].grad is None) == (theirs[-1].grad is None) is True
    return ours


def test_no_grad_names_the_line_and_its_block():
    def run(lib):
        w = lib.ones(3, requires_grad=True)
        with lib.no_grad():
            y = w * 2
        loss = (w * 3).sum()
        loss.backward()
        return explain_grad(y, loss) if lib is glassgrad else None, y

    text = str(_grad_is_none_in_both(run)[0])
    assert f"(y made at {_line_of(run, 'y = w * 2')}: `y = w * 2`, inside `with lib.no_grad():`)" \
        in text


def test_tolist_round_trip_names_its_line():
    def run(lib):
        w = lib.ones(3, requires_grad=True)
        z = lib.tensor(w.tolist())
        return explain_grad(z) if lib is glassgrad else None, w

    text = str(run(glassgrad)[0])
    assert f"z made at {_line_of(run, 'z = lib.tensor')}: `z = lib.tensor(w.tolist())`" in text


def test_non_leaf_names_its_line():
    def run(lib):
        w = lib.ones(3, requires_grad=True)
        h = w * 2
        loss = h.sum()
        loss.backward()
        return explain_grad(h, loss) if lib is glassgrad else None, h

    got = _grad_is_none_in_both(run)[0]
    assert got.cause == "non_leaf" and f"h made at {_line_of(run, 'h = w * 2')}" in str(got)


def test_frozen_module_names_the_line_that_froze_it():
    def run(lib):
        lin = lib.nn.Linear(2, 2).requires_grad_(False)
        loss = lin(lib.ones(1, 2, requires_grad=True)).sum()
        loss.backward()
        return explain_grad(lin.weight, loss) if lib is glassgrad else None, lin.weight

    got = _grad_is_none_in_both(run)[0]
    assert f"lin.weight made at {_line_of(run, 'requires_grad_(False)')}" in str(got)


def test_deepcopy_names_the_copy_and_the_loss():
    def run(lib):
        model = lib.nn.Linear(2, 1)
        clone = copy.deepcopy(model)
        loss = clone(lib.ones(1, 2)).sum()
        loss.backward()
        return explain_grad(model.weight, loss) if lib is glassgrad else None, model.weight

    got = _grad_is_none_in_both(run)[0]
    text = str(got)
    assert got.cause == "not_in_graph"
    assert f"(the copy made at {_line_of(run, 'deepcopy(model)')}: " in text
    assert f"(loss made at {_line_of(run, 'loss = clone')}: " in text


def test_detach_in_the_loss_names_the_loss_line():
    def run(lib):
        v = lib.ones(3, requires_grad=True)
        loss = (v.detach() * 2).sum() + lib.ones(1, requires_grad=True).sum()
        loss.backward()
        return explain_grad(v, loss) if lib is glassgrad else None, v

    text = str(_grad_is_none_in_both(run)[0])
    assert f"loss made at {_line_of(run, 'v.detach()')}: `loss = (v.detach() * 2)" in text


def test_set_to_none_names_the_parameter():
    def run(lib):
        model = lib.nn.Linear(2, 1)
        model(lib.ones(1, 2)).sum().backward()
        model.zero_grad(set_to_none=True)
        return explain_grad(model.weight) if lib is glassgrad else None, model.weight

    got = _grad_is_none_in_both(run)[0]
    assert got.cause == "backward_not_run"
    assert f"model.weight made at {_line_of(run, 'model = lib.nn.Linear')}" in str(got)
