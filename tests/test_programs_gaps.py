"""Small gaps the public programs (programs/run.py) hit, each against torch."""

from __future__ import annotations

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
