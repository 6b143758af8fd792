"""``DataParallel`` and ``data_parallel`` as PyTorch runs them without an accelerator.

On a machine without GPUs torch's ``DataParallel`` keeps the module as it is (``.module``,
``device_ids == []``) and its forward calls the module directly; its state_dict keys carry the
``module.`` prefix because the wrapped module is a submodule. The functional ``data_parallel``
and the multi-device pieces (``replicate``, ``scatter``, ``gather``, ``parallel_apply``) need
devices and raise torch's errors; ``DistributedDataParallel`` belongs to distributed training.
"""

from __future__ import annotations

from ..module import Module


def _device_type():
    """The accelerator's type name, or None on the CPU (torch's ``_get_available_device_type``)."""
    from ... import accelerator

    found = accelerator.current_accelerator()
    return None if found is None else found.type


class DataParallel(Module):
    """Split a batch over GPUs (``torch.nn.DataParallel(module, device_ids, output_device, dim)``).

    Without an accelerator, as in torch: ``forward(*inputs, **kwargs)`` is ``module(*inputs,
    **kwargs)``, ``device_ids`` is ``[]``, and ``state_dict()`` keys are ``module.<name>``.

    Example::

        >>> net = glassgrad.nn.DataParallel(glassgrad.nn.Linear(2, 3))
        >>> list(net.state_dict())
        ['module.weight', 'module.bias']
    """

    def __init__(self, module, device_ids=None, output_device=None, dim: int = 0) -> None:
        super().__init__()
        # NOTE: a GPU backend would fill device_ids and split batches here, as torch does
        self.module = module
        self.device_ids = []

    def forward(self, *inputs, **kwargs):
        return self.module(*inputs, **kwargs)


def data_parallel(module, inputs, device_ids=None, output_device=None, dim: int = 0,
                  module_kwargs=None):
    """The functional ``DataParallel`` (``torch.nn.parallel.data_parallel``): torch raises
    RuntimeError "device type could not be determined" without an accelerator, and so does this."""
    if _device_type() is None:
        raise RuntimeError(
            "device type could not be determined\nglassgrad: data_parallel() needs GPUs; on the "
            "CPU call module(*inputs) directly, or wrap it in nn.DataParallel, which runs it as is."
        )
    inputs = inputs if isinstance(inputs, tuple) else (inputs,)
    return module(*inputs, **(module_kwargs or {}))  # one device: torch's len(device_ids) == 1


def replicate(network, devices, detach: bool = False):
    """Copy a module onto devices (``torch.nn.parallel.replicate``): torch's CPU tensors have no
    broadcast, so this raises its AssertionError "Broadcast function not implemented for CPU
    tensors"."""
    raise AssertionError(
        "Broadcast function not implemented for CPU tensors\nglassgrad: replicate() copies a "
        "module onto GPUs; on the CPU use the module itself (or copy.deepcopy for a copy)."
    )


def gather(outputs, target_device, dim: int = 0):
    """Collect per-device outputs (``torch.nn.parallel.gather``): AssertionError "Gather function
    not implemented for CPU tensors", as torch."""
    raise AssertionError(
        "Gather function not implemented for CPU tensors\nglassgrad: gather() joins GPU outputs; "
        "on the CPU join tensors with glassgrad.cat(outputs, dim)."
    )


def parallel_apply(modules, inputs, kwargs_tup=None, devices=None):
    """Run modules on devices in threads (``torch.nn.parallel.parallel_apply``): RuntimeError
    "Cannot access accelerator device when none is available.", as torch."""
    from ... import accelerator

    accelerator.current_device_index()
