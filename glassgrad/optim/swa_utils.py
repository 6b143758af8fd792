"""Stochastic weight averaging and EMA (``torch.optim.swa_utils``): ``AveragedModel``, the
averaging functions, ``update_bn`` and the ``SWALR`` schedule, as PyTorch runs them on a CPU
(the per-tensor averaging loop, since PyTorch's foreach kernels are not used for CPU tensors)."""

from __future__ import annotations

import itertools
import math
from copy import deepcopy
from typing import Any

from .. import _factories, dtypes
from ..autograd.grad_mode import no_grad
from ..nn.module import Module
from ..nn.modules.normalization import _BatchNorm
from ..tensor import Tensor
from .lr_scheduler import LRScheduler, _format_param
from .._user_warning import warn_user

__all__ = ["SWALR", "AveragedModel", "get_ema_avg_fn", "get_ema_multi_avg_fn",
           "get_swa_avg_fn", "get_swa_multi_avg_fn", "update_bn"]


def _check_decay(decay: float) -> None:
    if decay < 0.0 or decay > 1.0:
        raise ValueError(
            f"Invalid decay value {decay} provided. Please provide a value in [0,1] range.")


def get_ema_multi_avg_fn(decay: float = 0.999):
    """``fn(ema_params, params, n)`` moving each EMA tensor in place towards the model's:
    ``ema.lerp_(p, 1 - decay)`` (``torch.optim.swa_utils.get_ema_multi_avg_fn``)."""
    _check_decay(decay)

    def ema_update(ema_param_list, current_param_list, _) -> None:
        with no_grad():
            if ema_param_list[0].is_floating_point():
                for p_ema, p_model in zip(ema_param_list, current_param_list):
                    p_ema.lerp_(p_model, 1 - decay)
            else:
                for p_ema, p_model in zip(ema_param_list, current_param_list):
                    p_ema.copy_(p_ema * decay + p_model * (1 - decay))

    return ema_update


def get_swa_multi_avg_fn():
    """``fn(averaged, params, n)``: the running equal-weight average, in place
    (``torch.optim.swa_utils.get_swa_multi_avg_fn``)."""

    def swa_update(averaged_param_list, current_param_list, num_averaged) -> None:
        with no_grad():
            if averaged_param_list[0].is_floating_point():
                weight = 1 / (num_averaged + 1)  # NOTE: a float32 0-d tensor for a tensor count
                weight = weight.item() if isinstance(weight, Tensor) else weight
                for p_avg, p_model in zip(averaged_param_list, current_param_list):
                    p_avg.lerp_(p_model, weight)
            else:
                for p_avg, p_model in zip(averaged_param_list, current_param_list):
                    p_avg.add_((p_model - p_avg) / (num_averaged + 1))

    return swa_update


def get_ema_avg_fn(decay: float = 0.999):
    """``fn(ema, p, n) -> decay * ema + (1 - decay) * p``
    (``torch.optim.swa_utils.get_ema_avg_fn``)."""
    _check_decay(decay)

    def ema_update(ema_param, current_param, num_averaged):
        with no_grad():
            return decay * ema_param + (1 - decay) * current_param

    return ema_update


def get_swa_avg_fn():
    """``fn(avg, p, n) -> avg + (p - avg) / (n + 1)`` (``torch.optim.swa_utils.get_swa_avg_fn``)."""

    def swa_update(averaged_param, current_param, num_averaged):
        with no_grad():
            return averaged_param + (current_param - averaged_param) / (num_averaged + 1)

    return swa_update


class AveragedModel(Module):
    """A deep copy of ``model`` whose parameters hold a running average of the model's
    (``torch.optim.swa_utils.AveragedModel``): equal weights (SWA) by default, or ``avg_fn`` /
    ``multi_avg_fn`` (e.g. ``get_ema_multi_avg_fn(0.9)``); with ``use_buffers`` the buffers are
    averaged too, otherwise copied. ``n_averaged`` is a long buffer. AssertionError when both
    functions are given.

    Example::

        >>> swa_model = glassgrad.optim.swa_utils.AveragedModel(model)
        >>> swa_model.update_parameters(model)   # after each epoch past swa_start
    """

    def __init__(self, model: Module, device=None, avg_fn=None, multi_avg_fn=None,
                 use_buffers: bool = False) -> None:
        super().__init__()
        if avg_fn is not None and multi_avg_fn is not None:
            raise AssertionError("Only one of avg_fn and multi_avg_fn should be provided")
        self.module = deepcopy(model)
        if device is not None:
            self.module = self.module.to(device)
        self.register_buffer("n_averaged", _factories.tensor(0, dtype=dtypes.int64))
        self.avg_fn = avg_fn
        self.multi_avg_fn = multi_avg_fn
        self.use_buffers = use_buffers

    def forward(self, *args, **kwargs):
        return self.module(*args, **kwargs)

    def update_parameters(self, model: Module) -> None:
        """Fold ``model``'s current parameters into the average (the first call copies them)."""
        with no_grad():
            self._update(model)

    def _update(self, model: Module) -> None:
        if self.use_buffers:
            self_param = itertools.chain(self.module.parameters(), self.module.buffers())
            model_param = itertools.chain(model.parameters(), model.buffers())
        else:
            self_param, model_param = self.parameters(), model.parameters()
        averaged, current = [], []
        copy_param = bool(self.n_averaged == 0)
        for p_averaged, p_model in zip(self_param, model_param):
            averaged.append(p_averaged.detach())
            current.append(p_model.detach())
            if copy_param:
                p_averaged.detach().copy_(p_model.detach())
        if self.n_averaged > 0:
            if self.multi_avg_fn is not None or self.avg_fn is None:
                groups: dict = {}
                for p_averaged, p_model in zip(averaged, current):
                    pair = groups.setdefault(p_averaged.dtype, ([], []))
                    pair[0].append(p_averaged)
                    pair[1].append(p_model)
                for self_params, model_params in groups.values():
                    if self.multi_avg_fn:
                        self.multi_avg_fn(self_params, model_params, self.n_averaged)
                    else:  # NOTE: PyTorch's CPU path: no foreach kernels, the per-tensor form
                        avg_fn = get_swa_avg_fn()
                        for p_averaged, p_model in zip(self_params, model_params):
                            p_averaged.copy_(avg_fn(p_averaged, p_model, self.n_averaged))
            else:
                for p_averaged, p_model in zip(averaged, current):
                    p_averaged.copy_(self.avg_fn(p_averaged, p_model, self.n_averaged))
        if not self.use_buffers:
            for b_swa, b_model in zip(self.module.buffers(), model.buffers()):
                b_swa.detach().copy_(b_model.detach())
        self.n_averaged += 1


