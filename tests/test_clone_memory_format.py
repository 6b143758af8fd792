"""``clone(memory_format=)`` lays the copy out as asked (torch.clone): channels innermost for
``channels_last``/``channels_last_3d``, always a new storage, the gradient a plain copy back."""

import numpy as np
import pytest
import torch

import glassgrad


@pytest.mark.parametrize("shape,fmt", [((2, 3, 4, 5), "channels_last"),
                                       ((2, 3, 2, 4, 5), "channels_last_3d"),
                                       ((2, 3, 4, 5), "contiguous_format")])
def test_layout_and_grad_match_torch(shape, fmt):
    data = np.random.default_rng(0).standard_normal(shape)
    seen = []
    for lib in (torch, glassgrad):
        x = lib.tensor(data, requires_grad=True)
        once = x.clone(memory_format=getattr(lib, fmt))
        twice = lib.clone(once, memory_format=getattr(lib, fmt))  # already in that layout
        assert twice.data_ptr() != once.data_ptr()
        (twice * lib.arange(shape[1], dtype=lib.float64).reshape(1, -1, *[1] * (len(shape) - 2))
         ).sum().backward()
        seen.append((once.stride(), twice.stride(), twice.detach().numpy(), x.grad.numpy(),
                     twice.is_contiguous(memory_format=getattr(lib, fmt))))
    t, g = seen
    assert g[0] == t[0] and g[1] == t[1] and g[4] == t[4]
    np.testing.assert_array_equal(g[2], t[2])
    np.testing.assert_array_equal(g[3], t[3])


def test_wrong_rank_is_torch_error():
    for lib in (torch, glassgrad):
        with pytest.raises(RuntimeError, match="required rank 4 tensor to use channels_last"):
            lib.randn(3, 4).clone(memory_format=lib.channels_last)
