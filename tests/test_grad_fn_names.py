"""``grad_fn.name()`` and the shape of ``next_functions`` against torch, op by op: the graph a user
prints (or draws with ``viz.make_dot``) reads as PyTorch's. The derivatives themselves are checked
by the op table (tests/op_db, tests/test_ops.py)."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import glassgrad

F = "m.nn.functional."

# name -> (expression on `m` (the library) and the inputs below, reason it does not match yet)
CASES = {
    "t": "x.t()",
    "t_vector": "w.t()",
    "transpose": "x.transpose(0, 1)",
    "transpose_same_dim": "x.transpose(1, 1)",
    "swapaxes": "b.swapaxes(0, 2)",
    "mT": "b.mT",
    "T": "x.T",
    "permute": "b.permute(2, 0, 1)",
    "unsqueeze": "x.unsqueeze(0)",
    "squeeze": "r.squeeze()",
    "squeeze_dim": "r.squeeze(0)",
    "squeeze_dims": "r.squeeze((0, 1))",
    "select": "x[0]",
    "select_fn": "m.select(b, 1, -1)",
    "select_column": "x[:, 1]",
    "select_ellipsis": "b[..., 0]",
    "select_select": "b[0, 1]",
    "slice_then_select": "b[1:, 0]",
    "select_then_slice": "b[0, 1:]",
    "slice": "x[:, :1]",
    "slice_rows": "x[:2]",
    "slice_step": "x[::2]",
    "slice_all": "x[:]",
    "index_none": "x[None]",
    "index_ellipsis": "x[...]",
    "advanced_index": "x[[0, 2]]",
    "narrow": "x.narrow(1, 1, 2)",
    "split": "x.split(2)[1]",
    "split_sizes": "x.split([1, 2])[1]",
    "chunk": "x.chunk(2)[1]",
    "unbind": "x.unbind(0)[1]",
    "tensor_split": "x.tensor_split(2)[1]",
    "mv": "m.mv(x, w)",
    "matmul_matrix_vector": "x @ w",
    "dot": "m.dot(w, w)",
    "matmul_vectors": "w @ w",
    "mm": "m.mm(x, y)",
    "bmm": "m.bmm(b, b.mT)",
    "max_dim": "x.max(1)[0]",
    "max_dim_values": "x.max(1, keepdim=True).values",
    "min_dim": "m.min(x, 0)[0]",
    "max": "x.max()",
    "min": "x.min()",
    "addcmul": "m.addcmul(x, x, w, value=0.5)",
    "addcdiv": "m.addcdiv(x, x, x.exp())",
    "lerp": "m.lerp(x, x * 2, 0.3)",
    "lerp_tensor_weight": "m.lerp(x, x * 2, m.full((3, 4), 0.3, dtype=m.float64))",
    "gelu": F + "gelu(x)",
    "gelu_tanh": F + "gelu(x, approximate='tanh')",
    "repeat": "x.repeat(2, 1)",
    "repeat_new_dims": "w.repeat(2, 3)",
    "tile": "w.tile(2)",
    "diag_of_matrix": "m.diag(s)",
    "diag_of_vector": "m.diag(w)",
    "diagonal": "m.diagonal(s)",
    "trace": "m.trace(s)",
    "masked_fill": "x.masked_fill(x > 0, 0.0)",
    "masked_fill_tensor": "x.masked_fill(x > 0, w.sum())",
    "log_softmax": "m.log_softmax(x, 1)",
    "softmax": "m.softmax(x, 1)",
    "softmax_functional": F + "softmax(x, dim=1)",
    "sort": "x.sort(1)[0]",
    "topk": "x.topk(2)[0]",
    "einsum": "m.einsum('ij,jk->ik', x, y)",
}
# glassgrad records a chain of basic indices as one node named after PyTorch's last one (PyTorch
# records one node per step), so only the name is compared
NAME_ONLY = {"select_select", "slice_then_select", "select_then_slice"}
PENDING = {  # glassgrad's node differs; the reason, and what would fix it
    "einsum": "glassgrad contracts in one Einsum node; PyTorch's last node depends on the "
              "equation (bmm and views)",
}


def _inputs(lib):
    rng = np.random.default_rng(0)
    shapes = {"x": (3, 4), "y": (4, 5), "w": (4,), "b": (2, 3, 4), "s": (3, 3), "r": (1, 1, 4)}
    return {k: lib.tensor(rng.standard_normal(v), requires_grad=True) for k, v in shapes.items()}


def _node(name):
    return name.replace("torch::autograd::", "")


def _shape(fn):
    """The node's name and, per edge, the next node's name (None for no edge) and input_nr."""
    return _node(fn.name()), [(None if n is None else _node(n.name()), i)
                              for n, i in fn.next_functions]


def _run(lib, expr, name_only=False):
    out = eval(expr, {"m": lib}, _inputs(lib))  # the fixed expressions of CASES
    return _shape(out.grad_fn)[0] if name_only else _shape(out.grad_fn)


@pytest.mark.parametrize("case", list(CASES))
def test_grad_fn_name_and_next_functions_match_torch(case, request):
    if case in PENDING:
        request.applymarker(pytest.mark.xfail(reason=PENDING[case], strict=False))
    name_only = case in NAME_ONLY
    assert _run(glassgrad, CASES[case], name_only) == _run(torch, CASES[case], name_only)


def test_split_and_unbind_pieces_match_torch_and_backprop():
    for lib in (torch, glassgrad):
        x = _inputs(lib)["x"]
        pieces = x.split([1, 2]) + x.unbind(1)
        assert [_node(p.grad_fn.name()) for p in pieces] == \
            ["SplitWithSizesBackward0"] * 2 + ["UnbindBackward0"] * 4
    ours, theirs = (_inputs(lib)["x"] for lib in (glassgrad, torch))
    for x in (ours, theirs):
        a, b = x.split([1, 2])
        (a.sum() * 2 + (b * b).sum() + x.unbind(1)[3].sum()).backward()
    np.testing.assert_allclose(ours.grad.numpy(), theirs.grad.numpy(), atol=1e-12)


def test_renamed_views_stay_views_and_rebase_history():
    """The renamed view nodes keep what made them views: in-place writes through x.t(),
    x.unsqueeze(0), x[0] and x.narrow reach the base's gradient as in torch."""
    grads = []
    for lib in (glassgrad, torch):
        x = _inputs(lib)["x"]
        base = x * 1
        base.t()[0].mul_(3)
        base.unsqueeze(0).squeeze(0)[1].add_(1)
        base.narrow(1, 2, 2).mul_(2)
        (base * base).sum().backward()
        grads.append(x.grad.numpy())
    np.testing.assert_allclose(grads[0], grads[1], atol=1e-12)
