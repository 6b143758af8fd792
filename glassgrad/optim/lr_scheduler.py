"""Learning-rate schedulers (``torch.optim.lr_scheduler``): the ``LRScheduler`` base class and the
step-wise schedules (``LambdaLR``, ``MultiplicativeLR``, ``StepLR``, ``MultiStepLR``,
``ConstantLR``, ``LinearLR``, ``ExponentialLR``). The annealing and cyclic ones live in
``_lr_scheduler_annealing.py``, the composite and metric-driven ones (``SequentialLR``,
``ChainedScheduler``, ``ReduceLROnPlateau``) in ``_lr_scheduler_composite.py``; all are
re-exported here.

Every schedule computes its values with PyTorch's recurrences (not closed forms), so the learning
rates equal PyTorch's to the last bit, including the rounding drift of chained multiplications.
"""

from __future__ import annotations

import types
from bisect import bisect_right
from collections import Counter
from functools import partial, wraps  # noqa: F401 - torch.optim.lr_scheduler has these names
from math import inf  # noqa: F401
from typing import TYPE_CHECKING, Any, Literal, SupportsFloat, TypedDict, cast  # noqa: F401
from weakref import ref

# NOTE: the same typing objects torch's module imports: typing's own from Python 3.11 (Self) and
# 3.12 (override), typing_extensions' before that when it is installed
try:
    from typing import Self
except ImportError:  # pragma: no cover - Python 3.10
    try:
        from typing_extensions import Self
    except ImportError:
        pass
try:
    from typing import override
except ImportError:  # Python < 3.12
    try:
        from typing_extensions import override
    except ImportError:  # pragma: no cover

        def override(method):
            """Mark ``method`` as overriding its base's (``typing.override``, Python 3.12)."""
            method.__override__ = True
            return method

if TYPE_CHECKING:
    from collections.abc import Callable

    _LRLambda = Callable[[int], float] | list[Callable[[int], float]]  # one per param group

from ..tensor import Tensor
from .optimizer import Optimizer
from .._user_warning import warn_user

__all__ = [
    "ChainedScheduler",
    "ConstantLR",
    "CosineAnnealingLR",
    "CosineAnnealingWarmRestarts",
    "CyclicLR",
    "ExponentialLR",
    "LRScheduler",
    "LambdaLR",
    "LinearLR",
    "MultiStepLR",
    "MultiplicativeLR",
    "OneCycleLR",
    "PolynomialLR",
    "ReduceLROnPlateau",
    "SequentialLR",
    "StepLR",
]

EPOCH_DEPRECATION_WARNING = (
    "The epoch parameter in `scheduler.step()` was not necessary and is being deprecated where "
    "possible. Please use `scheduler.step()` to step the scheduler. During the deprecation, if "
    "epoch is different from None, the closed form is used instead of the new chainable form, "
    "where available. Please open an issue if you are unable to replicate your use case: "
    "https://github.com/pytorch/pytorch/issues/new/choose."
)


def _format_param(name: str, optimizer: Optimizer, param) -> list:
    """One value per param group: a scalar is repeated, a list must have one entry per group."""
    if isinstance(param, (list, tuple)):
        if len(param) != len(optimizer.param_groups):
            raise ValueError(
                f"{name} must have the same length as optimizer.param_groups. {name} has "
                f"{len(param)} values, param_groups has {len(optimizer.param_groups)}."
            )
    else:
        param = [param] * len(optimizer.param_groups)
    return [p.clone() if isinstance(p, Tensor) else p for p in param]


def _param_groups_val_list(optimizer: Optimizer, key: str) -> list:
    """``group[key]`` for each group, cloning Tensors so the list never aliases the optimizer."""
    return [
        g[key].clone() if isinstance(g[key], Tensor) else g[key] for g in optimizer.param_groups
    ]


def _update_param_group_val(param_group: dict, key: str, val) -> None:
    if isinstance(param_group[key], Tensor):
        param_group[key].fill_(val.item() if isinstance(val, Tensor) else val)
    else:
        param_group[key] = val


