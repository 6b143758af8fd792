"""``AdamW``: Adam with decoupled weight decay (``torch.optim.AdamW``)."""

from __future__ import annotations

from ..tensor import Tensor
from .adam import Adam

__all__ = ["AdamW"]


class AdamW(Adam):
    """Adam whose weight decay shrinks the parameters directly, ``p *= 1 - lr * weight_decay``,
    instead of entering the moments (``torch.optim.AdamW``; a subclass of ``Adam`` as there).

    State and errors are Adam's; the default ``weight_decay`` is ``1e-2``.

    Example::

        >>> opt = glassgrad.optim.AdamW(model.parameters(), lr=1e-3, weight_decay=0.01)
    """

    def __init__(
        self,
        params,
        lr: float | Tensor = 1e-3,
        betas: tuple = (0.9, 0.999),
        eps: float = 1e-8,
        weight_decay: float = 1e-2,
        amsgrad: bool = False,
        *,
        maximize: bool = False,
        foreach: bool | None = None,
        capturable: bool = False,
        differentiable: bool = False,
        fused: bool | None = None,
    ) -> None:
        super().__init__(
            params,
            lr,
            betas,
            eps,
            weight_decay,
            amsgrad,
            foreach=foreach,
            maximize=maximize,
            capturable=capturable,
            differentiable=differentiable,
            fused=fused,
            decoupled_weight_decay=True,
        )

    def __setstate__(self, state) -> None:
        super().__setstate__(state)
        for group in self.param_groups:
            group["decoupled_weight_decay"] = True
