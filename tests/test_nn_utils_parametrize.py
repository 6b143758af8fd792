"""``nn.utils.parametrize`` and ``nn.utils.parametrizations`` (orthogonal, spectral_norm,
weight_norm) and the hook-based ``weight_norm`` / ``spectral_norm`` against torch: the same
seed gives the same weights and power-iteration vectors in both libraries, so values,
gradients, state_dict keys, reprs and errors are compared directly."""

from __future__ import annotations

import warnings

import pytest

import glassgrad
from tests.nn_utils_oracle import _both, _error, _same

pytestmark = pytest.mark.filterwarnings("ignore::FutureWarning")


def _symmetric(lib):
    class Symmetric(lib.nn.Module):
        def forward(self, X):  # noqa: N803
            return X.triu() + X.triu(1).transpose(-1, -2)

    return Symmetric()


def _halves(lib):
    class Halves(lib.nn.Module):
        def forward(self, A, B):  # noqa: N803
            return A + B

        def right_inverse(self, X):  # noqa: N803
            return X / 3, X * 2 / 3

    return Halves()


def test_register_parametrization_values_grads_keys_repr():
    def run(lib):
        P = lib.nn.utils.parametrize
        m = lib.nn.Linear(3, 3).double()
        P.register_parametrization(m, "weight", _symmetric(lib))
        x = lib.arange(6.0, dtype=lib.float64).reshape(2, 3)
        m(x).pow(2).sum().backward()
        names = (type(m).__name__, P.type_before_parametrizations(m).__name__,
                 P.is_parametrized(m), P.is_parametrized(m, "weight"),
                 P.is_parametrized(m, "bias"), sorted(m.state_dict()),
                 [n for n, _ in m.named_parameters()], repr(m))
        return names, m.weight, m.parametrizations.weight.original.grad, m.bias.grad

    _same(*_both(run))


def test_chained_and_assignment_through_right_inverse():
    def run(lib):
        P = lib.nn.utils.parametrize
        m = lib.nn.Linear(3, 3).double()
        P.register_parametrization(m, "weight", _halves(lib))
        P.register_parametrization(m, "weight", _symmetric(lib))
        keys = sorted(m.state_dict())
        before = m.weight.clone()
        first = m.parametrizations.weight.original0
        with lib.no_grad():
            m.weight = lib.eye(3, dtype=lib.float64) * 2
        # NOTE: the chain's last member (Symmetric) has no right_inverse
        return keys, before, m.parametrizations.weight.original0 is first

    with pytest.raises(RuntimeError, match="parametrization Symmetric does not implement "
                                           "right_inverse"):
        _both(run)

    def run_assign(lib):
        P = lib.nn.utils.parametrize
        m = lib.nn.Linear(3, 2).double()
        P.register_parametrization(m, "weight", _halves(lib))
        orig = m.parametrizations.weight.original1
        m.weight = lib.ones(2, 3, dtype=lib.float64)
        return (sorted(m.state_dict()), m.weight, m.parametrizations.weight.original0,
                m.parametrizations.weight.original1 is orig,
                type(m.parametrizations.weight.original1).__name__)

    _same(*_both(run_assign))


def test_cached_and_remove_parametrizations():
    def run(lib):
        P = lib.nn.utils.parametrize
        m = lib.nn.Linear(3, 3).double()
        P.register_parametrization(m, "weight", _symmetric(lib))
        with P.cached():
            same = m.weight is m.weight
        fresh = m.weight is m.weight
        param = m.parametrizations.weight.original
        P.remove_parametrizations(m, "weight", leave_parametrized=True)
        kept = (type(m).__name__, sorted(m.state_dict()), m.weight is param, m.weight)
        n = lib.nn.Linear(2, 2).double()
        w = n.weight.clone()
        P.register_parametrization(n, "weight", _halves(lib))
        P.register_parametrization(n, "bias", lib.nn.Tanh())
        P.remove_parametrizations(n, "bias", leave_parametrized=False)
        P.remove_parametrizations(n, "weight")
        return same, fresh, kept, type(n).__name__, n.weight, w, n.bias

    _same(*_both(run))


@pytest.mark.parametrize("case", ["shape", "missing", "not_parametrized", "leave_sequence",
                                  "dtype", "unsafe_ok"])
