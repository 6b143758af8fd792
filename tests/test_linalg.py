"""torch.linalg and the top-level linear-algebra names, beyond the op table: errors (type and
torch's key phrase), LinAlgError and the ``info`` of the ``_ex`` variants, named-tuple fields,
``out=``, gradients at repeated eigenvalues and singular matrices, the removed names."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import glassgrad
from tests.oracle import assert_close


def _t(m, a, **kw):
    return m.tensor(np.asarray(a, dtype=np.float64), **kw)


def _singular(m):
    s = np.zeros((2, 3, 3))
    s[:, 0, 0] = s[:, 1, 1] = 1
    s[0, 2, 2] = 1
    return _t(m, s)


def _not_pd(m):
    return _t(m, np.stack([np.eye(3), np.diag([1.0, -1.0, 1.0])]))


def _r(m, *shape, dtype=None):
    t = m.from_numpy(np.random.default_rng(0).standard_normal(shape))
    return t if dtype is None else t.to(dtype)


_SPD_LEAF = {}


def _spd(m, requires_grad=False):
    a = np.random.default_rng(1).standard_normal((6, 6))
    x = _t(m, a @ a.T + 6 * np.eye(6), requires_grad=requires_grad)
    _SPD_LEAF[m.__name__] = x
    return x


_long = lambda m: m.ones(3, 3, dtype=m.int64)  # noqa: E731

CASES = [
    ("inv non-square", lambda m, L: L.inv(_r(m, 2, 3))),
    ("inv int", lambda m, L: L.inv(_long(m))),
    ("inv 1-D", lambda m, L: L.inv(_r(m, 3))),
    ("inv singular", lambda m, L: L.inv(_singular(m))),
    ("inv_ex check_errors", lambda m, L: L.inv_ex(_singular(m), check_errors=True)),
    ("det non-square", lambda m, L: L.det(_r(m, 2, 3))),
    ("det int", lambda m, L: L.det(_long(m))),
    ("cholesky not pd", lambda m, L: L.cholesky(_not_pd(m))),
    ("cholesky int", lambda m, L: L.cholesky(_long(m))),
    ("cholesky non-square", lambda m, L: L.cholesky(_r(m, 2, 3))),
    ("solve singular", lambda m, L: L.solve(_singular(m), _r(m, 3))),
    ("solve shapes", lambda m, L: L.solve(_r(m, 3, 3), _r(m, 4))),
    ("solve dtypes", lambda m, L: L.solve(_r(m, 3, 3), _r(m, 3, dtype=m.float32))),
    ("solve vector rule", lambda m, L: L.solve(_r(m, 3, 3), _r(m, 2, 3))),
    ("solve_triangular upper", lambda m, L: L.solve_triangular(_r(m, 3, 3), _r(m, 3, 1))),
    ("solve_triangular shapes",
     lambda m, L: L.solve_triangular(_r(m, 3, 3), _r(m, 4, 2), upper=True)),
    ("eigh non-square", lambda m, L: L.eigh(_r(m, 2, 3))),
    ("eigh int", lambda m, L: L.eigh(_long(m))),
    ("eigh UPLO", lambda m, L: L.eigh(_r(m, 3, 3), UPLO="X")),
    ("slogdet non-square", lambda m, L: L.slogdet(_r(m, 2, 3))),
    ("svd int", lambda m, L: L.svd(_long(m))),
    ("vector_norm int", lambda m, L: L.vector_norm(_long(m))),
    ("vector_norm ord str", lambda m, L: L.vector_norm(_r(m, 3), ord="fro")),
    ("vector_norm narrowing", lambda m, L: L.vector_norm(_r(m, 3), dtype=m.float32)),
    ("vector_norm int dtype", lambda m, L: L.vector_norm(_r(m, 3), dtype=m.int64)),
    ("vector_norm inf empty", lambda m, L: L.vector_norm(_r(m, 0, 3), float("inf"))),
    ("matrix_norm 1-D", lambda m, L: L.matrix_norm(_r(m, 3))),
    ("matrix_norm ord", lambda m, L: L.matrix_norm(_r(m, 2, 3), ord=3)),
    ("matrix_norm dim", lambda m, L: L.matrix_norm(_r(m, 2, 3), dim=0)),
    ("norm 3-D with ord", lambda m, L: L.norm(_r(m, 2, 3, 4), 2)),
    ("norm dims", lambda m, L: L.norm(_r(m, 2, 3, 4), dim=(0, 1, 2))),
    ("cond non-square", lambda m, L: L.cond(_r(m, 2, 3), "fro")),
    ("vecdot dtypes", lambda m, L: L.vecdot(_r(m, 3), _r(m, 3, dtype=m.float32))),
    ("logdet int", lambda m, L: m.logdet(_long(m))),
    ("out= under autograd", lambda m, L: L.eigh(_r(m, 2, 2).requires_grad_(),
                                               out=(m.empty(0), m.empty(0)))),
    ("symeig", lambda m, L: m.symeig(_r(m, 3, 3))),
    ("eig", lambda m, L: m.eig(_r(m, 3, 3))),
    ("lstsq", lambda m, L: m.lstsq(_r(m, 3, 3), _r(m, 3, 3))),
    ("solve top", lambda m, L: m.solve(_r(m, 3, 3), _r(m, 3, 3))),
    ("matrix_rank top", lambda m, L: m.matrix_rank(_r(m, 3, 3))),
    ("Tensor.symeig", lambda m, L: _r(m, 3, 3).symeig()),
]


def _raise(fn, lib):
    with pytest.raises(Exception) as info:
        fn(lib, lib.linalg)
    return info.value


@pytest.mark.parametrize("fn", [pytest.param(f, id=i) for i, f in CASES])
def test_error_matches_torch(fn):
    theirs, ours = _raise(fn, torch), _raise(fn, glassgrad)
    name = type(theirs).__name__.lstrip("_")  # torch's LinAlgError is torch._C._LinAlgError
    assert type(ours).__name__ == name and isinstance(ours, type(theirs).__mro__[1]), (
        f"glassgrad raised {ours!r}, torch {theirs!r}")
    phrase = str(theirs).split(" (Triggered internally")[0].splitlines()[0]
    assert phrase in str(ours), f"torch's phrase {phrase!r} missing from {str(ours)!r}"


def test_linalg_error_is_runtime_error():
    assert issubclass(glassgrad.linalg.LinAlgError, RuntimeError)
    assert glassgrad.linalg.LinAlgError.__name__ == "LinAlgError"


@pytest.mark.parametrize("op", ["inv_ex", "cholesky_ex", "solve_ex"])
def test_ex_info_matches_torch(op):
    results = []
    for m in (torch, glassgrad):
        a = _not_pd(m) if op == "cholesky_ex" else _singular(m)
        args = (a, _t(m, np.ones((2, 3)))) if op == "solve_ex" else (a,)
        results.append(getattr(m.linalg, op)(*args))
    theirs, ours = results
    assert all(hasattr(theirs, f) for f in ours._fields) and len(ours) == len(theirs)
    assert str(ours.info.dtype) == "glassgrad.int32"
    assert ours.info.tolist() == theirs.info.tolist()
    ok = 1 if op == "cholesky_ex" else 0  # the matrix that succeeded gets the same values
    assert_close(ours[0][ok], theirs[0][ok])


def test_named_tuple_fields():
    a = _t(glassgrad, np.eye(2) * 2)
    L = glassgrad.linalg
    assert L.slogdet(a)._fields == ("sign", "logabsdet")
    assert L.eigh(a)._fields == ("eigenvalues", "eigenvectors")
    assert L.svd(a)._fields == ("U", "S", "Vh")
    assert L.inv_ex(a)._fields == ("inverse", "info")
    assert L.cholesky_ex(a)._fields == ("L", "info")
    assert glassgrad.slogdet(a)._fields == ("sign", "logabsdet")


def test_out_argument():
    for m in (torch, glassgrad):
        out = m.empty(0, dtype=m.float64)
        res = m.linalg.inv(_t(m, [[2.0, 0.0], [0.0, 4.0]]), out=out)
        assert res is out and out.tolist() == [[0.5, 0.0], [0.0, 0.25]]


def _grad(m, fn, a):
    x = _t(m, a, requires_grad=True)
    return m.autograd.grad(fn(m, x), x)[0]


def test_eigh_repeated_eigenvalues_gradient_blows_up_like_torch():
    # NOTE [Spectral gradients]: eigenvector gradients divide by the gaps; eigenvalue ones do not
    q, _ = np.linalg.qr(np.random.default_rng(0).standard_normal((3, 3)))
    a = q @ np.diag([1.0, 1.0, 2.0]) @ q.T
    for m in (torch, glassgrad):
        g = _grad(m, lambda m, x: m.linalg.eigh(x)[1].sum(), a).numpy()
        assert not np.isfinite(g).all() or np.abs(g).max() > 1e8
        g = _grad(m, lambda m, x: m.linalg.eigvalsh(x).sum(), a).numpy()
        np.testing.assert_allclose(g, np.eye(3), atol=1e-8)


def test_slogdet_of_singular_matrix():
    for m in (torch, glassgrad):
        sign, logabsdet = m.linalg.slogdet(_t(m, np.zeros((3, 3))))
        assert sign.item() == 0 and logabsdet.item() == -np.inf
        g = _grad(m, lambda m, x: m.linalg.slogdet(x)[1], np.zeros((3, 3))).numpy()
        assert not np.isfinite(g).any()


def test_vector_norm_gradient_at_zero_is_zero():
    for m in (torch, glassgrad):
        for ord in (2, 3.0, 1.5):
            g = _grad(m, lambda m, x: m.linalg.vector_norm(x, ord), np.zeros(3)).numpy()
            assert (g == 0).all()


def test_cholesky_warns_once_like_torch():
    import warnings

    glassgrad._linalg_top._warned.discard("cholesky")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        glassgrad.cholesky(_t(glassgrad, np.eye(2)))
        glassgrad.cholesky(_t(glassgrad, np.eye(2)))
    assert len(caught) == 1 and "torch.cholesky is deprecated" in str(caught[0].message)


def _wide(m):
    return _r(m, 2, 3).requires_grad_()


def _backward_error(m, fn):
    x = _t(m, [[1.0, 2.0], [-3.0, 1.0], [0.5, 0.0], [0.0, 2.0]], requires_grad=True)
    out = fn(m, x)
    m.autograd.grad(out.sum(), x)


BACKWARD_CASES = [
    ("qr mode r", lambda m, x: m.linalg.qr(x, mode="r").R),
    ("qr complete tall", lambda m, x: m.linalg.qr(x, mode="complete").Q),
    ("eig phase-dependent loss", lambda m, x: m.linalg.eig(x[:2])[1].real),
]

CASES2 = [
    ("lu_factor singular", lambda m, L: L.lu_factor(m.zeros(2, 2, dtype=m.float64))),
    ("lu int", lambda m, L: L.lu(_long(m))),
    ("lstsq driver", lambda m, L: L.lstsq(_r(m, 3, 2), _r(m, 3, 1), driver="x")),
    ("lstsq rows", lambda m, L: L.lstsq(_r(m, 3, 3), _r(m, 4, 2))),
    ("multi_dot one", lambda m, L: L.multi_dot([_r(m, 3, 3)])),
    ("multi_dot 3-D", lambda m, L: L.multi_dot([_r(m, 3, 3), _r(m, 3, 3, 3)])),
    ("multi_dot dtypes", lambda m, L: L.multi_dot([_r(m, 3, 3), _r(m, 3, 3, dtype=m.float32)])),
    ("householder wide", lambda m, L: L.householder_product(_r(m, 2, 3), _r(m, 1))),
    ("householder tau", lambda m, L: L.householder_product(_r(m, 3, 2), _r(m, 3))),
    ("tensorinv ind", lambda m, L: L.tensorinv(_r(m, 4, 6, 8, 3), ind=0)),
    ("tensorsolve shapes", lambda m, L: L.tensorsolve(_r(m, 2, 3, 6), _r(m, 3, 3))),
    ("vander N", lambda m, L: L.vander(_r(m, 3), N=1)),
    ("qr mode", lambda m, L: L.qr(_r(m, 3, 3), mode="x")),
    ("matrix_exp non-square", lambda m, L: L.matrix_exp(_r(m, 2, 3))),
    ("matrix_power non-square", lambda m, L: L.matrix_power(_r(m, 2, 3), 2)),
    ("pinv int", lambda m, L: L.pinv(_long(m))),
    ("lu_unpack pivots dtype", lambda m, L: m.lu_unpack(_r(m, 3, 3), m.ones(3, dtype=m.int64))),
    ("top vander 2-D", lambda m, L: m.vander(_r(m, 2, 2))),
    ("lobpcg m < 3n", lambda m, L: m.lobpcg(_r(m, 4, 4), k=2)),
    ("lobpcg backward with B", lambda m, L: m.autograd.grad(m.lobpcg(
        _spd(m, requires_grad=True), k=1, B=2 * m.eye(6, dtype=m.float64))[0].sum(),
        _SPD_LEAF[m.__name__])),
    ("pca_lowrank q", lambda m, L: m.pca_lowrank(_r(m, 3, 4), q=9)),
    ("pca_lowrank niter", lambda m, L: m.pca_lowrank(_r(m, 3, 4), niter=-1)),
]


@pytest.mark.parametrize("fn", [pytest.param(f, id=i) for i, f in CASES2])
def test_more_errors_match_torch(fn):
    test_error_matches_torch(fn)


@pytest.mark.parametrize("fn", [pytest.param(f, id=i) for i, f in BACKWARD_CASES])
def test_backward_errors_match_torch(fn):
    test_error_matches_torch(lambda m, L: _backward_error(m, fn))


def test_complex_input_where_unsupported_is_refused():
    z = glassgrad.complex(_r(glassgrad, 3, 3), _r(glassgrad, 3, 3))
    with pytest.raises(RuntimeError, match="glassgrad: torch.linalg.ldl_factor_ex supports"):
        glassgrad.linalg.ldl_factor(z)


def test_common_notes_keys_match_torch():
    assert set(glassgrad.linalg.common_notes) == set(torch.linalg.common_notes)


def test_lu_pivots_and_lu_solve_match_torch():
    a = np.random.default_rng(3).standard_normal((2, 4, 4))
    t_lu, t_piv = torch.linalg.lu_factor(torch.tensor(a))
    g_lu, g_piv = glassgrad.linalg.lu_factor(glassgrad.tensor(a))
    assert g_piv.dtype == glassgrad.int32 and g_piv.tolist() == t_piv.tolist()
    assert_close(g_lu, t_lu)


def test_top_level_addmv_in_place():
    results = []
    for m in (torch, glassgrad):
        x = _r(m, 2)
        res = m.addmv_(x, _r(m, 2, 3), _r(m, 3), beta=0.5, alpha=2.0)
        assert res is x
        results.append(x)
    assert_close(results[1], results[0])


@pytest.mark.parametrize("op", ["svd", "eigh"])
def test_complex_phase_dependent_loss_is_refused_like_torch(op):
    errors = []
    for m in (torch, glassgrad):
        a = _r(m, 3, 3).requires_grad_()
        z = m.complex(a, a.mT * 0.5)
        if op == "svd":
            out = m.linalg.svd(z)[0]
        else:
            out = m.linalg.eigh(z + z.mH)[1]
        with pytest.raises(RuntimeError) as info:
            m.autograd.grad(out.real.sum(), a)
        errors.append(str(info.value))
    assert errors[0].split(".")[0] in errors[1]
