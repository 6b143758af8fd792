"""Ready-made parametrizations: ``orthogonal``, ``spectral_norm``, ``weight_norm``
(``torch.nn.utils.parametrizations``), built on ``parametrize.register_parametrization``.

The parametrization modules keep PyTorch's names (``_Orthogonal``, ``_SpectralNorm``,
``_WeightNorm``) because they show in ``repr`` and their buffers (``_u``, ``_v``, ``base``) in
``state_dict`` keys such as ``parametrizations.weight.0._u``.
"""

from __future__ import annotations

from enum import Enum, auto

import glassgrad as _gg  # NOTE: the partly built package at import time; read only at call time

from ...autograd.grad_mode import no_grad
from ...tensor import Tensor
from .. import functional as F
from ..module import Module
from . import parametrize
from .spectral_norm import _output_dim
from .weight_norm import _weight_norm

__all__ = ["orthogonal", "spectral_norm", "weight_norm"]


def _is_orthogonal(q: Tensor) -> bool:
    n, k = q.size(-2), q.size(-1)
    eye = _gg.eye(k, dtype=q.dtype)
    return _gg.allclose(q.mH @ q, eye, atol=10.0 * n * _gg.finfo(q.dtype).eps)


def _make_orthogonal(a: Tensor) -> Tensor:
    """The Q of a = QR (a tall) with diag(R) made non-negative, so the factor is unique."""
    x, tau = _gg.geqrf(a)
    q = _gg.linalg.householder_product(x, tau)
    return q * x.diagonal(dim1=-2, dim2=-1).sgn().unsqueeze(-2)


class _OrthMaps(Enum):
    matrix_exp = auto()
    cayley = auto()
    householder = auto()


class _Orthogonal(Module):
    """Maps any matrix (or batch) to one with orthonormal columns (rows when wide) through
    ``orthogonal_map``; with ``use_trivialization`` the result is ``base @ Q``, ``base`` a buffer
    that assignment resets."""

    def __init__(self, weight: Tensor, orthogonal_map: _OrthMaps, *,
                 use_trivialization: bool = True) -> None:
        super().__init__()
        if weight.is_complex() and orthogonal_map == _OrthMaps.householder:
            raise ValueError("The householder parametrization does not support complex tensors.")
        self.shape = weight.shape
        self.orthogonal_map = orthogonal_map
        if use_trivialization:
            self.register_buffer("base", None)

    def forward(self, X: Tensor) -> Tensor:  # noqa: N803 - PyTorch's argument name
        n, k = X.size(-2), X.size(-1)
        transposed = n < k
        if transposed:
            X = X.mT  # noqa: N806
            n, k = k, n
        if self.orthogonal_map in (_OrthMaps.matrix_exp, _OrthMaps.cayley):
            X = X.tril()  # noqa: N806
            if n != k:
                pad = X.new_zeros(n, n - k).expand(*X.shape[:-2], -1, -1)
                X = _gg.cat([X, pad], dim=-1)  # noqa: N806
            a = X - X.mH
            if self.orthogonal_map == _OrthMaps.matrix_exp:
                q = _gg.matrix_exp(a)
            else:
                eye = _gg.eye(n, dtype=a.dtype)
                q = _gg.linalg.solve(eye - 0.5 * a, eye + 0.5 * a)
            if n != k:
                q = q[..., :k]
        else:
            a = X.tril(diagonal=-1)
            tau = 2.0 / (1.0 + (a * a).sum(dim=-2))
            q = _gg.linalg.householder_product(a, tau)
            # NOTE: right_inverse stores +-1 on the diagonal to pick each reflector's sign
            q = q * X.diagonal(dim1=-2, dim2=-1).int().unsqueeze(-2)
        if "base" in self._buffers:
            q = self.base @ q
        return q.mT if transposed else q

    def right_inverse(self, Q: Tensor) -> Tensor:  # noqa: N803 - PyTorch's argument name
        with no_grad():
            return self._right_inverse(Q)

    def _right_inverse(self, q: Tensor) -> Tensor:
        if q.shape != self.shape:
            raise ValueError(f"Expected a matrix or batch of matrices of shape {self.shape}. "
                             f"Got a tensor of shape {q.shape}.")
        q_init = q
        n, k = q.size(-2), q.size(-1)
        transpose = n < k
        if transpose:
            q = q.mT
            n, k = k, n
        if "base" not in self._buffers:
            if self.orthogonal_map in (_OrthMaps.matrix_exp, _OrthMaps.cayley):
                raise NotImplementedError(
                    "It is not possible to assign to the matrix exponential or the Cayley "
                    "parametrizations when use_trivialization=False.")
            a, tau = _gg.geqrf(q)
            diag = a.diagonal(dim1=-2, dim2=-1)
            diag.sign_()
            diag[tau == 0.0] *= -1
            return a.mT if transpose else a
        if n == k:
            q = q.clone() if _is_orthogonal(q) else _make_orthogonal(q)
        else:
            fill = _gg.randn(*(q.size()[:-2] + (n, n - k)), dtype=q.dtype)
            q = _make_orthogonal(_gg.cat([q, fill], dim=-1))
        self.base = q
        # forward(-I) is the identity for every map, so the weight becomes base itself
        neg_eye = _gg.zeros_like(q_init)
        neg_eye.diagonal(dim1=-2, dim2=-1).fill_(-1.0)
        return neg_eye


