"""``autograd.grad(..., is_grads_batched=True)``: one backward per row of the cotangents'
leading dimension, stacked (torch vmaps the backward; glassgrad loops)."""

from __future__ import annotations

from . import engine as _engine


def batched_grad(outputs, inputs, grad_outputs, create_graph, allow_unused, materialize, retain):
    """The gradients for each row of ``grad_outputs``' first dimension, stacked; RuntimeError
    (torch's) when the rest of a cotangent's shape is not its output's."""
    if grad_outputs is None:
        raise RuntimeError("is_grads_batched=True needs grad_outputs with a leading batch dim")
    for i, (o, g) in enumerate(zip(outputs, grad_outputs)):
        if isinstance(g, _engine._Tensor) and tuple(g.shape[1:]) != tuple(o.shape):
            raise RuntimeError(
                "If `is_grads_batched=True`, we interpret the first dimension of each grad_output "
                "as the batch dimension. The sizes of the remaining dimensions are expected to "
                "match the shape of corresponding output, but a mismatch was detected: "
                f"grad_output[{i}] has a shape of glassgrad.Size({list(g.shape[1:])}) and "
                f"output[{i}] has a shape of glassgrad.Size({list(o.shape)}). If you only want "
                "some tensors in `grad_output` to be considered batched, consider using vmap.")
    n = grad_outputs[0].shape[0]
    rows = []
    for k in range(n):
        rows.append(_engine.grad(outputs, inputs, tuple(g[k] for g in grad_outputs), True,
                                 create_graph, allow_unused=allow_unused,
                                 materialize_grads=materialize))
    from .. import ops

    return tuple(
        None if rows[0][j] is None else ops.shape.stack([r[j] for r in rows], 0)
        for j in range(len(inputs))
    )