def _warn_get_lr_called_within_step(scheduler: LRScheduler) -> None:
    if not scheduler._get_lr_called_within_step:
        warn_user(
            "To get the last learning rate computed by the scheduler, please use `get_last_lr()`.",
            UserWarning,
            stacklevel=3,
        )


class _enable_get_lr_call:
    def __init__(self, scheduler: LRScheduler) -> None:
        self.scheduler = scheduler

    def __enter__(self) -> Self:
        self.scheduler._get_lr_called_within_step = True
        return self

    def __exit__(self, *exc) -> None:
        self.scheduler._get_lr_called_within_step = False


class _initial_mode:
    def __init__(self, scheduler: LRScheduler) -> None:
        self.scheduler = scheduler

    def __enter__(self):
        self.scheduler._is_initial = True

    def __exit__(self, *exc) -> None:
        self.scheduler._is_initial = False


class LRScheduler:
    """Base class of the learning-rate schedulers (``torch.optim.lr_scheduler.LRScheduler``).

    Construction records ``group["initial_lr"]`` and takes the first step (``last_epoch`` becomes
    0). Subclasses implement ``get_lr()``. ``step()`` warns like PyTorch when it is first called
    before ``optimizer.step()``, a first step skipped by ``amp.GradScaler`` included (see
    NOTE [Skipped steps] in optimizer.py). Raises TypeError when ``optimizer`` is not an
    ``Optimizer`` and KeyError when resuming (``last_epoch >= 0``) without ``initial_lr``.
    """

    _get_lr_called_within_step: bool = False
    _is_initial: bool = False

    def __init__(self, optimizer: Optimizer, last_epoch: int = -1) -> None:
        if not isinstance(optimizer, Optimizer):
            raise TypeError(f"{type(optimizer).__name__} is not an Optimizer")
        self.optimizer = optimizer
        if last_epoch == -1:
            for group in optimizer.param_groups:
                initial_lr = group["lr"]
                if isinstance(initial_lr, Tensor):
                    initial_lr = initial_lr.clone()
                group.setdefault("initial_lr", initial_lr)
        else:
            for i, group in enumerate(optimizer.param_groups):
                if "initial_lr" not in group:
                    raise KeyError(
                        f"param 'initial_lr' is not specified in param_groups[{i}] when resuming "
                        "scheduler with last_epoch >= 0.\nThis typically happens when:\n1. You're "
                        "trying to resume training from a checkpoint but haven't properly loaded "
                        "the optimizer state\n2. You're using last_epoch >= 0 for a fresh training "
                        "run (not recommended)"
                    )
        self.base_lrs: list = _param_groups_val_list(optimizer, "initial_lr")
        self.last_epoch = last_epoch
        self._patch_track_step_called()
        self._initial_step()

    def _patch_track_step_called(self) -> None:
        """Wrap ``optimizer.step`` (on the instance) so it records that it was called."""
        opt = self.optimizer
        if hasattr(opt.step, "_wrapped_by_lr_sched"):
            return
        opt_ref = ref(opt)
        func = opt.step.__func__

        @wraps(func)
        def wrapper(*args, **kwargs):
            instance = opt_ref()
            instance._opt_called = True
            return func.__get__(instance, instance.__class__)(*args, **kwargs)

        wrapper._wrapped_by_lr_sched = True
        opt.step = wrapper

    def _initial_step(self) -> None:
        self._step_count = 0
        with _initial_mode(self):
            self.step()

    def state_dict(self) -> dict[str, Any]:
        """Every attribute except the optimizer (``LRScheduler.state_dict``)."""
        return {key: value for key, value in self.__dict__.items() if key != "optimizer"}

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        """Restore the attributes saved by ``state_dict()``."""
        self.__dict__.update(state_dict)

    def get_last_lr(self) -> list:
        """The learning rates of the last step, one per param group (copies, never aliases)."""
        return self._last_lr

    def get_lr(self) -> list:
        """The next learning rates; use ``get_last_lr()`` to read the current ones."""
        raise NotImplementedError

    def step(self, epoch: int | None = None, *, scaler=None) -> None:
        """Advance one epoch and write the new learning rates into the optimizer's groups.

        Call it after ``optimizer.step()``. ``epoch`` is deprecated (warns; uses the closed form
        where the schedule has one). glassgrad's addition: given the ``amp.GradScaler`` that
        stepped the optimizer (``scheduler.step(scaler=scaler)``), a step the scaler skipped for
        inf/NaN gradients does not advance the schedule."""
        if scaler is not None and getattr(self.optimizer, "_last_step_skipped", False):
            return
        if self._step_count == 1:
            if not hasattr(self.optimizer.step, "_wrapped_by_lr_sched"):
                warn_user(
                    "Seems like `optimizer.step()` has been overridden after learning rate "
                    "scheduler initialization. Please, make sure to call `optimizer.step()` before "
                    "`lr_scheduler.step()`. See more details at "
                    "https://pytorch.org/docs/stable/optim.html#how-to-adjust-learning-rate",
                    UserWarning,
                    stacklevel=2,
                )
            elif not getattr(self.optimizer, "_opt_called", False):
                warn_user(
                    "Detected call of `lr_scheduler.step()` before `optimizer.step()`. In PyTorch "
                    "1.1.0 and later, you should call them in the opposite order: "
                    "`optimizer.step()` before `lr_scheduler.step()`.  Failure to do this will "
                    "result in PyTorch skipping the first value of the learning rate schedule. See "
                    "more details at "
                    "https://pytorch.org/docs/stable/optim.html#how-to-adjust-learning-rate",
                    UserWarning,
                    stacklevel=2,
                )
        self._step_count += 1
        if epoch is not None:
            warn_user(EPOCH_DEPRECATION_WARNING, UserWarning, stacklevel=2)
        self._update_lr(epoch)

    def _update_lr(self, epoch: int | None = None) -> None:
        with _enable_get_lr_call(self):
            if epoch is None:
                self.last_epoch += 1
                values = self.get_lr()
            else:
                self.last_epoch = epoch
                if hasattr(self, "_get_closed_form_lr"):
                    values = self._get_closed_form_lr()
                else:
                    values = self.get_lr()
        for param_group, lr in zip(self.optimizer.param_groups, values):
            _update_param_group_val(param_group, "lr", lr)
        self._last_lr = _param_groups_val_list(self.optimizer, "lr")


