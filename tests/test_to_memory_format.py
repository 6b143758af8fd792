"""Tensor.to(..., memory_format=) lays the result out as torch does (it was ignored)."""
import numpy as np
import pytest

import glassgrad

torch = pytest.importorskip("torch")

CASES = [  # (shape, call on the library `m` and tensor `x`)
    ((2, 3, 4, 5), lambda m, x: x.to(memory_format=m.channels_last)),
    ((2, 3, 4, 5), lambda m, x: x.to(m.float64, memory_format=m.channels_last)),
    ((2, 3, 4, 5, 2), lambda m, x: x.to(memory_format=m.channels_last_3d)),
    ((2, 3, 4, 5), lambda m, x: x.to(memory_format=m.channels_last)
     .to(memory_format=m.contiguous_format)),
    ((2, 3, 4, 5), lambda m, x: x.to(memory_format=m.preserve_format)),
    ((2, 3, 4, 5), lambda m, x: x.to("cpu", memory_format=m.channels_last)),
]


@pytest.mark.parametrize("i", range(len(CASES)))
def test_layout_values_and_grad_match_torch(i):
    shape, call = CASES[i]
    data = np.random.default_rng(i).standard_normal(shape).astype(np.float32)
    got = []
    for m in (torch, glassgrad):
        x = m.tensor(data, requires_grad=True)
        y = call(m, x)
        (y * m.tensor(np.arange(y.numel(), dtype=np.float32).reshape(shape))).sum().backward()
        got.append((y.stride(), y.dtype is m.float64, y.detach().numpy().copy(),
                    x.grad.numpy().copy()))
    assert got[1][0] == got[0][0] and got[1][1] == got[0][1]
    np.testing.assert_allclose(got[1][2], got[0][2], rtol=1e-6)
    np.testing.assert_allclose(got[1][3], got[0][3], rtol=1e-6)


def test_already_laid_out_returns_self_and_copy_copies():
    for m in (torch, glassgrad):
        x = m.ones(2, 3, 4, 5).contiguous(memory_format=m.channels_last)
        assert x.to(memory_format=m.channels_last) is x
        assert x.to(memory_format=m.channels_last, copy=True) is not x


def test_wrong_rank_raises_as_torch():
    for m in (torch, glassgrad):
        with pytest.raises(RuntimeError, match="required rank 4 tensor to use channels_last"):
            m.ones(2, 3, 4).to(memory_format=m.channels_last)
