"""Embeddings against torch (issue 16, lane embed): nn.EmbeddingBag (every mode, 2-D input and
1-D input with offsets, include_last_offset, padding_idx, per_sample_weights, max_norm,
from_pretrained, repr, state_dict), embedding_bag's double backward (finite differences: torch
has none), scale_grad_by_freq, max_norm renormalisation in place, torch.embedding_renorm_, and
the errors torch gives."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import glassgrad
from tests.oracle import assert_close

INPUT_1D = [1, 2, 4, 5, 4, 3, 2, 0, 1, 2]
OFFSETS = [0, 2, 2, 5]
INPUT_2D = [[1, 2, 4], [5, 2, 3], [2, 2, 2]]


def _both(make):
    """``make(lib)`` on both libraries, torch first, glassgrad's module given torch's weight."""
    torch.manual_seed(0)
    theirs = make(torch)
    ours = make(glassgrad)
    if hasattr(theirs, "weight"):
        with glassgrad.no_grad():
            ours.weight.copy_(glassgrad.tensor(theirs.weight.detach().numpy()))
    return theirs, ours


@pytest.mark.parametrize("mode", ["sum", "mean", "max"])
@pytest.mark.parametrize("layout", ["2d", "offsets", "last_offset"])
@pytest.mark.parametrize("padding_idx", [None, 2])
def test_embedding_bag_module_matches_torch(mode, layout, padding_idx):
    last = layout == "last_offset"
    theirs, ours = _both(lambda lib: lib.nn.EmbeddingBag(
        6, 3, mode=mode, padding_idx=padding_idx, include_last_offset=last).double())
    results = []
    for lib, module in ((torch, theirs), (ours.__class__.__module__ and glassgrad, ours)):
        if layout == "2d":
            out = module(lib.tensor(INPUT_2D))
        else:
            offsets = OFFSETS + [len(INPUT_1D)] if last else OFFSETS
            out = module(lib.tensor(INPUT_1D), lib.tensor(offsets))
        (out * out * lib.arange(1.0, 4.0, dtype=lib.float64)).sum().backward()
        results.append((out, module.weight.grad))
    assert_close(results[1][0], results[0][0], atol=1e-12, what="output")
    assert_close(results[1][1], results[0][1], atol=1e-12, what="weight grad")


def test_embedding_bag_per_sample_weights_and_scale_grad_by_freq():
    # NOTE: every index of EQUAL_COUNTS occurs twice: torch's embedding_bag kernel divides the
    # k-th distinct index's gradient by the count of indices[argsort(indices)[k]], which is its
    # own count only then (test_embedding_bag_scale_grad_by_freq_is_embeddings_ has the rule)
    equal_counts = [1, 2, 4, 1, 4, 3, 2, 0, 3, 0]
    for kwargs in ({"mode": "sum"}, {"mode": "sum", "scale_grad_by_freq": True},
                   {"mode": "mean", "scale_grad_by_freq": True, "padding_idx": 4}):
        theirs, ours = _both(lambda lib: lib.nn.EmbeddingBag(6, 3, **kwargs).double())
        grads = []
        for lib, module in ((torch, theirs), (glassgrad, ours)):
            psw = None
            if "scale_grad_by_freq" not in kwargs:
                psw = lib.linspace(0.5, 1.5, 10, dtype=lib.float64).requires_grad_()
            out = module(lib.tensor(equal_counts), lib.tensor(OFFSETS), per_sample_weights=psw)
            (out ** 3).sum().backward()
            grads.append([out, module.weight.grad] + ([psw.grad] if psw is not None else []))
        for a, b in zip(grads[1], grads[0]):
            assert_close(a, b, atol=1e-12, what=str(kwargs))


def test_embedding_bag_scale_grad_by_freq_is_embeddings_rule():
    """Each row's gradient divided by how often its index occurs, as torch's F.embedding does
    (torch's own embedding_bag kernel reads the wrong count when counts differ; see above)."""
    torch.manual_seed(0)
    w = torch.randn(6, 3, dtype=torch.float64, requires_grad=True)
    rows = torch.nn.functional.embedding(torch.tensor(INPUT_1D), w, scale_grad_by_freq=True)
    (rows[:5].sum(0) ** 3).sum().backward()
    ours = glassgrad.tensor(w.detach().numpy(), requires_grad=True)
    out = glassgrad.nn.functional.embedding_bag(
        glassgrad.tensor(INPUT_1D), ours, glassgrad.tensor([0, 5]), mode="sum",
        scale_grad_by_freq=True)
    (out[0] ** 3).sum().backward()
    assert_close(ours.grad, w.grad, atol=1e-12)


@pytest.mark.parametrize("mode", ["sum", "mean", "max"])
def test_embedding_bag_double_backward_gradgradcheck(mode):
    weight = glassgrad.randn(6, 3, dtype=glassgrad.float64, requires_grad=True)
    psw = glassgrad.rand(10, dtype=glassgrad.float64, requires_grad=True)
    idx, off = glassgrad.tensor(INPUT_1D), glassgrad.tensor(OFFSETS)

    def f(w, p):
        return glassgrad.nn.functional.embedding_bag(
            idx, w, off, mode=mode, padding_idx=2, per_sample_weights=p if mode == "sum" else None)

    assert glassgrad.autograd.gradgradcheck(f, (weight, psw))


def test_embedding_scale_grad_by_freq_matches_torch():
    theirs, ours = _both(lambda lib: lib.nn.Embedding(5, 3, padding_idx=1,
                                                      scale_grad_by_freq=True).double())
    grads = []
    for lib, module in ((torch, theirs), (glassgrad, ours)):
        out = module(lib.tensor([[0, 2, 2], [4, 2, 1]]))
        (out ** 2).sum().backward()
        grads.append((out, module.weight.grad, out.grad_fn.name()))
    assert_close(grads[1][0], grads[0][0], atol=1e-12)
    assert_close(grads[1][1], grads[0][1], atol=1e-12)
    assert grads[1][2] == grads[0][2] == "EmbeddingBackward0"
    assert repr(ours) == repr(theirs)


@pytest.mark.parametrize("cls", ["Embedding", "EmbeddingBag"])
@pytest.mark.parametrize("norm_type", [2.0, 1.0])
def test_max_norm_renormalises_the_used_rows_in_place(cls, norm_type):
    theirs, ours = _both(lambda lib: getattr(lib.nn, cls)(6, 3, max_norm=0.8,
                                                          norm_type=norm_type).double())
    for lib, module in ((torch, theirs), (glassgrad, ours)):
        out = module(lib.tensor([[0, 2], [2, 5]]))
        out.sum().backward()
    assert_close(ours.weight, theirs.weight, atol=1e-12, what="renormalised weight")
    assert_close(ours.weight.grad, theirs.weight.grad, atol=1e-12)
    assert repr(ours) == repr(theirs)


def test_embedding_renorm_matches_torch():
    rng = np.random.default_rng(0)
    w = rng.standard_normal((5, 3)) * 2
    results = []
    for lib in (torch, glassgrad):
        weight = lib.tensor(w)
        back = lib.embedding_renorm_(weight, lib.tensor([0, 3, 3]), 1.0, 2.0)
        assert back is weight
        results.append(weight)
    assert_close(results[1], results[0], atol=1e-12)
    leaf = glassgrad.tensor(w, requires_grad=True)
    with pytest.raises(RuntimeError, match="a leaf Variable that requires grad"):
        glassgrad.embedding_renorm_(leaf, glassgrad.tensor([0]), 1.0, 2.0)
    with glassgrad.no_grad():
        glassgrad.embedding_renorm_(leaf, glassgrad.tensor([0]), 1.0, 2.0)
    assert np.isclose(np.linalg.norm(leaf.detach().numpy()[0]), 1.0)


def test_embedding_bag_module_surface():
    theirs, ours = _both(lambda lib: lib.nn.EmbeddingBag(6, 3, max_norm=1.0, mode="sum",
                                                         padding_idx=-2))
    assert repr(ours) == repr(theirs)
    assert list(ours.state_dict()) == list(theirs.state_dict())
    assert ours.padding_idx == theirs.padding_idx == 4
    assert not np.any(ours.weight.detach().numpy()[4])
    assert not isinstance(ours, glassgrad.nn.Embedding)
    pre = np.arange(12.0).reshape(4, 3)
    for freeze in (True, False):
        t = torch.nn.EmbeddingBag.from_pretrained(torch.tensor(pre), freeze=freeze, mode="max")
        g = glassgrad.nn.EmbeddingBag.from_pretrained(glassgrad.tensor(pre), freeze=freeze,
                                                      mode="max")
        assert g.weight.requires_grad == t.weight.requires_grad
        assert repr(g) == repr(t)
        assert_close(g(glassgrad.tensor([[0, 3], [1, 2]])), t(torch.tensor([[0, 3], [1, 2]])))
    t = torch.nn.Embedding.from_pretrained(torch.tensor(pre), padding_idx=1, max_norm=2.0)
    g = glassgrad.nn.Embedding.from_pretrained(glassgrad.tensor(pre), padding_idx=1, max_norm=2.0)
    assert repr(g) == repr(t) and g.weight.requires_grad == t.weight.requires_grad
    assert_close(g(glassgrad.tensor([1, 3])), t(torch.tensor([1, 3])))


def test_include_last_offset_last_bag_runs_to_the_end_as_torch():
    theirs, ours = _both(lambda lib: lib.nn.EmbeddingBag(10, 3, include_last_offset=True,
                                                         padding_idx=6))
    for offsets in ([0, 3, 3], [0, 3, 4], [0, 2, 3]):
        assert_close(ours(glassgrad.tensor([0, 1, 2, 3]), glassgrad.tensor(offsets)),
                     theirs(torch.tensor([0, 1, 2, 3]), torch.tensor(offsets)), what=str(offsets))


def test_top_level_embedding_bag_returns_torchs_four_tensors():
    for dtype in ("float32", "float64"):
        w = np.random.default_rng(0).standard_normal((6, 3)).astype(dtype)
        for mode in (0, 1, 2):
            for padding_idx in (None, 2):
                outs = [lib.embedding_bag(lib.tensor(w), lib.tensor(INPUT_1D), lib.tensor(OFFSETS),
                                          False, mode, False, None, False, padding_idx)
                        for lib in (torch, glassgrad)]
                for a, b in zip(outs[1], outs[0]):
                    assert a.dtype == getattr(glassgrad, str(b.dtype).split(".")[1])
                    assert_close(a, b, atol=1e-6)


def _error(lib, call):
    try:
        call(lib)
    except Exception as exc:  # noqa: BLE001 - the type and text are compared
        text = str(exc).split("\n")[0]
        for prefix in ("torch.", "glassgrad.tensor.", "glassgrad."):
            text = text.replace(prefix, "")
        return type(exc).__name__, text
    return None, ""


ERRORS = {
    "offsets0": lambda lib, w, i: lib.nn.functional.embedding_bag(i, w, lib.tensor([1, 2])),
    "offsets_last": lambda lib, w, i: lib.nn.functional.embedding_bag(i, w, lib.tensor([0, 7])),
    "out_of_range": lambda lib, w, i: lib.nn.functional.embedding_bag(
        lib.tensor([1, 9]), w, lib.tensor([0])),
    "out_of_range_max": lambda lib, w, i: lib.nn.functional.embedding_bag(
        lib.tensor([[-1, 1]]), w, mode="max"),
    "out_of_range_padding": lambda lib, w, i: lib.nn.functional.embedding_bag(
        lib.tensor([[11, 8]]), w, mode="sum", padding_idx=0),
    "float_indices": lambda lib, w, i: lib.embedding_bag(w, i.double(), lib.tensor([0])),
    "int_weight": lambda lib, w, i: lib.nn.functional.embedding_bag(i, w.long(), lib.tensor([0])),
    "padding": lambda lib, w, i: lib.nn.functional.embedding_bag(i, w, lib.tensor([0]),
                                                                padding_idx=9),
    "psw_dtype": lambda lib, w, i: lib.nn.functional.embedding_bag(
        i, w, lib.tensor([0]), mode="sum", per_sample_weights=lib.ones(4, dtype=lib.float64)),
    "psw_shape": lambda lib, w, i: lib.nn.functional.embedding_bag(
        i, w, lib.tensor([0]), mode="sum", per_sample_weights=lib.ones(3)),
    "psw_mode": lambda lib, w, i: lib.nn.functional.embedding_bag(
        i, w, lib.tensor([0]), per_sample_weights=lib.ones(4)),
    "3d": lambda lib, w, i: lib.nn.functional.embedding_bag(i.view(1, 2, 2), w),
    "2d_offsets": lambda lib, w, i: lib.nn.functional.embedding_bag(i.view(2, 2), w, i),
    "no_offsets": lambda lib, w, i: lib.nn.functional.embedding_bag(i, w),
    "mode": lambda lib, w, i: lib.nn.functional.embedding_bag(i, w, lib.tensor([0]), mode="min"),
    "max_sparse": lambda lib, w, i: lib.nn.functional.embedding_bag(
        i, w, lib.tensor([0]), mode="max", sparse=True),
    "max_freq": lambda lib, w, i: lib.nn.functional.embedding_bag(
        i, w, lib.tensor([0]), mode="max", scale_grad_by_freq=True),
    "weight_1d": lambda lib, w, i: lib.nn.functional.embedding_bag(i, w[0], lib.tensor([0])),
    "module_padding": lambda lib, w, i: lib.nn.EmbeddingBag(3, 2, padding_idx=3),
}


@pytest.mark.parametrize("case", sorted(ERRORS))
def test_embedding_bag_errors_match_torch(case):
    def call(lib):
        return ERRORS[case](lib, lib.ones(6, 3), lib.tensor([1, 2, 4, 5]))

    theirs, ours = _error(torch, call), _error(glassgrad, call)
    assert theirs[0] is not None and ours == theirs
