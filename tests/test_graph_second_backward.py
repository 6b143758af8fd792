"""A second backward through a node that saved anything, indices and masks included, raises as in
torch; through nodes that saved nothing it accumulates again (issue 18.3; NOTE [Freed
attributes] in glassgrad/ops/primitive.py)."""

import pytest
import torch

import glassgrad
from tests.adversarial_util import _same


def _idx(lib):
    return lib.tensor([1, 2])


def _col(lib):
    return lib.tensor([[0], [1], [2], [0]])


def _on_clone(write):
    def run(lib, x):
        c = x.clone()
        write(lib, c)
        return c.sum()

    return run


def _setitem_repro(lib, x):  # the repro: only indices are saved
    c = lib.zeros(4, 3)
    c[[1, 2]] = x[[1, 1]]
    return c.sum()


def _fn(lib):
    return lib.nn.functional


CASES = {
    # saved nothing: a second backward accumulates
    "sum": lambda lib, x: x.sum(),
    "add_number": lambda lib, x: (x + 1).sum(),
    "sub_tensor": lambda lib, x: (x - lib.ones(4, 3)).sum(),
    "add_alpha": lambda lib, x: lib.add(lib.ones(4, 3), x, alpha=2).sum(),
    "sub_alpha": lambda lib, x: lib.sub(lib.ones(4, 3), x, alpha=2).sum(),
    "rsub": lambda lib, x: (1 - x).sum(),
    "mean": lambda lib, x: x.mean(),
    "views": lambda lib, x: x.t().reshape(12)[2:7].sum() + x[1].sum() + x[..., 1].sum(),
    "expand": lambda lib, x: x[:1].expand(5, 3).sum(),
    "split_unbind_chunk": lambda lib, x: (x.split(2)[0].sum() + x.unbind(1)[2].sum()
                                          + x.chunk(2)[1].sum()),
    "cat_stack": lambda lib, x: lib.cat([x, x]).sum() + lib.stack([x, x]).sum(),
    "flip_roll_repeat": lambda lib, x: x.flip(0).sum() + x.roll(1, 0).sum() + x.repeat(2, 1).sum(),
    "repeat_interleave_int": lambda lib, x: x.repeat_interleave(2, 0).sum(),
    "tril_diagonal": lambda lib, x: x.tril().sum() + x.diagonal().sum(),
    "cumsum": lambda lib, x: x.cumsum(1).sum(),
    "pad_constant": lambda lib, x: _fn(lib).pad(x, (1, 1)).sum(),
    "fill_whole": _on_clone(lambda lib, c: c.fill_(2.0)),
    "copy_whole": _on_clone(lambda lib, c: c.copy_(lib.ones(3))),
    "index_add_constant_source": lambda lib, x: x.index_add(0, _idx(lib), lib.ones(2, 3)).sum(),
    "scatter_add_constant_src": lambda lib, x: x.scatter_add(1, _col(lib), lib.ones(4, 1)).sum(),
    # saved only an index, a mask or a number: a second backward raises
    "setitem_repro": _setitem_repro,
    "getitem_list": lambda lib, x: x[[1, 1]].sum(),
    "getitem_tensor": lambda lib, x: x[_idx(lib)].sum(),
    "getitem_bool": lambda lib, x: x[x > 0].sum(),
    "getitem_columns": lambda lib, x: x[:, [0, 2]].sum(),
    "index_select": lambda lib, x: x.index_select(0, _idx(lib)).sum(),
    "take": lambda lib, x: x.take(_idx(lib)).sum(),
    "embedding": lambda lib, x: _fn(lib).embedding(lib.tensor([[0, 2]]), x).sum(),
    "masked_select": lambda lib, x: x.masked_select(lib.tensor([True, False, True])).sum(),
    "masked_fill": lambda lib, x: x.masked_fill(lib.tensor([True, False, True]), 0.0).sum(),
    "masked_fill_tensor": lambda lib, x: x.masked_fill(lib.tensor([True, False, True]),
                                                       lib.tensor(0.0)).sum(),
    "masked_fill_": _on_clone(lambda lib, c: c.masked_fill_(lib.tensor([True, False, True]), 0.)),
    "where": lambda lib, x: lib.where(x > 0, x, lib.zeros(4, 3)).sum(),
    "hardtanh_relu6_threshold": lambda lib, x: (_fn(lib).hardtanh(x).sum() + _fn(lib).relu6(x).sum()
                                                + _fn(lib).threshold(x, 0.1, 2.0).sum()),
    "gather": lambda lib, x: x.gather(1, _col(lib)).sum(),
    "take_along_dim": lambda lib, x: lib.take_along_dim(x, _col(lib), 1).sum(),
    "scatter": lambda lib, x: lib.zeros(4, 3).scatter(1, _col(lib), x[:, :1]).sum(),
    "scatter_value": lambda lib, x: x.scatter(1, _col(lib), 0.0).sum(),
    "scatter_add_src": lambda lib, x: lib.zeros(4, 3).scatter_add(1, _col(lib), x[:, :1]).sum(),
    "index_add_source": lambda lib, x: lib.zeros(4, 3).index_add(0, lib.tensor([1, 2, 1, 0]),
                                                                 x).sum(),
    "index_copy": lambda lib, x: x.index_copy(0, _idx(lib), lib.ones(2, 3)).sum(),
    "index_fill": lambda lib, x: x.index_fill(0, _idx(lib), 0.0).sum(),
    "index_put_accumulate": lambda lib, x: x.index_put((lib.tensor([1, 1]),), lib.ones(3),
                                                       accumulate=True).sum(),
    "setitem_basic": _on_clone(lambda lib, c: c.__setitem__(0, 5.0)),
    "setitem_bool": _on_clone(lambda lib, c: c.__setitem__(c > 0, 0.0)),
    "inplace_on_view": _on_clone(lambda lib, c: c[0].add_(1.0)),
    "max_min_dim": lambda lib, x: x.max(1).values.sum() + x.min(0).values.sum(),
    "sort_topk_kthvalue": lambda lib, x: (x.sort(1).values.sum() + x.topk(2, 1).values.sum()
                                          + x.kthvalue(2, 1).values.sum()),
    "max_pool": lambda lib, x: _fn(lib).max_pool2d(x.reshape(1, 1, 4, 3), 2).sum(),
    "max_pool1d_indices": lambda lib, x: _fn(lib).max_pool1d(x.unsqueeze(0), 2,
                                                             return_indices=True)[0].sum(),
    "adaptive_max_pool": lambda lib, x: _fn(lib).adaptive_max_pool1d(x.unsqueeze(0), 2).sum(),
    "avg_pool": lambda lib, x: _fn(lib).avg_pool2d(x.reshape(1, 1, 4, 3), 2).sum(),
    "adaptive_avg_pool": lambda lib, x: _fn(lib).adaptive_avg_pool2d(x.reshape(1, 1, 4, 3),
                                                                     2).sum(),
    "pad_reflect": lambda lib, x: _fn(lib).pad(x.unsqueeze(0), (1, 1), mode="reflect").sum(),
    "pad_circular": lambda lib, x: _fn(lib).pad(x.unsqueeze(0), (1, 1), mode="circular").sum(),
    "repeat_interleave_tensor": lambda lib, x: x.repeat_interleave(lib.tensor([1, 2, 1, 0]),
                                                                   0).sum(),
    "nll_loss": lambda lib, x: _fn(lib).nll_loss(x, lib.tensor([0, 1, 2, 0])),
    "nll_loss_none": lambda lib, x: _fn(lib).nll_loss(x, lib.tensor([0, 1, 2, 0]),
                                                      reduction="none").sum(),
    "mul_number": lambda lib, x: (x * 2).sum(),
}


