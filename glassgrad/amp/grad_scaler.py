"""``GradScaler``: dynamic loss scaling for float16 training (``torch.amp.GradScaler``), with a
record of every step it took or skipped.

NOTE [Loss scaling]: float16 gradients underflow to zero below ~6e-8. ``scale(loss)`` multiplies
the loss by ``S`` (65536 at first), so every gradient is ``S`` times larger; ``unscale_`` (or
``step``) divides the optimizer's gradients by ``S`` in place and looks for inf/NaN. With any,
``step`` skips ``optimizer.step()`` and ``update`` halves ``S``; after ``growth_interval`` clean
steps in a row ``update`` doubles it. The arithmetic follows PyTorch's CPU kernels
(``_amp_foreach_non_finite_check_and_unscale_``, ``_amp_update_scale_``): the inverse scale is
``float32(1 / float64(S))``, the scale is a float32 updated in double precision, so scale traces
and parameter trajectories match torch's.

Beyond PyTorch, ``scaler.history`` (newest last) and ``scaler.last_step`` say for each
``step(optimizer)`` whether the optimizer stepped, which parameters held inf/NaN gradients, the
scale before and after ``update()`` and the growth tracker (pytorch/pytorch#55585, #67590).
A skipped step calls ``optimizer._note_skipped_step()`` (NOTE [Skipped steps] in
optim/optimizer.py): ``scheduler.step(scaler=scaler)`` then does not advance, and a plain
``scheduler.step()`` after a skipped first step warns as PyTorch's does.
"""

from __future__ import annotations

from collections import defaultdict, deque
from dataclasses import dataclass
from enum import Enum
from typing import Any

import numpy as np

from .. import dtypes
from ..autograd.grad_mode import no_grad
from .._user_warning import warn_user

__all__ = ["GradScaler", "OptState", "ScalerStep"]


class OptState(Enum):
    READY = 0
    UNSCALED = 1
    STEPPED = 2


def _refresh_per_optimizer_state() -> dict[str, Any]:
    return {"stage": OptState.READY, "found_inf_per_device": {}, "nonfinite": ()}


@dataclass
class ScalerStep:
    """What one ``scaler.step(optimizer)`` did (glassgrad's addition to PyTorch's GradScaler).

    ``iteration`` counts ``update()`` calls before it; ``stepped`` is False when inf/NaN gradients
    made the scaler skip ``optimizer.step()``; ``nonfinite`` names the parameters whose gradients
    held inf/NaN (``param_names`` of the optimizer when given, else ``param_groups[g][i]``);
    ``scale`` is the scale the gradients were divided by; ``new_scale`` and ``growth_tracker`` are
    filled by the following ``update()`` (None until then)."""

    iteration: int
    optimizer: str
    stepped: bool
    nonfinite: tuple
    scale: float
    new_scale: float | None = None
    growth_tracker: int | None = None

    @property
    def skipped(self) -> bool:
        return not self.stepped

    def __str__(self) -> str:
        what = "stepped" if self.stepped else "skipped (inf/NaN in " + ", ".join(
            self.nonfinite[:4]) + (", ..." if len(self.nonfinite) > 4 else "") + ")"
        after = "?" if self.new_scale is None else f"{self.new_scale:g}"
        return (f"iteration {self.iteration}: {self.optimizer} {what}; scale {self.scale:g} -> "
                f"{after}, growth tracker {self.growth_tracker}")


