"""``torch.batch_norm_update_stats`` (issue 16, lane nnrest): batch norm's per-channel statistics
with the running-buffer update and no normalisation."""

from __future__ import annotations

from .autograd.grad_mode import no_grad


def batch_norm_update_stats(input, running_mean, running_var, momentum):
    """``torch.batch_norm_update_stats(input, running_mean, running_var, momentum)``.

    ``input`` is ``(N, C, *)``; returns ``(mean, var)``, each ``(C,)`` in ``input``'s dtype, with
    ``var`` the biased (population) variance over every dim but 1. When given, the ``(C,)`` running
    buffers are updated in place as torch does: ``running = (1 - momentum) * running + momentum *
    stat``, the variance term unbiased (``n / (n - 1)``). No autograd graph is recorded.

    Raises RuntimeError for an empty or under-2-d input and for buffers whose size is not C.
    """
    shape = tuple(input.shape)
    if input.numel() == 0:
        raise RuntimeError(f"input tensor must have at least one element, but got input_sizes = "
                           f"{list(shape)} (batch_norm_update_stats: the per-channel mean and "
                           f"variance of an empty batch are undefined)")
    if input.dim() < 2:
        raise RuntimeError(f"batch_norm_update_stats: expected input of at least 2 dims (N, C, *), "
                           f"got shape {list(shape)}")
    channels = shape[1]
    for name, buf in (("running_mean", running_mean), ("running_var", running_var)):
        if buf is not None and tuple(buf.shape) != (channels,):
            raise RuntimeError(f"batch_norm_update_stats: {name} must have shape [{channels}] "
                               f"(input's channel dim 1), got {list(buf.shape)}")
    dims = (0,) + tuple(range(2, len(shape)))
    n = input.numel() // channels
    with no_grad():
        data = input.detach()
        mean = data.mean(dims)
        var = data.var(dims, unbiased=False)
        if running_mean is not None:
            running_mean.mul_(1 - momentum).add_(mean.to(running_mean.dtype) * momentum)
        if running_var is not None:
            # NOTE: torch keeps the biased variance for the output but the unbiased one in the buffer
            unbiased = var * (n / (n - 1)) if n > 1 else var * float("inf")
            running_var.mul_(1 - momentum).add_(unbiased.to(running_var.dtype) * momentum)
    return mean, var
