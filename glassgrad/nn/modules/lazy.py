"""``LazyModuleMixin`` (``torch.nn.modules.lazy``): modules whose parameter shapes come from
their first input.

A lazy module holds ``UninitializedParameter``/``UninitializedBuffer`` placeholders. A forward
pre-hook runs ``initialize_parameters(*args, **kwargs)`` on the first call, which materializes
them and runs the layer's usual init; the hooks are then removed and the object becomes its
``cls_to_become`` (``LazyLinear`` -> ``Linear``), so later calls cost what the eager layer costs.
A load-state-dict pre-hook materializes placeholders to a checkpoint's shapes, so a lazy module
loads an initialized state (and stays lazy when the checkpoint is lazy too).
"""

from __future__ import annotations

import itertools

from ...autograd.grad_mode import no_grad
from ..parameter import is_lazy

__all__ = ["LazyModuleMixin"]


class LazyModuleMixin:
    """Mixin for modules that infer their parameters' shapes from the first input
    (``torch.nn.modules.lazy.LazyModuleMixin``).

    Subclasses put ``UninitializedParameter``s in place of the shaped ones, define
    ``initialize_parameters(input)`` and set ``cls_to_become`` to the eager class. Errors:
    RuntimeError "module <Name> has not been fully initialized" when ``initialize_parameters``
    leaves a placeholder; RuntimeError from ``DataParallel`` before the first call.
    """

    cls_to_become = None

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self._load_hook = self._register_load_state_dict_pre_hook(self._lazy_load_hook)
        self._initialize_hook = self.register_forward_pre_hook(self._infer_parameters,
                                                               with_kwargs=True)

    def _save_to_state_dict(self, destination, prefix: str, keep_vars: bool) -> None:
        # NOTE: placeholders go in as they are (detach() would give a shapeless plain Tensor)
        for name, param in self._parameters.items():
            if param is not None:
                destination[prefix + name] = param if is_lazy(param) or keep_vars \
                    else param.detach()
        for name, buf in self._buffers.items():
            if buf is not None and name not in self._non_persistent_buffers_set:
                destination[prefix + name] = buf if is_lazy(buf) or keep_vars else buf.detach()

    def _lazy_load_hook(self, state_dict, prefix, local_metadata, strict, missing_keys,
                        unexpected_keys, error_msgs) -> None:
        for name, param in itertools.chain(self._parameters.items(), self._buffers.items()):
            key = prefix + name
            if key in state_dict and param is not None and is_lazy(param):
                value = state_dict[key]
                if not is_lazy(value):
                    with no_grad():
                        param.materialize(value.shape)

    def initialize_parameters(self, *args, **kwargs) -> None:
        """Materialize the placeholders from the first input; each lazy layer defines it."""
        raise NotImplementedError(
            f"initialize_parameters is not implemented for {self.__class__.__name__}"
        )

    def has_uninitialized_params(self) -> bool:
        """Whether any parameter or buffer of this module (not its children) is a placeholder."""
        return any(is_lazy(v) for v in itertools.chain(self._parameters.values(),
                                                      self._buffers.values()))

    def _infer_parameters(self, module, args, kwargs=None) -> None:
        module.initialize_parameters(*args, **(kwargs or {}))
        if module.has_uninitialized_params():
            raise RuntimeError(f"module {self._get_name()} has not been fully initialized")
        module._initialize_hook.remove()
        module._load_hook.remove()
        del module._initialize_hook
        del module._load_hook
        if module.cls_to_become is not None:
            module.__class__ = module.cls_to_become

    def _replicate_for_data_parallel(self):
        raise RuntimeError(
            "Modules with uninitialized parameters can't be used with `DataParallel`. Run a dummy "
            "forward pass to correctly initialize the modules"
        )
