"""``SyncBatchNorm`` (``torch.nn.SyncBatchNorm``): batch norm whose statistics span every process
of a process group. glassgrad runs in one process (it has no ``distributed`` package yet), which
is the case where PyTorch's SyncBatchNorm computes exactly ``BatchNorm``'s numbers."""

from __future__ import annotations

from ...autograd.grad_mode import no_grad
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
