"""Small gaps the public programs (programs/run.py) hit, each against torch."""

from __future__ import annotations

import contextlib
import os

import numpy as np
import pytest
import torch

import glassgrad


@pytest.mark.parametrize("a, b", [(1, 0), (1.0, 0), (True, False), (True, 1), (1, 0.5),
                                  (-3, 2**40)])
def test_where_with_two_numbers(a, b):
    # siamese_network: pred = torch.where(outputs > 0.5, 1, 0)
    values = np.array([0.2, 0.7, 0.9, 0.5], dtype=np.float32)
    expected = torch.where(torch.from_numpy(values) > 0.5, a, b)
    got = glassgrad.where(glassgrad.from_numpy(values) > 0.5, a, b)
    assert str(got.dtype).split(".")[1] == str(expected.dtype).split(".")[1]
    np.testing.assert_array_equal(got.numpy(), expected.numpy())
    scalar_condition = glassgrad.where(glassgrad.tensor(True), a, b)
    assert scalar_condition.shape == torch.where(torch.tensor(True), a, b).shape


def test_where_with_a_non_number_raises_type_error():
    with pytest.raises(TypeError):
        torch.where(torch.tensor([True]), "a", 0)
    with pytest.raises(TypeError, match="where"):
        glassgrad.where(glassgrad.tensor([True]), "a", 0)


@pytest.mark.parametrize("name", ["is_cpu", "is_cuda", "is_xpu", "is_mps", "is_meta",
                                  "is_quantized", "is_mkldnn", "is_nested", "is_sparse"])
def test_device_probes(name):
    # dcgan's forward: `if (input.is_cuda or input.is_xpu) and self.ngpu > 1`
    assert getattr(glassgrad.zeros(2), name) is getattr(torch.zeros(2), name)
    with pytest.raises(AttributeError):
        setattr(glassgrad.zeros(2), name, True)
    with pytest.raises(AttributeError):
        setattr(torch.zeros(2), name, True)


def _generators_agree() -> bool:
    torch.manual_seed(0)
    glassgrad.manual_seed(0)
    return bool(np.array_equal(torch.rand(8).numpy(), glassgrad.rand(8).numpy()))


@pytest.mark.parametrize("shape", [(16, 64), (4, 8, 16), (2, 8, 4, 4)])
def test_dropout2d_mask_shape_follows_torch(shape):
    # mnist_rnn: nn.Dropout2d on the (N, 64) output of a BatchNorm1d
    results = []
    for lib in (torch, glassgrad):
        lib.manual_seed(3)
        with pytest.warns(UserWarning, match="Received a 2-D input to dropout2d") if len(
                shape) == 2 else contextlib.nullcontext():
            out = lib.nn.Dropout2d(0.5)(lib.ones(*shape))
        dropped = out.numpy() == 0
        # the mask's shape: dims along which the zeros never vary are the broadcast ones
        results.append(tuple(d for d in range(len(shape))
                             if not (dropped == dropped.take([0], axis=d)).all()))
    assert results[0] == results[1]


def test_dropout2d_two_dims_gives_torchs_numbers():
    if not _generators_agree():
        pytest.skip("glassgrad's generator is not torch's stream on this branch")
    x = np.linspace(-1, 1, 256, dtype=np.float32).reshape(4, 64)
    torch.manual_seed(1)
    glassgrad.manual_seed(1)
    with pytest.warns(UserWarning):
        expected = torch.nn.functional.dropout2d(torch.from_numpy(x), 0.25)
    with pytest.warns(UserWarning):
        got = glassgrad.nn.functional.dropout2d(glassgrad.from_numpy(x), 0.25)
    np.testing.assert_array_equal(got.numpy(), expected.numpy())


def test_dropout2d_warning_points_at_the_caller():
    # torch's warning names the line that called F.dropout2d, nn/modules/dropout.py's forward for
    # the module; glassgrad's names the user's line either way (NOTE [User's line])
    places = []
    for lib in (torch, glassgrad):
        with pytest.warns(UserWarning, match="Received a 2-D input") as record:
            lib.nn.Dropout2d()(lib.ones(2, 3))
        places.append(record[0].filename.replace(os.sep, "/").split("/")[-3:])
        with pytest.warns(UserWarning) as record:
            lib.nn.functional.dropout2d(lib.ones(2, 3))
        assert record[0].filename == __file__
    assert places[0] == ["nn", "modules", "dropout.py"]
    assert places[1] == __file__.replace(os.sep, "/").split("/")[-3:]