def test_parametrize_errors(case):
    def run(lib):
        P = lib.nn.utils.parametrize
        m = lib.nn.Linear(3, 3)
        if case == "shape":
            P.register_parametrization(m, "weight", lib.nn.Linear(3, 2))
        elif case == "missing":
            P.register_parametrization(m, "nope", lib.nn.Identity())
        elif case == "not_parametrized":
            P.remove_parametrizations(m, "weight")
        elif case == "leave_sequence":
            P.register_parametrization(m, "weight", _halves(lib))
            P.remove_parametrizations(m, "weight", leave_parametrized=False)
        elif case == "dtype":
            class ToDouble(lib.nn.Module):
                def forward(self, X):  # noqa: N803
                    return X.double()
            P.register_parametrization(m, "weight", ToDouble())
        else:
            P.register_parametrization(m, "weight", lib.nn.Linear(3, 2), unsafe=True)
            raise RuntimeError(f"shape {list(m.weight.shape)}")

    t, g = _error(run)
    assert t[0] == g[0]
    if case != "missing":  # the message embeds the module's repr
        assert g[1] == t[1]


@pytest.mark.parametrize("orthogonal_map", ["matrix_exp", "cayley", "householder"])
@pytest.mark.parametrize("shape", [(4, 4), (5, 3), (3, 5), (2, 4, 3)])
def test_orthogonal_matches_torch(orthogonal_map, shape):
    def run(lib):
        class Holder(lib.nn.Module):
            def __init__(self):
                super().__init__()
                self.weight = lib.nn.Parameter(lib.randn(*shape, dtype=lib.float64))

        m = Holder()
        lib.nn.utils.parametrizations.orthogonal(m, orthogonal_map=orthogonal_map)
        w = m.weight
        (w.pow(3) * lib.arange(w.numel(), dtype=lib.float64).reshape(w.shape)).sum().backward()
        n = w.shape[-1] if w.shape[-2] >= w.shape[-1] else w.shape[-2]
        gram = w.mT @ w if w.shape[-2] >= w.shape[-1] else w @ w.mT
        wide = shape[-2] < shape[-1]
        tall = shape[:-2] + ((shape[-1], shape[-2]) if wide else shape[-2:])
        new = lib.linalg.qr(lib.randn(*tall, dtype=lib.float64))[0]
        new = new.mT if wide else new
        with lib.no_grad():
            m.weight = new
        return (w, m.parametrizations.weight.original.grad, sorted(m.state_dict()),
                gram - lib.eye(n, dtype=lib.float64), m.weight)

    t, g = _both(run)
    _same(t, g, atol=1e-9)
    assert float(abs(g[3]).max()) < 1e-10


def test_orthogonal_householder_without_trivialization_and_errors():
    def run(lib):
        m = lib.nn.Linear(3, 5).double()
        lib.nn.utils.parametrizations.orthogonal(m, use_trivialization=False)
        m.weight.sum().backward()
        return sorted(m.state_dict()), m.weight, m.parametrizations.weight.original.grad

    _same(*_both(run))
    assert _error(lambda lib: lib.nn.utils.parametrizations.orthogonal(
        lib.nn.Linear(3, 3), orthogonal_map="qr"))[0][0] == "ValueError"
    t, g = _error(lambda lib: lib.nn.utils.parametrizations.orthogonal(
        lib.nn.BatchNorm1d(3)))
    assert t == g
    t, g = _error(lambda lib: setattr(lib.nn.utils.parametrizations.orthogonal(
        lib.nn.Linear(3, 3), use_trivialization=False), "weight", lib.eye(3)))
    assert t == g


@pytest.mark.parametrize("module", ["linear", "conv_transpose", "conv_dim1"])
def test_spectral_norm_parametrization_train_eval(module):
    def run(lib):
        if module == "linear":
            m, x = lib.nn.Linear(4, 3), lib.randn(2, 4)
            lib.nn.utils.parametrizations.spectral_norm(m, n_power_iterations=2)
        elif module == "conv_transpose":
            m, x = lib.nn.ConvTranspose2d(3, 2, 2), lib.randn(1, 3, 3, 3)
            lib.nn.utils.parametrizations.spectral_norm(m)
        else:
            m, x = lib.nn.Conv1d(3, 4, 2), lib.randn(1, 3, 5)
            lib.nn.utils.parametrizations.spectral_norm(m, dim=1, eps=1e-6)
        m.double()
        x = x.double()
        outs = []
        for _ in range(3):
            y = m(x)
            y.pow(2).sum().backward()
            outs.append(y)
        m.eval()
        outs += [m(x), m(x)]
        sn = m.parametrizations.weight[0]
        return (sorted(m.state_dict()), repr(m), outs, sn._u, sn._v,
                m.parametrizations.weight.original.grad)

    t, g = _both(run)
    _same(t, g, atol=1e-9)


def test_spectral_norm_and_weight_norm_gradcheck():
    def f(lib, sn):
        lin = lib.nn.Linear(3, 4).double()
        if sn:
            lib.nn.utils.parametrizations.spectral_norm(lin).eval()
        else:
            lib.nn.utils.parametrizations.weight_norm(lin, dim=1)
        return lin

    for sn in (True, False):
        lin = f(glassgrad, sn)
        chain = lin.parametrizations.weight
        fn = chain[0]  # the parametrization itself, on fresh leaves for the originals
        ws = [p.detach().clone().requires_grad_() for p in chain.parameters()]
        assert glassgrad.autograd.gradcheck(fn, ws)
        assert glassgrad.autograd.gradgradcheck(fn, ws)