class GradScaler:
    """Scale the loss, unscale the gradients, skip steps with inf/NaN gradients and adapt the
    scale (``torch.amp.GradScaler``).

    ``device`` is 'cpu' (the default here, where PyTorch's is 'cuda') or 'cuda' (warns and disables
    without CUDA, as PyTorch does). ``init_scale`` starts the scale; ``update()`` multiplies it by
    ``backoff_factor`` (< 1) after a skipped step and by ``growth_factor`` (> 1, AssertionError
    otherwise) after ``growth_interval`` clean steps. ``enabled=False`` makes every method a
    no-op and ``step`` a plain ``optimizer.step()``. Each step is recorded in ``history``.

    Example::

        scaler = glassgrad.amp.GradScaler()
        with glassgrad.autocast("cpu", dtype=glassgrad.float16):
            loss = loss_fn(model(x), y)
        scaler.scale(loss).backward()
        scaler.unscale_(opt)                    # optional: clip the true gradients
        glassgrad.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        scaler.step(opt)                        # skipped when a gradient is inf/NaN
        scaler.update()
        print(scaler.last_step)
    """

    history_limit = 10_000  # records kept in ``history`` (the oldest are dropped)

    def __init__(self, device: str = "cpu", init_scale: float = 2.0**16,
                 growth_factor: float = 2.0, backoff_factor: float = 0.5,
                 growth_interval: int = 2000, enabled: bool = True) -> None:
        self._device = device
        self._enabled = enabled
        if device == "cuda" and enabled and not _cuda_available():
            warn_user(
                "torch.cuda.amp.GradScaler is enabled, but CUDA is not available.  Disabling.\n"
                "glassgrad: use glassgrad.amp.GradScaler('cpu').",
                stacklevel=2,
            )
            self._enabled = False
        self.history: deque = deque(maxlen=self.history_limit)
        self._iteration = 0
        if self._enabled:
            if growth_factor <= 1.0:
                raise AssertionError("The growth factor must be > 1.0.")
            if backoff_factor >= 1.0:
                raise AssertionError("The backoff factor must be < 1.0.")
            self._init_scale = init_scale
            self._scale = None  # float32 0-d Tensor, made by the first scale()
            self._growth_factor = growth_factor
            self._backoff_factor = backoff_factor
            self._growth_interval = growth_interval
            self._init_growth_tracker = 0
            self._growth_tracker = None  # int32 0-d Tensor
            self._per_optimizer_states: dict = defaultdict(_refresh_per_optimizer_state)

    @property
    def last_step(self) -> ScalerStep | None:
        """The record of the latest ``step(optimizer)`` (None before the first)."""
        return self.history[-1] if self.history else None

    def _check_scale_growth_tracker(self, funcname: str) -> tuple:
        fix = ("This may indicate your script did not use scaler.scale(loss or outputs) earlier "
               "in the iteration.")
        if self._scale is None:
            raise AssertionError(f"Attempted {funcname} but _scale is None.  " + fix)
        if self._growth_tracker is None:
            raise AssertionError(f"Attempted {funcname} but _growth_tracker is None.  " + fix)
        return self._scale, self._growth_tracker

    def _lazy_init_scale_growth_tracker(self) -> None:
        # NOTE: tensor.py is still loading when ops import glassgrad.amp: import Tensor late
        from ..tensor import Tensor

        if self._growth_tracker is not None:
            raise AssertionError("_growth_tracker initialized before _scale")
        self._scale = Tensor._make(np.array(self._init_scale, dtype=np.float32))
        self._growth_tracker = Tensor._make(np.array(self._init_growth_tracker, dtype=np.int32))

    def scale(self, outputs):
        """``outputs * scale`` for a Tensor or (nested) lists/tuples/iterables of Tensors; the
        outputs unchanged when disabled. ValueError for anything else."""
        if not self._enabled:
            return outputs
        if self._scale is None:
            self._lazy_init_scale_growth_tracker()
        return self._apply_scale(outputs)

    def _apply_scale(self, value):
        if getattr(value, "_array", None) is not None:
            return value * self._scale
        if isinstance(value, (list, tuple)):
            return type(value)(self._apply_scale(v) for v in value)
        if hasattr(value, "__iter__"):
            return map(self._apply_scale, value)
        raise ValueError("outputs must be a Tensor or an iterable of Tensors")

    def _unscale_grads_(self, optimizer, inv_scale: float, allow_fp16: bool):
        """Multiply every gradient by ``inv_scale`` in place; (found_inf per device, names of the
        parameters whose gradients held inf/NaN)."""
        grads, names = [], []
        for g, group in enumerate(optimizer.param_groups):
            param_names = group.get("param_names")
            for i, param in enumerate(group["params"]):
                grad = param.grad
                if grad is None:
                    continue
                if not allow_fp16 and grad._array.dtype == np.float16:
                    raise ValueError("Attempting to unscale FP16 gradients.")
                grads.append(grad)
                names.append(param_names[i] if param_names else f"param_groups[{g}][{i}]")
        if not grads:
            return {}, ()
        nonfinite = []
        with no_grad():
            for grad, name in zip(grads, names):
                arr = grad._array
                if not np.isfinite(arr).all():
                    nonfinite.append(name)
                if inv_scale != 1.0:
                    _multiply_(arr, inv_scale)
                    grad._vc[0] += 1
        found_inf = _float32_scalar(1.0 if nonfinite else 0.0)
        return {self._device: found_inf}, tuple(nonfinite)

    def unscale_(self, optimizer) -> None:
        """Divide ``optimizer``'s gradients by the scale in place and check them for inf/NaN, so
        they can be clipped before ``step`` (``GradScaler.unscale_``). Once per optimizer per
        ``update()``: RuntimeError on a second call or after ``step``; ValueError for float16
        gradients ("Attempting to unscale FP16 gradients.")."""
        if not self._enabled:
            return
        self._check_scale_growth_tracker("unscale_")
        optimizer_state = self._per_optimizer_states[id(optimizer)]
        if optimizer_state["stage"] is OptState.UNSCALED:
            raise RuntimeError(
                "unscale_() has already been called on this optimizer since the last update()."
            )
        if optimizer_state["stage"] is OptState.STEPPED:
            raise RuntimeError("unscale_() is being called after step().")
        # NOTE: the reciprocal in float64, rounded to float32, as PyTorch computes it
        inv_scale = float(np.float32(1.0 / np.float64(self._scale._array)))
        found, nonfinite = self._unscale_grads_(optimizer, inv_scale, False)
        optimizer_state["found_inf_per_device"] = found
        optimizer_state["nonfinite"] = nonfinite
        optimizer_state["stage"] = OptState.UNSCALED

    def step(self, optimizer, *args, **kwargs):
        """``unscale_(optimizer)`` unless already done, then ``optimizer.step(*args, **kwargs)``
        when no gradient holds inf/NaN; returns what it returns (None when skipped). Records the
        step in ``history``. RuntimeError for a ``closure`` or a second ``step`` before
        ``update()``."""
        if not self._enabled:
            return optimizer.step(*args, **kwargs)
        if "closure" in kwargs:
            raise RuntimeError("Closure use is not currently supported if GradScaler is enabled.")
        self._check_scale_growth_tracker("step")
        optimizer_state = self._per_optimizer_states[id(optimizer)]
        if optimizer_state["stage"] is OptState.STEPPED:
            raise RuntimeError("step() has already been called since the last update().")
        if optimizer_state["stage"] is OptState.READY:
            self.unscale_(optimizer)
        if len(optimizer_state["found_inf_per_device"]) == 0:
            raise AssertionError("No inf checks were recorded for this optimizer.")
        retval = None
        found = sum(v.item() for v in optimizer_state["found_inf_per_device"].values())
        if not found:
            retval = optimizer.step(*args, **kwargs)
        elif hasattr(optimizer, "_note_skipped_step"):
            optimizer._note_skipped_step()
        optimizer_state["stage"] = OptState.STEPPED
        self.history.append(ScalerStep(self._iteration, type(optimizer).__name__, not found,
                                       optimizer_state["nonfinite"], self.get_scale()))
        return retval

    def update(self, new_scale=None) -> None:
        """Set the scale for the next iteration: ``new_scale`` when given (a number or a
        one-element float32 Tensor that does not require grad, else AssertionError), otherwise
        backoff after a skipped step or growth after ``growth_interval`` clean ones."""
        if not self._enabled:
            return
        scale, growth_tracker = self._check_scale_growth_tracker("update")
        if new_scale is not None:
            if isinstance(new_scale, (int, float)):
                scale._array[...] = new_scale
            else:
                reason = ("new_scale should be a float or a 1-element torch.cuda.FloatTensor or "
                          "torch.FloatTensor with requires_grad=False.")
                if new_scale.device.type != self._device:
                    raise AssertionError(reason)
                if new_scale.numel() != 1:
                    raise AssertionError(reason)
                if new_scale.requires_grad is True:
                    raise AssertionError(reason)
                scale._array[...] = new_scale._array.reshape(())
        else:
            found_infs = [
                found_inf
                for state in self._per_optimizer_states.values()
                for found_inf in state["found_inf_per_device"].values()
            ]
            if len(found_infs) == 0:
                raise AssertionError("No inf checks were recorded prior to update.")
            found_inf_combined = sum(float(f._array) for f in found_infs)
            _amp_update_scale_(scale._array, growth_tracker._array, found_inf_combined,
                               self._growth_factor, self._backoff_factor, self._growth_interval)
        scale._vc[0] += 1
        for record in reversed(self.history):
            if record.new_scale is not None:
                break
            record.new_scale = self.get_scale()
            record.growth_tracker = self._get_growth_tracker()
        self._iteration += 1
        self._per_optimizer_states = defaultdict(_refresh_per_optimizer_state)

    def _get_scale_async(self):
        return self._scale

    def get_scale(self) -> float:
        """The current scale as a Python float (1.0 when disabled)."""
        if self._enabled:
            return self._init_scale if self._scale is None else float(self._scale._array)
        return 1.0

    def get_growth_factor(self) -> float:
        """The factor ``update()`` multiplies the scale by after ``growth_interval`` clean steps."""
        return self._growth_factor

    def set_growth_factor(self, new_factor: float) -> None:
        """Set the growth factor (not checked, as in PyTorch)."""
        self._growth_factor = new_factor

    def get_backoff_factor(self) -> float:
        """The factor ``update()`` multiplies the scale by after a skipped step."""
        return self._backoff_factor

    def set_backoff_factor(self, new_factor: float) -> None:
        """Set the backoff factor (not checked, as in PyTorch)."""
        self._backoff_factor = new_factor

    def get_growth_interval(self) -> int:
        """How many clean steps in a row make ``update()`` grow the scale."""
        return self._growth_interval

    def set_growth_interval(self, new_interval: int) -> None:
        """Set the growth interval."""
        self._growth_interval = new_interval

    def _get_growth_tracker(self) -> int:
        if self._enabled:
            if self._growth_tracker is None:
                return self._init_growth_tracker
            return int(self._growth_tracker._array)
        return 0

    def is_enabled(self) -> bool:
        """False when constructed with ``enabled=False`` (or for 'cuda' without CUDA)."""
        return self._enabled

    def state_dict(self) -> dict[str, Any]:
        """``scale``, ``growth_factor``, ``backoff_factor``, ``growth_interval`` and
        ``_growth_tracker`` ({} when disabled), as PyTorch saves them; call it after update()."""
        if self._enabled:
            return {
                "scale": self.get_scale(),
                "growth_factor": self._growth_factor,
                "backoff_factor": self._backoff_factor,
                "growth_interval": self._growth_interval,
                "_growth_tracker": self._get_growth_tracker(),
            }
        return {}

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        """Restore ``state_dict()``'s values (a no-op when disabled); RuntimeError for the empty
        dict of a disabled scaler."""
        if not self._enabled:
            return
        if len(state_dict) == 0:
            raise RuntimeError(
                "The source state dict is empty, possibly because it was saved from a disabled "
                "instance of GradScaler."
            )
        self._init_scale = state_dict["scale"]
        if self._scale is not None:
            self._scale._array[...] = state_dict["scale"]
        self._growth_factor = state_dict["growth_factor"]
        self._backoff_factor = state_dict["backoff_factor"]
        self._growth_interval = state_dict["growth_interval"]
        self._init_growth_tracker = state_dict["_growth_tracker"]
        if self._growth_tracker is not None:
            self._growth_tracker._array[...] = state_dict["_growth_tracker"]

    def __getstate__(self) -> dict[str, Any]:
        state = self.__dict__.copy()
        if self._enabled:
            if len(self._per_optimizer_states) != 0:
                raise AssertionError(
                    "A GradScaler instance may only be pickled at the beginning of an iteration, "
                    "or at the end after scaler.update()."
                )
            state["_init_scale"] = self.get_scale()
            state["_init_growth_tracker"] = self._get_growth_tracker()
            state["_scale"] = None
            state["_growth_tracker"] = None
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)

    def _check_inf_per_device(self, optimizer) -> dict:
        self._check_scale_growth_tracker("_check_inf_per_device")
        found, nonfinite = self._unscale_grads_(optimizer, 1.0, True)
        self._per_optimizer_states[id(optimizer)]["found_inf_per_device"] = found
        self._per_optimizer_states[id(optimizer)]["nonfinite"] = nonfinite
        return found

    def _found_inf_per_device(self, optimizer) -> dict:
        return self._per_optimizer_states[id(optimizer)]["found_inf_per_device"]


