"""The transforms of ``glassgrad.fft`` (``torch.fft.fft`` ... ``ihfftn``): argument checks with
torch's errors, dtype promotion, ``n=``/``s=`` sizing, then the primitives of ops/fft_ops.py.

Every transform is one of three kernels (c2c, r2c, c2r); the Hermitian ones are the others on
conjugates with the normalisation swapped (``hfft(x) = irfft(conj(x))`` read as a forward
transform), so their derivatives come from the kernels' adjoints.
"""

from __future__ import annotations

from .. import dtypes
from ..ops import fft_ops
from ..ops._util import is_tensor, wrap_dim
from ..ops.complex_ops import conj, conj_physical
from ..ops.elementwise import to_dtype

_NORMS = {None: "backward", "backward": "backward", "ortho": "ortho", "forward": "forward"}


def _norm(norm) -> str:
    try:
        return _NORMS[norm]
    except (KeyError, TypeError):
        raise RuntimeError(f'Invalid normalization mode: "{norm}"\nglassgrad: norm= is None, '
                           '"backward", "ortho" or "forward".') from None


def _floating(x, op: str, real_only: bool = False):
    """``x`` as float32/float64/complex: integers and bool take the default float; torch's
    errors for 16-bit floats (CPU has no half FFT) and, for r2c, complex input."""
    if not is_tensor(x):
        raise TypeError(f"{op}(): argument 'input' (position 1) must be Tensor, not "
                        f"{type(x).__name__}")
    d = x.dtype
    if d._kind < 2:
        return to_dtype(x, dtypes.get_default_dtype())
    if d.itemsize == 2:
        name = "Half" if d is dtypes.float16 else "BFloat16"
        raise RuntimeError(f"Unsupported dtype {name}\nglassgrad: {op} runs on float32/float64 "
                           "(convert with .float()).")
    if real_only and d.is_complex:
        from ..ops._names import scalar_type

        raise RuntimeError(f"{op} expects a real input tensor, but got {scalar_type(d)}")
    return x


def _as_complex(x):
    return x if x.dtype.is_complex else to_dtype(x, x.dtype.to_complex())


def _points(n) -> None:
    if n is not None and n < 1:
        raise RuntimeError(f"Invalid number of data points ({n}) specified")


def _one_dim(x, n, dim: int, op: str):
    nd = x._array.ndim
    if nd == 0:
        raise IndexError(f"Dimension specified as {dim} but tensor has no dimensions")
    _points(n)
    d = wrap_dim(dim, nd, op)
    return (d,), (x._array.shape[d] if n is None else int(n),)


def _many_dims(x, s, dim, op: str):
    nd = x._array.ndim
    if dim is not None and not isinstance(dim, (list, tuple)):
        dim = (dim,)
    if s is not None and not isinstance(s, (list, tuple)):
        s = (s,)
    if s is not None and dim is not None and len(s) != len(dim):
        raise RuntimeError("When given, dim and shape arguments must have the same length\n"
                           f"glassgrad: {op} got s={list(s)} and dim={list(dim)}.")
    if dim is None:
        dims = tuple(range(nd - len(s), nd)) if s is not None else tuple(range(nd))
        if s is not None and len(s) > nd:
            raise RuntimeError(f"Got shape with {len(s)} values but input tensor only has {nd} "
                               "dimensions.")
    else:
        dims = tuple(wrap_dim(int(d), nd, op) for d in dim)
        if len(set(dims)) != len(dims):
            raise RuntimeError("FFT dims must be unique")
    sizes = []
    for k, d in enumerate(dims):
        n = None if s is None or s[k] == -1 else int(s[k])
        _points(n)
        sizes.append(x._array.shape[d] if n is None else n)
    return dims, tuple(sizes)


def _write_out(result, out, op: str):
    if out is None:
        return result
    from ..autograd.grad_mode import _state

    if _state.enabled and (result._requires_grad or out._requires_grad):
        raise RuntimeError(f"{op}(): functions with out=... arguments don't support automatic "
                           "differentiation, but one of the arguments requires grad.")
    if result.dtype.is_complex and not out.dtype.is_complex:
        from ..ops._names import scalar_type

        raise RuntimeError(f"{op} expects a complex output tensor, but got "
                           f"{scalar_type(out.dtype)}")
    if out._array.shape != result._array.shape:
        if out._array.size:
            from .._user_warning import warn_user

            warn_user(
                "An output with one or more elements was resized since it had shape "
                f"{list(out._array.shape)}, which does not match the required output shape "
                f"{list(result._array.shape)}.", UserWarning, stacklevel=3)
        import numpy as np

        out._array = np.empty(result._array.shape, dtype=out._array.dtype)
    out._write(result._array, op)
    return out