def update_bn(loader, model: Module, device=None) -> None:
    """Recompute every BatchNorm's running statistics with one pass over ``loader`` (a batch is
    a tensor or a list/tuple whose first item is the input), as a cumulative average
    (``torch.optim.swa_utils.update_bn``)."""
    with no_grad():
        momenta = {}
        for module in model.modules():
            if isinstance(module, _BatchNorm):
                module.reset_running_stats()
                momenta[module] = module.momentum
        if not momenta:
            return
        was_training = model.training
        model.train()
        for module in momenta:
            module.momentum = None
        for batch in loader:
            if isinstance(batch, (list, tuple)):
                batch = batch[0]
            if device is not None:
                batch = batch.to(device)
            model(batch)
        for module, momentum in momenta.items():
            module.momentum = momentum
        model.train(was_training)


class SWALR(LRScheduler):
    """Anneal each group's learning rate to ``swa_lr`` over ``anneal_epochs`` epochs, then hold
    it (``torch.optim.swa_utils.SWALR``); ``anneal_strategy`` "cos" or "linear". ValueError for
    another strategy or a negative or non-int ``anneal_epochs``."""

    def __init__(self, optimizer, swa_lr, anneal_epochs: int = 10, anneal_strategy: str = "cos",
                 last_epoch: int = -1) -> None:
        swa_lrs = _format_param("swa_lr", optimizer, swa_lr)
        for lr, group in zip(swa_lrs, optimizer.param_groups):
            group["swa_lr"] = lr
        if anneal_strategy not in ("cos", "linear"):
            raise ValueError(
                f"anneal_strategy must be one of 'cos' or 'linear', instead got {anneal_strategy}")
        self._set_anneal_func(anneal_strategy)
        if not isinstance(anneal_epochs, int) or anneal_epochs < 0:
            raise ValueError(f"anneal_epochs must be equal or greater than 0, got {anneal_epochs}")
        self.anneal_epochs = anneal_epochs
        super().__init__(optimizer, last_epoch)

    @staticmethod
    def _linear_anneal(t):
        return t

    @staticmethod
    def _cosine_anneal(t):
        return (1 - math.cos(math.pi * t)) / 2

    @staticmethod
    def _get_initial_lr(lr, swa_lr, alpha):
        if alpha == 1:
            return swa_lr
        return (lr - alpha * swa_lr) / (1 - alpha)

    def get_lr(self) -> list:
        """The annealed learning rates of the next epoch, one per param group."""
        if not self._get_lr_called_within_step:
            warn_user(
                "To get the last learning rate computed by the scheduler, please use "
                "`get_last_lr()`.", UserWarning, stacklevel=2)
        step = self._step_count - 1
        if self.anneal_epochs == 0:
            step = max(1, step)
        prev_alpha = self.anneal_func(max(0, min(1, (step - 1) / max(1, self.anneal_epochs))))
        groups = self.optimizer.param_groups
        prev_lrs = [self._get_initial_lr(g["lr"], g["swa_lr"], prev_alpha) for g in groups]
        alpha = self.anneal_func(max(0, min(1, step / max(1, self.anneal_epochs))))
        return [g["swa_lr"] * alpha + lr * (1 - alpha) for g, lr in zip(groups, prev_lrs)]

    def _set_anneal_func(self, anneal_strategy: str) -> None:
        self._anneal_strategy = anneal_strategy
        self.anneal_func = self._cosine_anneal if anneal_strategy == "cos" else self._linear_anneal

    def state_dict(self) -> dict[str, Any]:
        """Every attribute except the optimizer and the annealing function."""
        return {k: v for k, v in self.__dict__.items() if k not in ("optimizer", "anneal_func")}

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        """Restore ``state_dict()``'s attributes and the annealing function they name."""
        self.__dict__.update(state_dict)
        self._set_anneal_func(self._anneal_strategy)
