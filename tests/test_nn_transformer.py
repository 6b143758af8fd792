"""nn.Transformer and its layers against torch: torch's weights copied in, then outputs, input and
parameter gradients and training trajectories compared, with every kind of mask, batch_first and
norm_first both ways, relu/gelu/callable activations, train and eval; construction details
(deep copies, xavier order, nested-tensor warnings) and PyTorch's errors."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import torch

import glassgrad
from tests.nn_oracle import check_module
from tests.oracle import assert_close, copy_params
from tests.test_nn_attention import _error, outcome

ATOL = 1e-9
LIBS = (glassgrad, torch)


def _build(lib, cls, *args, **kwargs):
    """The same module on ``lib``; float64, torch's weights copied into glassgrad's."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the nested-tensor notice: tested on its own below
        return getattr(lib.nn, cls)(*args, **kwargs).double()


def _pair(cls, *args, **kwargs):
    torch.manual_seed(0)
    theirs = _build(torch, cls, *args, **kwargs)
    ours = _build(glassgrad, cls, *args, **kwargs)
    copy_params(theirs, ours)
    return ours, theirs


def _leaf(lib, arr):
    return lib.tensor(arr, dtype=lib.float64, requires_grad=True)


def _mask(lib, arr):
    return None if arr is None else lib.tensor(arr)


def _weighted_sum(lib, out):
    return (out * lib.tensor(np.linspace(-1, 1, out.numel()).reshape(out.shape))).sum()


def _compare(pair, inputs, masks, train=True, what=""):
    """Run both modules on ``inputs`` (arrays, leaves) with ``masks`` (kwargs of arrays); compare
    outputs, input gradients and parameter gradients."""
    res = []
    for module, lib in zip(pair, LIBS):
        module.train(train)
        args = [_leaf(lib, a) for a in inputs]
        out = module(*args, **{k: _mask(lib, v) if not isinstance(v, bool) else v
                               for k, v in masks.items()})
        _weighted_sum(lib, out).backward()
        res.append((out, args))
    (oa, aa), (ob, ab) = res
    assert_close(oa, ob, atol=ATOL, what=f"{what} output")
    for k, (a, b) in enumerate(zip(aa, ab)):
        assert_close(a.grad, b.grad, atol=ATOL, what=f"{what} grad of input {k}")
    mine = dict(pair[0].named_parameters())
    assert list(mine) == [n for n, _ in pair[1].named_parameters()]
    for n, p in pair[1].named_parameters():
        assert_close(mine[n].grad, p.grad, atol=ATOL, what=f"{what} grad of {n}")


ACTIVATIONS = {
    "relu": lambda lib: "relu",
    "gelu": lambda lib: "gelu",
    "F.gelu": lambda lib: lib.nn.functional.gelu,
    "callable": lambda lib: (lambda x: lib.tanh(x) * 2),
    "module": lambda lib: lib.nn.SiLU(),
}
LAYER_CONFIGS = {
    "default": {},
    "batch_first": {"batch_first": True},
    "norm_first": {"norm_first": True},
    "both_first": {"batch_first": True, "norm_first": True},
    "no_bias": {"bias": False},
    "eps": {"layer_norm_eps": 1e-3},
}


def _src_masks(kind, rng, seq, bsz, heads):
    if kind == "none":
        return {}
    if kind == "bool":
        m = rng.random((seq, seq)) > 0.6
        m[:, 0] = False
        return {"src_mask": m}
    if kind == "float3d":
        return {"src_mask": rng.standard_normal((bsz * heads, seq, seq))}
    kpm = np.zeros((bsz, seq), dtype=bool)
    kpm[1, -2:] = True
    if kind == "key_padding":
        return {"src_key_padding_mask": kpm}
    if kind == "causal":
        return {"src_mask": np.triu(np.full((seq, seq), -np.inf), 1), "is_causal": True}
    # "both": a float mask with a bool padding mask warns in both libraries (mismatched types)
    return {"src_mask": np.triu(np.full((seq, seq), -np.inf), 1),
            "src_key_padding_mask": kpm.astype(np.float64) * -1e9}


