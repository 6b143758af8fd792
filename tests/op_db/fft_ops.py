"""Op table entries: ``glassgrad.fft`` (glassgrad/fft/, kernels in glassgrad/ops/fft_ops.py).

Samples are real; complex inputs are built with ``complex(x, y)`` and complex outputs returned as
``view_as_real``, so the table's real cotangents, gradcheck and gradgradcheck check the adjoint
transforms (NOTE [Complex gradients] in ops/complex_ops.py)."""

from . import OpInfo, Sample


# (two samples an entry: the table's five checks per sample keep the lane's test time small)
def _one(rng):
    u = lambda *s: rng.uniform(-2.0, 2.0, size=s)  # noqa: E731
    return [Sample((u(5),), desc="vector"),
            Sample((u(3, 4, 5).transpose(1, 2, 0),), desc="non-contiguous 3-D")]


def _two(rng):
    u = lambda *s: rng.uniform(-2.0, 2.0, size=s)  # noqa: E731
    return [Sample((u(5), u(5)), desc="vector"),
            Sample((u(3, 4, 5).transpose(1, 2, 0), u(4, 5, 3)), desc="non-contiguous 3-D")]


def _R(m, t):  # noqa: N802
    return m.view_as_real(t.resolve_conj())


def _c(m, x, y):
    return m.complex(x, y)


def _c2c(name, **kw):
    return OpInfo(f"fft.{name}{'_' + '_'.join(map(str, kw.values())) if kw else ''}",
                  lambda m, x, y: _R(m, getattr(m.fft, name)(_c(m, x, y), **kw)), _two)


def _r(name, real_out=False, complex_in=False, **kw):
    suffix = "_" + "_".join(map(str, kw.values())) if kw else ""
    if complex_in:
        fn = lambda m, x, y: getattr(m.fft, name)(_c(m, x, y), **kw)  # noqa: E731
    else:
        fn = lambda m, x: _R(m, getattr(m.fft, name)(x, **kw))  # noqa: E731
    return OpInfo(f"fft.{name}{suffix}", fn, _two if complex_in else _one)


OPS = [
    _c2c("fft"), _c2c("fft", n=7, norm="ortho"), _c2c("fft", n=3, dim=0, norm="forward"),
    _c2c("ifft"), _c2c("ifft", n=8, norm="forward"), _c2c("fftn"), _c2c("ifftn", norm="ortho"),
    OpInfo("fft.fftn_s_dim", lambda m, x, y: _R(m, m.fft.fftn(_c(m, x, y), s=(3, 4), dim=(0, -1))),
           lambda rng: _two(rng)[1:]),
    OpInfo("fft.fft_real_input", lambda m, x: _R(m, m.fft.fft(x, n=6)), _one),
    OpInfo("fft.fft2", lambda m, x, y: _R(m, m.fft.fft2(_c(m, x, y)[..., None, :])), _two),
    OpInfo("fft.ifft2", lambda m, x, y: _R(m, m.fft.ifft2(_c(m, x, y)[None], s=(2, 3))), _two),
    _r("rfft"), _r("rfft", n=9, norm="ortho"), _r("rfft", n=3, dim=0),
    OpInfo("fft.rfftn", lambda m, x: _R(m, m.fft.rfftn(x, norm="forward")), _one),
    OpInfo("fft.rfft2", lambda m, x: _R(m, m.fft.rfft2(x[None], s=(3, 4))), _one),
    _r("irfft", complex_in=True), _r("irfft", complex_in=True, n=7, norm="ortho"),
    _r("irfft", complex_in=True, n=4, dim=0, norm="forward"),
    _r("irfftn", complex_in=True), _r("irfftn", complex_in=True, s=(5,)),
    OpInfo("fft.irfft2", lambda m, x, y: m.fft.irfft2(_c(m, x, y)[None], s=(2, 6)), _two),
    _r("hfft", complex_in=True), _r("hfft", complex_in=True, n=5, norm="ortho"),
    _r("hfftn", complex_in=True, norm="forward"),
    OpInfo("fft.hfft2", lambda m, x, y: m.fft.hfft2(_c(m, x, y)[None]), _two),
    _r("ihfft"), _r("ihfft", n=6, norm="forward"), _r("ihfftn", norm="ortho"),
    OpInfo("fft.ihfft2", lambda m, x: _R(m, m.fft.ihfft2(x[None])), _one),
    OpInfo("fft.fftshift", lambda m, x: m.fft.fftshift(x) * 2 + m.fft.ifftshift(x, dim=0), _one),
    OpInfo("fft.fftshift_complex",
           lambda m, x, y: _R(m, m.fft.ifftshift(m.fft.fftshift(_c(m, x, y), dim=-1) * x)), _two),
]


def _signal(rng):
    u = lambda *s: rng.uniform(-2.0, 2.0, size=s)  # noqa: E731
    return [Sample((u(20), u(8)), desc="signal and window"),
            Sample((u(2, 13), u(6)), desc="batch, short window")]


def _spectrum(rng):
    u = lambda *s: rng.uniform(-2.0, 2.0, size=s)  # noqa: E731
    return [Sample((u(5, 7), u(5, 7), u(8)), desc="onesided"),
            Sample((u(2, 5, 4), u(2, 5, 4), u(8)), desc="batch")]


def _stft(m, x, w, **kw):
    return _R(m, m.stft(x, 8, 2, w.shape[0], w, return_complex=True, **kw))


OPS += [
    OpInfo("stft", lambda m, x, w: _stft(m, x, w), _signal),
    OpInfo("stft_method_normalized", lambda m, x, w: _R(m, x.stft(
        8, 3, window=m.nn.functional.pad(w, (0, 8 - w.shape[0])), normalized=True,
        center=False, return_complex=True)), _signal),
    # the window kept away from 0, so its overlap-add (the divisor) stays away from 0 too
    OpInfo("istft", lambda m, x, y, w: m.istft(m.complex(x, y), 8, 2, window=w.abs() + 0.5),
           _spectrum),
    OpInfo("istft_method_length", lambda m, x, y, w: m.complex(x, y).istft(
        8, 2, window=w * w + 0.5, normalized=True, length=9), _spectrum),
]
