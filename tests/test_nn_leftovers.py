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


def _raises_alike(fn):
    """fn(lib) raises the same exception type and message on torch and glassgrad."""
    with pytest.raises(Exception) as theirs:
        fn(torch)
    with pytest.raises(type(theirs.value)) as ours:
        fn(glassgrad)
    # glassgrad names its dtypes glassgrad.int64 where torch says torch.int64
    ours_text = str(ours.value).replace("glassgrad.", "torch.")
    assert ours_text.startswith(str(theirs.value).split("\n")[0])


@pytest.mark.parametrize("call", [
    lambda lib: lib.nn.utils.rnn.pad_sequence(5),
    lambda lib: lib.nn.utils.rnn.pad_sequence([lib.ones(2), 5]),
    lambda lib: lib.nn.utils.rnn.pad_sequence([]),
    lambda lib: lib.nn.utils.rnn.pack_padded_sequence(lib.randn(0, 0), []),
    lambda lib: lib.nn.utils.rnn.pack_padded_sequence(lib.randn(3, 0, 2), []),
    lambda lib: lib.nn.utils.rnn.pack_padded_sequence(lib.randn([0, 1, 10]),
                                                      lib.randn([11, 14, 14, 2]), True),
    lambda lib: lib.nn.utils.rnn.pack_padded_sequence(lib.randn(3, 3), [1, 3, 2]),
])
def test_sequence_utils_raise_torchs_errors(call):
    _raises_alike(call)


def _unpool_zero_batch(lib, nd):
    pool = getattr(lib.nn, f"MaxPool{nd}d")(2, stride=2, return_indices=True)
    unpool = getattr(lib.nn, f"MaxUnpool{nd}d")(2, stride=2)
    x = lib.randn(0, 10, *([10] * nd), requires_grad=True)
    out, indices = pool(x)
    result = unpool(out, indices)
    result.sum().backward()
    return result, x.grad


@pytest.mark.parametrize("nd", [1, 2, 3])
def test_max_unpool_of_an_empty_batch(nd):
    (theirs, their_grad), (ours, our_grad) = (_unpool_zero_batch(lib, nd)
                                              for lib in (torch, glassgrad))
    assert tuple(ours.shape) == tuple(theirs.shape)
    assert tuple(our_grad.shape) == tuple(their_grad.shape)


@pytest.mark.parametrize("call", [
    lambda lib: lib.nn.Softshrink(-1)(lib.randn(5, requires_grad=True)),
    lambda lib: lib.nn.functional.softshrink(lib.ones(2, dtype=lib.float64), -0.5),
    lambda lib: lib.nn.functional.softshrink(lib.ones(2, dtype=lib.float16), 70000.0),
    lambda lib: lib.nn.functional.softshrink(lib.ones(2, dtype=lib.bfloat16), -0.5),
    lambda lib: lib.nn.functional.softshrink(lib.ones(2), 1e39),
    lambda lib: lib.nn.Dropout1d(p=0.5)(lib.rand(1, 2, 2, 2)),
    lambda lib: lib.nn.Dropout1d(p=0.5)(lib.rand(2)),
    lambda lib: lib.nn.functional.dropout1d(lib.rand(2), p=1.5),
    lambda lib: lib.nn.functional.interpolate(lib.ones(1, 1, 16, 16), scale_factor=-1e20,
                                              mode="bilinear"),
    lambda lib: lib.nn.functional.interpolate(lib.ones(1, 1, 16, 16), scale_factor=1e20,
                                              mode="bilinear"),
    lambda lib: lib.nn.functional.interpolate(lib.ones(1, 1, 16, 16), scale_factor=-1,
                                              mode="bilinear"),
    lambda lib: lib.nn.functional.interpolate(lib.ones(1, 1, 16), scale_factor=0.01),
    lambda lib: lib.nn.functional.interpolate(lib.ones(1, 1, 4, 4, 4), size=(0, 2, 2)),
    lambda lib: lib.nn.functional.interpolate(lib.ones(1, 1, 0, 4), size=(2, 2), mode="bicubic"),
    lambda lib: lib.nn.AdaptiveMaxPool1d(0x3FFFFFFFFFFFFFFF)(lib.empty([2, 2, 2])),
    lambda lib: lib.nn.AdaptiveMaxPool2d((2 ** 62, 2))(lib.empty([2, 2, 2, 2])),
    lambda lib: lib.nn.AdaptiveAvgPool1d(2 ** 62)(lib.empty([2, 2, 2])),
    lambda lib: lib.nn.functional.cosine_similarity(lib.ones(3, dtype=lib.int64),
                                                    lib.ones(3, dtype=lib.int8), dim=0),
    lambda lib: lib.nn.Conv2d(3, 33, 10, padding="same", stride=(1, 1, 3)),
    lambda lib: lib.nn.Conv3d(3, 33, 10, padding="same", stride=(5, 1, 1)),
])
def test_bad_arguments_raise_torchs_errors(call):
    _raises_alike(call)


