"""zeros/ones/empty called with ``size=`` (pytorch/examples' gat builds its parameters with
``torch.empty(size=(in, out))``): torch's shape and dtype, and torch's TypeError for the forms it
refuses. glassgrad's ``empty`` once swallowed ``size=`` and returned a 0-d tensor."""

import pytest
import torch

import glassgrad

CALLS = [
    ((), {"size": (2, 3)}),
    ((), {"size": [4]}),
    ((), {"size": ()}),
    ((), {"size": (2, 0), "dtype": "int64"}),
    (((3, 1),), {}),
    ((2, 5), {"dtype": "float64"}),
]


def _kw(lib, kw):
    kw = dict(kw)
    if "dtype" in kw:
        kw["dtype"] = getattr(lib, kw["dtype"])
    if "size" in kw and isinstance(kw["size"], tuple):
        kw["size"] = lib.Size(kw["size"])
    return kw


@pytest.mark.parametrize("name", ["zeros", "ones", "empty"])
@pytest.mark.parametrize("args,kw", CALLS)
def test_size_forms_match_torch(name, args, kw):
    theirs = getattr(torch, name)(*args, **_kw(torch, kw))
    ours = getattr(glassgrad, name)(*args, **_kw(glassgrad, kw))
    assert tuple(ours.shape) == tuple(theirs.shape)
    assert str(ours.dtype).split(".")[1] == str(theirs.dtype).split(".")[1]
    if name != "empty":
        assert ours.numpy().tolist() == theirs.numpy().tolist()


@pytest.mark.parametrize("name", ["zeros", "ones", "empty"])
@pytest.mark.parametrize("args,kw,phrase", [
    ((2,), {"size": (3,)}, "got multiple values for argument 'size'"),
    ((), {"size": 3}, "argument 'size' must be tuple of ints, not int"),
])
def test_size_refusals_match_torch(name, args, kw, phrase):
    for lib in (torch, glassgrad):
        with pytest.raises(TypeError, match=phrase):
            getattr(lib, name)(*args, **kw)
