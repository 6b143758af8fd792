"""Run a torch module and its glassgrad twin on the same weights and inputs; compare outputs,
input gradients, parameter gradients and (optionally) second-order gradients."""

from __future__ import annotations

import numpy as np
import torch

import glassgrad
from tests.oracle import assert_close, copy_params, to_lib

TOL = {np.float64: (1e-9, 1e-7), np.float32: (2e-5, 2e-4)}


def _dtype(lib, np_dtype):
    return lib.float64 if np_dtype == np.float64 else lib.float32


def _outputs(out, lib):
    if isinstance(out, lib.Tensor):
        return [out]
    return [o for o in out if isinstance(o, lib.Tensor)]


def _run(lib, module, inputs, np_dtype, rng_seed, double):
    args = [to_lib(lib, a, np_dtype) for a in inputs]
    outs = _outputs(module(*args), lib)
    leaves = [a for a in args if isinstance(a, lib.Tensor) and a.requires_grad]
    params = [p for p in module.parameters() if p.requires_grad]
    wrt = leaves + params
    result = {"out": outs, "grads": None, "gradgrads": None}
    diff = [o for o in outs if o.requires_grad]
    if not diff or not wrt:
        return result
    rng = np.random.default_rng(rng_seed)
    cots = [lib.tensor(rng.standard_normal(tuple(o.shape)), dtype=o.dtype,
                       requires_grad=double) for o in diff]
    grads = lib.autograd.grad(diff, wrt, cots, create_graph=double, allow_unused=True)
    result["grads"] = grads
    if double:
        ws = [rng.standard_normal(tuple(x.shape)) for x in wrt]
        total = sum((g * lib.tensor(w, dtype=g.dtype)).sum() for g, w in zip(grads, ws)
                    if g is not None and g.requires_grad)
        if isinstance(total, lib.Tensor) and total.requires_grad:
            result["gradgrads"] = lib.autograd.grad(total, wrt + cots, allow_unused=True)
    return result


def check_module(make, inputs, dtypes=(np.float64, np.float32), double=False, tol=None,
                 train=True, what=""):
    """``make(lib)`` builds the same module on torch and glassgrad; torch's weights are copied
    into glassgrad's through ``load_state_dict``; everything is compared."""
    for np_dtype in dtypes:
        t_mod = make(torch).to(_dtype(torch, np_dtype))
        g_mod = make(glassgrad).to(_dtype(glassgrad, np_dtype))
        copy_params(t_mod, g_mod)
        t_mod.train(train)
        g_mod.train(train)
        dbl = double and np_dtype == np.float64
        theirs = _run(torch, t_mod, inputs, np_dtype, 7, dbl)
        ours = _run(glassgrad, g_mod, inputs, np_dtype, 7, dbl)
        atol, rtol = tol or TOL[np_dtype]
        label = f"{what or type(t_mod).__name__} [{np.dtype(np_dtype).name}]"
        assert len(ours["out"]) == len(theirs["out"])
        for a, b in zip(ours["out"], theirs["out"]):
            assert str(a.dtype).split(".")[-1] == str(b.dtype).split(".")[-1], label
            assert_close(a, b, atol, rtol, what=f"{label} forward")
        for key in ("grads", "gradgrads"):
            if theirs[key] is None:
                assert ours[key] is None or all(
                    g is None or not g.detach().numpy().any() for g in ours[key]), label
                continue
            assert ours[key] is not None, f"{label}: no {key}"
            for k, (a, b) in enumerate(zip(ours[key], theirs[key])):
                scale = 10 if key == "gradgrads" else 1
                assert_close(a, b, atol * scale, rtol * scale, what=f"{label} {key}[{k}]")
        for (name, a), (_, b) in zip(g_mod.named_buffers(), t_mod.named_buffers()):
            assert_close(a, b, atol, rtol, what=f"{label} buffer {name}")