def test_empty_area_resize_and_promoting_cosine_similarity_match_torch():
    for make in (lambda lib: lib.nn.functional.interpolate(lib.ones(1, 1, 4, 4), size=(0, 2),
                                                           mode="area"),
                 lambda lib: lib.nn.functional.cosine_similarity(
                     lib.tensor(12.0).to(lib.int8), lib.tensor(12.0), dim=-1),
                 lambda lib: lib.nn.functional.cosine_similarity(
                     lib.ones(3, dtype=lib.float32), lib.ones(3, dtype=lib.float64), dim=0)):
        theirs, ours = make(torch), make(glassgrad)
        assert str(ours.dtype).split(".")[-1] == str(theirs.dtype).split(".")[-1]
        np.testing.assert_array_equal(ours.numpy(), theirs.numpy())


def test_a_subclass_register_buffer_without_persistent_is_called_as_torch_calls_it():
    seen = {}
    for lib in (torch, glassgrad):
        class MyBadModule(lib.nn.Linear):
            def __init__(self):
                super().__init__(2, 2)
                self.bar = lib.nn.Buffer(lib.rand(2, 2))

            def register_buffer(self, name, value):  # persistent is missing on purpose
                super().register_buffer(name, value, True)

        class NonPersistent(MyBadModule):
            def __init__(self):
                super().__init__()
                self.baz = lib.nn.Buffer(lib.rand(2), persistent=False)

        seen[lib.__name__] = list(MyBadModule().state_dict())
        with pytest.raises(RuntimeError, match="without the persistent argument"):
            NonPersistent()
    assert seen["glassgrad"] == seen["torch"]


def _with_extra_state(lib, get, set_):
    attrs = {}
    if get:
        attrs["get_extra_state"] = lambda self: {"foo": 5}
    if set_:
        attrs["set_extra_state"] = lambda self, state=None: None
    m = type("MyModule", (lib.nn.Module,), attrs)()
    return m.load_state_dict(m.state_dict())


@pytest.mark.parametrize("get,set_", [(True, False), (False, True)])
def test_extra_state_without_its_counterpart_fails_to_load_as_torch(get, set_):
    _raises_alike(lambda lib: _with_extra_state(lib, get, set_))


def test_extra_state_with_both_methods_round_trips():
    for lib in (torch, glassgrad):
        assert not _with_extra_state(lib, True, True).missing_keys


@pytest.mark.parametrize("call", [
    lambda lib: lib.nn.Sequential(lib.nn.Linear(3, 3)).to(lib.device("cpu"), True),
    lambda lib: lib.nn.Sequential(lib.nn.Linear(3, 3)).to(lib.long),
    lambda lib: lib.nn.Sequential(lib.nn.Linear(3, 3)).to(None, True),
    lambda lib: lib.nn.Sequential(lib.nn.Linear(3, 3)).to(lib.device("cpu"), lib.long, True),
    lambda lib: lib.nn.Sequential(lib.nn.Linear(3, 3)).to([]),
    lambda lib: lib.nn.Sequential(lib.nn.Linear(3, 3)).to({}, non_blocking=True),
    lambda lib: lib.nn.Sequential(lib.nn.Linear(3, 3)).to(
        lib.device("cpu"), lib.tensor(3, dtype=lib.long), non_blocking=True),
    lambda lib: lib.nn.Sequential(lib.nn.Linear(3, 3)).to("cpu", copy=True),
    lambda lib: lib.nn.Module(3),
    lambda lib: lib.nn.Module(foo=3),
    lambda lib: lib.nn.GroupNorm(10, 10)(lib.randn(1, 10)),
    lambda lib: lib.nn.GroupNorm(4, 4)(lib.randn(1, 4, 1)),
    lambda lib: lib.nn.LayerNorm(())(lib.ones(2, 3)),
    lambda lib: lib.nn.functional.rms_norm(lib.ones(2), ()),
])
def test_module_arguments_raise_torchs_errors(call):
    _raises_alike(call)


