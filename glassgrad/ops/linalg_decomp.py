"""Spectral decompositions: ``Eigh`` and ``Svd`` (``torch.linalg.eigh``/``eigvalsh``/``svd``/
``svdvals``), on NumPy's batched LAPACK gufuncs.

NOTE [Spectral gradients]: both backwards divide by eigenvalue (squared singular value) gaps,
``E_ij = l_j - l_i``: at a repeated eigenvalue the gradient of the eigenvectors is ill-defined and
comes out inf/NaN, as in PyTorch (which documents this and does not raise for real inputs).
Gradients of the eigenvalues/singular values alone (``eigvalsh``, ``svdvals``) stay finite there.
"""

from __future__ import annotations

import numpy as np

from . import primitive
from ._linalg_check import (check_float, check_matrix, plain_arrays, result_type, svd_finite,
                            write_out)
from .primitive import Primitive


def _gaps(values):
    """``E_ij = values_j - values_i`` with ones on the diagonal (the diagonal is never divided)."""
    n = values._array.shape[-1]
    return values.unsqueeze(-2) - values.unsqueeze(-1) + primitive._make(
        np.eye(n, dtype=values._array.dtype))


class Eigh(Primitive):
    """``(L, V)``: ascending eigenvalues and orthonormal eigenvectors of a symmetric matrix (its
    ``UPLO`` triangle read); the gradient is ``V (skew(V^T gV) / E + diag(gL)) V^T``."""

    node_name = "LinalgEighBackward0"
    multi_output = True
    saves = ("result", "result1")

    @staticmethod
    def forward(xp, x, *, uplo):
        plain_arrays(x)  # NOTE [Linalg under vmap] in ops/_linalg_check.py
        values, vectors = xp.linalg.eigh(x, UPLO=uplo)
        return values, vectors

    @staticmethod
    def backward(grads, values, vectors, *, uplo):
        grad_values, grad_vectors = grads
        if grad_vectors is None:
            inner = grad_values.diag_embed()
        else:
            vtgv = vectors.mH @ grad_vectors
            if vtgv._array.dtype.kind == "c" and not np.allclose(
                    np.diagonal(vtgv._array, 0, -2, -1).imag, 0, rtol=1e-2, atol=1e-2):
                raise RuntimeError(_GAUGE.replace("linalg_eig_backward", "linalg_eigh_backward"))
            inner = 0.5 * (vtgv - vtgv.mH) / _gaps(values)  # NOTE [Spectral gradients]
            if grad_values is not None:
                inner = inner + grad_values.diag_embed()
        if inner._array.dtype != vectors._array.dtype:  # real eigenvalue grads, complex vectors
            inner = inner.to(vectors.dtype)
        return (vectors @ inner @ vectors.mH,)


EighResult = result_type("linalg_eigh", "eigenvalues eigenvectors")


def _check_uplo(UPLO):
    if UPLO not in ("L", "U", "l", "u"):
        raise RuntimeError(f"Expected UPLO argument to be 'L' or 'U', but got {UPLO}")
    return UPLO.upper()


def _check_spectral(op, A, kernel):
    check_matrix(op, A, floating=False)
    if A._array.dtype.kind not in "fc":
        from ._names import scalar_type

        raise NotImplementedError(f'"{kernel}" not implemented for \'{scalar_type(A.dtype)}\'')
    check_float(op, A)


def eigh(A, UPLO="L", *, out=None):
    """Eigen-decomposition of symmetric matrices ``A (..., n, n)`` -> ``(eigenvalues (..., n)
    ascending, eigenvectors (..., n, n))`` (``torch.linalg.eigh``); only the ``UPLO`` triangle is
    read. Eigenvectors are unique up to sign; see NOTE [Spectral gradients]."""
    uplo = _check_uplo(UPLO)
    _check_spectral("linalg.eigh", A, "linalg_eigh_cpu")
    return write_out(EighResult(*Eigh.apply(A, uplo=uplo)), out, "_linalg_eigh")


def eigvalsh(A, UPLO="L", *, out=None):
    """The ascending eigenvalues of symmetric matrices (``torch.linalg.eigvalsh``)."""
    uplo = _check_uplo(UPLO)
    _check_spectral("linalg.eigvalsh", A, "linalg_eigh_cpu")
    return write_out(Eigh.apply(A, uplo=uplo)[0], out, "linalg_eigvalsh")


