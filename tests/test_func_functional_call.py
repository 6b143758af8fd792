"""``func.functional_call`` edge cases against ``torch.func.functional_call``, run the same way on
both libraries: shared submodules, tied weights, buffers updated in place, reassignments written
back to the dict, plain tensor attributes, ``None`` parameters, modules that override the iteration
methods, and the module restored afterwards (also after an error)."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import glassgrad

RNG = np.random.default_rng(3)
LIBS = (glassgrad, torch)


def arr(*shape):
    return RNG.standard_normal(shape)


def t(lib, a):
    return lib.tensor(np.array(a, dtype=np.float64))


def close(a, b):
    np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=1e-10, atol=1e-12)


def snapshot(module) -> dict:
    """Every name -> (object identity class, values) of ``state_dict`` and the parameters."""
    out = {k: v.detach().numpy().copy() for k, v in module.state_dict(keep_vars=True).items()}
    out["__types__"] = sorted((k, type(v).__name__)
                              for k, v in module.named_parameters(remove_duplicate=False))
    return out


def same_snapshot(a: dict, b: dict) -> None:
    assert a.keys() == b.keys()
    for k, value in a.items():
        if k == "__types__":
            assert value == b[k]
        else:
            np.testing.assert_allclose(value, b[k])


def linear(lib, i, o, w, b=None):
    m = lib.nn.Linear(i, o, bias=b is not None).double()
    with lib.no_grad():
        m.weight.copy_(t(lib, w))
        if b is not None:
            m.bias.copy_(t(lib, b))
    return m


W1, B1, W2 = arr(3, 3), arr(3), arr(2, 3)


def shared_model(lib):
    """One Linear registered twice (``a`` and ``c``), so its names appear under both paths."""
    shared = linear(lib, 3, 3, W1, B1)
    return lib.nn.Sequential(lib.nn.ModuleDict({"a": shared, "c": shared}),
                             linear(lib, 3, 2, W2))


class _Shared:
    @staticmethod
    def forward(lib):
        class Net(lib.nn.Module):
            def __init__(self):
                super().__init__()
                self.body = shared_model(lib)

            def forward(self, x):
                h = self.body[0]["a"](x).tanh()
                return self.body[1](self.body[0]["c"](h))

        return Net()


@pytest.mark.parametrize("given", [("body.0.a.weight",), ("body.0.c.bias",),
                                   ("body.0.a.weight", "body.1.weight")])
def test_shared_submodule_like_torch(given):
    x = arr(4, 3)
    values = {"body.0.a.weight": arr(3, 3), "body.0.c.bias": arr(3), "body.1.weight": arr(2, 3)}
    results = []
    for lib in LIBS:
        model = _Shared.forward(lib)
        before = snapshot(model)
        out = lib.func.functional_call(model, {k: t(lib, values[k]) for k in given}, t(lib, x))
        results.append((out, snapshot(model), before))
    close(results[0][0], results[1][0])
    # the module afterwards, as torch leaves it: a shared module's tied names are swapped twice,
    # so PyTorch restores the first swap's value (the given tensor) when both names were set
    same_snapshot(results[0][1], results[1][1])


def test_tied_weights_given_once_twice_and_untied():
    x = arr(2, 3)
    w = arr(3, 3)
    outs = {}
    for lib in LIBS:
        f = lib.func.functional_call
        model = _Shared.forward(lib)
        outs[lib] = [
            f(model, {"body.0.a.weight": t(lib, w)}, t(lib, x)),
            f(model, {"body.0.a.weight": t(lib, w)}, t(lib, x), tie_weights=False),
        ]
        same = t(lib, w)
        outs[lib].append(f(model, {"body.0.a.weight": same, "body.0.c.weight": same}, t(lib, x)))
        with pytest.raises(ValueError, match="which are tied"):
            f(model, {"body.0.a.weight": t(lib, w), "body.0.c.weight": t(lib, w)}, t(lib, x))
    for a, b in zip(outs[glassgrad], outs[torch]):
        close(a, b)


def test_buffers_updated_in_place_and_strict_names():
    x = arr(5, 3)
    state = {"weight": arr(3), "bias": arr(3), "running_mean": arr(3),
             "running_var": np.abs(arr(3)) + 0.5}
    res = []
    for lib in LIBS:
        bn = lib.nn.BatchNorm1d(3).double()
        given = {k: t(lib, v) for k, v in state.items()}
        given["num_batches_tracked"] = lib.tensor(4)
        out = lib.func.functional_call(bn, given, (t(lib, x),), strict=True)
        res.append((out, given, dict(bn.named_buffers())))
        with pytest.raises(RuntimeError, match="Missing key\\(s\\): 'num_batches_tracked'"):
            lib.func.functional_call(bn, {k: t(lib, v) for k, v in state.items()}, t(lib, x),
                                     strict=True)
    (out_g, given_g, own_g), (out_t, given_t, own_t) = res
    close(out_g, out_t)
    for k in given_g:  # BatchNorm updated the given running stats in place
        close(given_g[k], given_t[k])
    for k in own_g:  # and not its own
        close(own_g[k], own_t[k])


class _Counter:
    @staticmethod
    def make(lib):
        class Net(lib.nn.Module):
            def __init__(self):
                super().__init__()
                self.register_buffer("count", lib.zeros(()))
                self.lin = linear(lib, 3, 2, W2)
                self.scale = lib.tensor(2.0, dtype=lib.float64)  # a plain tensor attribute

            def forward(self, x):
                self.count = self.count + 1  # a reassignment, written back to the given dict
                return self.lin(x) * self.scale

        return Net()


def test_reassigned_buffer_written_back_plain_attribute_and_sequence_of_dicts():
    x = arr(2, 3)
    res = []
    for lib in LIBS:
        m = _Counter.make(lib)
        given = {"count": lib.tensor(5.0), "scale": lib.tensor(3.0, dtype=lib.float64)}
        out = lib.func.functional_call(m, given, t(lib, x))
        assert float(given["count"]) == 6.0  # written back
        assert float(m.count) == 0.0 and float(m.scale) == 2.0  # restored
        pair = ({"count": lib.tensor(1.0)}, {"lin.bias": lib.zeros(2, dtype=lib.float64)})
        out2 = lib.func.functional_call(m, pair, (t(lib, x),))
        assert float(pair[0]["count"]) == 1.0  # a sequence of dicts is not written back
        # a name the module does not have is set for the call and removed afterwards
        out3 = lib.func.functional_call(m, {"extra": lib.ones(1)}, t(lib, x))
        assert not hasattr(m, "extra")
        res.append((out, out2, out3))
    for a, b in zip(*res):
        close(a, b)


def test_none_parameter_filled_and_restored():
    x = arr(2, 3)
    res = []
    for lib in LIBS:
        m = linear(lib, 3, 2, W2)  # bias registered as None
        out = lib.func.functional_call(m, {"bias": t(lib, [1.0, -1.0])}, t(lib, x))
        assert m.bias is None and "bias" in m._parameters
        res.append(out)
    close(*res)


def test_error_in_forward_restores_and_grad_flows_to_given_tensors():
    x = arr(4, 3)
    grads = []
    for lib in LIBS:
        model = lib.nn.Sequential(linear(lib, 3, 3, W1, B1), lib.nn.Tanh(), linear(lib, 3, 2, W2))
        before = snapshot(model)
        bad = {"2.weight": t(lib, arr(2, 4))}
        with pytest.raises(RuntimeError):
            lib.func.functional_call(model, bad, t(lib, x))
        same_snapshot(snapshot(model), before)
        assert isinstance(model[2].weight, lib.nn.Parameter)
        fast = {k: (v * 2) for k, v in model.named_parameters()}
        loss = lib.func.functional_call(model, fast, t(lib, x)).pow(2).sum()
        grads.append(lib.autograd.grad(loss, list(model.parameters())))
        same_snapshot(snapshot(model), before)
    for a, b in zip(*grads):
        close(a, b)


def test_module_overriding_named_parameters():
    """A module whose ``named_parameters`` hides a weight: tie detection uses the override."""
    x = arr(2, 3)
    res = []
    for lib in LIBS:
        base = _Shared.forward(lib)

        class Hiding(type(base)):
            def named_parameters(self, prefix="", recurse=True, remove_duplicate=True):
                for name, p in super().named_parameters(prefix, recurse, remove_duplicate):
                    if name != "body.0.c.weight":
                        yield name, p

        m = Hiding()
        res.append(lib.func.functional_call(m, {"body.0.a.weight": t(lib, arr(3, 3) * 0)},
                                            t(lib, x)))
    close(*res)


def test_type_errors():
    for lib in LIBS:
        m = _Counter.make(lib)
        with pytest.raises(TypeError):
            lib.func.functional_call(m, {"lin.weight": np.zeros((2, 3))}, t(lib, arr(2, 3)))
        assert isinstance(m.lin.weight, lib.nn.Parameter)
        m.flag = 3
        with pytest.raises(TypeError, match="is not an instance of torch.Tensor"):
            lib.func.functional_call(m, {"flag": lib.ones(1)}, t(lib, arr(2, 3)))
        assert m.flag == 3


def test_module_overriding_named_parameters_with_an_alias():
    """An override that also yields an alias path: the alias is tied to the real weight, so a
    value given for the weight goes to the alias too, which does not resolve: AttributeError on
    both libraries, and the module is restored."""
    x = arr(2, 3)
    for lib in LIBS:
        base = _Shared.forward(lib)

        class Aliasing(type(base)):
            def named_parameters(self, prefix="", recurse=True, remove_duplicate=True):
                yield from super().named_parameters(prefix, recurse, remove_duplicate)
                yield "alias.weight", self.body[1].weight

        m = Aliasing()
        before = snapshot(m)
        with pytest.raises(AttributeError):
            lib.func.functional_call(m, {"body.1.weight": t(lib, arr(2, 3))}, t(lib, x))
        same_snapshot(snapshot(m), before)
        out = lib.func.functional_call(m, {"body.0.a.bias": t(lib, arr(3))}, t(lib, x),
                                       tie_weights=False)
        assert tuple(out.shape) == (2, 2)
