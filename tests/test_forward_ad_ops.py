"""Every op of the op table under forward AD (NOTE [JVP rules] in glassgrad/ops/_jvp_rules.py):
its JVP satisfies the transpose identity <J v, u> = <v, J^T u> against glassgrad's own VJP, and
equals torch's forward-mode tangent on the same inputs, in float64."""

from __future__ import annotations

import numpy as np
import pytest
import torch
import torch.autograd.forward_ad as torch_fwad

import glassgrad
from glassgrad.autograd import forward_ad as fwad
from tests.op_db import all_ops
from tests.oracle import assert_close, flat_tensors, leaves, to_lib

OPS = [pytest.param(op, id=op.name) for op in all_ops()]
# (op, sample) -> why the tangent is not compared with torch's
KNOWN = {
    ("logsumexp", "empty reduced dim"): "torch's tangent is nan there (its JVP divides by "
    "exp(result) = 0); glassgrad's is the derivative, 0",
    ("logcumsumexp", "large and -inf"): "torch's tangent loses d r_1 / d x_1 = 1 of "
    "[-inf, 0.5, 800] (its JVP shifts by the row's max, 800, and underflows); the transpose "
    "identity still checks glassgrad's",
}
# ops (of other lanes' tables) where torch's forward AD disagrees with torch's own backward (which
# glassgrad's VJP matches, tests/test_ops.py): the transpose identity checks glassgrad's JVP
TORCH_INCONSISTENT = {
    "linear_cross_entropy_chunked": "torch's chunked path gives no forward-AD tangent (None) "
    "where its reference path gives the derivative; glassgrad's is the derivative, checked by "
    "the transpose identity",
    "triangular_solve": "torch's JVP reads the tangent's other triangle, its VJP does not",
    "cholesky_inverse": "torch's JVP reads the tangent's other triangle, its VJP does not",
    **{f"{lib}.scatter_reduce({how})": "torch's JVP at zeros and ties is not its VJP's transpose"
       for lib in ("torch", "Tensor") for how in ("prod", "prod, zeros", "amax, ties",
                                                  "amin, ties")},
}
# ops whose VJP knowingly ignores part of the function: no transpose identity
NO_IDENTITY = {
    "setitem_view_of_leaf_under_no_grad": "a write under no_grad is invisible to backward but "
    "not to forward AD (grad mode does not affect it, as in PyTorch)",
}


def _duals(lib, ad, args, tangents):
    """The float tensors of ``args`` made dual (tangents taken in order from ``tangents``)."""
    out = []
    for a in args:
        if isinstance(a, lib.Tensor) and a.is_floating_point():
            out.append(ad.make_dual(a, lib.from_numpy(tangents.pop(0).copy())))
        elif isinstance(a, (list, tuple)):
            out.append(type(a)(_duals(lib, ad, a, tangents)))
        else:
            out.append(a)
    return out


def _tangent_draws(rng, args):
    return [rng.standard_normal(t.shape) for t in leaves(args, glassgrad)]


def _complex(args) -> bool:
    return any(isinstance(a, np.ndarray) and a.dtype.kind == "c"
               or isinstance(a, (list, tuple)) and _complex(a) for a in args)


def _float_outputs(outs):
    return [o for o in outs if o.is_floating_point()]


@pytest.mark.parametrize("op", OPS)
def test_jvp_transpose_identity_and_torch(op):
    if op.xfail:
        pytest.xfail(op.xfail)
    if not op.grad:
        pytest.skip("not differentiable")
    rng = np.random.default_rng(3)
    for sample in op.samples(np.random.default_rng(0)):
        if _complex(sample.args):
            pytest.skip("complex: forward AD of complex tensors is not built yet")
        g_args = [to_lib(glassgrad, a) for a in sample.args]
        draws = _tangent_draws(rng, g_args)
        with fwad.dual_level():
            try:
                outs = _float_outputs(flat_tensors(op.fn(
                    glassgrad, *_duals(glassgrad, fwad, g_args, list(draws)), **sample.kwargs),
                    glassgrad))
            except RuntimeError as e:  # the generic rule: a real, differentiable backward
                if "forward AD:" in str(e) and "complex" in str(e):
                    pytest.skip("complex: forward AD of complex tensors is not built yet")
                if not op.gradgrad:  # the entry has no double backward: nor a generic JVP
                    pytest.xfail(f"no JVP rule and no double backward: {e}")
                raise
            jv = [fwad.unpack_dual(o).tangent for o in outs]
        t_args = [to_lib(torch, a, requires_grad=False) for a in sample.args]
        with torch_fwad.dual_level():
            try:
                t_outs = _float_outputs(flat_tensors(op.fn(
                    torch, *_duals(torch, torch_fwad, t_args, list(draws)), **sample.kwargs),
                    torch))
                t_jv = [torch_fwad.unpack_dual(o).tangent for o in t_outs]
            except (NotImplementedError, RuntimeError) as e:
                if "forward AD" not in str(e) and "forward gradient" not in str(e):
                    raise
                t_jv = None  # torch has no forward AD formula for it: the identity alone
        assert t_jv is None or len(jv) == len(t_jv)
        if (t_jv is not None and (op.name, sample.desc) not in KNOWN
                and op.name not in TORCH_INCONSISTENT):
            for k, (a, b) in enumerate(zip(jv, t_jv)):
                assert_close(a, b, op.atol, op.rtol, what=f"{op.name} [{sample.desc}] tangent {k}")
        live = [(o, v) for o, v in zip(outs, jv) if o.requires_grad]
        if not live or op.name in NO_IDENTITY:
            continue
        cots = [rng.standard_normal(o.shape) for o, _ in live]
        vjp = glassgrad.autograd.grad([o for o, _ in live], leaves(g_args, glassgrad),
                                      [glassgrad.from_numpy(c) for c in cots], allow_unused=True)
        lhs = sum(float(np.sum(c * v.detach().numpy())) for c, (_, v) in zip(cots, live)
                  if v is not None)
        rhs = sum(float(np.sum(d * g.numpy())) for d, g in zip(draws, vjp) if g is not None)
        if np.isnan(lhs) or np.isnan(rhs):  # nan where torch's tangent or gradient is nan too
            continue
        assert abs(lhs - rhs) <= 1e-7 + 1e-6 * max(abs(lhs), abs(rhs)), (
            f"{op.name} [{sample.desc}]: <Jv, u> = {lhs} but <v, J^T u> = {rhs}")