class _SchedulePhase(TypedDict):
    """One phase of ``OneCycleLR``: the last step and the group keys it anneals between."""

    end_step: float
    start_lr: str
    end_lr: str
    start_momentum: str
    end_momentum: str


class _LRScheduler(LRScheduler):
    """Deprecated alias of ``LRScheduler`` kept by PyTorch."""


def _lambdas(optimizer: Optimizer, lr_lambda) -> list:
    if not isinstance(lr_lambda, (list, tuple)):
        return [lr_lambda] * len(optimizer.param_groups)
    if len(lr_lambda) != len(optimizer.param_groups):
        raise ValueError(
            f"Expected {len(optimizer.param_groups)} lr_lambdas, but got {len(lr_lambda)}"
        )
    return list(lr_lambda)


class _LambdaStateMixin:
    """state_dict for schedulers holding ``lr_lambdas``: plain functions are not saved; callable
    objects save their ``__dict__`` (PyTorch's rule)."""

    def state_dict(self) -> dict[str, Any]:
        state = {k: v for k, v in self.__dict__.items() if k not in ("optimizer", "lr_lambdas")}
        state["lr_lambdas"] = [
            None if isinstance(fn, types.FunctionType) else fn.__dict__.copy()
            for fn in self.lr_lambdas
        ]
        return state

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        lr_lambdas = state_dict.pop("lr_lambdas")
        self.__dict__.update(state_dict)
        state_dict["lr_lambdas"] = lr_lambdas
        for idx, fn in enumerate(lr_lambdas):
            if fn is not None:
                self.lr_lambdas[idx].__dict__.update(fn)


