"""Run the same code on torch and glassgrad and compare: the helpers every oracle test uses."""

from __future__ import annotations

import numpy as np
import torch

import glassgrad


def to_lib(lib, value, dtype=np.float64, requires_grad=True):
    """A NumPy sample as a tensor of ``lib``: float arrays become leaves that require grad (the
    memory layout, e.g. non-contiguous, is kept); other arrays become plain tensors."""
    if isinstance(value, np.ndarray):
        if value.dtype.kind == "f":
            a = value.astype(dtype, order="K", copy=True)
            t = lib.from_numpy(a)
            return t.requires_grad_(requires_grad)
        return lib.from_numpy(value.copy())
    if isinstance(value, (list, tuple)) and value and isinstance(value[0], np.ndarray):
        return type(value)(to_lib(lib, v, dtype, requires_grad) for v in value)
    return value


def flat_tensors(out, lib):
    if isinstance(out, lib.Tensor):
        return [out]
    res = []
    for o in out:
        res.extend(flat_tensors(o, lib))
    return res


def leaves(args, lib):
    res = []
    for a in args:
        if isinstance(a, lib.Tensor) and a.requires_grad:
            res.append(a)
        elif isinstance(a, (list, tuple)):
            res.extend(leaves(a, lib))
    return res


def to_np(t):
    if t is None:
        return None
    if isinstance(t, torch.Tensor):
        t = t.detach().clone()
        return t.to(torch.float64).numpy() if t.is_floating_point() else t.numpy()
    arr = t.detach()._array
    return arr.astype(np.float64) if t.is_floating_point() else arr


def assert_close(ours, theirs, atol=1e-6, rtol=1e-5, what=""):
    a, b = to_np(ours), to_np(theirs)
    if a is None or b is None:
        assert a is None and b is None or _zero(a) and _zero(b), f"{what}: {a} vs {b}"
        return
    assert a.shape == b.shape, f"{what}: shape {a.shape} vs torch {b.shape}"
    np.testing.assert_allclose(a, b, atol=atol, rtol=rtol, err_msg=what)


def _zero(x):
    return x is None or not np.any(x)


def assert_same_dtype(ours, theirs):
    assert str(ours.dtype).split(".")[-1] == str(theirs.dtype).split(".")[-1], (
        f"dtype {ours.dtype} vs torch {theirs.dtype}"
    )


def copy_params(src_torch_module, dst_module):
    """Copy a torch module's parameters and buffers into a glassgrad module, by name."""
    sd = {k: glassgrad.tensor(v.detach().numpy().copy()) for k, v in
          src_torch_module.state_dict().items()}
    dst_module.load_state_dict(sd)