def _twice(lib, case):
    lib.manual_seed(0)
    x = lib.tensor([[0.5, -1.0, 2.0], [1.5, 0.25, -0.75], [-2.0, 3.0, 0.1], [0.7, -0.3, 1.2]],
                   requires_grad=True)
    y = CASES[case](lib, x)
    y.backward()
    try:
        y.backward()
    except RuntimeError as e:
        assert "Trying to backward through the graph a second time" in str(e)
        return "raised", x.grad
    return "ran again", x.grad


@pytest.mark.parametrize("case", list(CASES))
def test_second_backward_matches_torch(case):
    (ours, our_grad), (theirs, their_grad) = _twice(glassgrad, case), _twice(torch, case)
    assert ours == theirs
    _same(our_grad, their_grad, case)


def test_a_freed_index_is_gone_but_a_number_stays():
    """torch's ``_saved_index`` of a freed GatherBackward0 raises; ``_saved_dim`` is still 1."""
    for lib in (glassgrad, torch):
        x = lib.ones(4, 3, requires_grad=True)
        y = x.gather(1, lib.tensor([[0], [1], [2], [0]]))
        y.sum().backward()
        assert y.grad_fn._saved_dim == 1
        with pytest.raises(RuntimeError, match="backward through the graph a second time"):
            y.grad_fn._saved_index
