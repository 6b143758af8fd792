"""``torch.nn.modules.<file>.<Name>`` paths: each name torch has there, and glassgrad has at
``glassgrad.nn.<Name>``, resolves at ``glassgrad.nn.modules.<file>.<Name>`` to the same class;
the base classes stand in the same subclass relations; torch.nn.modules.utils' helpers agree."""

from __future__ import annotations

import importlib
import inspect
from collections import OrderedDict

import pytest
import torch
import torch.nn.modules as torch_modules

import glassgrad

SUBMODULES = sorted(n for n, v in vars(torch_modules).items()
                    if inspect.ismodule(v) and not n.startswith("_"))

# what pytorch/examples' word_language_model names (its torch.load allow-list)
PROGRAM_PATHS = [
    "activation.MultiheadAttention", "container.ModuleList", "dropout.Dropout", "linear.Linear",
    "linear.NonDynamicallyQuantizableLinear", "normalization.LayerNorm", "sparse.Embedding",
    "rnn.GRU", "rnn.LSTM", "rnn.RNN", "transformer.TransformerEncoder",
    "transformer.TransformerEncoderLayer", "transformer.TransformerDecoder",
    "transformer.TransformerDecoderLayer", "transformer.Transformer", "module.Module",
    "conv.Conv2d", "conv.ConvTranspose2d", "pooling.MaxPool2d", "batchnorm.BatchNorm2d",
    "batchnorm.BatchNorm1d", "loss.NLLLoss", "loss.BCELoss", "loss.MSELoss", "flatten.Flatten",
    "fold.Unfold", "upsampling.Upsample", "instancenorm.InstanceNorm2d", "rnn.LSTMCell",
]


def _resolve(root, dotted):
    obj = root
    for part in dotted.split("."):
        obj = getattr(obj, part)
    return obj


@pytest.mark.parametrize("path", PROGRAM_PATHS)
def test_program_paths_resolve(path):
    theirs = _resolve(torch.nn.modules, path)
    ours = _resolve(glassgrad.nn.modules, path)
    assert ours.__name__ == theirs.__name__
    if hasattr(torch.nn, theirs.__name__):
        assert ours is getattr(glassgrad.nn, theirs.__name__)
    sub, name = path.split(".")
    module = importlib.import_module(f"glassgrad.nn.modules.{sub}")
    assert getattr(module, name) is ours


@pytest.mark.parametrize("sub", SUBMODULES)
def test_every_shared_name_resolves(sub):
    """A class glassgrad.nn has is reachable wherever torch.nn.modules puts it."""
    names = getattr(getattr(torch_modules, sub), "__all__", [])
    shared = [n for n in names if hasattr(glassgrad.nn, n)]
    if not shared:
        return
    module = importlib.import_module(f"glassgrad.nn.modules.{sub}")
    assert getattr(glassgrad.nn.modules, sub) is module
    for name in shared:
        assert getattr(module, name) is getattr(glassgrad.nn, name), f"{sub}.{name}"


def test_module_path_is_nn_module_itself():
    import glassgrad.nn.modules.module as by_import
    from glassgrad.nn.modules.module import Module

    assert by_import is glassgrad.nn.module is glassgrad.nn.modules.module
    assert Module is glassgrad.nn.Module


def test_star_import_keeps_nn_utils():
    """The alias package ``nn.modules.utils`` never shadows ``nn.utils`` (clip_grad_norm_ ...)."""
    assert glassgrad.nn.utils.clip_grad_norm_ is not None
    assert glassgrad.nn.utils is importlib.import_module("glassgrad.nn.utils")
    assert not [n for n in glassgrad.nn.modules.__all__ if not n[0].isupper()]


BASES = [("batchnorm", "_BatchNorm", "BatchNorm2d"), ("batchnorm", "_NormBase", "BatchNorm1d"),
         ("instancenorm", "_InstanceNorm", "InstanceNorm1d"), ("conv", "_ConvNd", "Conv2d"),
         ("conv", "_ConvTransposeNd", "ConvTranspose2d"), ("loss", "_Loss", "MSELoss"),
         ("loss", "_WeightedLoss", "CrossEntropyLoss"), ("dropout", "_DropoutNd", "Dropout"),
         ("pooling", "_MaxPoolNd", "MaxPool2d"), ("pooling", "_AvgPoolNd", "AvgPool2d"),
         ("pooling", "_AdaptiveAvgPoolNd", "AdaptiveAvgPool2d"), ("rnn", "RNNBase", "LSTM")]


@pytest.mark.parametrize("sub, base, cls", BASES)
def test_base_classes_as_in_torch(sub, base, cls):
    """``isinstance(m, nn.modules.batchnorm._BatchNorm)`` (a common idiom) answers as in torch."""
    for lib in (torch, glassgrad):
        b = getattr(getattr(lib.nn.modules, sub), base)
        assert issubclass(getattr(lib.nn, cls), b), f"{lib.__name__}: {cls} < {sub}.{base}"
    sibling = {"_BatchNorm": "InstanceNorm2d", "_ConvNd": "Linear", "_Loss": "ReLU"}.get(base)
    if sibling:
        assert issubclass(getattr(torch.nn, sibling), getattr(getattr(torch.nn.modules, sub),
                                                              base)) == \
            issubclass(getattr(glassgrad.nn, sibling), getattr(getattr(glassgrad.nn.modules, sub),
                                                               base))


@pytest.mark.parametrize("name, args", [
    ("_single", (3,)), ("_pair", (3,)), ("_pair", ([1, 2],)), ("_triple", ((1, 2, 3),)),
    ("_quadruple", (0,)), ("_reverse_repeat_tuple", ((1, 2, 3), 2)),
    ("_list_with_default", ([None, 4], [2, 3, 7, 9])), ("_list_with_default", (5, [1])),
])
def test_utils_parsers_match_torch(name, args):
    ours = getattr(glassgrad.nn.modules.utils, name)
    theirs = getattr(torch.nn.modules.utils, name)
    assert ours(*args) == theirs(*args)
    assert ours.__name__ == theirs.__name__


def test_utils_parser_error_matches_torch():
    errors = []
    for lib in (torch, glassgrad):
        with pytest.raises(ValueError) as e:
            lib.nn.modules.utils._list_with_default([None, 4], [2])
        errors.append(str(e.value))
    assert errors[0] == errors[1]


def test_consume_prefix_in_state_dict_if_present_matches_torch():
    results = []
    for lib in (torch, glassgrad):
        model = lib.nn.Sequential(lib.nn.Linear(2, 3), lib.nn.ReLU())
        sd = OrderedDict((f"module.{k}", v) for k, v in model.state_dict().items())
        sd["other.x"] = 1
        sd._metadata = OrderedDict([("", {}), ("module", {"v": 1}), ("module.0", {"v": 2})])
        lib.nn.modules.utils.consume_prefix_in_state_dict_if_present(sd, "module.")
        results.append((list(sd), dict(sd._metadata)))
        model.load_state_dict({k: v for k, v in sd.items() if k != "other.x"})
        plain = {"module.a": 1}
        lib.nn.modules.utils.consume_prefix_in_state_dict_if_present(plain, "module.")
        results.append(plain)
    assert results[0] == results[2] and results[1] == results[3]