def orthogonal(module: Module, name: str = "weight", orthogonal_map: str | None = None, *,
               use_trivialization: bool = True) -> Module:
    """Parametrize ``module.<name>`` (a matrix or batch ``(..., m, n)``) to have orthonormal
    columns (rows when m < n) (``torch.nn.utils.parametrizations.orthogonal``).

    ``orthogonal_map``: ``"matrix_exp"`` (default for square or complex), ``"cayley"`` or
    ``"householder"`` (default otherwise). With ``use_trivialization`` (default) a buffer
    ``parametrizations.<name>[0].base`` holds the current orthogonal point and the weight starts
    as the original orthogonalised by QR. ValueError for a missing tensor, fewer than 2 dims or
    an unknown map. Returns ``module``.
    """
    weight = getattr(module, name, None)
    if not isinstance(weight, Tensor):
        raise ValueError(f"Module '{module}' has no parameter or buffer with name '{name}'")
    if weight.ndim < 2:
        raise ValueError("Expected a matrix or batch of matrices. "
                         f"Got a tensor of {weight.ndim} dimensions.")
    if orthogonal_map is None:
        square = weight.size(-2) == weight.size(-1)
        orthogonal_map = "matrix_exp" if square or weight.is_complex() else "householder"
    orth_enum = getattr(_OrthMaps, orthogonal_map, None)
    if orth_enum is None:
        raise ValueError('orthogonal_map has to be one of "matrix_exp", "cayley", '
                         f'"householder". Got: {orthogonal_map}')
    orth = _Orthogonal(weight, orth_enum, use_trivialization=use_trivialization)
    parametrize.register_parametrization(module, name, orth, unsafe=True)
    return module


class _WeightNorm(Module):
    """``weight = g * v / ||v||`` with the norm over every dim but ``dim`` (all for None)."""

    def __init__(self, dim: int | None = 0) -> None:
        super().__init__()
        self.dim = -1 if dim is None else dim

    def forward(self, weight_g: Tensor, weight_v: Tensor) -> Tensor:
        return _weight_norm(weight_v, weight_g, self.dim)

    def right_inverse(self, weight: Tensor):
        return _gg.norm_except_dim(weight, 2, self.dim), weight


def weight_norm(module: Module, name: str = "weight", dim: int | None = 0) -> Module:
    """Split ``module.<name>`` into a magnitude ``original0`` (g: the norm over every dim but
    ``dim``, kept as size-1 dims; over all for ``dim=None``) and a direction ``original1`` (v),
    recomposed as ``g * v / ||v||`` on access (``torch.nn.utils.parametrizations.weight_norm``).
    ``load_state_dict`` also takes the hook-based version's ``<name>_g`` / ``<name>_v`` keys.
    Returns ``module``."""
    parametrize.register_parametrization(module, name, _WeightNorm(dim), unsafe=True)

    def load_old_keys(state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys,
                      error_msgs) -> None:
        # checkpoints of the hook-based weight_norm name the pair <name>_g / <name>_v
        g_key, v_key = f"{prefix}{name}_g", f"{prefix}{name}_v"
        if g_key in state_dict and v_key in state_dict:
            state_dict[f"{prefix}parametrizations.{name}.original0"] = state_dict.pop(g_key)
            state_dict[f"{prefix}parametrizations.{name}.original1"] = state_dict.pop(v_key)

    module._register_load_state_dict_pre_hook(load_old_keys)
    return module


