"""Converting convolution weights to a memory format (``torch.nn.utils.memory_format``)."""

from __future__ import annotations

from ..module import Module

__all__ = ["convert_conv2d_weight_memory_format", "convert_conv3d_weight_memory_format"]


def _convert(module: Module, memory_format, classes: tuple) -> Module:
    if isinstance(module, classes):
        # NOTE: the weight keeps its Parameter object (optimizers hold it); only its layout moves
        module.weight.data = module.weight.detach().contiguous(memory_format=memory_format)
    for child in module.children():
        _convert(child, memory_format, classes)
    return module


def convert_conv2d_weight_memory_format(module: Module, memory_format) -> Module:
    """Lay the weight of every ``Conv2d`` / ``ConvTranspose2d`` in ``module`` (recursively) out
    in ``memory_format`` (e.g. ``channels_last``), in place; returns ``module``
    (``torch.nn.utils.convert_conv2d_weight_memory_format``). RuntimeError for a format that
    needs another rank."""
    from ..modules.conv import Conv2d, ConvTranspose2d

    return _convert(module, memory_format, (Conv2d, ConvTranspose2d))


def convert_conv3d_weight_memory_format(module: Module, memory_format) -> Module:
    """As ``convert_conv2d_weight_memory_format`` for ``Conv3d`` / ``ConvTranspose3d``
    (``channels_last_3d``) (``torch.nn.utils.convert_conv3d_weight_memory_format``)."""
    from ..modules.conv import Conv3d, ConvTranspose3d

    return _convert(module, memory_format, (Conv3d, ConvTranspose3d))
