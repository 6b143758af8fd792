"""F.pad with negative pads and max pooling over windows that see only padding, against torch
(issue 18, part 2): values, gradients, indices and the errors' types and key phrases."""

from __future__ import annotations

import itertools
import re

import numpy as np
import pytest
import torch

from .adversarial_util import LIBS, _same


def _pad(lib, shape, pad, mode):
    x = lib.tensor(np.arange(np.prod(shape), dtype=np.float64).reshape(shape),
                   requires_grad=True)
    y = lib.nn.functional.pad(x, pad, mode=mode)
    seed = lib.tensor(np.arange(y.numel(), dtype=np.float64).reshape(tuple(y.shape)))
    y.backward(seed)
    return [y.detach(), x.grad]


def _circular_is_defined(shape, pad):
    # NOTE: PyTorch's circular pad copies from its own output: a positive pad wider than the
    # cropped dim reads unwritten memory (or raises an overlap error); not compared
    sizes = shape[2:][::-1]
    for k, n in enumerate(sizes):
        before, after = pad[2 * k], pad[2 * k + 1]
        kept = n + min(before, 0) + min(after, 0)
        if max(before, 0) > kept or max(after, 0) > kept:
            return False
    return True


PAD_CASES = [((1, 1, 5), p) for p in itertools.product(range(-3, 4), repeat=2)] + [
    ((1, 2, 4, 5), p) for p in [(-1, 2, 0, 0), (2, -1, -1, 1), (-2, -2, 1, -1), (0, 0, -4, 0),
                                (-5, 0, 0, 0), (-3, -3, 0, 1), (1, -3, 2, -2), (-1, -1, -1, -1),
                                (3, 0, -3, 0), (0, -2, 3, 3)]]


@pytest.mark.parametrize("mode", ["circular", "reflect", "replicate", "constant"])
@pytest.mark.parametrize("shape,pad", PAD_CASES, ids=str)
def test_pad_with_negative_pads(shape, pad, mode):
    """Negative pads crop first (circular included: it wraps the cropped dim, as torch)."""
    if mode == "circular" and not _circular_is_defined(shape, pad):
        pytest.skip("undefined in PyTorch")
    try:
        theirs = _pad(torch, shape, pad, mode)
    except RuntimeError as e:
        with pytest.raises(RuntimeError) as ours:
            _pad(LIBS[1], shape, pad, mode)
        if "overflow" not in str(e):  # (torch's reflect of a negative size: an internal error)
            key = str(e).split(":")[0].split(".")[0][:40]
            assert key.split()[0] in str(ours.value), (str(e), str(ours.value))
        return
    _same(_pad(LIBS[1], shape, pad, mode), theirs)


def _max_pool(lib, nd, n, kernel, stride, padding, dilation, ceil_mode):
    shape = (1, 2) + (n,) * nd
    x = lib.tensor(np.arange(np.prod(shape), dtype=np.float64).reshape(shape) - 3.0,
                   requires_grad=True)
    pool = getattr(lib.nn, f"MaxPool{nd}d")(kernel, stride, padding, dilation,
                                           ceil_mode=ceil_mode, return_indices=True)
    y, index = pool(x)
    seed = lib.ones_like(y)
    if lib is torch:  # NOTE: torch's backward writes out of bounds at a padding-only window's
        seed = torch.where(y == -torch.inf, 0.0, seed)  # index; adding 0 there is harmless
    y.backward(seed)
    return [y.detach(), x.grad, index]


POOL_CASES = [(nd, n, k, s, p, d, ceil) for nd in (1, 2, 3) for n in (1, 2, 3)
              for k, s, p, d in [(2, 1, 1, 2), (2, 2, 1, 2), (2, 3, 1, 2), (2, 2, 1, 3),
                                 (3, 2, 1, 1), (2, 2, 1, 1), (3, 3, 1, 2)]
              for ceil in (False, True)]


@pytest.mark.parametrize("nd,n,kernel,stride,padding,dilation,ceil_mode", POOL_CASES)
def test_max_pool_window_of_padding_only(nd, n, kernel, stride, padding, dilation, ceil_mode):
    """A window that sees only padding (dilation, ceil_mode) is -inf with torch's index, and
    sends no gradient."""
    args = (nd, n, kernel, stride, padding, dilation, ceil_mode)
    try:
        theirs = _max_pool(torch, *args)
    except RuntimeError as e:
        key = str(e).split(".")[-1].strip() or str(e)  # ("Output size is too small")
        with pytest.raises(RuntimeError, match=re.escape(key[:30])):
            _max_pool(LIBS[1], *args)
        return
    _same(_max_pool(LIBS[1], *args), theirs)