@pytest.mark.parametrize("dim", [0, 1, -1, None])
def test_weight_norm_parametrization(dim):
    def run(lib):
        m = lib.nn.Conv2d(2, 3, 2).double()
        lib.nn.utils.parametrizations.weight_norm(m, dim=dim)
        x = lib.randn(1, 2, 3, 3, dtype=lib.float64)
        y = m(x)
        y.pow(2).sum().backward()
        wn = m.parametrizations.weight
        return (sorted(m.state_dict()), repr(m), y, wn.original0, wn.original0.grad,
                wn.original1.grad)

    _same(*_both(run))


def test_hook_weight_norm_and_remove():
    def run(lib):
        m = lib.nn.Linear(3, 4).double()
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            lib.nn.utils.weight_norm(m, dim=1)
        x = lib.randn(2, 3, dtype=lib.float64)
        y = m(x)
        y.sum().backward()
        out = (caught[0].category.__name__, str(caught[0].message), sorted(m.state_dict()),
               y, m.weight_g.grad, m.weight_v.grad)
        lib.nn.utils.remove_weight_norm(m)
        return out, sorted(m.state_dict()), type(m.weight).__name__, m(x)

    _same(*_both(run))
    t, g = _error(lambda lib: lib.nn.utils.weight_norm(lib.nn.utils.weight_norm(
        lib.nn.Linear(2, 2))))
    assert t == g
    t, g = _error(lambda lib: lib.nn.utils.remove_weight_norm(lib.nn.Linear(2, 2)))
    assert t[0] == g[0] == "ValueError"


@pytest.mark.parametrize("cls", ["Linear", "ConvTranspose1d"])
def test_hook_spectral_norm_train_eval_remove(cls):
    def run(lib):
        if cls == "Linear":
            m, x = lib.nn.Linear(4, 3), lib.randn(2, 4)
        else:
            m, x = lib.nn.ConvTranspose1d(3, 2, 2), lib.randn(1, 3, 4)
        lib.nn.utils.spectral_norm(m, n_power_iterations=2)
        m.double()
        x = x.double()
        outs = []
        for _ in range(2):
            y = m(x)
            y.pow(2).sum().backward()
            outs.append(y)
        m.eval()
        outs.append(m(x))
        keys = sorted(m.state_dict())
        u, v, grad = m.weight_u.clone(), m.weight_v.clone(), m.weight_orig.grad
        lib.nn.utils.remove_spectral_norm(m)
        return keys, outs, u, v, grad, sorted(m.state_dict()), m(x)

    _same(*_both(run), atol=1e-9)
    t, g = _error(lambda lib: lib.nn.utils.spectral_norm(lib.nn.utils.spectral_norm(
        lib.nn.Linear(2, 2))))
    assert t == g


def test_checkpoint_compatibility_hooks():
    def run(lib):
        old = lib.nn.utils.weight_norm(lib.nn.Linear(3, 4).double())
        new = lib.nn.utils.parametrizations.weight_norm(lib.nn.Linear(3, 4).double())
        result = new.load_state_dict(old.state_dict())
        sn = lib.nn.utils.spectral_norm(lib.nn.Linear(3, 5).double())
        x = lib.randn(2, 3, dtype=lib.float64)
        for _ in range(3):
            sn(x)
        sd = sn.state_dict()
        metadata = dict(sd._metadata[""])
        v = sd["weight_v"].clone()
        del sd._metadata[""]["spectral_norm"], sd["weight_v"]  # the format before version 1
        sd["weight"] = sn.weight.detach().clone()
        sn.load_state_dict(sd)
        solved = sn.weight_v.clone()
        lib.nn.utils.remove_spectral_norm(sn)
        return (sorted(result.missing_keys), new.weight, old.weight, metadata, v, solved,
                len(sn._state_dict_hooks))

    _same(*_both(run), atol=1e-8)
    # NOTE: torch's remove_spectral_norm misses its own (wrapped) load pre-hook, so a plain
    # Linear state_dict then fails to load there ("Missing key(s) ... weight_orig"); glassgrad
    # removes it
    sn = glassgrad.nn.utils.spectral_norm(glassgrad.nn.Linear(3, 5))
    glassgrad.nn.utils.remove_spectral_norm(sn)
    assert not sn._load_state_dict_pre_hooks
    sn.load_state_dict(glassgrad.nn.Linear(3, 5).state_dict())
