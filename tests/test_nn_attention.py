"""scaled_dot_product_attention and MultiheadAttention against torch: values, attention weights,
input and parameter gradients, masks of every kind, and PyTorch's error messages."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import torch
import torch.nn.functional as TF

import glassgrad
from glassgrad.nn.modules.attention import MultiheadAttention, scaled_dot_product_attention
from tests.oracle import assert_close, copy_params

ATOL = 1e-9


def _leaf(lib, arr):
    return lib.tensor(arr, dtype=lib.float64, requires_grad=True)


def _mask(lib, arr):
    return None if arr is None else lib.tensor(arr)


def _sdpa(lib):
    return scaled_dot_product_attention if lib is glassgrad else TF.scaled_dot_product_attention


# --- scaled_dot_product_attention --------------------------------------------------------------
def _bool_mask(rng, shape, full_row=False):
    m = rng.random(shape) > 0.3
    m[..., 0] = True  # every query may attend to something
    if full_row:
        m[..., 1, :] = False  # ... except query 1: NOTE [Fully masked rows]
    return m


SDPA_CASES = {
    "plain": lambda rng: {},
    "causal": lambda rng: {"is_causal": True},
    "scale": lambda rng: {"scale": 0.3},
    "bool_mask": lambda rng: {"attn_mask": _bool_mask(rng, (3, 5))},
    "bool_mask_batched": lambda rng: {"attn_mask": _bool_mask(rng, (2, 1, 3, 5))},
    "float_mask": lambda rng: {"attn_mask": rng.standard_normal((2, 2, 3, 5))},
    "fully_masked_row": lambda rng: {"attn_mask": _bool_mask(rng, (3, 5), full_row=True)},
}


@pytest.mark.parametrize("case", list(SDPA_CASES))
def test_sdpa_matches_torch(case, rng):
    q, k, v = (rng.standard_normal(s) for s in ((2, 2, 3, 4), (2, 2, 5, 4), (2, 2, 5, 6)))
    kwargs = SDPA_CASES[case](rng)
    res = []
    for lib in (glassgrad, torch):
        args = [_leaf(lib, a) for a in (q, k, v)]
        kw = dict(kwargs)
        if "attn_mask" in kw:
            mask = kw["attn_mask"]
            kw["attn_mask"] = lib.tensor(mask) if mask.dtype == bool else _leaf(lib, mask)
        out = _sdpa(lib)(*args, **kw)
        (out * lib.tensor(np.linspace(-1, 1, out.numel()).reshape(out.shape))).sum().backward()
        res.append((out, args, kw.get("attn_mask")))
    (oa, aa, ma), (ob, ab, mb) = res
    assert_close(oa, ob, atol=ATOL, what="output")
    assert not np.isnan(oa.detach().numpy()).any()
    for a, b, name in zip(aa, ab, "qkv"):
        assert_close(a.grad, b.grad, atol=ATOL, what=f"grad of {name}")
    if ma is not None and ma.requires_grad:
        assert_close(ma.grad, mb.grad, atol=ATOL, what="grad of float mask")


def test_sdpa_double_backward(rng):
    q, k, v = (rng.standard_normal((2, 3, 4)) for _ in range(3))
    res = []
    for lib in (glassgrad, torch):
        args = [_leaf(lib, a) for a in (q, k, v)]
        out = _sdpa(lib)(*args, is_causal=True)
        grads = lib.autograd.grad((out ** 2).sum(), args, create_graph=True)
        sum((g ** 2).sum() for g in grads).backward()
        res.append(args)
    for a, b in zip(*res):
        assert_close(a.grad, b.grad, atol=ATOL, what="grad of grad norm")


def test_sdpa_gqa(rng):
    q, k, v = rng.standard_normal((1, 4, 3, 2)), rng.standard_normal((1, 2, 5, 2)), \
        rng.standard_normal((1, 2, 5, 2))
    res = []
    for lib in (glassgrad, torch):
        args = [_leaf(lib, a) for a in (q, k, v)]
        out = _sdpa(lib)(*args, enable_gqa=True)
        (out ** 2).sum().backward()
        res.append((out, args))
    assert_close(res[0][0], res[1][0], atol=ATOL)
    for a, b in zip(res[0][1], res[1][1]):
        assert_close(a.grad, b.grad, atol=ATOL)


def test_sdpa_dropout_changes_output(rng):
    q = glassgrad.tensor(rng.standard_normal((2, 3, 4)))
    plain = scaled_dot_product_attention(q, q, q)
    dropped = scaled_dot_product_attention(q, q, q, dropout_p=0.5)
    assert dropped.shape == plain.shape
    assert not np.allclose(plain.numpy(), dropped.numpy())


def _describe(e):
    return type(e), str(e).split("\nglassgrad:")[0].replace("glassgrad.", "torch.")


def _error(fn):
    try:
        fn()
    except Exception as e:  # noqa: BLE001 - the error itself is what is compared
        return _describe(e)
    return None, None


def outcome(fn, args, kwargs):
    """``fn(*args, **kwargs)``, or its error as ``(type, message)``."""
    try:
        return fn(*args, **kwargs)
    except Exception as e:  # noqa: BLE001 - the error itself is what is compared
        return _describe(e)


@pytest.mark.parametrize("case", [
    lambda lib, f: f(lib.randn(2, 3, 4), lib.randn(2, 5, 4), lib.randn(2, 5, 6),
                     attn_mask=lib.ones(3, 5, dtype=lib.bool), is_causal=True),
    lambda lib, f: f(lib.randn(2, 3, 4), lib.randn(2, 5, 4), lib.randn(2, 5, 6),
                     attn_mask=lib.ones(3, 5, dtype=lib.int64)),
    lambda lib, f: f(lib.randn(2, 3, 4), lib.randn(2, 5, 4), lib.randn(2, 5, 6),
                     attn_mask=lib.ones(3, 5, dtype=lib.float64)),
    lambda lib, f: f(lib.randn(2, 3, 4, dtype=lib.float64), lib.randn(2, 5, 4),
                     lib.randn(2, 5, 6)),
    lambda lib, f: f(lib.randn(4), lib.randn(5, 4), lib.randn(5, 6)),
])
def test_sdpa_errors_match_torch(case):
    theirs = _error(lambda: case(torch, TF.scaled_dot_product_attention))
    ours = _error(lambda: case(glassgrad, scaled_dot_product_attention))
    assert theirs[0] is not None
    assert ours == theirs


# --- MultiheadAttention ------------------------------------------------------------------------
def _pair(*args, **kwargs):
    torch.manual_seed(0)
    theirs = torch.nn.MultiheadAttention(*args, **kwargs).double()
    ours = MultiheadAttention(*args, **kwargs).double()
    copy_params(theirs, ours)
    return ours, theirs


def _assert_param_grads(ours, theirs):
    mine = dict(ours.named_parameters())
    assert list(mine) == [n for n, _ in theirs.named_parameters()]
    for n, p in theirs.named_parameters():
        assert_close(mine[n].grad, p.grad, atol=ATOL, what=f"grad of {n}")


MHA_CONFIGS = {
    "default": ({}, {}),
    "batch_first": ({"batch_first": True}, {}),
    "kdim_vdim": ({"kdim": 3, "vdim": 5}, {}),
    "bias_kv_zero_attn": ({"add_bias_kv": True, "add_zero_attn": True}, {}),
    "no_bias": ({"bias": False}, {}),
    "per_head_weights": ({}, {"average_attn_weights": False}),
    "no_weights": ({}, {"need_weights": False}),
}
MASKS = ["none", "bool_attn", "float_attn", "key_padding", "both", "causal"]


def _mha_masks(kind, rng, tgt, src, bsz, heads, extra_keys):
    attn = kpm = None
    causal = False
    if kind in ("bool_attn", "both"):
        attn = rng.random((tgt, src)) > 0.7
        attn[:, 0] = False
    if kind == "float_attn":
        attn = rng.standard_normal((bsz * heads, tgt, src))
    if kind in ("key_padding", "both"):
        kpm = np.zeros((bsz, src), dtype=bool)
        kpm[1, -2:] = True
    if kind == "causal":
        attn = np.triu(np.ones((tgt, src), dtype=bool), 1)
        causal = True
    return attn, kpm, causal


@pytest.mark.parametrize("config", list(MHA_CONFIGS))
@pytest.mark.parametrize("mask", MASKS)
def test_mha_matches_torch(config, mask, rng):
    ctor, call = MHA_CONFIGS[config]
    ours, theirs = _pair(8, 2, **ctor)
    tgt, src, bsz = 4, 4 if mask == "causal" else 5, 2
    kdim, vdim = ctor.get("kdim", 8), ctor.get("vdim", 8)
    bf = ctor.get("batch_first", False)
    shape = (lambda n, d: (bsz, n, d)) if bf else (lambda n, d: (n, bsz, d))
    q, k, v = (rng.standard_normal(shape(tgt, 8)), rng.standard_normal(shape(src, kdim)),
               rng.standard_normal(shape(src, vdim)))
    attn, kpm, causal = _mha_masks(mask, rng, tgt, src, bsz, 2, 0)
    res = []
    for lib, module in ((glassgrad, ours), (torch, theirs)):
        args = [_leaf(lib, a) for a in (q, k, v)]
        out, weights = module(*args, key_padding_mask=_mask(lib, kpm), attn_mask=_mask(lib, attn),
                              is_causal=causal, **call)
        loss = (out * lib.tensor(np.linspace(-1, 1, out.numel()).reshape(out.shape))).sum()
        if weights is not None:
            loss = loss + (weights ** 2).sum()
        loss.backward()
        res.append((out, weights, args))
    (oa, wa, aa), (ob, wb, ab) = res
    assert_close(oa, ob, atol=ATOL, what="output")
    assert (wa is None) == (wb is None)
    if wa is not None:
        assert_close(wa, wb, atol=ATOL, what="attention weights")
    for a, b, name in zip(aa, ab, ("query", "key", "value")):
        assert_close(a.grad, b.grad, atol=ATOL, what=f"grad of {name}")
    _assert_param_grads(ours, theirs)


def test_mha_self_attention_unbatched_and_state_dict(rng):
    ours, theirs = _pair(6, 3)
    assert list(ours.state_dict()) == list(theirs.state_dict())
    assert repr(ours) == repr(theirs).replace("torch.", "glassgrad.")
    x = rng.standard_normal((4, 6))
    res = []
    for lib, module in ((glassgrad, ours), (torch, theirs)):
        xs = _leaf(lib, x)
        out, weights = module(xs, xs, xs)
        ((out ** 2).sum() + weights.sum()).backward()
        res.append((out, weights, xs))
    assert_close(res[0][0], res[1][0], atol=ATOL)
    assert_close(res[0][1], res[1][1], atol=ATOL)
    assert_close(res[0][2].grad, res[1][2].grad, atol=ATOL)
    _assert_param_grads(ours, theirs)


@pytest.mark.filterwarnings("ignore:invalid value encountered:RuntimeWarning")
def test_mha_fully_masked_row_nan_like_torch(rng):
    ours, theirs = _pair(4, 2)
    x = rng.standard_normal((3, 2, 4))
    kpm = np.zeros((2, 3), dtype=bool)
    kpm[0] = True
    for need_weights in (True, False):
        a = ours(glassgrad.tensor(x), glassgrad.tensor(x), glassgrad.tensor(x),
                 key_padding_mask=glassgrad.tensor(kpm), need_weights=need_weights)[0]
        b = theirs(torch.tensor(x), torch.tensor(x), torch.tensor(x),
                   key_padding_mask=torch.tensor(kpm), need_weights=need_weights)[0]
        np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), atol=ATOL)


def test_mha_init_and_dropout(rng):
    mha = MultiheadAttention(8, 2, add_bias_kv=True, dropout=0.5)
    bound = np.sqrt(6 / (8 + 24))
    w = mha.in_proj_weight.detach().numpy()
    assert np.all(np.abs(w) <= bound) and w.std() > bound / 4
    assert not mha.in_proj_bias.detach().numpy().any()
    assert not mha.out_proj.bias.detach().numpy().any()
    assert mha.bias_k.detach().numpy().std() > 0
    x = glassgrad.tensor(rng.standard_normal((3, 2, 8)), dtype=glassgrad.float32)
    mha.eval()
    a, b = mha(x, x, x)[0], mha(x, x, x)[0]
    np.testing.assert_array_equal(a.detach().numpy(), b.detach().numpy())
    mha.train()
    c = mha(x, x, x)[0]
    assert not np.allclose(a.detach().numpy(), c.detach().numpy())


@pytest.mark.parametrize("case", [
    lambda lib, m, x: m(x, x, x, is_causal=True),
    lambda lib, m, x: m(x, x, x, attn_mask=lib.ones(3, 4)),
    lambda lib, m, x: m(x, x, x, attn_mask=lib.ones(5, 3, 3)),
    lambda lib, m, x: m(x, x, x, key_padding_mask=lib.ones(2, 4, dtype=lib.bool)),
    lambda lib, m, x: m(x, x, x, key_padding_mask=lib.ones(2, 3, dtype=lib.int64)),
    lambda lib, m, x: m(x, x[:2], x),
    lambda lib, m, x: m(x[:, :, :4], x, x),
    lambda lib, m, x: m(x, x, x[0]),
    lambda lib, m, x: lib.nn.MultiheadAttention(8, 3),
    lambda lib, m, x: lib.nn.MultiheadAttention(0, 3),
])
def test_mha_errors_match_torch(case):
    def run(lib):
        torch.manual_seed(0)
        module = lib.nn.MultiheadAttention(8, 2)
        return case(lib, module, lib.randn(3, 2, 8))

    theirs = _error(lambda: run(torch))
    ours = _error(lambda: run(glassgrad))
    assert theirs[0] is not None
    assert ours == theirs


# --- PyTorch's fused inference path (NOTE [Fully masked rows]) ----------------------------------
FAST_CASES = {
    "fully_padded": lambda lib, kpm: {"key_padding_mask": lib.tensor(kpm)},
    "bool_attn": lambda lib, kpm: {"attn_mask": lib.tensor(np.eye(4, dtype=bool))},
    "float_padding": lambda lib, kpm: {
        "key_padding_mask": lib.tensor(np.where(kpm, -np.inf, 0.0))},
    "causal_hint_no_mask": lambda lib, kpm: {"is_causal": True},
}


@pytest.mark.filterwarnings("ignore:invalid value encountered:RuntimeWarning")
@pytest.mark.parametrize("case", list(FAST_CASES))
@pytest.mark.parametrize("batch_first", [True, False])
@pytest.mark.parametrize("need_weights", [True, False])
@pytest.mark.parametrize("grad", [False, True])
def test_mha_eval_inference_path_like_torch(case, batch_first, need_weights, grad, rng):
    """Eval mode, no grad, batch-first self-attention: torch's fused kernel gives NaN on a fully
    masked row even without weights and ignores is_causal; elsewhere the usual path."""
    ours, theirs = _pair(8, 2, batch_first=batch_first)
    x = rng.standard_normal((2, 4, 8) if batch_first else (4, 2, 8))
    kpm = np.zeros((2, 4), dtype=bool)
    kpm[0] = True
    res = []
    for lib, module in ((glassgrad, ours), (torch, theirs)):
        module.eval()
        q = lib.tensor(x)
        with lib.set_grad_enabled(grad):
            res.append(outcome(module, (q, q, q),
                               dict(need_weights=need_weights, **FAST_CASES[case](lib, kpm))))
    if isinstance(res[1][0], type):
        assert res[0] == res[1]
        return
    (oa, wa), (ob, wb) = res
    np.testing.assert_allclose(oa.detach().numpy(), ob.detach().numpy(), atol=ATOL)
    assert (wa is None) == (wb is None)
    if wa is not None:
        np.testing.assert_allclose(wa.detach().numpy(), wb.detach().numpy(), atol=ATOL)


@pytest.mark.parametrize("attn, kpm", [(None, None), (None, "kpm"), ("2d", None),
                                       ("3d", None), ("2d", "kpm"), ("3d", "kpm")])
def test_mha_merge_masks_like_torch(attn, kpm, rng):
    ours, theirs = _pair(8, 2, batch_first=True)
    x = rng.standard_normal((3, 4, 8))
    attn_arr = {"2d": rng.standard_normal((4, 4)), "3d": rng.standard_normal((6, 4, 4))}.get(attn)
    kpm_arr = rng.standard_normal((3, 4)) if kpm else None
    res = [m.merge_masks(_mask(lib, attn_arr), _mask(lib, kpm_arr), lib.tensor(x))
           for lib, m in ((glassgrad, ours), (torch, theirs))]
    assert res[0][1] == res[1][1]
    assert_close(res[0][0], res[1][0], atol=0, rtol=0)


def test_mha_setstate_defaults_qkv_same_embed_dim():
    mha = MultiheadAttention(4, 2)
    state = dict(vars(mha))
    del state["_qkv_same_embed_dim"]
    fresh = MultiheadAttention.__new__(MultiheadAttention)
    fresh.__setstate__(state)
    assert fresh._qkv_same_embed_dim is True


@pytest.mark.parametrize("query_dtype", ["float64", "float32", "bfloat16", "float16"])
@pytest.mark.parametrize("mask_dtype", ["float64", "float32", "bfloat16", "float16"])
def test_sdpa_mask_dtypes_like_torch(query_dtype, mask_dtype, rng):
    """A float32 mask goes with any query dtype, other float masks only with their own."""
    q, mask = rng.standard_normal((2, 3, 4)), rng.standard_normal((3, 3))
    res = []
    for lib, f in ((glassgrad, scaled_dot_product_attention),
                   (torch, TF.scaled_dot_product_attention)):
        x = lib.tensor(q).to(getattr(lib, query_dtype))
        res.append(outcome(f, (x, x, x), {"attn_mask": lib.tensor(mask).to(
            getattr(lib, mask_dtype))}))
    if isinstance(res[1], tuple):
        assert res[0] == res[1]
        return
    assert str(res[0].dtype).split(".")[-1] == str(res[1].dtype).split(".")[-1]
    tol = 1e-9 if query_dtype == "float64" else 5e-2 if query_dtype in ("bfloat16",
                                                                        "float16") else 1e-5
    assert_close(res[0], res[1], atol=tol, rtol=tol)


@pytest.mark.parametrize("need_weights", [True, False])
@pytest.mark.parametrize("masks", ["attn32", "padding32", "attn32_padding64"])
def test_mha_float32_masks_on_float64_like_torch(need_weights, masks, rng):
    ours, theirs = _pair(8, 2)
    x, attn = rng.standard_normal((5, 3, 8)), rng.standard_normal((5, 5))
    res = []
    for lib, module in ((glassgrad, ours), (torch, theirs)):
        kwargs = {"need_weights": need_weights}
        if masks.startswith("attn32"):
            kwargs["attn_mask"] = lib.tensor(attn, dtype=lib.float32)
        if masks == "padding32":
            kwargs["key_padding_mask"] = lib.zeros(3, 5, dtype=lib.float32)
        if masks == "attn32_padding64":
            kwargs["key_padding_mask"] = lib.zeros(3, 5, dtype=lib.float64)
        q = lib.tensor(x)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            res.append(outcome(module, (q, q, q), kwargs))
    if isinstance(res[1][0], type):
        assert res[0] == res[1]
        return
    assert_close(res[0][0], res[1][0], atol=1e-6, what="output")


def test_mha_fastpath_switch_like_torch(monkeypatch, rng):
    """With torch.backends.mha.set_fastpath_enabled(False) both take the usual path: zeros on a
    fully masked row, where the fused kernel gives NaN."""
    from glassgrad.nn.modules import attention

    class _Off:
        @staticmethod
        def get_fastpath_enabled():
            return False

    monkeypatch.setattr(attention, "_mha_backend", [_Off])
    ours, theirs = _pair(8, 2, batch_first=True)
    x = rng.standard_normal((2, 4, 8))
    kpm = np.zeros((2, 4), dtype=bool)
    kpm[0] = True
    before = torch.backends.mha.get_fastpath_enabled()
    torch.backends.mha.set_fastpath_enabled(False)
    try:
        outs = []
        for lib, module in ((glassgrad, ours), (torch, theirs)):
            q = lib.tensor(x)
            with lib.no_grad():
                outs.append(module.eval()(q, q, q, key_padding_mask=lib.tensor(kpm),
                                          need_weights=False)[0].numpy())
    finally:
        torch.backends.mha.set_fastpath_enabled(before)
    assert not np.isnan(outs[1]).any()
    np.testing.assert_allclose(outs[0], outs[1], atol=ATOL)


@pytest.mark.parametrize("shape", [(0, 3, 8), (5, 0, 8), (0, 0, 8)])
@pytest.mark.parametrize("module", ["mha", "mha_no_weights", "encoder", "decoder"])
def test_empty_sequences_and_batches_give_torch_shapes(shape, module):
    outs = []
    for lib in (torch, glassgrad):
        lib.manual_seed(0)
        x = lib.zeros(*shape)
        if module.startswith("mha"):
            out = lib.nn.MultiheadAttention(8, 2)(x, x, x, need_weights=module == "mha")
        elif module == "encoder":
            out = (lib.nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0)(x), None)
        else:
            out = (lib.nn.TransformerDecoderLayer(8, 2, 16, dropout=0.0)(x, x), None)
        outs.append([None if o is None else tuple(o.shape) for o in out])
    assert outs[0] == outs[1]