class Svd(Primitive):
    """``(U, S, Vh)`` with ``A = U diag(S) Vh``, ``S`` descending; ``full_matrices`` gives square
    ``U``/``Vh`` whose extra columns/rows get no gradient (PyTorch narrows them too)."""

    node_name = "LinalgSvdBackward0"
    multi_output = True
    saves = ("result", "result1", "result2")

    @staticmethod
    def forward(xp, x, *, full_matrices):
        plain_arrays(x)  # NOTE [Linalg under vmap] in ops/_linalg_check.py
        m, n = x.shape[-2:]
        if x.size == 0:
            k = min(m, n)
            batch = x.shape[:-2]
            u = xp.zeros(batch + (m, m if full_matrices else k), x.dtype)
            vh = xp.zeros(batch + (n if full_matrices else k, n), x.dtype)
            if full_matrices:
                u[..., range(m), range(m)] = 1
                vh[..., range(n), range(n)] = 1
            return u, xp.zeros(batch + (k,), x.dtype), vh
        svd_finite(x)
        u, s, vh = xp.linalg.svd(x, full_matrices=full_matrices)
        return u, s, vh

    @staticmethod
    def backward(grads, u, s, vh, *, full_matrices):
        grad_u, grad_s, grad_vh = grads
        k = s._array.shape[-1]
        if full_matrices:
            u, vh = u[..., :k], vh[..., :k, :]
            grad_u = None if grad_u is None else grad_u[..., :k]
            grad_vh = None if grad_vh is None else grad_vh[..., :k, :]
        return (svd_backward(grad_u, grad_s, grad_vh, u, s, vh),)


def svd_backward(grad_u, grad_s, grad_vh, u, s, vh):
    """The gradient of ``A = U diag(S) Vh`` (reduced): the gap-divided skew parts inside, the
    projections off U's and V's spans for non-square ``A``; for complex ``A`` also the phase term
    ``i Im(diag(U^H gU)) / S``, after PyTorch's check that the loss ignores the phases."""
    m, n = u._array.shape[-2], vh._array.shape[-1]
    if grad_u is None and grad_vh is None:
        return (u * grad_s.unsqueeze(-2)) @ vh
    s2 = s * s
    inner = 0
    utgu = vtgv = None
    if grad_u is not None:
        utgu = u.mH @ grad_u
        inner = (utgu - utgu.mH) * s.unsqueeze(-2)
    if grad_vh is not None:
        vtgv = vh @ grad_vh.mH
        inner = inner + s.unsqueeze(-1) * (vtgv - vtgv.mH)
    inner = inner / _gaps(s2)  # NOTE [Spectral gradients]
    if u._array.dtype.kind == "c":
        inner = inner + _svd_phase_term(utgu, vtgv, s)
    if grad_s is not None:
        inner = inner + grad_s.diag_embed()
    if m > n and grad_u is not None:
        grad_u_sinv = grad_u / s.unsqueeze(-2)
        return (u @ inner + grad_u_sinv - u @ (u.mH @ grad_u_sinv)) @ vh
    if n > m and grad_vh is not None:
        grad_vh_sinv = grad_vh / s.unsqueeze(-1)
        return u @ (inner @ vh + grad_vh_sinv - (grad_vh_sinv @ vh.mH) @ vh)
    return u @ inner @ vh


def _svd_phase_term(utgu, vtgv, s):
    imag_u = 0 if utgu is None else np.diagonal(utgu._array, 0, -2, -1).imag
    imag_v = 0 if vtgv is None else np.diagonal(vtgv._array, 0, -2, -1).imag
    if not np.allclose(imag_u, -np.asarray(imag_v), rtol=1e-2, atol=1e-2):
        raise RuntimeError(
            "svd_backward: The singular vectors in the complex case are specified up to "
            "multiplication by e^{i phi}. The specified loss function depends on this phase, so "
            "it is ill-defined.")
    if utgu is None:
        return 0
    diag = utgu.diagonal(0, -2, -1)
    return (0.5 * (diag - diag.conj()) / s).diag_embed()