def _nonempty(x, dims):
    """torch's (MKL's) error for an empty tensor: a zero-size batch dim cannot be planned."""
    if x._array.size == 0:
        raise RuntimeError("MKL FFT error: Intel oneMKL DFTI ERROR: Inconsistent configuration "
                           f"parameters\nglassgrad: an FFT over dims {list(dims)} of an empty "
                           f"tensor of shape {list(x._array.shape)}.")
    return x


def _c2c(x, dims, sizes, norm, forward: bool):
    x = _nonempty(fft_ops.resize(_as_complex(x), dims, sizes), dims)
    return fft_ops.FftC2C.apply(x, dims=dims, norm=norm, forward=forward)


def _r2c(x, dims, sizes, norm):
    x = _nonempty(fft_ops.resize(x, dims, sizes), dims)
    return fft_ops.FftR2C.apply(x, dims=dims, norm=norm, n_last=sizes[-1])


def _c2r(x, dims, sizes, norm, last_given: bool):
    x = _as_complex(x)
    n_last = sizes[-1] if last_given else 2 * (x._array.shape[dims[-1]] - 1)
    _points(n_last)
    half = tuple(sizes[:-1]) + (n_last // 2 + 1,)
    x = _nonempty(fft_ops.resize(x, dims, half), dims)
    return fft_ops.FftC2R.apply(x, dims=dims, norm=norm, n_last=n_last)


def fft(input, n=None, dim=-1, norm=None, *, out=None):
    """The 1-D discrete Fourier transform along ``dim`` (``torch.fft.fft``): complex output
    (float32 -> complex64); ``n`` trims or zero-pads; ``norm`` "backward" (default: no scale),
    "ortho" (1/sqrt(n)) or "forward" (1/n)."""
    x = _floating(input, "fft")
    dims, sizes = _one_dim(x, n, dim, "fft")
    return _write_out(_c2c(x, dims, sizes, _norm(norm), True), out, "fft")


def ifft(input, n=None, dim=-1, norm=None, *, out=None):
    """The 1-D inverse transform (``torch.fft.ifft``); "backward" scales by 1/n."""
    x = _floating(input, "ifft")
    dims, sizes = _one_dim(x, n, dim, "ifft")
    return _write_out(_c2c(x, dims, sizes, _norm(norm), False), out, "ifft")


def fftn(input, s=None, dim=None, norm=None, *, out=None):
    """The N-D transform over ``dim`` (all dims, or the last ``len(s)``) (``torch.fft.fftn``)."""
    x = _floating(input, "fftn")
    dims, sizes = _many_dims(x, s, dim, "fftn")
    if not dims:
        return _write_out(_as_complex(x).clone(), out, "fftn")
    return _write_out(_c2c(x, dims, sizes, _norm(norm), True), out, "fftn")


def ifftn(input, s=None, dim=None, norm=None, *, out=None):
    """The N-D inverse transform (``torch.fft.ifftn``)."""
    x = _floating(input, "ifftn")
    dims, sizes = _many_dims(x, s, dim, "ifftn")
    if not dims:
        return _write_out(_as_complex(x).clone(), out, "ifftn")
    return _write_out(_c2c(x, dims, sizes, _norm(norm), False), out, "ifftn")


def fft2(input, s=None, dim=(-2, -1), norm=None, *, out=None):
    """``fftn`` over the last two dims (``torch.fft.fft2``)."""
    return fftn(input, s, dim, norm, out=out)


def ifft2(input, s=None, dim=(-2, -1), norm=None, *, out=None):
    """``ifftn`` over the last two dims (``torch.fft.ifft2``)."""
    return ifftn(input, s, dim, norm, out=out)


def rfft(input, n=None, dim=-1, norm=None, *, out=None):
    """The transform of real input, one-sided: ``n // 2 + 1`` bins along ``dim``
    (``torch.fft.rfft``); RuntimeError for complex input."""
    x = _floating(input, "rfft", real_only=True)
    dims, sizes = _one_dim(x, n, dim, "rfft")
    return _write_out(_r2c(x, dims, sizes, _norm(norm)), out, "rfft")


def rfftn(input, s=None, dim=None, norm=None, *, out=None):
    """The N-D transform of real input, one-sided in the last of ``dim`` (``torch.fft.rfftn``)."""
    x = _floating(input, "rfftn", real_only=True)
    dims, sizes = _many_dims(x, s, dim, "rfftn")
    if not dims:
        raise RuntimeError("rfftn must transform at least one axis")
    return _write_out(_r2c(x, dims, sizes, _norm(norm)), out, "rfftn")


def rfft2(input, s=None, dim=(-2, -1), norm=None, *, out=None):
    """``rfftn`` over the last two dims (``torch.fft.rfft2``)."""
    return rfftn(input, s, dim, norm, out=out)


def irfft(input, n=None, dim=-1, norm=None, *, out=None):
    """The inverse of ``rfft``: a one-sided spectrum to ``n`` real values (default
    ``2 * (m - 1)``) (``torch.fft.irfft``); the DC (and Nyquist) bins' imaginary parts are
    ignored."""
    x = _floating(input, "irfft")
    dims, sizes = _one_dim(x, n, dim, "irfft")
    return _write_out(_c2r(x, dims, sizes, _norm(norm), n is not None), out, "irfft")


def irfftn(input, s=None, dim=None, norm=None, *, out=None):
    """The N-D inverse of ``rfftn`` (``torch.fft.irfftn``)."""
    x = _floating(input, "irfftn")
    dims, sizes = _many_dims(x, s, dim, "irfftn")
    if not dims:
        raise RuntimeError("irfftn must transform at least one axis")
    given = s is not None and s[-1] != -1
    return _write_out(_c2r(x, dims, sizes, _norm(norm), given), out, "irfftn")


def irfft2(input, s=None, dim=(-2, -1), norm=None, *, out=None):
    """``irfftn`` over the last two dims (``torch.fft.irfft2``)."""
    return irfftn(input, s, dim, norm, out=out)


_SWAP = fft_ops._SWAP


def hfft(input, n=None, dim=-1, norm=None, *, out=None):
    """The transform of a Hermitian-symmetric signal given by its one-sided half, real output
    of ``n`` values (``torch.fft.hfft``)."""
    x = _floating(input, "hfft")
    dims, sizes = _one_dim(x, n, dim, "hfft")
    result = _c2r(conj_physical(_as_complex(x)), dims, sizes, _SWAP[_norm(norm)], n is not None)
    return _write_out(result, out, "hfft")


def hfftn(input, s=None, dim=None, norm=None, *, out=None):
    """The N-D ``hfft``: Hermitian in the last of ``dim`` (``torch.fft.hfftn``)."""
    x = _floating(input, "hfftn")
    dims, sizes = _many_dims(x, s, dim, "hfftn")
    if not dims:
        raise RuntimeError("hfftn must transform at least one axis")
    given = s is not None and s[-1] != -1
    result = _c2r(conj_physical(_as_complex(x)), dims, sizes, _SWAP[_norm(norm)], given)
    return _write_out(result, out, "hfftn")


def hfft2(input, s=None, dim=(-2, -1), norm=None, *, out=None):
    """``hfftn`` over the last two dims (``torch.fft.hfft2``)."""
    return hfftn(input, s, dim, norm, out=out)


def ihfft(input, n=None, dim=-1, norm=None, *, out=None):
    """The inverse of ``hfft``: real input to its one-sided spectrum (``torch.fft.ihfft``)."""
    x = _floating(input, "ihfft", real_only=True)
    dims, sizes = _one_dim(x, n, dim, "ihfft")
    return _write_out(conj(_r2c(x, dims, sizes, _SWAP[_norm(norm)])), out, "ihfft")


def ihfftn(input, s=None, dim=None, norm=None, *, out=None):
    """The N-D inverse of ``hfftn`` (``torch.fft.ihfftn``)."""
    x = _floating(input, "ihfftn", real_only=True)
    dims, sizes = _many_dims(x, s, dim, "ihfftn")
    if not dims:
        raise RuntimeError("ihfftn must transform at least one axis")
    return _write_out(conj(_r2c(x, dims, sizes, _SWAP[_norm(norm)])), out, "ihfftn")


def ihfft2(input, s=None, dim=(-2, -1), norm=None, *, out=None):
    """``ihfftn`` over the last two dims (``torch.fft.ihfft2``)."""
    return ihfftn(input, s, dim, norm, out=out)
