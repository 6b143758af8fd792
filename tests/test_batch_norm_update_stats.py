"""torch.batch_norm_update_stats against torch: outputs, running-buffer updates, errors."""

import numpy as np
import pytest
import torch

import glassgrad as gg


@pytest.mark.parametrize("shape", [(4, 3), (4, 3, 5), (2, 3, 4, 5), (1, 3, 1)])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("buffers", [True, False])
def test_matches_torch(shape, dtype, buffers):
    rng = np.random.default_rng(0)
    x = rng.standard_normal(shape).astype(dtype)
    rm = rng.standard_normal(shape[1]).astype(dtype)
    rv = rng.random(shape[1]).astype(dtype) + 0.5
    t_rm, t_rv = (torch.tensor(rm), torch.tensor(rv)) if buffers else (None, None)
    g_rm, g_rv = (gg.tensor(rm), gg.tensor(rv)) if buffers else (None, None)
    tm, tv = torch.batch_norm_update_stats(torch.tensor(x), t_rm, t_rv, 0.1)
    gm, gv = gg.batch_norm_update_stats(gg.tensor(x), g_rm, g_rv, 0.1)
    tol = 1e-6 if dtype == "float32" else 1e-12
    for g, t in ((gm, tm), (gv, tv)) + (((g_rm, t_rm), (g_rv, t_rv)) if buffers else ()):
        assert str(g.dtype).split(".")[-1] == str(t.dtype).split(".")[-1]
        np.testing.assert_allclose(g.numpy(), t.numpy(), rtol=tol, atol=tol)


def test_empty_input_error_matches_torch():
    phrase = "input tensor must have at least one element, but got input_sizes = [0, 1]"
    with pytest.raises(RuntimeError, match=phrase.replace("[", r"\[").replace("]", r"\]")):
        torch.batch_norm_update_stats(torch.rand(0, 1), torch.rand(1), torch.rand(1), 0.0)
    with pytest.raises(RuntimeError, match=phrase.replace("[", r"\[").replace("]", r"\]")):
        gg.batch_norm_update_stats(gg.rand(0, 1), gg.rand(1), gg.rand(1), 0.0)


def test_buffer_size_mismatch_raises():
    # NOTE: torch's CPU kernel reads past a short buffer unchecked; glassgrad raises instead
    with pytest.raises(RuntimeError, match="running_mean must have shape"):
        gg.batch_norm_update_stats(gg.rand(2, 3), gg.rand(2), gg.rand(2), 0.1)