@pytest.mark.parametrize("config", list(LAYER_CONFIGS))
@pytest.mark.parametrize("mask", ["none", "bool", "float3d", "key_padding", "causal", "both"])
def test_encoder_layer_matches_torch(config, mask, rng):
    kwargs = LAYER_CONFIGS[config]
    pair = _pair("TransformerEncoderLayer", 8, 2, 16, dropout=0.0, **kwargs)
    seq, bsz = 5, 3
    shape = (bsz, seq, 8) if kwargs.get("batch_first") else (seq, bsz, 8)
    _compare(pair, [rng.standard_normal(shape)], _src_masks(mask, rng, seq, bsz, 2),
             what=f"{config}/{mask}")


@pytest.mark.parametrize("activation", list(ACTIVATIONS))
def test_encoder_layer_activations(activation, rng):
    res = []
    torch.manual_seed(0)
    mods = [_build(lib, "TransformerEncoderLayer", 8, 2, 16, dropout=0.0,
                   activation=ACTIVATIONS[activation](lib)) for lib in (torch, glassgrad)]
    copy_params(mods[0], mods[1])
    assert mods[1].activation_relu_or_gelu == mods[0].activation_relu_or_gelu
    res = (mods[1], mods[0])
    _compare(res, [rng.standard_normal((4, 2, 8))], {}, what=activation)


@pytest.mark.parametrize("activation", ["default", "relu", "gelu", "F.gelu"])
def test_activation_attribute_is_the_public_function(activation):
    for lib in LIBS:
        kwargs = {} if activation == "default" else {"activation": ACTIVATIONS[activation](lib)}
        for cls in ("TransformerEncoderLayer", "TransformerDecoderLayer"):
            layer = getattr(lib.nn, cls)(8, 2, 16, **kwargs)
            expected = lib.nn.functional.gelu if "gelu" in activation else lib.nn.functional.relu
            assert layer.activation is expected, (lib.__name__, cls, activation)


def test_transformer_float32_matches_torch(rng):
    src, tgt = rng.standard_normal((5, 2, 8)), rng.standard_normal((3, 2, 8))

    def make(lib):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return lib.nn.Transformer(8, 2, 2, 2, 16, dropout=0.0, norm_first=True)

    check_module(make, [src, tgt], dtypes=(np.float32,), tol=(5e-5, 5e-4))
    layer = glassgrad.nn.TransformerEncoderLayer(8, 2, 16, dtype=glassgrad.float64, device="cpu")
    assert {str(p.dtype) for p in layer.parameters()} == {"glassgrad.float64"}


def test_encoder_layer_unbatched(rng):
    pair = _pair("TransformerEncoderLayer", 8, 2, 16, dropout=0.0)
    kpm = np.array([False, False, False, True])
    _compare(pair, [rng.standard_normal((4, 8))], {"src_key_padding_mask": kpm})


@pytest.mark.parametrize("batch_first", [False, True])
@pytest.mark.parametrize("norm_first", [False, True])
def test_encoder_stack_matches_torch(batch_first, norm_first, rng):
    seq, bsz = 6, 2
    pairs = []
    for lib in (torch, glassgrad):
        torch.manual_seed(0)
        layer = _build(lib, "TransformerEncoderLayer", 8, 2, 16, dropout=0.0,
                       batch_first=batch_first, norm_first=norm_first)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            pairs.append(lib.nn.TransformerEncoder(layer, 3, norm=lib.nn.LayerNorm(8)).double())
    copy_params(pairs[0], pairs[1])
    shape = (bsz, seq, 8) if batch_first else (seq, bsz, 8)
    x = rng.standard_normal(shape)
    causal = np.triu(np.ones((seq, seq), dtype=bool), 1)
    pair = (pairs[1], pairs[0])
    _compare(pair, [x], {"mask": causal}, what="bool causal, detected")
    with np.errstate(divide="ignore"):
        log_tril = np.log(np.tril(np.ones((seq, seq))))
    _compare(pair, [x], {"mask": log_tril}, what="log(tril)")
    kpm = np.zeros((bsz, seq), dtype=bool)
    kpm[0, -3:] = True
    _compare(pair, [x], {"src_key_padding_mask": kpm}, what="padding")
    _compare(pair, [x], {"src_key_padding_mask": kpm}, train=False, what="padding, eval")


