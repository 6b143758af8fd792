"""SyncBatchNorm's statistics over every rank of a process group, written in differentiable ops:
the per-channel sums go through an all-reduce whose backward all-reduces the gradient (the
derivative of a sum over ranks, as PyTorch's ``SyncBatchNorm`` backward reduces ``sum_dy`` and
``sum_dy_xmu``), so backward needs no formula of its own."""

from __future__ import annotations

from ...autograd.function import Function
from ...autograd.grad_mode import no_grad


def _dist():
    from ... import distributed

    return distributed


def world_size_to_sync(group) -> int:
    """The group's size when statistics must be synchronised, else 1 (no distributed package, no
    process group initialised, or a single rank)."""
    try:
        dist = _dist()
    except ImportError:  # NOTE: mpi4py missing: one process, plain batch norm
        return 1
    if not dist.is_available() or not dist.is_initialized():
        return 1
    return dist.get_world_size(group)


class _AllReduceSum(Function):
    """``y = sum over ranks of x``; ``grad_x = sum over ranks of grad_y``."""

    @staticmethod
    def forward(ctx, x, group):
        ctx.group = group
        result = x.clone()
        _dist().all_reduce(result, group=group)
        return result

    @staticmethod
    def backward(ctx, grad):
        grad_x = grad.clone()
        _dist().all_reduce(grad_x, group=ctx.group)
        return grad_x, None


def sync_batch_norm(x, weight, bias, running_mean, running_var, eps, momentum, group):
    """Batch norm of ``x`` (N, C, *) with mean and biased variance over every rank's batch;
    running statistics (when given) move by ``momentum`` towards the global mean and unbiased
    variance. Two all-reduces: (sum, count), then the sum of squared deviations."""
    channels = x.shape[1]
    dims = [0] + list(range(2, x.dim()))
    shape = [1, channels] + [1] * (x.dim() - 2)
    local_count = x.numel() // channels
    count_t = x.new_full((1,), float(local_count))
    sums = _AllReduceSum.apply(_cat(x.sum(dim=dims), count_t), group)
    count = float(sums[channels])
    if count <= 1:
        raise ValueError(
            f"Expected more than 1 value per channel when training, got input size {list(x.shape)} "
            f"on every rank together ({int(count)} value per channel)")
    mean = sums[:channels] / count
    centred = x - mean.reshape(shape)
    var = _AllReduceSum.apply((centred * centred).sum(dim=dims), group) / count
    result = centred * (var.reshape(shape) + eps).rsqrt()
    if weight is not None:
        result = result * weight.reshape(shape)
    if bias is not None:
        result = result + bias.reshape(shape)
    if running_mean is not None:
        with no_grad():
            running_mean.mul_(1 - momentum).add_(mean.detach() * momentum)
            running_var.mul_(1 - momentum).add_(var.detach() * (count / (count - 1)) * momentum)
    return result


def _cat(channel_sums, count_t):
    from ... import cat

    return cat([channel_sums, count_t.to(channel_sums.dtype)])