class LambdaLR(_LambdaStateMixin, LRScheduler):
    """``lr = initial_lr * lr_lambda(epoch)``, one lambda or one per group
    (``torch.optim.lr_scheduler.LambdaLR``). ValueError when the list length differs from the
    number of groups."""

    def __init__(self, optimizer: Optimizer, lr_lambda: _LRLambda, last_epoch: int = -1) -> None:
        self.optimizer = optimizer
        self.lr_lambdas = _lambdas(optimizer, lr_lambda)
        super().__init__(optimizer, last_epoch)

    @override
    def get_lr(self) -> list[float]:
        _warn_get_lr_called_within_step(self)
        return [
            base_lr * lmbda(self.last_epoch)
            for lmbda, base_lr in zip(self.lr_lambdas, self.base_lrs)
        ]


class MultiplicativeLR(_LambdaStateMixin, LRScheduler):
    """``lr = lr * lr_lambda(epoch)`` each epoch after the first
    (``torch.optim.lr_scheduler.MultiplicativeLR``)."""

    def __init__(self, optimizer: Optimizer, lr_lambda: _LRLambda, last_epoch: int = -1) -> None:
        self.optimizer = optimizer
        self.lr_lambdas = _lambdas(optimizer, lr_lambda)
        for fn in self.lr_lambdas:
            if not callable(fn):
                raise TypeError(f"lr_lambda should be a function, but got {type(fn).__name__}")
        super().__init__(optimizer, last_epoch)

    @override
    def get_lr(self) -> list[float]:
        _warn_get_lr_called_within_step(self)
        if self._is_initial:
            return _param_groups_val_list(self.optimizer, "lr")
        return [
            group["lr"] * lmbda(self.last_epoch)
            for lmbda, group in zip(self.lr_lambdas, self.optimizer.param_groups)
        ]