def test_encoder_layers_are_deep_copies():
    for lib in LIBS:
        layer = lib.nn.TransformerEncoderLayer(8, 2, 16)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            enc = lib.nn.TransformerEncoder(layer, 2)
        a, b = enc.layers[0], enc.layers[1]
        assert a is not layer and a is not b
        assert a.self_attn.in_proj_weight is not b.self_attn.in_proj_weight
        assert np.array_equal(a.linear1.weight.detach().numpy(), b.linear1.weight.detach().numpy())
        assert len(list(enc.parameters())) == 2 * len(list(layer.parameters()))
    ours, theirs = _pair("Transformer", 8, 2, 2, 1, 16)
    assert list(ours.state_dict()) == list(theirs.state_dict())


def _nested_pair():
    """An encoder PyTorch runs through nested tensors in eval mode: batch first, even heads."""
    pairs = []
    for lib in (torch, glassgrad):
        torch.manual_seed(0)
        layer = _build(lib, "TransformerEncoderLayer", 8, 2, 16, batch_first=True)
        pairs.append(lib.nn.TransformerEncoder(layer, 2, norm=lib.nn.LayerNorm(8)).double())
    copy_params(pairs[0], pairs[1])
    for m in pairs:
        m.eval()
        m.norm.bias.data.add_(0.5)  # padded rows are the norm of zeros: its bias
    return pairs[1], pairs[0]


@pytest.mark.filterwarnings("ignore:The PyTorch API of nested tensors")
@pytest.mark.parametrize("padding", ["left_aligned", "not_left_aligned", "float", "all_padded"])
@pytest.mark.parametrize("grad", [False, True])
def test_encoder_eval_fast_path_numbers(padding, grad, rng):
    ours, theirs = _nested_pair()
    x = rng.standard_normal((3, 5, 8))
    kpm = np.zeros((3, 5), dtype=bool)
    kpm[1, 3:] = True
    kpm[2, 4:] = True
    if padding == "not_left_aligned":
        kpm[0, 0] = True
    if padding == "all_padded":
        kpm[:] = True
    outs = []
    for module, lib in ((ours, glassgrad), (theirs, torch)):
        mask = lib.tensor(kpm) if padding != "float" else lib.tensor(np.where(kpm, -np.inf, 0.0))
        with lib.set_grad_enabled(grad):
            outs.append(outcome(module, (lib.tensor(x),), {"src_key_padding_mask": mask}))
    if isinstance(outs[1], tuple):
        assert outs[0] == outs[1]
        return
    assert_close(outs[0], outs[1], atol=1e-9, what=f"eval, {padding}, grad={grad}")


def test_encoder_train_and_eval_with_dropout(rng):
    ours, theirs = _pair("TransformerEncoderLayer", 8, 2, 16, dropout=0.3)
    x = rng.standard_normal((4, 2, 8))
    _compare((ours, theirs), [x], {"src_key_padding_mask": np.eye(2, 4, dtype=bool)},
             train=False, what="eval with dropout=0.3")
    ours.train()
    a, b = ours(glassgrad.tensor(x)), ours(glassgrad.tensor(x))
    assert not np.allclose(a.detach().numpy(), b.detach().numpy())