def test_module_to_accepts_torchs_signatures():
    for call in (lambda m, lib: m.to("cpu"), lambda m, lib: m.to(device="cpu", dtype=lib.float64),
                 lambda m, lib: m.to(lib.zeros(1, dtype=lib.float64)),
                 lambda m, lib: m.to(lib.float64, non_blocking=True),
                 lambda m, lib: m.to(memory_format=lib.channels_last)):
        dt = [str(call(lib.nn.Linear(2, 2), lib).weight.dtype).split(".")[-1]
              for lib in (torch, glassgrad)]
        assert dt[0] == dt[1]


def test_group_norm_with_more_than_one_value_per_group_matches_torch():
    x = np.random.default_rng(0).standard_normal((2, 10))
    theirs = torch.nn.functional.group_norm(torch.tensor(x), 10).numpy()
    ours = glassgrad.nn.functional.group_norm(glassgrad.tensor(x), 10).numpy()
    np.testing.assert_allclose(ours, theirs, atol=1e-12)


def test_buffer_over_an_existing_attribute_and_call_super_init():
    for lib in (torch, glassgrad):
        m = lib.nn.Module()
        m.attribute_name = 5
        with pytest.raises(KeyError, match="already exists"):
            m.attribute_name = lib.nn.Buffer(lib.rand(5))

        class MyMixin:
            def __init__(self, *a, **kw):
                super().__init__(*a, **kw)
                self.mixin_init = True

        class After(lib.nn.Module, MyMixin):
            call_super_init = True

        class Plain(lib.nn.Module, MyMixin):
            pass

        assert hasattr(After(), "mixin_init") and not hasattr(Plain(), "mixin_init")


def test_share_memory_shows_in_the_storage():
    for lib in (torch, glassgrad):
        net = lib.nn.Linear(2, 2)
        assert not any(p.untyped_storage().is_shared() for p in net.parameters())
        net.share_memory()
        assert all(p.untyped_storage().is_shared() for p in net.parameters())


@pytest.mark.parametrize("make", [
    lambda lib, x: lib.nn.functional.elu_(x, alpha=-2),
    lambda lib, x: lib.nn.functional.celu_(x, alpha=-2),
    lambda lib, x: lib.nn.functional.leaky_relu_(x, -0.5),
    lambda lib, x: lib.nn.ELU(-2.0, inplace=True)(x),
    lambda lib, x: lib.nn.LeakyReLU(-0.1, inplace=True)(x),
])
def test_in_place_activation_with_a_negative_slope_refuses_backward(make):
    def run(lib):
        a = lib.tensor([-1.0, 1.0], requires_grad=True)
        make(lib, a.clone()).backward(lib.ones(2))

    _raises_alike(run)


def test_in_place_activation_with_a_positive_slope_keeps_torchs_gradient():
    grads = []
    for lib in (torch, glassgrad):
        a = lib.tensor([-1.0, 0.5, 2.0], requires_grad=True)
        lib.nn.functional.elu_(a.clone(), alpha=0.7).sum().backward()
        grads.append(a.grad.numpy())
    np.testing.assert_allclose(grads[1], grads[0], rtol=1e-6)


def _pad_report(lib):
    F = lib.nn.functional
    out = []
    for shape, pads in [((2, 3, 4, 5), (1, 1)), ((2,), (1, 1)), ((2, 3, 4, 5, 6, 7), (1,) * 6),
                        ((2, 3), (1, 1, 1, 1)), ((2, 3, 4, 5), (1,) * 8), ((2, 3), ()),
                        ((2, 3, 4), (1, 1)), ((2, 3, 4), (1, 1, 1, 1))]:
        for mode in ("reflect", "replicate", "circular", "constant"):
            try:
                out.append(tuple(F.pad(lib.zeros(*shape), pads, mode=mode).shape))
            except Exception as e:  # noqa: BLE001 - the error type and text are compared
                out.append((type(e).__name__, str(e)))
    for mode in ("constant", "reflect", "replicate", "circular"):
        for x in (lib.zeros(2, 3, 4, 5).contiguous(memory_format=lib.channels_last),
                  lib.zeros(2, 3, 4, 5, 6).contiguous(memory_format=lib.channels_last_3d),
                  lib.zeros(2, 3, 4, 5)):
            for pads in ((1, 1, 1, 1), (0, 0, 0, 0), (0, 0, -1, -1)):
                pads = pads + (1, 1) if x.ndim == 5 else pads
                result = F.pad(x, pads, mode=mode)
                out.append((mode, x.ndim, pads, result.stride()))
                result.fill_(4.0)
                out.append(bool((x == 4).any()))  # never a view of the input
    return out