SvdResult = result_type("linalg_svd", "U S Vh")


def svd(A, full_matrices=True, *, driver=None, out=None):
    """Singular value decomposition ``A = U diag(S) Vh`` of ``A (..., m, n)`` (``torch.linalg.svd``):
    ``U (..., m, m or k)``, ``S (..., k)`` descending, ``Vh (..., n or k, n)``, ``k = min(m, n)``.
    Singular vectors are unique up to sign; see NOTE [Spectral gradients]."""
    check_matrix("linalg.svd", A, square=False)
    if driver is not None:
        raise RuntimeError("torch.linalg.svd: keyword argument `driver=` is only supported on "
                           "CUDA inputs with cuSOLVER backend.")
    res = SvdResult(*Svd.apply(A, full_matrices=bool(full_matrices)))
    return write_out(res, out, "linalg_svd")


def svdvals(A, *, driver=None, out=None):
    """The singular values of ``A (..., m, n)``, descending (``torch.linalg.svdvals``); their
    gradient ``U diag(gS) Vh`` is finite at repeated values."""
    check_matrix("linalg.svdvals", A, square=False)
    check_float("linalg.svdvals", A)
    return write_out(Svd.apply(A, full_matrices=False)[1], out, "linalg_svdvals")


_GAUGE = ("linalg_eig_backward: The eigenvectors in the complex case are specified up to "
          "multiplication by e^{i phi}. The specified loss function depends on this quantity, so "
          "it is ill-defined.")


class Eig(Primitive):
    """``(L, V)``: complex eigenvalues and unit-norm eigenvectors (LAPACK geev) of a general
    square matrix; the gradient is ``V^-H (diag(gL) + P(V^H gV) / conj(E)) V^H`` with ``P`` the
    projection that removes the (gauge) real part of each column's component, and a loss that
    depends on the eigenvectors' phases is refused as in PyTorch."""

    node_name = "LinalgEigBackward0"
    multi_output = True
    saves = ("x", "result", "result1")

    @staticmethod
    def forward(xp, x):
        plain_arrays(x)  # NOTE [Linalg under vmap] in ops/_linalg_check.py
        ct = np.result_type(x.dtype, np.complex64)
        values, vectors = xp.linalg.eig(x)
        return values.astype(ct, copy=False), vectors.astype(ct, copy=False)

    @staticmethod
    def backward(grads, x, values, vectors):
        from .linalg_solve import Solve

        grad_values, grad_vectors = grads
        vh = vectors.mH
        if grad_vectors is None:
            inner = grad_values.diag_embed()
        else:
            vhgv = vh @ grad_vectors
            diag = np.diagonal(vhgv._array, 0, -2, -1)
            if not np.allclose(diag.imag, 0, rtol=1e-2, atol=1e-2):
                raise RuntimeError(_GAUGE)
            vhgv = vhgv - vh @ (vectors * vhgv.diagonal(0, -2, -1).real.unsqueeze(-2))
            inner = vhgv / _gaps(values.conj())
            eye = primitive._make(np.eye(values._array.shape[-1], dtype=bool))
            from .elementwise import where

            fill = grad_values.diag_embed() if grad_values is not None else inner * 0
            inner = where(eye, fill, inner)
        grad_x = Solve.apply(vh, inner @ vh)
        return (grad_x.real if x._array.dtype.kind != "c" else grad_x,)


EigResult = result_type("linalg_eig", "eigenvalues eigenvectors")


def eig(A, *, out=None):
    """Eigen-decomposition of square ``A (..., n, n)`` -> complex ``(eigenvalues (..., n),
    eigenvectors (..., n, n))`` (``torch.linalg.eig``; float32 -> complex64, float64 ->
    complex128); eigenvectors have unit norm and are unique up to a phase."""
    check_matrix("linalg.eig", A)
    return write_out(EigResult(*Eig.apply(A)), out, "linalg_eig")


def eigvals(A, *, out=None):
    """The complex eigenvalues of square ``A`` (``torch.linalg.eigvals``)."""
    check_matrix("linalg.eigvals", A)
    return write_out(Eig.apply(A)[0], out, "linalg_eigvals")