@pytest.mark.filterwarnings("ignore:Support for mismatched key_padding_mask")
@pytest.mark.parametrize("config", ["default", "batch_first", "norm_first"])
def test_decoder_layer_and_stack_match_torch(config, rng):
    kwargs = LAYER_CONFIGS[config]
    tgt_len, src_len, bsz = 4, 6, 2
    bf = kwargs.get("batch_first", False)
    shape = (lambda n: (bsz, n, 8)) if bf else (lambda n: (n, bsz, 8))
    tgt, memory = rng.standard_normal(shape(tgt_len)), rng.standard_normal(shape(src_len))
    tgt_kpm = np.zeros((bsz, tgt_len), dtype=bool)
    tgt_kpm[1, -1] = True
    mem_kpm = np.zeros((bsz, src_len), dtype=bool)
    mem_kpm[0, -2:] = True
    masks = {"tgt_mask": np.triu(np.full((tgt_len, tgt_len), -np.inf), 1),
             "memory_mask": rng.random((tgt_len, src_len)) > 0.8,
             "tgt_key_padding_mask": tgt_kpm, "memory_key_padding_mask": mem_kpm}
    pair = _pair("TransformerDecoderLayer", 8, 2, 16, dropout=0.0, **kwargs)
    _compare(pair, [tgt, memory], {}, what="layer, no masks")
    _compare(pair, [tgt, memory], {"tgt_mask": masks["tgt_mask"], "tgt_is_causal": True},
             what="layer, causal hint")
    stacks = []
    for lib in (torch, glassgrad):
        torch.manual_seed(0)
        layer = _build(lib, "TransformerDecoderLayer", 8, 2, 16, dropout=0.0, **kwargs)
        stacks.append(lib.nn.TransformerDecoder(layer, 2, norm=lib.nn.LayerNorm(8)).double())
    copy_params(stacks[0], stacks[1])
    _compare((stacks[1], stacks[0]), [tgt, memory], masks, what="stack, all masks")
    bool_tgt = {"tgt_mask": np.triu(np.ones((tgt_len, tgt_len), dtype=bool), 1)}
    _compare((stacks[1], stacks[0]), [tgt, memory], bool_tgt, what="stack, bool tgt_mask")


@pytest.mark.parametrize("batch_first", [False, True])
@pytest.mark.parametrize("norm_first", [False, True])
def test_transformer_matches_torch(batch_first, norm_first, rng):
    pair = _pair("Transformer", 8, 2, 2, 2, 16, dropout=0.0, batch_first=batch_first,
                 norm_first=norm_first, activation="gelu")
    src_len, tgt_len, bsz = 5, 4, 3
    shape = (lambda n: (bsz, n, 8)) if batch_first else (lambda n: (n, bsz, 8))
    src, tgt = rng.standard_normal(shape(src_len)), rng.standard_normal(shape(tgt_len))
    tgt_mask = glassgrad.nn.Transformer.generate_square_subsequent_mask(tgt_len).numpy()
    kpm = np.zeros((bsz, src_len), dtype=bool)
    kpm[2, -2:] = True
    masks = {"tgt_mask": tgt_mask, "src_key_padding_mask": kpm,
             "memory_key_padding_mask": kpm}
    _compare(pair, [src, tgt], masks, what="transformer")
    _compare(pair, [src, tgt], masks, train=False, what="transformer, eval")
    _compare(pair, [src[0] if batch_first else src[:, 0], tgt[0] if batch_first else tgt[:, 0]],
             {}, what="transformer, unbatched")


def test_transformer_training_steps(rng):
    """Adam on a small seq2seq regression: the same losses and weights step after step."""
    ours, theirs = _pair("Transformer", 8, 2, 1, 1, 16, dropout=0.0)
    src, tgt, target = (rng.standard_normal(s) for s in ((5, 2, 8), (4, 2, 8), (4, 2, 8)))
    tgt_mask = np.triu(np.full((4, 4), -np.inf), 1)
    losses = []
    for module, lib in ((ours, glassgrad), (theirs, torch)):
        opt = lib.optim.Adam(module.parameters(), lr=1e-2)
        trail = []
        for _ in range(5):
            opt.zero_grad()
            out = module(lib.tensor(src), lib.tensor(tgt), tgt_mask=lib.tensor(tgt_mask))
            loss = ((out - lib.tensor(target)) ** 2).mean()
            loss.backward()
            opt.step()
            trail.append(loss.item())
        losses.append(trail)
    np.testing.assert_allclose(losses[0], losses[1], rtol=1e-9)
    for (n, a), (_, b) in zip(ours.named_parameters(), theirs.named_parameters()):
        assert_close(a, b, atol=1e-8, what=f"{n} after 5 steps")


