"""Small nn behaviours PyTorch's own nn suite checks, each run on torch and glassgrad alike."""

import pickle

import numpy as np
import pytest
import torch

import glassgrad


@pytest.mark.parametrize("name", ["softsign", "relu", "conv2d", "interpolate", "cross_entropy"])
def test_functional_pickles_to_the_same_function(name):
    for lib in (torch, glassgrad):
        fn = getattr(lib.nn.functional, name)
        assert pickle.loads(pickle.dumps(fn)) is fn


def _views(lib, a):
    t = lib.tensor(a)
    cl = t.contiguous(memory_format=lib.channels_last)
    return [t, cl, cl[0][None], cl[:, :, 1:-1, 2:], cl[:, :, ::2, ::2], t[:, :, ::2],
            t.permute(0, 2, 3, 1)]


@pytest.mark.parametrize("mode,kw", [("nearest", {}), ("bilinear", {}), ("bicubic", {}),
                                     ("bilinear", {"antialias": True}), ("area", {}),
                                     ("nearest-exact", {})], ids=str)
@pytest.mark.parametrize("dtype", ["float64", "uint8"])
def test_interpolate_output_takes_torchs_memory_format(mode, kw, dtype):
    if dtype == "uint8" and mode == "area":
        pytest.skip("torch has no uint8 area kernel")
    a = np.random.default_rng(0).integers(0, 256, (2, 3, 6, 8)).astype(dtype)
    outs = {}
    for lib in (torch, glassgrad):
        outs[lib.__name__] = [
            lib.nn.functional.interpolate(x, size=(5, 11), mode=mode, **kw)
            for x in _views(lib, a)]
    for theirs, ours in zip(outs["torch"], outs["glassgrad"]):
        assert ours.stride() == theirs.stride()
        np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-12, atol=0)