class _SpectralNorm(Module):
    """``weight / sigma``, sigma the largest singular value of the weight seen as a matrix
    (``dim`` first), estimated by power iteration on the buffers ``_u`` and ``_v``: one step of
    ``n_power_iterations`` per access in training, none in eval."""

    def __init__(self, weight: Tensor, n_power_iterations: int = 1, dim: int = 0,
                 eps: float = 1e-12) -> None:
        super().__init__()
        ndim = weight.ndim
        if dim >= ndim or dim < -ndim:
            raise IndexError("Dimension out of range (expected to be in range of "
                             f"[-{ndim}, {ndim - 1}] but got {dim})")
        if n_power_iterations <= 0:
            raise ValueError("Expected n_power_iterations to be positive, but got "
                             f"n_power_iterations={n_power_iterations}")
        self.dim = dim if dim >= 0 else dim + ndim
        self.eps = eps
        if ndim > 1:
            self.n_power_iterations = n_power_iterations
            weight_mat = self._reshape_weight_to_matrix(weight)
            h, w = weight_mat.size()
            u = weight_mat.new_empty(h).normal_(0, 1)
            v = weight_mat.new_empty(w).normal_(0, 1)
            self.register_buffer("_u", F.normalize(u, dim=0, eps=self.eps))
            self.register_buffer("_v", F.normalize(v, dim=0, eps=self.eps))
            self._power_method(weight_mat, 15)

    def _reshape_weight_to_matrix(self, weight: Tensor) -> Tensor:
        if self.dim != 0:
            weight = weight.permute(self.dim, *(d for d in range(weight.dim()) if d != self.dim))
        return weight.flatten(1)

    def _power_method(self, weight_mat: Tensor, n_power_iterations: int) -> None:
        # NOTE: in place on the buffers, as PyTorch: forward clones them before use so that
        # the graph saves copies and a later update does not trip the version check
        with no_grad():
            for _ in range(n_power_iterations):
                self._u.copy_(F.normalize(_gg.mv(weight_mat, self._v), dim=0, eps=self.eps))
                self._v.copy_(F.normalize(_gg.mv(weight_mat.H, self._u), dim=0, eps=self.eps))

    def forward(self, weight: Tensor) -> Tensor:
        if weight.ndim == 1:
            return F.normalize(weight, dim=0, eps=self.eps)
        weight_mat = self._reshape_weight_to_matrix(weight)
        if self.training:
            self._power_method(weight_mat, self.n_power_iterations)
        u, v = self._u.clone(), self._v.clone()
        sigma = _gg.vdot(u, _gg.mv(weight_mat, v))
        return weight / sigma

    def right_inverse(self, value: Tensor) -> Tensor:
        return value


def spectral_norm(module: Module, name: str = "weight", n_power_iterations: int = 1,
                  eps: float = 1e-12, dim: int | None = None) -> Module:
    """Divide ``module.<name>`` by its spectral norm, estimated by power iteration
    (``torch.nn.utils.parametrizations.spectral_norm``). ``dim`` is the output dim (default 1
    for ConvTranspose, else 0); the buffers ``parametrizations.<name>.0._u`` / ``._v`` hold
    the singular-vector estimates, refined ``n_power_iterations`` times per access in training
    mode only. ValueError for a missing tensor. Returns ``module``."""
    weight = getattr(module, name, None)
    if not isinstance(weight, Tensor):
        raise ValueError(f"Module '{module}' has no parameter or buffer with name '{name}'")
    parametrize.register_parametrization(
        module, name, _SpectralNorm(weight, n_power_iterations, _output_dim(module, dim), eps))
    return module