def test_encoder_only_subclass_like_word_language_model(rng):
    """A subclass that calls ``super().__init__(d_model=..., num_encoder_layers=...)``, replaces
    ``decoder`` and uses ``self.encoder`` with a float causal mask (the pattern of pytorch/examples'
    word_language_model)."""

    def make(lib):
        class Model(lib.nn.Transformer):
            def __init__(self):
                super().__init__(d_model=8, nhead=2, dim_feedforward=16, num_encoder_layers=2,
                                 dropout=0.0)
                self.decoder = lib.nn.Linear(8, 11)

            def forward(self, src):
                mask = lib.log(lib.tril(lib.ones(src.shape[0], src.shape[0])))
                return self.decoder(self.encoder(src, mask=mask.double())).log_softmax(-1)

        torch.manual_seed(0)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return Model().double()

    theirs, ours = make(torch), make(glassgrad)
    copy_params(theirs, ours)
    assert list(ours.state_dict()) == list(theirs.state_dict())
    _compare((ours, theirs), [rng.standard_normal((6, 2, 8))], {}, what="encoder-only")


def _spy_xavier(lib, module_path, calls):
    import importlib

    mod = importlib.import_module(module_path)
    real = mod.xavier_uniform_

    def spy(t, *args, **kwargs):
        calls.append(tuple(t.shape))
        return real(t, *args, **kwargs)

    return mod, real, spy


def test_reset_parameters_xavier_in_parameter_order():
    shapes = []
    for lib, path in ((glassgrad, "glassgrad.nn.modules.transformer"),
                      (torch, "torch.nn.modules.transformer")):
        calls = []
        mod, real, spy = _spy_xavier(lib, path, calls)
        mod.xavier_uniform_ = spy
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                model = lib.nn.Transformer(8, 2, 2, 1, 16)
        finally:
            mod.xavier_uniform_ = real
        assert calls == [tuple(p.shape) for p in model.parameters() if p.dim() > 1]
        shapes.append(calls)
    assert shapes[0] == shapes[1]
    bound = np.sqrt(6 / (16 + 8))
    w = model.encoder.layers[0].linear1.weight.detach().numpy()
    assert np.abs(w).max() <= bound


def _rng_matches_torch() -> bool:
    torch.manual_seed(3)
    glassgrad.manual_seed(3)
    return np.array_equal(torch.rand(8).numpy(), glassgrad.rand(8).numpy())


@pytest.mark.skipif(not _rng_matches_torch(), reason="glassgrad's generator is not torch's here")
def test_same_seed_same_weights_as_torch():
    models = []
    for lib in (torch, glassgrad):
        lib.manual_seed(0)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            models.append(lib.nn.Transformer(8, 2, 2, 2, 16))
    for (n, a), (_, b) in zip(models[1].state_dict().items(), models[0].state_dict().items()):
        assert_close(a, b, atol=0, rtol=0, what=n)


def test_generate_square_subsequent_mask():
    for sz, dt in ((1, None), (4, None), (3, "float64")):
        a = glassgrad.nn.Transformer.generate_square_subsequent_mask(
            sz, dtype=dt and getattr(glassgrad, dt))
        b = torch.nn.Transformer.generate_square_subsequent_mask(sz, dtype=dt and getattr(torch, dt))
        assert str(a.dtype).split(".")[-1] == str(b.dtype).split(".")[-1]
        np.testing.assert_array_equal(a.numpy(), b.numpy())


NESTED_WARNING_CASES = {
    "seq_first": lambda lib: lib.nn.TransformerEncoderLayer(8, 2, 16),
    "odd_heads": lambda lib: lib.nn.TransformerEncoderLayer(9, 3, 16, batch_first=True),
    "norm_first": lambda lib: lib.nn.TransformerEncoderLayer(8, 2, 16, batch_first=True,
                                                             norm_first=True),
    "callable": lambda lib: lib.nn.TransformerEncoderLayer(8, 2, 16, batch_first=True,
                                                           activation=lib.tanh),
    "no_bias": lambda lib: lib.nn.TransformerEncoderLayer(8, 2, 16, batch_first=True,
                                                          bias=False),
    "not_a_layer": lambda lib: lib.nn.Linear(8, 8),
    "fine": lambda lib: lib.nn.TransformerEncoderLayer(8, 2, 16, batch_first=True),
}


