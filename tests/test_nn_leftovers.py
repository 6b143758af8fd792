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
    assert str(ours.value).startswith(str(theirs.value).split("\n")[0])


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
