"""``torch.nn.utils.stateless.functional_call``, the deprecated spelling of
``torch.func.functional_call`` (one dict of tensors; FutureWarning)."""

from __future__ import annotations
from ..._user_warning import warn_user


__all__ = ["functional_call"]


def functional_call(module, parameters_and_buffers: dict, args=None, kwargs=None, *,
                    tie_weights: bool = True, strict: bool = False):
    """Call ``module`` with ``parameters_and_buffers`` (name -> Tensor) in place of its own
    parameters and buffers for this call only (``torch.nn.utils.stateless.functional_call``,
    deprecated since PyTorch 2.0: FutureWarning). Same rules as ``glassgrad.func.
    functional_call``: gradients flow to the given tensors; ``tie_weights`` and ``strict`` as
    there."""
    warn_user("`torch.nn.utils.stateless.functional_call` is deprecated as of PyTorch 2.0 and "
              "will be removed in a future version of PyTorch. Please use "
              "`torch.func.functional_call` instead which is a drop-in replacement.",
              FutureWarning, stacklevel=2)
    from ...func.functional_call import functional_call as _functional_call  # func sits above nn

    return _functional_call(module, parameters_and_buffers, args, kwargs,
                            tie_weights=tie_weights, strict=strict)
