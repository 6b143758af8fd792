"""``SyncBatchNorm`` (``torch.nn.SyncBatchNorm``): batch norm whose statistics span every process
of a process group. In one process (or with no process group initialised) it computes exactly
``BatchNorm``'s numbers, as PyTorch's does; across ranks see ``_sync_batchnorm_stats``."""

from __future__ import annotations

from ...autograd.grad_mode import no_grad
from . import _sync_batchnorm_stats
from .normalization import _BatchNorm

__all__ = ["SyncBatchNorm"]


class SyncBatchNorm(_BatchNorm):
    """Batch normalisation over ``(N, C, *)`` (``torch.nn.SyncBatchNorm``); in one process it is
    ``BatchNorm1d/2d/3d`` for any input of at least 2 dims.

    ``SyncBatchNorm(num_features, eps=1e-5, momentum=0.1, affine=True, track_running_stats=True,
    process_group=None, device=None, dtype=None, *, bias=True)``. ValueError "expected at least 2D
    input" and "SyncBatchNorm number of input channels should be non-zero" as PyTorch.
    """

    def __init__(self, num_features: int, eps: float = 1e-5, momentum: float | None = 0.1,
                 affine: bool = True, track_running_stats: bool = True, process_group=None,
                 device=None, dtype=None, *, bias: bool = True) -> None:
        super().__init__(num_features, eps, momentum, affine, track_running_stats, device, dtype,
                         bias=bias)
        self.process_group = process_group

    def _check_input_dim(self, input) -> None:
        if input.dim() < 2:
            raise ValueError(f"expected at least 2D input (got {input.dim()}D input)")
        if input.size(1) == 0:
            raise ValueError("SyncBatchNorm number of input channels should be non-zero")

    def forward(self, input):
        self._check_input_dim(input)
        world = 1
        if self.training:
            world = _sync_batchnorm_stats.world_size_to_sync(self.process_group)
        if world == 1:
            return super().forward(input)
        factor = 0.0 if self.momentum is None else self.momentum
        if self.track_running_stats and self.num_batches_tracked is not None:
            self.num_batches_tracked.add_(1)
            if self.momentum is None:  # cumulative moving average
                factor = 1.0 / float(self.num_batches_tracked)
        tracked = self.track_running_stats
        return _sync_batchnorm_stats.sync_batch_norm(
            input, self.weight, self.bias, self.running_mean if tracked else None,
            self.running_var if tracked else None, self.eps, factor, self.process_group)

    @classmethod
    def convert_sync_batchnorm(cls, module, process_group=None):
        """Replace every ``BatchNorm*d`` in ``module`` (itself included) by a ``SyncBatchNorm``
        sharing its parameters and running statistics; returns the converted module
        (``torch.nn.SyncBatchNorm.convert_sync_batchnorm``)."""
        out = module
        if isinstance(module, _BatchNorm):
            out = cls(module.num_features, module.eps, module.momentum, module.affine,
                      module.track_running_stats, process_group, bias=module.bias is not None)
            if module.affine:
                with no_grad():
                    out.weight = module.weight
                    out.bias = module.bias
            out.running_mean = module.running_mean
            out.running_var = module.running_var
            out.num_batches_tracked = module.num_batches_tracked
            out.training = module.training
            if hasattr(module, "qconfig"):
                out.qconfig = module.qconfig
        for name, child in module.named_children():
            out.add_module(name, cls.convert_sync_batchnorm(child, process_group))
        return out