def test_pad_shapes_errors_layouts_and_copies_match_torch():
    theirs, ours = _pad_report(torch), _pad_report(glassgrad)
    assert ours == theirs


def test_threshold_in_place_on_an_expanded_view_is_allowed_as_in_torch():
    outs = []
    for lib in (torch, glassgrad):
        x = lib.tensor([[0.2, 0.7, 0.5, 0.9]]).expand(3, 4)
        lib.nn.functional.threshold(x, 0.5, 0.5, inplace=True)
        lib.nn.functional.threshold_(x, 0.6, -1.0)
        outs.append(x.numpy().copy())
    np.testing.assert_array_equal(outs[1], outs[0])


@pytest.mark.parametrize("lower,upper,training", [(-5.0, 1.0, False), (-0.5, -0.1, False),
                                                  (-5.0, 1.0, True), (0.1, 0.3, False)])
def test_rrelu_in_place_with_a_negative_mean_slope_refuses_backward(lower, upper, training):
    def run(lib, fn):
        a = lib.tensor([-1.0, 1.0], requires_grad=True)
        fn(lib)(a.clone(), lower, upper, training=training).backward(lib.ones(2))
        return a.grad

    for fn in (lambda lib: lib.nn.functional.rrelu_, lambda lib: lib.rrelu_):
        if training or (lower + upper) / 2 >= 0:
            assert run(torch, fn).shape == run(glassgrad, fn).shape
        else:
            _raises_alike(lambda lib, fn=fn: run(lib, fn))


@pytest.mark.parametrize("size", [(4,), (4, 4, 4), (4.0, 4.0), "tensors", (True, 2), 4.0, "a"],
                         ids=str)
def test_interpolate_size_errors_match_torch(size):
    def run(lib):
        s = (lib.tensor(4.0), lib.tensor(4.0)) if size == "tensors" else size
        return lib.nn.functional.interpolate(lib.ones(1, 1, 2, 2), size=s)

    with pytest.raises(Exception) as theirs:
        run(torch)
    with pytest.raises(type(theirs.value)) as ours:
        run(glassgrad)
    head = str(theirs.value).split(",")[0].split("<class")[0]
    assert str(ours.value).startswith(head)


def test_interpolate_integer_tensor_sizes_work_as_in_torch():
    for size in ((lambda lib: lib.tensor(4)), (lambda lib: [lib.tensor(2), 3])):
        shapes = [tuple(lib.nn.functional.interpolate(lib.ones(1, 1, 2, 2), size=size(lib)).shape)
                  for lib in (torch, glassgrad)]
        assert shapes[0] == shapes[1]


