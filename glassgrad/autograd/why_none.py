"""``explain_grad(tensor, loss)``: why ``tensor.grad`` is None, from what the graph already records.

No bookkeeping is added to the hot path: the reason is read from ``requires_grad``, ``is_leaf``,
``grad_fn`` and a walk of ``loss``'s graph, so causes that leave no trace in the graph (``.detach()``,
``.item()``, ``no_grad``, an integer op) are reported together as "cut before the graph"."""
from __future__ import annotations

from ._graph_walk import walk as _nodes
from .why_none_lines import copy_made_at, made_at


class GradExplanation:
    """The reason ``tensor.grad`` is None (``.cause`` a short key, ``str()`` the explanation)."""

    def __init__(self, cause: str, text: str):
        self.cause, self.text = cause, text

    def __str__(self):
        return self.text

    __repr__ = __str__


def explain_grad(tensor, loss=None) -> GradExplanation:
    """Explain why ``tensor.grad`` is None (no torch counterpart; glass-box helper).

    ``tensor``: the tensor whose ``.grad`` you expected; ``loss``: the tensor ``backward()`` was (or
    will be) called on. Returns a :class:`GradExplanation` whose ``cause`` is one of ``"has_grad"``,
    ``"no_requires_grad"``, ``"non_leaf"``, ``"not_in_graph"``, ``"backward_not_run"``.
    Raises TypeError when ``tensor`` is not a tensor."""
    if not hasattr(tensor, "requires_grad"):
        raise TypeError(f"explain_grad(): tensor must be a Tensor, got {type(tensor).__name__}")
    if not tensor.requires_grad:
        return GradExplanation("no_requires_grad", (
            f"tensor.requires_grad is False{made_at(tensor)}: autograd never tracks it. Either it "
            "was created without "
            "requires_grad=True, it is a .detach()/.item()/.numpy()/.tolist() result turned back into a "
            "tensor, the result of an integer/bool op, made under torch.no_grad(), or its module was "
            "frozen with requires_grad_(False)."))
    if not tensor.is_leaf and getattr(tensor, "retains_grad", False) is False:
        return GradExplanation("non_leaf", (
            f"tensor is not a leaf (grad_fn={type(tensor.grad_fn).__name__}){made_at(tensor)}: "
            "autograd fills .grad only "
            "for leaves; call tensor.retain_grad() before backward(), or read the leaf it came from."))
    if tensor.grad is not None:
        return GradExplanation("has_grad", "tensor.grad is set; nothing to explain")
    if loss is None:
        return GradExplanation("backward_not_run", (
            f"tensor is a leaf that requires grad{made_at(tensor)} and .grad is None: backward() "
            "has not reached it since "
            "it was created or since zero_grad(set_to_none=True)."))
    reached = any(getattr(n, "variable", None) is tensor for n in _nodes(loss.grad_fn))
    if not reached:
        return GradExplanation("not_in_graph", (
            f"loss{made_at(loss)} has a graph that never reaches this tensor{made_at(tensor)}: it "
            "is not used by loss, the path to it was cut "
            "(.detach(), .item()/.numpy() and back, no_grad, an in-place .data write), or loss was "
            "computed from another copy of the parameter (copy.deepcopy of the model, as in MAML)"
            f"{copy_made_at(tensor)}."))
    return GradExplanation("backward_not_run", (
        f"loss{made_at(loss)} has a graph that reaches this tensor{made_at(tensor)} but .grad is "
        "None: backward() has not run on loss since the "
        "graph was built or since zero_grad(set_to_none=True)."))