def _multiply_(arr, inv_scale: float) -> None:
    """``arr *= inv_scale`` in the op math of PyTorch's kernel: float32 for 16-bit and float32
    arrays, float64 for float64."""
    if arr.dtype == np.float64:
        np.multiply(arr, inv_scale, out=arr)
    elif arr.dtype == np.float32:
        np.multiply(arr, np.float32(inv_scale), out=arr)
    else:
        arr[...] = (arr.astype(np.float32) * np.float32(inv_scale)).astype(arr.dtype)


def _amp_update_scale_(scale, growth_tracker, found_inf: float, growth_factor: float,
                       backoff_factor: float, growth_interval: int) -> None:
    """PyTorch's ``_amp_update_scale_`` CPU kernel on 0-d arrays (float32 scale, int32 tracker):
    products in double precision, stored as float32; growth only when the result is finite."""
    if found_inf:
        scale[...] = np.float32(float(scale) * backoff_factor)
        growth_tracker[...] = 0
        return
    successful = int(growth_tracker) + 1
    if successful == growth_interval:
        with np.errstate(over="ignore"):
            new_scale = np.float32(float(scale) * growth_factor)
        if np.isfinite(new_scale):
            scale[...] = new_scale
        growth_tracker[...] = 0
    else:
        growth_tracker[...] = successful


def _float32_scalar(value: float):
    from ..tensor import Tensor

    return Tensor._make(np.array(value, dtype=dtypes.float32.np))


def _cuda_available() -> bool:
    from .. import cuda

    return cuda.is_available()