def test_multi_head_attention_refuses_bias_with_a_static_key():
    def run(lib, which):
        embed, heads, bsz = 4, 2, 3
        x = lib.randn(2, bsz, embed)
        static = lib.randn(bsz * heads, 2, embed // heads)
        return lib.nn.functional.multi_head_attention_forward(
            x, x, x, embed, heads, lib.randn(3 * embed, embed), lib.randn(3 * embed),
            lib.randn(1, 1, embed), lib.randn(1, 1, embed), False, 0.0, lib.randn(embed, embed),
            lib.randn(embed), training=False, need_weights=False,
            static_k=static if which == "k" else None, static_v=static if which == "v" else None)

    for which in ("k", "v"):
        _raises_alike(lambda lib: run(lib, which))


def test_functional_grad_is_the_nn_grad_module_with_torchs_values():
    x = np.random.default_rng(0).standard_normal((2, 3, 6, 5))
    w = np.random.default_rng(1).standard_normal((4, 3, 3, 2))
    g = np.random.default_rng(2).standard_normal((2, 4, 4, 4))
    outs = []
    for lib in (torch, glassgrad):
        F = lib.nn.functional
        assert F.grad is lib.nn.grad
        outs.append((F.grad.conv2d_input(x.shape, lib.tensor(w), lib.tensor(g)).numpy(),
                     F.grad.conv2d_weight(lib.tensor(x), w.shape, lib.tensor(g)).numpy()))
    for ours, theirs in zip(outs[1], outs[0]):
        np.testing.assert_allclose(ours, theirs, rtol=1e-10, atol=1e-12)


def _layouts(lib):
    nn, out = lib.nn, []
    for cls in (nn.Dropout, nn.Dropout2d, nn.Dropout3d):
        for fmt in (lib.contiguous_format, lib.channels_last):
            x = lib.empty(2, 3, 3, 6, memory_format=fmt)[..., ::2]
            x.copy_(lib.ones(2, 3, 3, 3))
            out.append(cls(p=1e-10)(x).stride())
    x = lib.randn(3, 18, 4, 4).contiguous(memory_format=lib.channels_last)
    out.append(nn.PixelShuffle(3)(x).stride())
    out.append(nn.PixelUnshuffle(3)(nn.PixelShuffle(3)(x)).stride())
    out.append(lib.empty(2, 3, 4, 5, 6, memory_format=lib.channels_last_3d).stride())
    m = nn.Conv2d(16, 32, 2).to(lib.float64, memory_format=lib.channels_last)
    out.append((m.weight.stride(), m.bias.stride(), str(m.weight.dtype).split(".")[-1]))
    return out


def test_dropout_pixel_shuffle_empty_and_module_to_keep_torchs_memory_format():
    assert _layouts(glassgrad) == _layouts(torch)


def test_dropout_of_a_channels_last_view_keeps_torchs_values_at_p_near_0():
    outs = []
    for lib in (torch, glassgrad):
        x = lib.empty(2, 3, 3, 6, memory_format=lib.channels_last)[..., ::2]
        x.copy_(lib.arange(54.0).reshape(2, 3, 3, 3))
        outs.append(lib.nn.Dropout2d(p=1e-10)(x).numpy())
    np.testing.assert_array_equal(outs[1], outs[0])


@pytest.mark.parametrize("call", [
    lambda lib: lib.empty(2, 3, memory_format=lib.channels_last),
    lambda lib: lib.nn.Conv3d(2, 2, 2).to(memory_format=lib.channels_last),
])
def test_channels_last_of_the_wrong_rank_raises_torchs_error(call):
    _raises_alike(call)


def test_fold_with_a_negative_block_count_raises_torchs_error():
    _raises_alike(lambda lib: lib.nn.Fold(output_size=(4, 5), kernel_size=(2, 2), stride=1,
                                          dilation=8, padding=0)(lib.randn(1, 12, 12)))


def _permuted_dropouts(lib):
    import itertools

    out = []
    ones = lib.ones(2, 3, 4, 5)
    for cls in (lib.nn.Dropout, lib.nn.Dropout2d):
        for perm in itertools.permutations(range(4)):
            back = tuple(perm.index(d) for d in range(4))
            for shift in ((0, 0), (1, 1)):
                x = ones.permute(perm).contiguous().permute(back)[shift[0]:, shift[1]:]
                result = cls(p=0.3)(x)
                out.append(result.permute(perm).is_contiguous())
    return out


def test_dropout_output_follows_a_permuted_input_as_in_torch():
    assert _permuted_dropouts(glassgrad) == _permuted_dropouts(torch)


@pytest.mark.parametrize("shape", [(1, 2, 2, 2, 2, 2), (3, 2, 2, 2), (2, 3, 2, 2, 2), (3, 4, 2)])
def test_dropout3d_masks_and_warnings_match_torch(shape):
    import warnings

    outs, seen = [], []
    for lib in (torch, glassgrad):
        lib.manual_seed(0)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            outs.append(lib.nn.functional.dropout3d(lib.ones(*shape, dtype=lib.float64),
                                                    0.5).numpy())
        seen.append([str(w.message) for w in caught])
    np.testing.assert_array_equal(outs[1], outs[0])
    assert seen[1] == seen[0]


@pytest.mark.parametrize("shapes", [((2, 3), (1, 1)), ((2, 3), (1,)), ((4, 1, 3), (2, 3))], ids=str)
def test_cosine_similarity_broadcasts_before_the_norms_as_torch(shapes):
    a = np.random.default_rng(0).standard_normal(shapes[0])
    b = np.random.default_rng(1).standard_normal(shapes[1])
    outs = []
    for lib in (torch, glassgrad):
        x, y = lib.tensor(a, requires_grad=True), lib.tensor(b, requires_grad=True)
        out = lib.nn.functional.cosine_similarity(x, y, dim=-1)
        out.sum().backward()
        outs.append((out.detach().numpy(), x.grad.numpy(), y.grad.numpy()))
    for ours, theirs in zip(outs[1], outs[0]):
        np.testing.assert_allclose(ours, theirs, rtol=1e-10, atol=1e-12)