class StepLR(LRScheduler):
    """Multiply the learning rate by ``gamma`` every ``step_size`` epochs
    (``torch.optim.lr_scheduler.StepLR``)."""

    def __init__(
        self, optimizer: Optimizer, step_size: int, gamma: float = 0.1, last_epoch: int = -1
    ) -> None:
        self.step_size = step_size
        self.gamma = gamma
        super().__init__(optimizer, last_epoch)

    @override
    def get_lr(self) -> list[float]:
        _warn_get_lr_called_within_step(self)
        if self.last_epoch == 0 or self.last_epoch % self.step_size != 0:
            return _param_groups_val_list(self.optimizer, "lr")
        return [group["lr"] * self.gamma for group in self.optimizer.param_groups]

    def _get_closed_form_lr(self) -> list:
        return [
            base_lr * self.gamma ** (self.last_epoch // self.step_size) for base_lr in self.base_lrs
        ]


class MultiStepLR(LRScheduler):
    """Multiply the learning rate by ``gamma`` at each milestone epoch (a repeated milestone
    multiplies repeatedly) (``torch.optim.lr_scheduler.MultiStepLR``)."""

    def __init__(
        self, optimizer: Optimizer, milestones, gamma: float = 0.1, last_epoch: int = -1
    ) -> None:
        self.milestones = Counter(milestones)
        self.gamma = gamma
        super().__init__(optimizer, last_epoch)

    @override
    def get_lr(self) -> list[float]:
        _warn_get_lr_called_within_step(self)
        if self.last_epoch not in self.milestones:
            return _param_groups_val_list(self.optimizer, "lr")
        return [
            group["lr"] * self.gamma ** self.milestones[self.last_epoch]
            for group in self.optimizer.param_groups
        ]

    def _get_closed_form_lr(self) -> list:
        milestones = sorted(self.milestones.elements())
        return [
            base_lr * self.gamma ** bisect_right(milestones, self.last_epoch)
            for base_lr in self.base_lrs
        ]


class ConstantLR(LRScheduler):
    """Scale the learning rate by ``factor`` until epoch ``total_iters``
    (``torch.optim.lr_scheduler.ConstantLR``). ValueError unless ``0 <= factor <= 1``."""

    def __init__(
        self,
        optimizer: Optimizer,
        factor: float = 1.0 / 3,
        total_iters: int = 5,
        last_epoch: int = -1,
    ) -> None:
        if factor > 1.0 or factor < 0:
            raise ValueError("Constant multiplicative factor expected to be between 0 and 1.")
        self.factor = factor
        self.total_iters = total_iters
        super().__init__(optimizer, last_epoch)

    @override
    def get_lr(self) -> list[float]:
        _warn_get_lr_called_within_step(self)
        if self.last_epoch == 0:
            return [group["lr"] * self.factor for group in self.optimizer.param_groups]
        if self.last_epoch != self.total_iters:
            return _param_groups_val_list(self.optimizer, "lr")
        return [group["lr"] * (1.0 / self.factor) for group in self.optimizer.param_groups]

    def _get_closed_form_lr(self) -> list:
        return [
            base_lr * (self.factor + (self.last_epoch >= self.total_iters) * (1 - self.factor))
            for base_lr in self.base_lrs
        ]


class LinearLR(LRScheduler):
    """Scale the learning rate linearly from ``start_factor`` to ``end_factor`` over
    ``total_iters`` epochs (``torch.optim.lr_scheduler.LinearLR``). ValueError for factors outside
    ``(0, 1]`` (start) or ``[0, 1]`` (end)."""

    def __init__(
        self,
        optimizer: Optimizer,
        start_factor: float = 1.0 / 3,
        end_factor: float = 1.0,
        total_iters: int = 5,
        last_epoch: int = -1,
    ) -> None:
        if start_factor > 1.0 or start_factor <= 0:
            raise ValueError(
                "Starting multiplicative factor expected to be greater than 0 and less or equal "
                "to 1."
            )
        if end_factor > 1.0 or end_factor < 0:
            raise ValueError("Ending multiplicative factor expected to be between 0 and 1.")
        self.start_factor = start_factor
        self.end_factor = end_factor
        self.total_iters = total_iters
        super().__init__(optimizer, last_epoch)

    @override
    def get_lr(self) -> list[float]:
        _warn_get_lr_called_within_step(self)
        if self.last_epoch == 0:
            return [group["lr"] * self.start_factor for group in self.optimizer.param_groups]
        if self._is_initial or self.last_epoch > self.total_iters:
            return _param_groups_val_list(self.optimizer, "lr")
        delta = self.end_factor - self.start_factor
        factor = 1.0 + delta / (
            self.total_iters * self.start_factor + (self.last_epoch - 1) * delta
        )
        return [group["lr"] * factor for group in self.optimizer.param_groups]

    def _get_closed_form_lr(self) -> list:
        return [
            base_lr
            * (
                self.start_factor
                + (self.end_factor - self.start_factor)
                * min(self.total_iters, self.last_epoch)
                / self.total_iters
            )
            for base_lr in self.base_lrs
        ]


class ExponentialLR(LRScheduler):
    """Multiply the learning rate by ``gamma`` every epoch
    (``torch.optim.lr_scheduler.ExponentialLR``)."""

    def __init__(self, optimizer: Optimizer, gamma: float, last_epoch: int = -1) -> None:
        self.gamma = gamma
        super().__init__(optimizer, last_epoch)

    @override
    def get_lr(self) -> list[float]:
        _warn_get_lr_called_within_step(self)
        if self._is_initial:
            return _param_groups_val_list(self.optimizer, "lr")
        return [group["lr"] * self.gamma for group in self.optimizer.param_groups]

    def _get_closed_form_lr(self) -> list:
        return [base_lr * self.gamma**self.last_epoch for base_lr in self.base_lrs]


from ._lr_scheduler_annealing import (
    CosineAnnealingLR,
    CosineAnnealingWarmRestarts,
    CyclicLR,
    OneCycleLR,
    PolynomialLR,
)
from ._lr_scheduler_composite import (
    ChainedScheduler,
    ReduceLROnPlateau,
    SequentialLR,
)

_ = (
    ChainedScheduler,
    CosineAnnealingLR,
    CosineAnnealingWarmRestarts,
    CyclicLR,
    OneCycleLR,
    PolynomialLR,
    ReduceLROnPlateau,
    SequentialLR,
)
