"""torch.autograd's names added in issue 15 (lane agrad), each behaving as torch's: the
SavedTensor type, the __torch_function__ helpers, the engine settings."""

from __future__ import annotations

import pytest
import torch

import glassgrad

LIBS = pytest.mark.parametrize("lib", [torch, glassgrad], ids=["torch", "glassgrad"])


@LIBS
def test_saved_tensor_cannot_be_made_from_python(lib):
    with pytest.raises(RuntimeError, match="Trying to create a SavedTensor object from Python "
                                           "is forbidden"):
        lib.autograd.SavedTensor()


def test_saved_tensors_are_saved_tensor_instances():
    seen = []
    x = glassgrad.ones(2, requires_grad=True)
    with glassgrad.autograd.graph.saved_tensors_hooks(lambda t: seen.append(t) or t, lambda t: t):
        y = x.sin()
    (saved,) = y.grad_fn._saved
    assert isinstance(saved, glassgrad.autograd.SavedTensor) and len(seen) == 1


class _Declines:
    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        return NotImplemented


@LIBS
def test_torch_function_helpers(lib):
    class Handles:
        @classmethod
        def __torch_function__(cls, func, types, args=(), kwargs=None):
            return (func.__name__, [t.__name__ for t in types], len(args))

    class Sub(Handles):
        pass

    a = lib.autograd
    assert a.has_torch_function((Handles(),)) and not a.has_torch_function((lib.ones(1), 1))
    assert a.handle_torch_function(lib.sum, (Handles(),), Handles(), 2) == \
        ("sum", ["Handles"], 2)
    # a subclass is asked first, each type once
    assert a.handle_torch_function(lib.sum, (Handles(), Sub(), Sub()), 1)[1] == ["Sub", "Handles"]
    with pytest.raises(TypeError, match="no implementation found for 'torch.sum' on types that "
                                        "implement __torch_function__"):
        a.handle_torch_function(lib.sum, (_Declines(),), _Declines())
    assert a.is_tensor_like(lib.ones(1)) and a.is_tensor_like(Handles())
    assert not a.is_tensor_like(1.0)


@LIBS
def test_engine_settings(lib):
    a = lib.autograd
    assert a.is_multithreading_enabled() is True
    with a.set_multithreading_enabled(False):
        assert a.is_multithreading_enabled() is False
    assert a.is_multithreading_enabled() is True
    a.set_multithreading_enabled(False)  # a plain call sets it, as set_grad_enabled does
    assert a.is_multithreading_enabled() is False
    a.set_multithreading_enabled(True)
    assert a.is_view_replay_enabled() is False
    assert isinstance(a.kineto_available(), bool)
