"""``glassgrad.fft``: discrete Fourier transforms, differentiable (``torch.fft``).

The transforms live in _transforms.py (their kernels and adjoints in ops/fft_ops.py), the
frequency and shift helpers in _helpers.py.
"""

from ..tensor import Tensor  # noqa: F401 - torch.fft.Tensor is the Tensor class
from ._helpers import fftfreq, fftshift, ifftshift, rfftfreq  # noqa: F401
from ._transforms import (  # noqa: F401
    fft, fft2, fftn, hfft, hfft2, hfftn, ifft, ifft2, ifftn, ihfft, ihfft2, ihfftn, irfft,
    irfft2, irfftn, rfft, rfft2, rfftn,
)

# torch.fft keeps the argument descriptions its docstrings share as data; these are glassgrad's
common_args = {
    "input": "input (Tensor): the tensor to transform.",
    "generator": "generator (Generator, optional): the random number generator to draw from.",
    "out": "out (Tensor, optional): a tensor to write the result into.",
    "memory_format": "memory_format (memory_format, optional): the layout of the result.",
}
factory_common_args = dict(common_args, **{
    "dtype": "dtype (dtype, optional): the result's dtype; default: the default float dtype.",
    "layout": "layout (layout, optional): the result's layout; only strided.",
    "device": "device (device, optional): the result's device.",
    "requires_grad": "requires_grad (bool, optional): whether autograd records the result.",
    "pin_memory": "pin_memory (bool, optional): ignored on the CPU.",
    "check_invariants": "check_invariants (bool, optional): check a sparse tensor's invariants.",
    "sparse_factory_device_note": "The device of a sparse factory follows its indices.",
})