@pytest.mark.parametrize("case", list(NESTED_WARNING_CASES))
@pytest.mark.parametrize("enable", [True, False])
def test_nested_tensor_warning_and_flag(case, enable):
    seen = []
    for lib in LIBS:
        layer = NESTED_WARNING_CASES[case](lib)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            enc = lib.nn.TransformerEncoder(layer, 1, enable_nested_tensor=enable)
        seen.append(([str(w.message) for w in caught], [w.category for w in caught],
                     enc.use_nested_tensor, enc.enable_nested_tensor, enc.mask_check))
    assert seen[0] == seen[1]


@pytest.mark.parametrize("case", [
    lambda lib: lib.nn.TransformerEncoderLayer(8, 2, activation="tanh"),
    lambda lib: lib.nn.TransformerDecoderLayer(8, 2, activation="swish"),
    lambda lib: lib.nn.TransformerEncoderLayer(8, 3),
    lambda lib: lib.nn.Transformer(8, 2, 1, 1, 16)(lib.randn(4, 2, 8), lib.randn(3, 3, 8)),
    lambda lib: lib.nn.Transformer(8, 2, 1, 1, 16, batch_first=True)(
        lib.randn(2, 4, 8), lib.randn(3, 3, 8)),
    lambda lib: lib.nn.Transformer(8, 2, 1, 1, 16)(lib.randn(4, 2, 8), lib.randn(3, 2, 7)),
    lambda lib: lib.nn.TransformerEncoderLayer(8, 2)(lib.randn(4, 2, 8), is_causal=True),
    lambda lib: lib.nn.TransformerEncoderLayer(8, 2)(
        lib.randn(4, 2, 8), src_key_padding_mask=lib.ones(2, 4, dtype=lib.int64)),
    lambda lib: lib.nn.TransformerEncoderLayer(8, 2)(lib.randn(4, 2, 8),
                                                     src_mask=lib.zeros(3, 3)),
])
def test_errors_match_torch(case):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        theirs = _error(lambda: case(torch))
        ours = _error(lambda: case(glassgrad))
    assert theirs[0] is not None
    assert ours == theirs


@pytest.mark.filterwarnings("ignore:invalid value encountered:RuntimeWarning")
@pytest.mark.parametrize("case", ["fully_padded", "fully_masked_row", "causal_hint_no_mask"])
@pytest.mark.parametrize("batch_first", [True, False])
@pytest.mark.parametrize("norm_first", [False, True])
@pytest.mark.parametrize("grad", [False, True])
def test_encoder_layer_eval_inference_path(case, batch_first, norm_first, grad, rng):
    """torch's fused encoder layer (eval, no grad, batch first): NaN on fully masked rows,
    is_causal ignored; with grad or sequence-first, the usual path's zeros and error."""
    ours, theirs = _pair("TransformerEncoderLayer", 8, 2, 16, batch_first=batch_first,
                         norm_first=norm_first)
    x = rng.standard_normal((2, 4, 8) if batch_first else (4, 2, 8))
    kpm = np.zeros((2, 4), dtype=bool)
    kpm[1] = True
    row = np.zeros((4, 4), dtype=bool)
    row[2] = True
    res = []
    for lib, module in ((glassgrad, ours), (torch, theirs)):
        module.eval()
        kwargs = {"fully_padded": {"src_key_padding_mask": lib.tensor(kpm)},
                  "fully_masked_row": {"src_mask": lib.tensor(row)},
                  "causal_hint_no_mask": {"is_causal": True}}[case]
        with lib.set_grad_enabled(grad):
            res.append(outcome(module, (lib.tensor(x),), kwargs))
    if isinstance(res[1], tuple):
        assert res[0] == res[1]
        return
    res = [r.detach().numpy() for r in res]
    np.testing.assert_allclose(res[0], res[1], atol=1e-9)
    assert np.isnan(res[0]).any() == np.isnan(res[1]).any()
